/* report_mpi.c - sp_report_mpi_build (scopeprof/report.h): where the MPI
 * time goes, how many bytes move between which ranks, and who waits for
 * whom in collectives.  Reads the MPI event columns (events/mpi_*) row by
 * row through an sp_mpi_rows source: the profile's columns here, windows
 * of the files in report_mpi_stream.c. */
#include <stdlib.h>
#include <string.h>

#include "report/report_internal.h"

/* Blocking collectives: every member makes the same calls in the same
 * order on a communicator, so the k-th call there is one operation. */
static const char *const collectives[] = {
    "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv",
    "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
    "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
    "MPI_Scan", "MPI_Exscan",
};
/* Calls that send one point-to-point message to their peer. */
static const char *const p2p_sends[] = {
    "MPI_Send", "MPI_Ssend", "MPI_Bsend", "MPI_Rsend", "MPI_Isend", "MPI_Issend",
    "MPI_Sendrecv", "MPI_Sendrecv_replace",
};

static int listed(const char *name, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, list[i]))
            return 1;
    return 0;
}

#define COUNT(a) (sizeof(a) / sizeof *(a))

int64_t sp_report_mpi_bin_limit(int bin)
{
    /* 0, 64 B, 1 KiB, 16 KiB, 256 KiB, 4 MiB, 64 MiB, larger */
    return bin == 0 ? 0 : (int64_t)1 << (2 + 4 * bin);
}

static int bin_of(int64_t bytes)
{
    int b = 0;
    while (b < SP_REPORT_MPI_BINS - 1 && bytes > sp_report_mpi_bin_limit(b))
        b++;
    return b;
}

/* ---- one collective operation: (region, communicator, k-th call) ------ */

struct op {
    uint32_t region;        /* UINT32_MAX: empty */
    int64_t comm;
    uint64_t k;
    int64_t shortest;
    uint32_t shortest_rank;
};

struct op_table {
    struct op *slots;
    size_t mask;
    size_t used;
};

static struct op *op_find(struct op_table *t, uint32_t region, int64_t comm, uint64_t k);

/* Room for one more operation (kept at most half full): memory follows the
 * distinct operations of the run (shared by its ranks), not its calls.
 * 0 or -1. */
static int op_reserve(struct op_table *t)
{
    if (2 * (t->used + 1) <= t->mask + 1)
        return 0;
    struct op_table grown = {malloc(2 * (t->mask + 1) * sizeof *grown.slots), 2 * t->mask + 1,
                             t->used};
    if (!grown.slots)
        return -1;
    for (size_t i = 0; i <= grown.mask; i++)
        grown.slots[i].region = UINT32_MAX;
    for (size_t i = 0; i <= t->mask; i++)
        if (t->slots[i].region != UINT32_MAX)
            *op_find(&grown, t->slots[i].region, t->slots[i].comm, t->slots[i].k) = t->slots[i];
    free(t->slots);
    *t = grown;
    return 0;
}

static struct op *op_find(struct op_table *t, uint32_t region, int64_t comm, uint64_t k)
{
    uint64_t h = (region * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)comm * 0xff51afd7ed558ccdull) ^
                 (k * 0xc4ceb9fe1a85ec53ull);
    size_t i = (size_t)(h ^ (h >> 29)) & t->mask;
    while (t->slots[i].region != UINT32_MAX &&
           (t->slots[i].region != region || t->slots[i].comm != comm || t->slots[i].k != k))
        i = (i + 1) & t->mask;
    return &t->slots[i];
}

/* Per row walk: how many calls so far on each communicator. */
struct comm_count {
    int64_t comm;
    uint64_t calls;
};

static uint64_t next_on_comm(struct comm_count *seen, size_t *n, size_t cap, int64_t comm)
{
    for (size_t i = 0; i < *n; i++)
        if (seen[i].comm == comm)
            return ++seen[i].calls;
    if (*n < cap) {
        seen[*n] = (struct comm_count){comm, 1};
        return seen[(*n)++].calls;
    }
    return 0; /* too many communicators in one row: not matched */
}

static const int64_t *starts_sorted;
static int by_start(const void *a, const void *b)
{
    int64_t x = starts_sorted[*(const uint64_t *)a], y = starts_sorted[*(const uint64_t *)b];
    return x < y ? -1 : x > y;
}

#define COMMS_PER_ROW 64

/* Walk the collective rows of the selected ranks: pass 0 finds the
 * shortest time of each operation, pass 1 charges the waits. */
static int collective_pass(const sp_report *report, const sp_mpi_rows *src,
                           const unsigned char *is_coll, const unsigned char *selected,
                           struct op_table *ops, int pass, sp_report_mpi *out,
                           int64_t *wait_by_region, int64_t *wait_by_rr, uint64_t *last_by_rr)
{
    const sp_profile *p = report->profile;
    for (size_t r = 0; r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        if (!is_coll[row->region] || row->rank >= p->num_ranks || !selected[row->rank])
            continue;
        if (src->begin(src->ctx, r, 1) != 0)
            return -1;
        struct comm_count seen[COMMS_PER_ROW];
        size_t num_seen = 0;
        sp_mpi_window w;
        int got;
        while ((got = src->next(src->ctx, &w)) > 0)
            for (size_t j = 0; j < w.n; j++) {
                int64_t c = w.comm ? w.comm[j] : 0;
                uint64_t k = next_on_comm(seen, &num_seen, COMMS_PER_ROW, c);
                if (!k)
                    continue;
                int64_t d = w.end[j] - w.start[j];
                struct op *o = op_find(ops, row->region, c, k);
                if (pass == 0) {
                    if (o->region == UINT32_MAX) {
                        if (op_reserve(ops) != 0)
                            return -1;
                        o = op_find(ops, row->region, c, k);
                        *o = (struct op){row->region, c, k, d, row->rank};
                        ops->used++;
                    } else if (d < o->shortest ||
                             (d == o->shortest && row->rank < o->shortest_rank)) {
                        o->shortest = d;
                        o->shortest_rank = row->rank;
                    }
                    continue;
                }
                int64_t wait = d - o->shortest;
                wait_by_region[row->region] += wait;
                wait_by_rr[(size_t)row->region * p->num_ranks + row->rank] += wait;
                for (size_t i = 0; i < out->num_ranks; i++)
                    if (out->ranks[i].rank == row->rank)
                        out->ranks[i].wait_ns += wait;
                if (o->shortest_rank == row->rank)
                    last_by_rr[(size_t)row->region * p->num_ranks + row->rank]++;
            }
        if (got < 0)
            return -1;
    }
    return 0;
}

static int by_total_desc(const void *a, const void *b)
{
    const sp_report_mpi_call *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return x->region < y->region ? -1 : x->region > y->region;
}

static void add_bytes(int64_t *sum, int64_t v)
{
    if (v > 0)
        *sum += v;
}

int sp_report_mpi_build_from(const sp_report *report, const sp_mpi_rows *src,
                             sp_report_mpi *out)
{
    memset(out, 0, sizeof *out);
    const sp_profile *p = report->profile;
    size_t names = p->num_names ? p->num_names : 1, nr = p->num_ranks;
    unsigned char *is_mpi = calloc(names, 1), *is_coll = calloc(names, 1),
                  *is_send = calloc(names, 1), *selected = calloc(nr, 1);
    int64_t *wait_by_region = calloc(names, sizeof *wait_by_region);
    uint64_t *last_by_rr = calloc(names * nr, sizeof *last_by_rr);
    int64_t *wait_by_rr = calloc(names * nr, sizeof *wait_by_rr);
    sp_report_mpi_call *by_region = calloc(names, sizeof *by_region);
    int64_t *first = malloc(nr * sizeof *first), *last = malloc(nr * sizeof *last);
    out->ranks = calloc(report->num_ranks, sizeof *out->ranks);
    struct op_table ops = {NULL, 0, 0};
    int rc = -1;
    if (!is_mpi || !is_coll || !is_send || !selected || !wait_by_region || !last_by_rr ||
        !wait_by_rr || !by_region || !first || !last || !out->ranks)
        goto done;
    for (size_t i = 0; i < p->num_names; i++) {
        is_mpi[i] = !strncmp(p->names[i], "MPI_", 4);
        is_coll[i] = listed(p->names[i], collectives, COUNT(collectives));
        is_send[i] = listed(p->names[i], p2p_sends, COUNT(p2p_sends));
    }
    out->num_ranks = report->num_ranks;
    for (size_t i = 0; i < report->num_ranks; i++) {
        out->ranks[i].rank = report->ranks[i];
        if (report->ranks[i] < nr)
            selected[report->ranks[i]] = 1;
    }
    out->matrix_blocks = nr;
    out->block_size = 1;
    while (out->matrix_blocks > 16) {
        out->block_size *= 2;
        out->matrix_blocks = (nr + out->block_size - 1) / out->block_size;
    }
    out->matrix = calloc(out->matrix_blocks * out->matrix_blocks, sizeof *out->matrix);
    if (!out->matrix)
        goto done;
    for (size_t i = 0; i < nr; i++) {
        first[i] = INT64_MAX;
        last[i] = INT64_MIN;
    }

    /* Times, bytes, traffic and sizes, row by row. */
    for (size_t r = 0; r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        if (row->rank >= nr || !selected[row->rank])
            continue;
        int64_t lo, hi;
        if (row->count && src->span(src->ctx, r, &lo, &hi) != 0)
            goto done;
        if (row->count && lo < first[row->rank])
            first[row->rank] = lo;
        if (row->count && hi > last[row->rank])
            last[row->rank] = hi;
        if (!is_mpi[row->region])
            continue;
        sp_report_mpi_rank *rk = NULL;
        for (size_t i = 0; i < out->num_ranks && !rk; i++)
            if (out->ranks[i].rank == row->rank)
                rk = &out->ranks[i];
        sp_report_mpi_call *call = &by_region[row->region];
        call->region = row->region;
        call->collective = is_coll[row->region];
        if (src->begin(src->ctx, r, 0) != 0)
            goto done;
        sp_mpi_window w;
        int got;
        while ((got = src->next(src->ctx, &w)) > 0) {
            for (size_t j = 0; j < w.n; j++) {
                int64_t d = w.end[j] - w.start[j];
                call->calls++;
                call->total_ns += d;
                add_bytes(&call->sent_bytes, w.sent[j]);
                add_bytes(&call->recv_bytes, w.recv[j]);
                if (rk) {
                    rk->calls++;
                    rk->mpi_ns += d;
                    add_bytes(&rk->sent_bytes, w.sent[j]);
                    add_bytes(&rk->recv_bytes, w.recv[j]);
                }
                if (is_send[row->region] && w.sent[j] >= 0 && w.peer[j] >= 0) {
                    int b = bin_of(w.sent[j]);
                    out->p2p_messages[b]++;
                    out->p2p_bytes[b] += w.sent[j];
                    if ((uint64_t)w.peer[j] < nr)
                        out->matrix[(row->rank / out->block_size) * out->matrix_blocks +
                                    (size_t)w.peer[j] / out->block_size] += w.sent[j];
                } else if (is_coll[row->region]) {
                    int64_t moved =
                    (w.sent[j] > 0 ? w.sent[j] : 0) + (w.recv[j] > 0 ? w.recv[j] : 0);
                    out->collective_calls[bin_of(moved)]++;
                }
            }
        }
        if (got < 0)
            goto done;
    }
    for (size_t i = 0; i < out->num_ranks; i++) {
        uint32_t rank = out->ranks[i].rank;
        out->ranks[i].wall_ns = rank < nr && first[rank] <= last[rank] ? last[rank] - first[rank] : -1;
    }

    /* Late-arrival waits of the collectives. */
    size_t cap = 16;
    ops.slots = malloc(cap * sizeof *ops.slots);
    if (!ops.slots)
        goto done;
    ops.mask = cap - 1;
    ops.used = 0;
    for (size_t i = 0; i < cap; i++)
        ops.slots[i].region = UINT32_MAX;
    for (int pass = 0; pass < 2; pass++)
        if (collective_pass(report, src, is_coll, selected, &ops, pass, out, wait_by_region,
                            wait_by_rr, last_by_rr) != 0)
            goto done;

    size_t n = 0;
    for (size_t i = 0; i < p->num_names; i++)
        n += by_region[i].calls > 0;
    out->calls = calloc(n ? n : 1, sizeof *out->calls);
    if (!out->calls)
        goto done;
    for (size_t i = 0; i < p->num_names; i++) {
        if (!by_region[i].calls)
            continue;
        sp_report_mpi_call *c = &out->calls[out->num_calls++];
        *c = by_region[i];
        c->wait_ns = wait_by_region[i];
        uint64_t most_last = 0;
        int64_t most_wait = -1;
        for (size_t rank = 0; rank < nr; rank++) {
            if (last_by_rr[i * nr + rank] > most_last) {
                most_last = last_by_rr[i * nr + rank];
                c->last_arrival_rank = (uint32_t)rank;
            }
            if (selected[rank] && wait_by_rr[i * nr + rank] > most_wait) {
                most_wait = wait_by_rr[i * nr + rank];
                c->most_waiting_rank = (uint32_t)rank;
            }
        }
    }
    qsort(out->calls, out->num_calls, sizeof *out->calls, by_total_desc);
    rc = 1;
done:
    free(is_mpi);
    free(is_coll);
    free(is_send);
    free(selected);
    free(wait_by_region);
    free(last_by_rr);
    free(wait_by_rr);
    free(by_region);
    free(first);
    free(last);
    free(ops.slots);
    if (rc < 0)
        sp_report_mpi_free(out);
    return rc;
}

/* ---- the profile's columns as the source -------------------------------- */

typedef struct memory_rows {
    const sp_profile *profile;
    const sp_row *row;
    int sorted, done;
    uint64_t *ix;             /* sorted: event indices in start order */
    int64_t *buf;             /* sorted: the row's columns in that order */
    const int64_t *minus;     /* a column of -1 for absent MPI columns */
} memory_rows;

static int memory_span(void *ctx, size_t r, int64_t *lo, int64_t *hi)
{
    const memory_rows *m = ctx;
    const sp_profile *p = m->profile;
    const sp_row *row = &p->rows[r];
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (uint64_t e = row->offset; e < row->offset + row->count; e++) {
        if (p->start[e] < *lo)
            *lo = p->start[e];
        if (p->end[e] > *hi)
            *hi = p->end[e];
    }
    return 0;
}

static int memory_begin(void *ctx, size_t r, int sorted)
{
    memory_rows *m = ctx;
    m->row = &m->profile->rows[r];
    m->sorted = sorted;
    m->done = 0;
    return 0;
}

/* Event indices of a row in start order (recording order across threads
 * is not guaranteed). */
static uint64_t *row_order(const sp_profile *p, const sp_row *row)
{
    uint64_t *ix = malloc((row->count ? row->count : 1) * sizeof *ix);
    if (!ix)
        return NULL;
    for (uint64_t k = 0; k < row->count; k++)
        ix[k] = row->offset + k;
    starts_sorted = p->start;
    qsort(ix, row->count, sizeof *ix, by_start);
    return ix;
}

/* The whole row as one window (the columns are in memory anyway). */
static int memory_next(void *ctx, sp_mpi_window *w)
{
    memory_rows *m = ctx;
    const sp_profile *p = m->profile;
    const sp_row *row = m->row;
    if (m->done)
        return 0;
    m->done = 1;
    w->n = (size_t)row->count;
    if (!m->sorted) {
        uint64_t o = row->offset;
        w->start = p->start + o;
        w->end = p->end + o;
        w->sent = p->extra[SP_EXTRA_MPI_SENT_BYTES] + o;
        w->recv = p->extra[SP_EXTRA_MPI_RECV_BYTES] + o;
        w->peer = p->extra[SP_EXTRA_MPI_PEER] + o;
        w->comm = p->extra[SP_EXTRA_MPI_COMM] ? p->extra[SP_EXTRA_MPI_COMM] + o : NULL;
        return 1;
    }
    free(m->ix);
    free(m->buf);
    m->ix = row_order(p, row);
    m->buf = malloc((row->count ? row->count : 1) * 3 * sizeof *m->buf);
    if (!m->ix || !m->buf)
        return -1;
    int64_t *start = m->buf, *end = start + row->count, *comm = end + row->count;
    const int64_t *cc = p->extra[SP_EXTRA_MPI_COMM];
    for (uint64_t k = 0; k < row->count; k++) {
        start[k] = p->start[m->ix[k]];
        end[k] = p->end[m->ix[k]];
        comm[k] = cc ? cc[m->ix[k]] : 0;
    }
    *w = (sp_mpi_window){.n = (size_t)row->count, .start = start, .end = end,
                         .comm = cc ? comm : NULL};
    return 1;
}

int sp_report_mpi_build(const sp_report *report, sp_report_mpi *out)
{
    memset(out, 0, sizeof *out);
    const sp_profile *p = report->profile;
    if (!p || !p->extra[SP_EXTRA_MPI_PEER] || !report->num_ranks || !p->num_ranks)
        return 0;
    memory_rows m = {.profile = p};
    sp_mpi_rows src = {memory_begin, memory_next, memory_span, &m};
    int rc = sp_report_mpi_build_from(report, &src, out);
    free(m.ix);
    free(m.buf);
    return rc;
}

void sp_report_mpi_free(sp_report_mpi *mpi)
{
    free(mpi->ranks);
    free(mpi->calls);
    free(mpi->matrix);
    memset(mpi, 0, sizeof *mpi);
}

const sp_report_mpi_call *sp_report_mpi_find(const sp_report_mpi *mpi, uint32_t region)
{
    for (size_t i = 0; i < mpi->num_calls; i++)
        if (mpi->calls[i].region == region)
            return &mpi->calls[i];
    return NULL;
}
