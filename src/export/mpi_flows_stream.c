/* mpi_flows_stream.c - the message ends of a run source, read in windows
 * (mpi_flows.h, "on the stream"): the chrome and perfetto exports pair
 * them as the in-memory path does, without loading the run, in a memory
 * budget (ext_sort.h, mpi_flows_external.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext_sort.h"
#include "mpi_flows.h"
#include "scopeprof/h5.h"
#include "scopeprof/report.h" /* sp_rank_clock_offset */

enum { WINDOW = 16384 };

/* The columns a message end needs; sent and received bytes are not (the
 * chrome and perfetto flows have no length: an end's bytes stay -1). */
static const int flow_columns[5] = {SP_EXTRA_MPI_COMM, SP_EXTRA_MPI_PEER, SP_EXTRA_MPI_TAG,
                                    SP_EXTRA_MPI_SOURCE, SP_EXTRA_MPI_RECV_TAG};

typedef struct reading {
    const sp_run_source *src;
    long file;                  /* of the open reader, -1 none */
    sp_h5_event_reader *reader;
    int64_t *col[6];            /* comm, peer, tag, source, recv tag, start */
} reading;

static int in_ranks(const uint32_t *ranks, long n, uint32_t rank)
{
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (ranks[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ranks[lo] == rank;
}

static int is_kept(const sp_mpi_flows_stream *s, uint64_t pos)
{
    return (s->kept[pos >> 3] >> (pos & 7)) & 1;
}

/* count values of MPI column c from pos; -1 where the file lacks it (the
 * in-memory run's missing value).  0, or 1 when it does not read. */
static int read_extra(reading *r, int c, uint64_t pos, size_t count, int64_t *out)
{
    if (!r->src->shapes[r->file].has_extra[c]) {
        for (size_t i = 0; i < count; i++)
            out[i] = -1;
        return 0;
    }
    return sp_h5_event_reader_read_extra(r->reader, c, pos, count, out) ? 1 : 0;
}

/* The ends among the kept events of skeleton row `r` (of the marked file).
 * 0, 1 (a read failed), -1. */
static int row_ends(sp_mpi_flows_stream *s, reading *rd, size_t r, char *why, size_t whylen)
{
    const sp_row *row = &s->src->profile->rows[r];
    long file = (long)s->src->row_file[r];
    const sp_h5_event_shape *sh = &s->src->shapes[file];
    if (!sh->has_extra[SP_EXTRA_MPI_COMM] || !row->count)
        return 0; /* no communicator: -1 in memory, no end */
    if (file != rd->file) {
        sp_h5_event_reader_close(rd->reader);
        rd->file = file;
        rd->reader = sp_h5_event_reader_open(s->src->paths[file], sh, (size_t)1 << 20, why,
                                             whylen);
        if (!rd->reader)
            return 1;
    }
    /* Most rows are no MPI calls: their communicator column says so. */
    int any = 0;
    for (uint64_t pos = row->offset; pos < row->offset + row->count && !any; pos += WINDOW) {
        uint64_t left = row->offset + row->count - pos;
        size_t n = left < WINDOW ? (size_t)left : WINDOW;
        if (read_extra(rd, SP_EXTRA_MPI_COMM, pos, n, rd->col[0]))
            goto unreadable;
        for (size_t i = 0; i < n && !any; i++)
            any = rd->col[0][i] >= 0;
    }
    if (!any)
        return 0;
    int64_t prev_start = 0;
    for (uint64_t pos = row->offset; pos < row->offset + row->count; pos += WINDOW) {
        uint64_t left = row->offset + row->count - pos;
        size_t n = left < WINDOW ? (size_t)left : WINDOW;
        for (int k = 0; k < 5; k++)
            if (read_extra(rd, flow_columns[k], pos, n, rd->col[k]))
                goto unreadable;
        int64_t *start = rd->col[5];
        if (sp_h5_event_reader_read(rd->reader, SP_H5_COL_START, pos, n, start))
            goto unreadable;
        for (size_t i = 0; sh->deltas && i < n; i++) {
            /* start_deltas: a running sum within the row (h5_read.c) */
            if (pos + i > row->offset)
                start[i] = (int64_t)((uint64_t)start[i] + (uint64_t)prev_start);
            prev_start = start[i];
        }
        const int64_t *comm = rd->col[0], *peer = rd->col[1], *tag = rd->col[2],
                      *source = rd->col[3], *rtag = rd->col[4];
        for (size_t i = 0; i < n; i++) {
            if (comm[i] < 0)
                continue;
            if (!is_kept(s, pos + i))
                continue;
            uint64_t e = s->file_base[file] + pos + i;
            sp_mpi_end send = {row->rank, peer[i], tag[i], comm[i], start[i], e, -1};
            sp_mpi_end recv = {source[i], row->rank, rtag[i], comm[i], start[i], e, -1};
            if (peer[i] >= 0 && tag[i] >= 0 && sp_ext_sort_push(s->sends, &send) < 0)
                return -1;
            if (source[i] >= 0 && rtag[i] >= 0 && sp_ext_sort_push(s->recvs, &recv) < 0)
                return -1;
        }
    }
    return 0;
unreadable:
    snprintf(why, whylen, "%s: an MPI column does not read", s->src->paths[file]);
    return 1;
}

uint64_t *sp_run_source_event_bases(const sp_run_source *src)
{
    /* sp_load_run appends the files whole, in the order of their rows. */
    uint64_t *base = calloc(src->num_paths + 1, sizeof *base);
    unsigned char *seen = calloc(src->num_paths + 1, 1);
    if (!base || !seen) {
        free(base);
        free(seen);
        return NULL;
    }
    uint64_t next = 0;
    for (size_t r = 0; r < src->profile->num_rows; r++) {
        size_t f = src->row_file[r];
        if (!seen[f]) {
            seen[f] = 1;
            base[f] = next;
            next += src->shapes[f].num_events;
        }
    }
    free(seen);
    return base;
}

typedef struct based {
    uint64_t base;
    size_t file;
} based;

static int by_base(const void *a, const void *b)
{
    const based *x = a, *y = b;
    if (x->base != y->base)
        return x->base < y->base ? -1 : 1;
    return (x->file > y->file) - (x->file < y->file);
}

int sp_mpi_flows_stream_open(sp_mpi_flows_stream *s, const sp_run_source *src,
                             const uint32_t *ranks, long num_ranks, char *why, size_t whylen)
{
    memset(s, 0, sizeof *s);
    s->src = src;
    s->file = -1;
    s->why = why;
    s->whylen = whylen;
    /* As in memory: a column no file has leaves the run without flows. */
    s->on = 1;
    for (int k = 0; k < 5; k++) {
        int any = 0;
        for (size_t f = 0; f < src->num_paths; f++)
            any |= src->shapes[f].has_extra[flow_columns[k]];
        s->on &= any;
    }
    if (!s->on)
        return 0;
    s->budget = sp_flows_budget();
    if (!(s->file_base = sp_run_source_event_bases(src)) ||
        !(s->ranks = malloc(((size_t)num_ranks + 1) * sizeof *s->ranks)) ||
        !(s->by_base = malloc((src->num_paths + 1) * sizeof *s->by_base)) ||
        !(s->window = malloc(6 * WINDOW * sizeof *s->window)) ||
        !(s->sends = sp_ext_sort_new(sizeof(sp_mpi_end), sp_mpi_end_by_key, s->budget / 2)) ||
        !(s->recvs = sp_ext_sort_new(sizeof(sp_mpi_end), sp_mpi_end_by_key, s->budget / 2)))
        return -1;
    if (num_ranks > 0)
        memcpy(s->ranks, ranks, (size_t)num_ranks * sizeof *ranks);
    s->num_ranks = num_ranks;
    /* the files with rows and events, by base: the file of a kept event,
     * the start of a slice of flow ends */
    based *v = calloc(src->num_paths + 1, sizeof *v);
    unsigned char *seen = calloc(src->num_paths + 1, 1);
    if (!v || !seen) {
        free(v);
        free(seen);
        return -1;
    }
    for (size_t r = 0; r < src->profile->num_rows; r++)
        seen[src->row_file[r]] = 1;
    size_t n = 0;
    for (size_t f = 0; f < src->num_paths; f++)
        if (seen[f] && src->shapes[f].num_events)
            v[n++] = (based){s->file_base[f], f};
    qsort(v, n, sizeof *v, by_base);
    for (size_t i = 0; i < n; i++)
        s->by_base[i] = v[i].file;
    s->num_by_base = n;
    free(v);
    free(seen);
    return 0;
}

uint64_t sp_mpi_flows_stream_event(const sp_mpi_flows_stream *s, size_t row, uint64_t call_index)
{
    return s->file_base[s->src->row_file[row]] + s->src->profile->rows[row].offset + call_index;
}

static void fail(sp_mpi_flows_stream *s, int rc)
{
    if (rc < 0)
        snprintf(s->why, s->whylen,
                 "MPI message ends: out of memory, or a temporary file failed");
    s->failed = 1;
}

/* The marked file's kept ends into the sorts; the marks cleared. */
static int flush(sp_mpi_flows_stream *s)
{
    if (s->file < 0)
        return 0;
    const sp_profile *p = s->src->profile;
    reading rd = {.src = s->src, .file = -1};
    for (int k = 0; k < 6; k++)
        rd.col[k] = s->window + (size_t)k * WINDOW;
    int rc = 0;
    for (size_t r = 0; rc == 0 && r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        if ((long)s->src->row_file[r] != s->file || !row->count || row->offset > s->hi ||
            row->offset + row->count <= s->lo || !in_ranks(s->ranks, s->num_ranks, row->rank))
            continue;
        rc = row_ends(s, &rd, r, s->why, s->whylen);
    }
    sp_h5_event_reader_close(rd.reader);
    if (s->lo <= s->hi)
        memset(s->kept + (s->lo >> 3), 0, (size_t)((s->hi >> 3) - (s->lo >> 3) + 1));
    s->file = -1;
    if (rc != 0)
        fail(s, rc);
    return rc;
}

/* The file whose events hold e, -1 none. */
static long file_of(const sp_mpi_flows_stream *s, uint64_t e)
{
    size_t lo = 0, hi = s->num_by_base;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->file_base[s->by_base[mid]] <= e)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo)
        return -1;
    size_t f = s->by_base[lo - 1];
    return e - s->file_base[f] < s->src->shapes[f].num_events ? (long)f : -1;
}

void sp_mpi_flows_stream_keep(sp_mpi_flows_stream *s, uint64_t event)
{
    if (!s->on || s->failed)
        return;
    long f = s->file;
    if (f < 0 || event < s->file_base[f] ||
        event - s->file_base[f] >= s->src->shapes[f].num_events) {
        if (flush(s) != 0 || (f = file_of(s, event)) < 0)
            return;
        size_t bytes = (size_t)(s->src->shapes[f].num_events / 8 + 1);
        if (bytes > s->kept_cap) {
            unsigned char *grown = realloc(s->kept, bytes);
            if (!grown) {
                fail(s, -1);
                return;
            }
            memset(grown + s->kept_cap, 0, bytes - s->kept_cap);
            s->kept = grown;
            s->kept_cap = bytes;
        }
        s->file = f;
        s->lo = UINT64_MAX;
        s->hi = 0;
    }
    uint64_t pos = event - s->file_base[f];
    s->kept[pos >> 3] |= (unsigned char)(1u << (pos & 7));
    if (pos < s->lo)
        s->lo = pos;
    if (pos > s->hi)
        s->hi = pos;
}

void sp_mpi_flows_stream_push(sp_mpi_flows_stream *s, const sp_mpi_end *end, int send)
{
    if (!s->on || s->failed)
        return;
    int rc = sp_ext_sort_push(send ? s->sends : s->recvs, end);
    if (rc != 0)
        fail(s, rc);
}

int sp_mpi_flows_stream_pair(sp_mpi_flows_stream *s, sp_mpi_flows *out)
{
    *out = (sp_mpi_flows){0};
    if (!s->on)
        return 0;
    if (!s->failed)
        flush(s);
    if (s->failed)
        return 1;
    int rc;
    if (!sp_ext_sort_spilled(s->sends) && !sp_ext_sort_spilled(s->recvs)) {
        /* under the budget: as before, in memory */
        size_t ns = 0, nr = 0;
        sp_mpi_end *sends = sp_ext_sort_take(s->sends, &ns);
        sp_mpi_end *recvs = sp_ext_sort_take(s->recvs, &nr);
        if (!sends)
            sends = malloc(sizeof *sends);
        if (!recvs)
            recvs = malloc(sizeof *recvs);
        if (sends && recvs) {
            rc = sp_mpi_flows_pair(sends, ns, recvs, nr, out); /* frees them */
        } else {
            free(sends);
            free(recvs);
            rc = -1;
        }
    } else {
        /* the flow ends in the order the writers meet the calls: on the
         * stream's time axis, each rank's clock offset removed */
        int64_t *offsets = malloc(((size_t)s->num_ranks + 1) * sizeof *offsets);
        for (long k = 0; offsets && k < s->num_ranks; k++)
            offsets[k] = sp_rank_clock_offset(s->src->profile, s->ranks[k]);
        sp_mpi_rank_offsets by_rank = {s->ranks, offsets, (size_t)s->num_ranks};
        rc = offsets ? sp_mpi_flows_pair_external(s->sends, s->recvs, s->budget, &by_rank, out)
                     : -1;
        free(offsets);
        /* (the tests check that their tiny budget took this path) */
        const char *trace = getenv("SCOPEPROF_EXPORT_TRACE");
        if (rc == 0 && trace && !strcmp(trace, "1")) {
            if (out->file)
                fprintf(stderr,
                        "scopeprof export: MPI message ends past the budget (%zu bytes): "
                        "paired through temporary files, flow ends read in windows of %zu\n",
                        s->budget, sp_mpi_flows_file_window(out->file));
            else
                fprintf(stderr,
                        "scopeprof export: MPI message ends past the budget (%zu bytes): "
                        "paired through temporary files, flow ends in memory\n",
                        s->budget);
        }
    }
    sp_ext_sort_free(s->sends);
    sp_ext_sort_free(s->recvs);
    s->sends = s->recvs = NULL;
    if (rc != 0) {
        sp_mpi_flows_free(out);
        fail(s, rc);
        return 1;
    }
    return 0;
}

void sp_mpi_flows_stream_close(sp_mpi_flows_stream *s)
{
    free(s->file_base);
    free(s->ranks);
    free(s->by_base);
    free(s->kept);
    free(s->window);
    sp_ext_sort_free(s->sends);
    sp_ext_sort_free(s->recvs);
    memset(s, 0, sizeof *s);
}
