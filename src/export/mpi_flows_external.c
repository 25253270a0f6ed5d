/* mpi_flows_external.c - pairing the message ends of a streamed export past
 * its memory budget (mpi_flows.h): merges of sorted runs in place of the
 * in-place sorts of sp_mpi_flows_pair, with the same message ids. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "ext_sort.h"
#include "model/temp_file.h"
#include "mpi_flows.h"

/* A flow end in the order the writers look calls up: rank by rank, each
 * rank's calls by start (the stream's order: start ascending on the rank's
 * time axis), then event, the send before the receive. */
typedef struct ordered_end {
    uint32_t rank;
    uint32_t send;
    int64_t start;            /* the call's start as the stream hands it */
    uint64_t event;
    uint64_t id;
    int64_t bytes;            /* the send's sent bytes (both ends) */
} ordered_end;

struct sp_mpi_flows_file {
    int fd;
    uint64_t count;           /* records in the file, in call order */
    ordered_end *window;      /* records [at, at + n) */
    size_t cap;               /* records per window */
    uint64_t at;
    size_t n;
    int loaded;
    /* every record before `at` is before this lookup (the one that loaded
     * the window): a lookup not before it finds its ends from `at` on */
    ordered_end below;
    uint64_t reads, seeks;    /* windows read; lookups that went back (or far) */
    sp_mpi_flow_end found[2]; /* the ends handed out */
};

typedef struct key {
    int64_t src, dst, tag, comm;
} key;

static key key_of(const sp_mpi_end *e)
{
    return (key){e->src, e->dst, e->tag, e->comm};
}

static int key_cmp(const key *x, const key *y)
{
    const int64_t kx[4] = {x->src, x->dst, x->tag, x->comm};
    const int64_t ky[4] = {y->src, y->dst, y->tag, y->comm};
    for (int i = 0; i < 4; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

/* The merged order of one list of ends, one record ahead. */
typedef struct cursor {
    sp_ext_sort *sort;
    sp_mpi_end head;
    int has;
} cursor;

static void advance(cursor *c)
{
    const sp_mpi_end *e = sp_ext_sort_next(c->sort);
    c->has = e != NULL;
    if (e)
        c->head = *e;
}

static int start(cursor *c, sp_ext_sort *sort)
{
    c->sort = sort;
    if (sp_ext_sort_rewind(sort) != 0)
        return -1;
    advance(c);
    return 0;
}

/* The smaller key of the two heads (at least one has one). */
static key next_key(const cursor *a, const cursor *b)
{
    if (!a->has)
        return key_of(&b->head);
    if (!b->has)
        return key_of(&a->head);
    key ka = key_of(&a->head), kb = key_of(&b->head);
    return key_cmp(&ka, &kb) <= 0 ? ka : kb;
}

/* Skip the ends of key k at the head of c: how many. */
static uint64_t skip_key(cursor *c, const key *k)
{
    uint64_t n = 0;
    while (c->has) {
        key h = key_of(&c->head);
        if (key_cmp(&h, k) != 0)
            break;
        n++;
        advance(c);
    }
    return n;
}

static int flow_by_event(const void *a, const void *b)
{
    const sp_mpi_flow_end *x = a, *y = b;
    if (x->event != y->event)
        return x->event < y->event ? -1 : 1;
    return (y->send > x->send) - (y->send < x->send);
}

static int by_call_order(const void *a, const void *b)
{
    const ordered_end *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->event != y->event)
        return x->event < y->event ? -1 : 1;
    return (y->send > x->send) - (y->send < x->send);
}

/* The clock offset the stream removes from `rank`'s times (0 unknown). */
static int64_t offset_of(const sp_mpi_rank_offsets *o, uint64_t rank)
{
    size_t lo = 0, hi = o ? o->num : 0;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (o->ranks[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return o && lo < o->num && o->ranks[lo] == rank ? o->offsets[lo] : 0;
}

/* An end of the pairing, keyed as the writer meets its call; bytes: its
 * message's sent bytes. */
static ordered_end ordered(const sp_mpi_end *e, int send, uint64_t id, int64_t bytes,
                           const sp_mpi_rank_offsets *o)
{
    ordered_end r;
    memset(&r, 0, sizeof r); /* (no padding, but the records go to a file) */
    r.rank = (uint32_t)(send ? e->src : e->dst);
    r.send = (uint32_t)send;
    /* as rank_stream.c: the call's start minus the rank's offset */
    r.start = (int64_t)((uint64_t)e->start - (uint64_t)offset_of(o, r.rank));
    r.event = e->event;
    r.id = id;
    r.bytes = bytes;
    return r;
}

/* Pass 1: the keys whose send and receive counts differ, in key order. */
static int mismatched_keys(sp_ext_sort *sends, sp_ext_sort *recvs, key **out, size_t *num)
{
    cursor a = {0}, b = {0};
    key *v = NULL;
    size_t n = 0, cap = 0;
    if (start(&a, sends) != 0 || start(&b, recvs) != 0)
        return -1;
    while (a.has || b.has) {
        key k = next_key(&a, &b);
        uint64_t na = skip_key(&a, &k), nb = skip_key(&b, &k);
        if (na == nb)
            continue;
        if (n == cap) {
            size_t grown_cap = cap ? 2 * cap : 64;
            key *grown = realloc(v, grown_cap * sizeof *grown);
            if (!grown) {
                free(v);
                return -1;
            }
            v = grown;
            cap = grown_cap;
        }
        v[n++] = k;
    }
    if (sp_ext_sort_failed(sends) || sp_ext_sort_failed(recvs)) {
        free(v);
        return -1;
    }
    *out = v;
    *num = n;
    return 0;
}

/* Pass 2: the paired ends, numbered in key order, into flows; the counts
 * of messages and ends left out into out. */
static int number_pairs(sp_ext_sort *sends, sp_ext_sort *recvs, const key *bad, size_t num_bad,
                        const sp_mpi_rank_offsets *offsets, sp_ext_sort *flows, sp_mpi_flows *out)
{
    cursor a = {0}, b = {0};
    if (start(&a, sends) != 0 || start(&b, recvs) != 0)
        return -1;
    size_t m = 0;
    while (a.has || b.has) {
        key k = next_key(&a, &b);
        while (m < num_bad && key_cmp(&bad[m], &k) < 0)
            m++;
        if (m < num_bad && key_cmp(&bad[m], &k) == 0) {
            out->unpaired += skip_key(&a, &k) + skip_key(&b, &k);
            continue;
        }
        /* counts equal (pass 1): both heads are on k, as many of each */
        for (;;) {
            if (!a.has || !b.has)
                break;
            key ka = key_of(&a.head);
            if (key_cmp(&ka, &k) != 0)
                break;
            uint64_t id = ++out->messages;
            int64_t sent = a.head.bytes; /* the receive's MPI_RECV length */
            ordered_end x = ordered(&a.head, 1, id, sent, offsets),
                        y = ordered(&b.head, 0, id, sent, offsets);
            if (sp_ext_sort_push(flows, &x) != 0 || sp_ext_sort_push(flows, &y) != 0)
                return -1;
            advance(&a);
            advance(&b);
        }
    }
    return sp_ext_sort_failed(sends) || sp_ext_sort_failed(recvs) ? -1 : 0;
}

/* Records per window of the file: an eighth of the budget, at most 160 KiB
 * (the writers read it forward), at least 4 (an event's ends are at most 2,
 * and they always fit in one window). */
static size_t window_records(size_t budget)
{
    size_t n = budget / 8 / sizeof(ordered_end);
    return n < 4 ? 4 : n > 4096 ? 4096 : n;
}

/* The flow ends, merged in call order, into one temporary file. */
static sp_mpi_flows_file *write_file(sp_ext_sort *flows, size_t budget)
{
    sp_mpi_flows_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->fd = -1;
    f->cap = window_records(budget);
    f->window = malloc(f->cap * sizeof *f->window);
    if (!f->window || (f->fd = sp_temp_file_open("scopeprof-flows")) < 0)
        goto fail;
    /* the window is the write buffer too */
    size_t n = 0;
    const ordered_end *e;
    while ((e = sp_ext_sort_next(flows)) != NULL) {
        f->window[n++] = *e;
        if (n == f->cap) {
            if (sp_temp_file_write(f->fd, f->window, n * sizeof *e,
                                   (off_t)(f->count * sizeof *e)))
                goto fail;
            f->count += n;
            n = 0;
        }
    }
    if (sp_ext_sort_failed(flows) ||
        sp_temp_file_write(f->fd, f->window, n * sizeof *f->window,
                           (off_t)(f->count * sizeof *f->window)))
        goto fail;
    f->count += n;
    return f;
fail:
    sp_mpi_flows_file_free(f);
    return NULL;
}

/* The records of the sort (in memory) as flow ends by event, as
 * sp_mpi_flows_pair leaves them: 32 bytes written over 40, in place. */
static sp_mpi_flow_end *to_flow_ends(ordered_end *v, size_t n)
{
    char *base = (char *)v;
    for (size_t i = 0; i < n; i++) {
        ordered_end r;
        memcpy(&r, base + i * sizeof r, sizeof r);
        sp_mpi_flow_end f;
        memset(&f, 0, sizeof f);
        f.event = r.event;
        f.id = r.id;
        f.bytes = r.bytes;
        f.send = (int)r.send;
        memcpy(base + i * sizeof f, &f, sizeof f);
    }
    sp_mpi_flow_end *ends = realloc(base, n * sizeof *ends + 1); /* (smaller: kept if NULL) */
    if (!ends)
        ends = (sp_mpi_flow_end *)(void *)base;
    sp_sort_in_place(ends, n, sizeof *ends, flow_by_event);
    return ends;
}

int sp_mpi_flows_pair_external(sp_ext_sort *sends, sp_ext_sort *recvs, size_t budget,
                               const sp_mpi_rank_offsets *offsets, sp_mpi_flows *out)
{
    *out = (sp_mpi_flows){0};
    key *bad = NULL;
    size_t num_bad = 0;
    /* 3/4 of the budget: the merges of sends and recvs read beside it */
    sp_ext_sort *flows = sp_ext_sort_new(sizeof(ordered_end), by_call_order, budget / 4 * 3);
    int rc = -1;
    if (flows && sp_ext_sort_finish(sends) == 0 && sp_ext_sort_finish(recvs) == 0 &&
        mismatched_keys(sends, recvs, &bad, &num_bad) == 0 &&
        number_pairs(sends, recvs, bad, num_bad, offsets, flows, out) == 0) {
        out->num_ends = sp_ext_sort_count(flows);
        if (!sp_ext_sort_spilled(flows)) {
            /* they fit: the in-memory lookup, sorted as sp_mpi_flows_pair */
            size_t n = 0;
            ordered_end *v = sp_ext_sort_take(flows, &n);
            out->ends = v ? to_flow_ends(v, n) : NULL;
            rc = 0;
        } else if (sp_ext_sort_finish(flows) == 0 &&
                   (out->file = write_file(flows, budget)) != NULL) {
            rc = 0;
        }
    }
    free(bad);
    sp_ext_sort_free(flows);
    if (rc != 0)
        sp_mpi_flows_free(out);
    return rc;
}

/* ---- Reading the file in windows ------------------------------------------ */

/* A record against the lookup (rank, start, event). */
static int against(const ordered_end *r, uint32_t rank, int64_t start, uint64_t event)
{
    if (r->rank != rank)
        return r->rank < rank ? -1 : 1;
    if (r->start != start)
        return r->start < start ? -1 : 1;
    if (r->event != event)
        return r->event < event ? -1 : 1;
    return 0;
}

/* The window from record `at`: 0, or -1. */
static int load(sp_mpi_flows_file *f, uint64_t at)
{
    uint64_t left = f->count - at;
    size_t n = left < f->cap ? (size_t)left : f->cap;
    f->loaded = 0;
    if (sp_temp_file_read(f->fd, f->window, n * sizeof *f->window,
                          (off_t)(at * sizeof *f->window)) != 0)
        return -1;
    f->at = at;
    f->n = n;
    f->loaded = 1;
    f->reads++;
    return 0;
}

static void note_below(sp_mpi_flows_file *f, uint32_t rank, int64_t start, uint64_t event)
{
    f->below.rank = rank;
    f->below.start = start;
    f->below.event = event;
}

/* Record `i` against the lookup: -1 before it, 1 not; 2 a read failed. */
static int probe(sp_mpi_flows_file *f, uint64_t i, uint32_t rank, int64_t start, uint64_t event)
{
    ordered_end r;
    if (sp_temp_file_read(f->fd, &r, sizeof r, (off_t)(i * sizeof r)) != 0)
        return 2;
    return against(&r, rank, start, event) < 0 ? -1 : 1;
}

/* The window from the first record not before the lookup: a galloping
 * search from the window (calls starting together that the stream takes
 * out of event order are a few records back), one record read per step.
 * 0, or -1. */
static int seek(sp_mpi_flows_file *f, uint32_t rank, int64_t start, uint64_t event)
{
    /* [lo, hi): the first record not before the lookup is in it */
    uint64_t lo = 0, hi = f->count, p = f->at < f->count ? f->at : f->count - 1;
    int c = probe(f, p, rank, start, event);
    if (c == 2)
        return -1;
    for (uint64_t step = 1;; step *= 2) {
        if (c > 0) { /* p not before: the bound is at p or back */
            hi = p;
            if (p == 0)
                break;
            uint64_t q = p > step ? p - step : 0;
            if ((c = probe(f, q, rank, start, event)) == 2)
                return -1;
            if (c < 0) {
                lo = q + 1;
                break;
            }
            p = q;
        } else { /* p before: ahead */
            lo = p + 1;
            if (lo >= f->count)
                break;
            uint64_t q = f->count - p > step ? p + step : f->count - 1;
            if ((c = probe(f, q, rank, start, event)) == 2)
                return -1;
            if (c > 0) {
                hi = q;
                break;
            }
            p = q;
        }
    }
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if ((c = probe(f, mid, rank, start, event)) == 2)
            return -1;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    f->seeks++;
    return load(f, lo < f->count ? lo : f->count - 1);
}

/* How far ahead a lookup may be for the window to read on to it rather
 * than seek (in windows). */
enum { READ_ON = 4 };

const sp_mpi_flow_end *sp_mpi_flows_file_at(sp_mpi_flows_file *f, uint32_t rank, int64_t start,
                                            uint64_t e, size_t *count)
{
    *count = 0;
    if (!f->count)
        return f->found;
    int steps = 0;
    if (!f->loaded) {
        if (load(f, 0) != 0) /* the first lookup: from the first record */
            goto failed;
    } else if (f->at > 0 && against(&f->below, rank, start, e) > 0) {
        /* back (another lane's pass, calls of one start out of event
         * order): its ends may be before the window */
        if (seek(f, rank, start, e) != 0)
            goto failed;
    }
    note_below(f, rank, start, e);
    for (;;) {
        /* the first record of the window not before the lookup */
        size_t lo = 0, hi = f->n;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (against(&f->window[mid], rank, start, e) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == f->n && f->at + f->n < f->count) {
            /* ahead of the window: read on (the writers' next calls), or
             * seek when the lookup is far ahead */
            int rc = ++steps > READ_ON ? seek(f, rank, start, e) : load(f, f->at + f->n);
            if (rc != 0)
                goto failed;
            continue;
        }
        size_t k = lo;
        while (k < f->n && against(&f->window[k], rank, start, e) == 0)
            k++;
        if (k == f->n && lo > 0 && f->at + f->n < f->count) {
            /* the event's ends may go on past the window */
            if (load(f, f->at + lo) != 0)
                goto failed;
            continue;
        }
        for (size_t i = lo; i < k && *count < 2; i++) {
            sp_mpi_flow_end *out = &f->found[(*count)++];
            out->event = f->window[i].event;
            out->id = f->window[i].id;
            out->bytes = f->window[i].bytes;
            out->send = (int)f->window[i].send;
        }
        return f->found;
    }
failed:
    /* a read of our own unlinked file failed: no flows here (the trace
     * stays well formed) */
    f->loaded = 0;
    f->at = f->n = 0;
    return f->found;
}

uint64_t sp_mpi_flows_file_seeks(const sp_mpi_flows_file *f)
{
    return f ? f->seeks : 0;
}

size_t sp_mpi_flows_file_window(const sp_mpi_flows_file *f)
{
    return f ? f->cap : 0;
}

void sp_mpi_flows_file_free(sp_mpi_flows_file *f)
{
    if (!f)
        return;
    /* (the tests check that the writers read the file forward) */
    const char *trace = getenv("SCOPEPROF_EXPORT_TRACE");
    if (trace && !strcmp(trace, "1"))
        fprintf(stderr,
                "scopeprof export: flow ends: %llu in the file, %llu windows read, %llu "
                "lookups sought back\n",
                (unsigned long long)f->count, (unsigned long long)f->reads,
                (unsigned long long)f->seeks);
    if (f->fd >= 0)
        close(f->fd);
    free(f->window);
    free(f);
}
