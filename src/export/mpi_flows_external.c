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

struct sp_mpi_flows_file {
    int fd;
    uint64_t *bounds;         /* slice i: events [bounds[i], bounds[i + 1]) */
    size_t num_bounds;
    uint64_t *first;          /* num_bounds + 1: the first end of each slice */
    size_t loaded;            /* the slice in memory, num_bounds: none */
    sp_mpi_flow_end *slice;
    size_t slice_n, slice_cap;
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
                        sp_ext_sort *flows, sp_mpi_flows *out)
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
            sp_mpi_flow_end s, r; /* padding zeroed: the records go to a file */
            memset(&s, 0, sizeof s);
            memset(&r, 0, sizeof r);
            s.event = a.head.event;
            r.event = b.head.event;
            s.id = r.id = id;
            s.send = 1;
            if (sp_ext_sort_push(flows, &s) != 0 || sp_ext_sort_push(flows, &r) != 0)
                return -1;
            advance(&a);
            advance(&b);
        }
    }
    return sp_ext_sort_failed(sends) || sp_ext_sort_failed(recvs) ? -1 : 0;
}

/* The flow ends, merged by event, into one temporary file cut in slices. */
static sp_mpi_flows_file *write_slices(sp_ext_sort *flows, const uint64_t *bounds,
                                       size_t num_bounds)
{
    sp_mpi_flows_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->fd = -1;
    f->num_bounds = num_bounds;
    f->loaded = num_bounds;
    f->bounds = malloc((num_bounds + 1) * sizeof *f->bounds);
    f->first = calloc(num_bounds + 2, sizeof *f->first);
    enum { CHUNK = 4096 };
    sp_mpi_flow_end *chunk = malloc(CHUNK * sizeof *chunk);
    if (!f->bounds || !f->first || !chunk || (f->fd = sp_temp_file_open("scopeprof-flows")) < 0)
        goto fail;
    if (num_bounds)
        memcpy(f->bounds, bounds, num_bounds * sizeof *bounds);
    size_t n = 0, slice = 0;
    uint64_t written = 0;
    const sp_mpi_flow_end *e;
    while ((e = sp_ext_sort_next(flows)) != NULL) {
        /* slice i holds the ends of the events from bounds[i] on */
        while (slice + 1 < num_bounds && e->event >= bounds[slice + 1])
            f->first[++slice] = written + n;
        chunk[n++] = *e;
        if (n == CHUNK) {
            if (sp_temp_file_write(f->fd, chunk, n * sizeof *chunk, (off_t)(written * sizeof *chunk)))
                goto fail;
            written += n;
            n = 0;
        }
    }
    if (sp_ext_sort_failed(flows) ||
        sp_temp_file_write(f->fd, chunk, n * sizeof *chunk, (off_t)(written * sizeof *chunk)))
        goto fail;
    written += n;
    while (slice < num_bounds)
        f->first[++slice] = written;
    free(chunk);
    return f;
fail:
    free(chunk);
    sp_mpi_flows_file_free(f);
    return NULL;
}

int sp_mpi_flows_pair_external(sp_ext_sort *sends, sp_ext_sort *recvs, size_t budget,
                               const uint64_t *bounds, size_t num_bounds, sp_mpi_flows *out)
{
    *out = (sp_mpi_flows){0};
    key *bad = NULL;
    size_t num_bad = 0;
    /* 3/4 of the budget: the merges of sends and recvs read beside it */
    sp_ext_sort *flows =
        sp_ext_sort_new(sizeof(sp_mpi_flow_end), flow_by_event, budget / 4 * 3);
    int rc = -1;
    if (flows && sp_ext_sort_finish(sends) == 0 && sp_ext_sort_finish(recvs) == 0 &&
        mismatched_keys(sends, recvs, &bad, &num_bad) == 0 &&
        number_pairs(sends, recvs, bad, num_bad, flows, out) == 0) {
        out->num_ends = sp_ext_sort_count(flows);
        if (!sp_ext_sort_spilled(flows)) {
            /* they fit: the in-memory lookup, sorted as sp_mpi_flows_pair */
            size_t n = 0;
            out->ends = sp_ext_sort_take(flows, &n);
            sp_sort_in_place(out->ends, n, sizeof *out->ends, flow_by_event);
            rc = 0;
        } else if (sp_ext_sort_finish(flows) == 0 &&
                   (out->file = write_slices(flows, bounds, num_bounds)) != NULL) {
            rc = 0;
        }
    }
    free(bad);
    sp_ext_sort_free(flows);
    if (rc != 0)
        sp_mpi_flows_free(out);
    return rc;
}

/* Load slice i: 0, or -1. */
static int load(sp_mpi_flows_file *f, size_t i)
{
    size_t n = (size_t)(f->first[i + 1] - f->first[i]);
    if (n > f->slice_cap) {
        sp_mpi_flow_end *grown = realloc(f->slice, n * sizeof *grown);
        if (!grown)
            return -1;
        f->slice = grown;
        f->slice_cap = n;
    }
    if (sp_temp_file_read(f->fd, f->slice, n * sizeof *f->slice,
                          (off_t)(f->first[i] * sizeof *f->slice)) != 0)
        return -1;
    f->slice_n = n;
    f->loaded = i;
    return 0;
}

const sp_mpi_flow_end *sp_mpi_flows_file_at(sp_mpi_flows_file *f, uint64_t e, size_t *count)
{
    *count = 0;
    if (!f->num_bounds || e < f->bounds[0])
        return f->slice;
    /* the last slice starting at or before e */
    size_t lo = 0, hi = f->num_bounds;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (f->bounds[mid] <= e)
            lo = mid;
        else
            hi = mid;
    }
    if (lo != f->loaded && load(f, lo) != 0) {
        /* a read of our own unlinked file failed: no flows here (the
         * trace stays well formed) */
        f->loaded = f->num_bounds;
        f->slice_n = 0;
        return f->slice;
    }
    sp_mpi_flows tmp = {.num_ends = f->slice_n, .ends = f->slice};
    return sp_mpi_flows_at(&tmp, e, count);
}

void sp_mpi_flows_file_free(sp_mpi_flows_file *f)
{
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    free(f->bounds);
    free(f->first);
    free(f->slice);
    free(f);
}
