/* graft_stream.c - forked work grafted under its fork parent while a rank
 * with fork edges (events/fork_parent_ids) streams: the tree of the
 * in-memory path's sp_rank_data_graft, built in the client's nodes
 * (graft_stream.h).
 *
 * Grafting: a kept call that is a root of its lane and has a kept fork
 * parent hangs under it, or, when it is of the fork parent's region (an
 * OpenMP worker's implicit task), takes the fork parent's node.  One
 * windowed read of the rank's fork parent ids before the stream counts,
 * per call id, the calls forked from it; the stream hands each call its
 * fork parent id (sp_stream_rank_forks), and a fork parent keeps its node
 * and key from its entry until it has exited and its forked calls have
 * used it.
 *
 * Node order: the in-memory path creates nodes in a preorder of the grafted
 * forest (children in reconstruction order), which the stream, in start
 * order, does not follow when calls of one node run on several lanes at
 * once.  Each call's preorder key is the list of reconstruction positions
 * of its grafted ancestors and itself; a node's first call in preorder is
 * its call with the smallest key (lexicographic).  Each node keeps that
 * key, and sp_graft_stream_order sorts the nodes by it, which is the
 * in-memory creation order.  When no call of the rank is grafted (every
 * fork parent filtered out, --no-graft) the in-memory path keeps the calls
 * in reconstruction order: the nodes are then sorted by their first call
 * in that order.
 *
 * A per-call hook that wants the calls in the in-memory order (the
 * comparison's statistics) gets each entry in preorder as soon as no call
 * to come can precede it (sink.deliver_enter; the waiting ones in a heap
 * by key).  Memory: a byte per call id, a key (depth + 1
 * values) per node and per live fork parent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/h5.h"
#include "stream/graft_stream.h"

#define READ_WINDOW 65536
#define NODE_MASK 0xffffffffll
#define LEN_MASK 0x3fffffffll
#define MERGED_BIT ((int64_t)1 << 62)

/* (a, b) -> v, open addressing; a == INT64_MIN marks a free slot. */
typedef struct pair_map {
    int64_t *a, *b, *v;
    size_t mask, n;
} pair_map;

static size_t pair_slot(const pair_map *m, int64_t a, int64_t b)
{
    uint64_t x = (uint64_t)a * 0x9e3779b97f4a7c15u ^ (uint64_t)b * 0xc2b2ae3d27d4eb4fu;
    x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9u;
    return (size_t)(x ^ (x >> 29)) & m->mask;
}

static int64_t *map_find(const pair_map *m, int64_t a, int64_t b)
{
    if (!m->n)
        return NULL;
    for (size_t s = pair_slot(m, a, b); m->a[s] != INT64_MIN; s = (s + 1) & m->mask)
        if (m->a[s] == a && m->b[s] == b)
            return &m->v[s];
    return NULL;
}

static int map_grow(pair_map *m)
{
    size_t cap = m->mask ? (m->mask + 1) * 2 : 64;
    pair_map g = {malloc(cap * sizeof *g.a), malloc(cap * sizeof *g.b), malloc(cap * sizeof *g.v),
                  cap - 1, m->n};
    if (!g.a || !g.b || !g.v) {
        free(g.a);
        free(g.b);
        free(g.v);
        return -1;
    }
    for (size_t s = 0; s < cap; s++)
        g.a[s] = INT64_MIN;
    for (size_t s = 0; m->mask && s <= m->mask; s++) {
        if (m->a[s] == INT64_MIN)
            continue;
        size_t t = pair_slot(&g, m->a[s], m->b[s]);
        while (g.a[t] != INT64_MIN)
            t = (t + 1) & g.mask;
        g.a[t] = m->a[s];
        g.b[t] = m->b[s];
        g.v[t] = m->v[s];
    }
    free(m->a);
    free(m->b);
    free(m->v);
    *m = g;
    return 0;
}

/* The value of (a, b), inserted as `v` when missing; NULL out of memory. */
static int64_t *map_get(pair_map *m, int64_t a, int64_t b, int64_t v)
{
    int64_t *found = map_find(m, a, b);
    if (found)
        return found;
    if ((m->n + 1) * 2 > (m->mask ? m->mask + 1 : 0) && map_grow(m) != 0)
        return NULL;
    size_t s = pair_slot(m, a, b);
    while (m->a[s] != INT64_MIN)
        s = (s + 1) & m->mask;
    m->a[s] = a;
    m->b[s] = b;
    m->v[s] = v;
    m->n++;
    return &m->v[s];
}

/* Removes (a, b) (linear probing: later entries of its cluster move up). */
static void map_remove(pair_map *m, int64_t a, int64_t b)
{
    int64_t *v = map_find(m, a, b);
    if (!v)
        return;
    size_t i = (size_t)(v - m->v);
    m->a[i] = INT64_MIN;
    m->n--;
    for (size_t j = (i + 1) & m->mask; m->a[j] != INT64_MIN; j = (j + 1) & m->mask) {
        size_t home = pair_slot(m, m->a[j], m->b[j]);
        /* j stays if its home lies cyclically in (i, j] */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        m->a[i] = m->a[j];
        m->b[i] = m->b[j];
        m->v[i] = m->v[j];
        m->a[j] = INT64_MIN;
        i = j;
    }
}

static void map_free(pair_map *m)
{
    free(m->a);
    free(m->b);
    free(m->v);
    memset(m, 0, sizeof *m);
}

typedef struct key {
    int64_t *at;
    uint32_t len, cap;
    int64_t first;            /* a node's: its first call in reconstruction order */
} key;

static int key_set(key *k, const int64_t *at, uint32_t len)
{
    if (len > k->cap) {
        int64_t *grown = realloc(k->at, len * sizeof *grown);
        if (!grown)
            return -1;
        k->at = grown;
        k->cap = len;
    }
    memcpy(k->at, at, len * sizeof *at);
    k->len = len;
    return 0;
}

static int key_cmp(const int64_t *x, uint32_t nx, const int64_t *y, uint32_t ny)
{
    for (uint32_t i = 0; i < nx && i < ny; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return (nx > ny) - (nx < ny);
}

typedef struct fork_parent {
    int64_t id;
    int kept, exited, has_merged, counted;
    uint32_t region;
    int64_t node, lane, end, duration;
    key chain;                /* its preorder key */
    int64_t *pending;         /* ends of merged calls that ended before it */
    size_t num_pending, cap_pending;
} fork_parent;

typedef struct lane_chain {
    int64_t lane;
    key chain;                /* keys of the lane's open kept calls: prefixes */
    uint32_t open;            /* kept calls open on the lane */
    uint32_t open_len;        /* the key length of the innermost of them */
    /* sink.deliver_enter: per key position, the waiting record of the open
     * call there (-1: handed over already) */
    int64_t *rec;
    uint32_t rec_cap;
} lane_chain;

/* sink.deliver_enter: a kept call waiting for its turn in preorder */
typedef struct waiting {
    key k;
    int64_t node;
    sp_stream_call call;
    int exited;               /* its exit came: handed over right after */
    int64_t exclusive;
    size_t lane;              /* index in lanes, and key position: its rec slot */
    uint32_t pos;
} waiting;

struct sp_graft_stream {
    sp_graft_sink sink;
    int graft;
    /* per call id: how many calls name it their fork parent (255: many);
     * a fork parent is kept from its entry until it has exited and its
     * forked calls have used it */
    uint8_t *refs;
    uint64_t limit;           /* call ids below it */
    uint64_t num_parent_ids, parents_seen;
    pair_map parent_of;       /* fork parent id -> index in parents */
    fork_parent *parents;
    size_t num_parents, cap_parents;
    size_t *free_parents;     /* indices free for reuse */
    size_t num_free;
    pair_map lane_ns;         /* (node, own lane) -> merged time (sink.lane_time) */
    lane_chain *lanes;
    size_t num_lanes, cached_lane;
    key *node_key;            /* per node: its first call's preorder key */
    size_t cap_keys;
    size_t num_keyed;         /* nodes with a key */
    int64_t seq;              /* calls entered: reconstruction order */
    /* whether a call was grafted: the in-memory path then orders the
     * calls in a preorder of the grafted forest, else keeps them in
     * reconstruction order (sp_rank_data_graft) */
    int any_grafted;
    /* sink.deliver_enter: the waiting calls (a slab with a free list) and
     * a heap of their indices by key */
    waiting *recs;
    size_t num_recs, cap_recs;
    size_t *free_recs;
    size_t num_free_recs;
    size_t *heap;
    size_t num_waiting, cap_heap;
    int fell_back;
    char why[256];
};

static int fall_back(sp_graft_stream *fs, const char *why)
{
    fs->fell_back = 1;
    snprintf(fs->why, sizeof fs->why, "%s", why);
    return -1;
}

static fork_parent *parent_entry(const sp_graft_stream *fs, int64_t id)
{
    int64_t *ix = id >= 0 ? map_find(&fs->parent_of, id, 0) : NULL;
    return ix ? &fs->parents[*ix] : NULL;
}

/* A new entry for fork parent `id`; NULL out of memory. */
static fork_parent *add_parent(sp_graft_stream *fs, int64_t id)
{
    size_t ix;
    if (fs->num_free) {
        ix = fs->free_parents[--fs->num_free];
    } else {
        if (fs->num_parents == fs->cap_parents) {
            size_t cap = fs->cap_parents ? fs->cap_parents * 2 : 16;
            fork_parent *grown = realloc(fs->parents, cap * sizeof *grown);
            size_t *free_grown = realloc(fs->free_parents, cap * sizeof *free_grown);
            if (grown)
                fs->parents = grown;
            if (free_grown)
                fs->free_parents = free_grown;
            if (!grown || !free_grown)
                return NULL;
            fs->cap_parents = cap;
        }
        ix = fs->num_parents++;
    }
    if (!map_get(&fs->parent_of, id, 0, (int64_t)ix)) {
        fs->free_parents[fs->num_free++] = ix;
        return NULL;
    }
    fork_parent *f = &fs->parents[ix];
    memset(f, 0, sizeof *f);
    f->id = id;
    return f;
}

static void drop_parent(sp_graft_stream *fs, fork_parent *f)
{
    free(f->chain.at);
    free(f->pending);
    map_remove(&fs->parent_of, f->id, 0);
    fs->free_parents[fs->num_free++] = (size_t)(f - fs->parents);
    memset(f, 0, sizeof *f);
}

/* A forked call is done with its fork parent. */
static void release(sp_graft_stream *fs, fork_parent *f)
{
    uint8_t *r = &fs->refs[f->id];
    if (*r > 0 && *r < 255)
        (*r)--;
    if (*r == 0 && f->exited)
        drop_parent(fs, f);
}

int sp_graft_stream_open(sp_graft_stream **out, const sp_run_source *src, uint32_t rank,
                         long file, int graft, const sp_graft_sink *sink, char *why,
                         size_t whylen)
{
    *out = NULL;
    const sp_h5_event_shape *shape = &src->shapes[file];
    /* Stored call ids are the ids fork parents name, parent ids or not;
     * without them the in-memory path numbers the calls in reconstruction
     * order (rank_calls.c), which is the order the stream hands them in:
     * sp_stream_rank_forks numbers them so. */
    sp_graft_stream *fs = calloc(1, sizeof *fs);
    if (!fs)
        return -1;
    fs->sink = *sink;
    fs->graft = graft;
    /* ids are 0..n-1 in the files we and the Python package write */
    fs->limit = shape->num_events + 1024;
    fs->refs = calloc(fs->limit, 1);
    char err[1024];
    sp_h5_event_reader *r = fs->refs ? sp_h5_event_reader_open(src->paths[file], shape,
                                                               (size_t)4 << 20, err, sizeof err)
                                     : NULL;
    int64_t *forks = r ? malloc(READ_WINDOW * sizeof *forks) : NULL;
    int rc = !fs->refs ? -1 : !r ? 1 : forks ? 0 : -1;
    if (fs->refs && !r)
        snprintf(why, whylen, "%s", err);
    const sp_profile *p = src->profile;
    for (size_t row = 0; rc == 0 && row < p->num_rows; row++) {
        const sp_row *w = &p->rows[row];
        if (w->rank != rank || src->row_file[row] != (size_t)file)
            continue;
        for (uint64_t j = 0; rc == 0 && j < w->count; j += READ_WINDOW) {
            size_t n = w->count - j < READ_WINDOW ? (size_t)(w->count - j) : READ_WINDOW;
            if (sp_h5_event_reader_read(r, SP_H5_COL_FORK, w->offset + j, n, forks)) {
                snprintf(why, whylen, "events/fork_parent_ids does not read");
                rc = 1;
            }
            for (size_t k = 0; rc == 0 && k < n; k++) {
                int64_t v = forks[k];
                if (v == -1)
                    continue;
                if (v < 0 || (uint64_t)v >= fs->limit) {
                    snprintf(why, whylen, "fork parent ids beyond the stream's call id table");
                    rc = 1;
                } else {
                    fs->num_parent_ids += fs->refs[v] == 0;
                    if (fs->refs[v] < 255)
                        fs->refs[v]++;
                }
            }
        }
    }
    free(forks);
    sp_h5_event_reader_close(r);
    if (rc != 0) {
        if (rc < 0)
            snprintf(why, whylen, "out of memory");
        sp_graft_stream_free(fs);
        return rc;
    }
    *out = fs;
    return 0;
}

static lane_chain *lane_of(sp_graft_stream *fs, int64_t lane)
{
    if (fs->cached_lane < fs->num_lanes && fs->lanes[fs->cached_lane].lane == lane)
        return &fs->lanes[fs->cached_lane];
    for (size_t k = 0; k < fs->num_lanes; k++)
        if (fs->lanes[k].lane == lane) {
            fs->cached_lane = k;
            return &fs->lanes[k];
        }
    lane_chain *grown = realloc(fs->lanes, (fs->num_lanes + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    fs->lanes = grown;
    fs->cached_lane = fs->num_lanes;
    grown[fs->num_lanes] = (lane_chain){lane, {NULL, 0, 0, 0}, 0, 0, NULL, 0};
    return &grown[fs->num_lanes++];
}

/* Room for `len` values in a chain (its values kept). */
static int chain_room(key *k, uint32_t len)
{
    if (len <= k->cap)
        return 0;
    uint32_t cap = k->cap ? k->cap : 16;
    while (cap < len)
        cap *= 2;
    int64_t *grown = realloc(k->at, cap * sizeof *grown);
    if (!grown)
        return -1;
    k->at = grown;
    k->cap = cap;
    return 0;
}

/* The node's first call in preorder is this one if its key is smaller. */
static int note_key(sp_graft_stream *fs, int64_t node, const int64_t *at, uint32_t len)
{
    if ((size_t)node >= fs->cap_keys) {
        size_t cap = fs->cap_keys ? fs->cap_keys * 2 : 64;
        while (cap <= (size_t)node)
            cap *= 2;
        key *grown = realloc(fs->node_key, cap * sizeof *grown);
        if (!grown)
            return -1;
        memset(grown + fs->cap_keys, 0, (cap - fs->cap_keys) * sizeof *grown);
        fs->node_key = grown;
        fs->cap_keys = cap;
    }
    key *k = &fs->node_key[node];
    if (k->len && key_cmp(at, len, k->at, k->len) >= 0)
        return 0;
    if (k->len == 0) {
        fs->num_keyed++;
        k->first = at[len - 1]; /* calls come in reconstruction order */
    }
    return key_set(k, at, len);
}

/* ---- sink.deliver_enter: the calls in the in-memory path's order -------- */

/* Calls waiting before the stream gives up (the caller's in-memory path
 * then runs): about 150 bytes each. */
#define MAX_WAITING ((size_t)1 << 20)

static int rec_less(const sp_graft_stream *fs, size_t x, size_t y)
{
    const key *a = &fs->recs[x].k, *b = &fs->recs[y].k;
    return key_cmp(a->at, a->len, b->at, b->len) < 0;
}

/* Room for the lane's record slots up to key length len. */
static int rec_room(lane_chain *lane, uint32_t len)
{
    if (len <= lane->rec_cap)
        return 0;
    uint32_t cap = lane->rec_cap ? lane->rec_cap : 16;
    while (cap < len)
        cap *= 2;
    int64_t *grown = realloc(lane->rec, cap * sizeof *grown);
    if (!grown)
        return -1;
    lane->rec = grown;
    lane->rec_cap = cap;
    return 0;
}

/* A kept call as it enters: waits in the heap.  0 or -1 (fell_back set
 * when too many wait). */
static int wait_push(sp_graft_stream *fs, lane_chain *lane, uint32_t len, int64_t node,
                     const sp_stream_call *call)
{
    if (fs->num_waiting >= MAX_WAITING)
        return fall_back(fs, "more than 1 Mi grafted calls waiting for an earlier one");
    size_t r;
    if (fs->num_free_recs) {
        r = fs->free_recs[--fs->num_free_recs];
    } else {
        if (fs->num_recs == fs->cap_recs) {
            size_t cap = fs->cap_recs ? fs->cap_recs * 2 : 64;
            waiting *grown = realloc(fs->recs, cap * sizeof *grown);
            size_t *free_grown = realloc(fs->free_recs, cap * sizeof *free_grown);
            size_t *heap_grown = realloc(fs->heap, cap * sizeof *heap_grown);
            if (grown)
                fs->recs = grown;
            if (free_grown)
                fs->free_recs = free_grown;
            if (heap_grown)
                fs->heap = heap_grown;
            if (!grown || !free_grown || !heap_grown)
                return -1;
            fs->cap_recs = fs->cap_heap = cap;
        }
        r = fs->num_recs++;
    }
    waiting *w = &fs->recs[r];
    *w = (waiting){{NULL, 0, 0, 0}, node, *call, 0, 0, (size_t)(lane - fs->lanes), len - 1};
    w->call.mpi = NULL;
    if (key_set(&w->k, lane->chain.at, len) != 0) {
        fs->free_recs[fs->num_free_recs++] = r;
        return -1;
    }
    lane->rec[len - 1] = (int64_t)r;
    size_t i = fs->num_waiting++;
    while (i > 0 && rec_less(fs, r, fs->heap[(i - 1) / 2])) {
        fs->heap[i] = fs->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    fs->heap[i] = r;
    return 0;
}

/* The smallest waiting call to the sink (and its exit, when it came). */
static int wait_pop(sp_graft_stream *fs)
{
    size_t top = fs->heap[0], last = fs->heap[--fs->num_waiting];
    size_t i = 0, n = fs->num_waiting;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && rec_less(fs, fs->heap[c + 1], fs->heap[c]))
            c++;
        if (!rec_less(fs, fs->heap[c], last))
            break;
        fs->heap[i] = fs->heap[c];
        i = c;
    }
    if (n)
        fs->heap[i] = last;
    waiting *w = &fs->recs[top];
    int rc = fs->sink.deliver_enter(fs->sink.ctx, &w->call, w->node);
    if (rc == 0 && w->exited) {
        w->call.exclusive = w->exclusive;
        rc = fs->sink.deliver_exit(fs->sink.ctx, &w->call, w->node);
    } else if (!w->exited) {
        fs->lanes[w->lane].rec[w->pos] = -1; /* its exit goes straight on */
    }
    free(w->k.at);
    w->k.at = NULL;
    fs->free_recs[fs->num_free_recs++] = top;
    return rc;
}

/* Whether a call to come could precede key k: one under the open call (or
 * the live fork parent) of key b has key b + [s], s above every position
 * seen, which is below k when b and k first differ inside b with b's value
 * smaller. */
static int could_precede(const int64_t *b, uint32_t nb, const key *k)
{
    for (uint32_t i = 0; i < nb && i < k->len; i++)
        if (b[i] != k->at[i])
            return b[i] < k->at[i];
    return 0;
}

/* Whether a call to come could precede key k: the innermost open kept
 * call of each lane and every kept fork parent still live can have calls
 * to come under them.  (When it could precede k, it could precede every
 * larger key too.) */
static int blocked(const sp_graft_stream *fs, const key *k)
{
    for (size_t j = 0; j < fs->num_lanes; j++)
        if (fs->lanes[j].open && could_precede(fs->lanes[j].chain.at, fs->lanes[j].open_len, k))
            return 1;
    for (size_t j = 0; j < fs->num_parents; j++)
        if (fs->parents[j].kept &&
            could_precede(fs->parents[j].chain.at, fs->parents[j].chain.len, k))
            return 1;
    return 0;
}

/* Every waiting call no call to come can precede, to the sink, in key
 * order. */
static int deliver_ready(sp_graft_stream *fs)
{
    while (fs->num_waiting && !blocked(fs, &fs->recs[fs->heap[0]].k))
        if (wait_pop(fs) != 0)
            return -1;
    return 0;
}

/* A kept call entering (its key: the lane's chain up to len): to the sink
 * now when nothing waits and no call to come can precede it (the usual
 * case), else into the heap. */
static int deliver_entering(sp_graft_stream *fs, lane_chain *lane, uint32_t len, int64_t node,
                            const sp_stream_call *call)
{
    if (deliver_ready(fs) != 0 || rec_room(lane, len) != 0)
        return -1;
    key k = {lane->chain.at, len, 0, 0};
    if (fs->num_waiting || blocked(fs, &k))
        return wait_push(fs, lane, len, node, call) != 0 || deliver_ready(fs) != 0 ? -1 : 0;
    lane->rec[len - 1] = -1;
    return fs->sink.deliver_enter(fs->sink.ctx, call, node);
}

static int fork_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    sp_graft_stream *fs = ctx;
    fork_parent *self = NULL;
    if (call->call_id >= 0 && (uint64_t)call->call_id < fs->limit && fs->refs[call->call_id]) {
        if (map_find(&fs->parent_of, call->call_id, 0))
            return fall_back(fs, "a fork parent's call id twice");
        if (!(self = add_parent(fs, call->call_id)))
            return -1;
        fs->parents_seen++;
    }
    int64_t seq = fs->seq++;
    fork_parent *f = NULL;
    int64_t fid = call->fork_parent_id;
    if (fid >= 0 && fid == call->call_id)
        return fall_back(fs, "a call forked from itself");
    if (fid >= 0) {
        int64_t *ix = map_find(&fs->parent_of, fid, 0);
        if (!ix)
            return fall_back(fs, "a call starts before the call it was forked from");
        f = &fs->parents[*ix];
    }
    int keep = fs->sink.keep(fs->sink.ctx, call);
    if (self && !keep)
        self->exited = 1; /* never grafted under: done once its forked calls are */
    /* grafted: a kept root of its lane whose fork parent is kept */
    int grafted = f && keep && parent < 0 && fs->graft && f->kept;
    fs->any_grafted |= grafted;
    if (f && !grafted)
        release(fs, f);
    if (!keep) {
        *user = parent;
        return 0;
    }
    /* self may have moved (add_parent grows the array): look it up again */
    self = self ? &fs->parents[*map_find(&fs->parent_of, call->call_id, 0)] : NULL;
    if (f)
        f = grafted ? &fs->parents[*map_find(&fs->parent_of, fid, 0)] : NULL;
    lane_chain *lane = lane_of(fs, call->lane);
    if (!lane)
        return -1;
    int64_t node;
    uint32_t prefix;
    int merged = 0;
    if (parent >= 0) {
        prefix = (uint32_t)(parent >> 32 & LEN_MASK);
        node = fs->sink.node(fs->sink.ctx, parent & NODE_MASK, call);
    } else if (f) {
        merged = f->region == call->region;
        prefix = merged ? f->chain.len - 1 : f->chain.len;
        if (chain_room(&lane->chain, prefix + 1) != 0)
            return -1;
        memcpy(lane->chain.at, f->chain.at, prefix * sizeof *f->chain.at);
        node = merged ? f->node : fs->sink.node(fs->sink.ctx, f->node, call);
        if (!merged)
            release(fs, f); /* a merged call needs it until its exit */
    } else {
        prefix = 0;
        node = fs->sink.node(fs->sink.ctx, -1, call);
    }
    if (node < 0 || chain_room(&lane->chain, prefix + 1) != 0)
        return -1;
    if (node > 0x7fffffff || prefix + 1 > LEN_MASK)
        return fall_back(fs, "too many call paths or too deep to stream with fork edges");
    lane->chain.at[prefix] = seq;
    uint32_t len = prefix + 1;
    lane->open++;
    lane->open_len = len;
    if (note_key(fs, node, lane->chain.at, len) != 0)
        return -1;
    if (self) {
        self->kept = 1;
        self->region = call->region;
        self->node = node;
        if (key_set(&self->chain, lane->chain.at, len) != 0)
            return -1;
    }
    *user = node | (int64_t)len << 32 | (merged ? MERGED_BIT : 0);
    if (fs->sink.enter && fs->sink.enter(fs->sink.ctx, call, node) != 0)
        return -1;
    if (fs->sink.deliver_enter && deliver_entering(fs, lane, len, node, call) != 0)
        return -1;
    return 1;
}

static int add_lane_time(sp_graft_stream *fs, int64_t node, int64_t lane, int64_t ns)
{
    if (!fs->sink.lane_time)
        return 0;
    int64_t *sum = map_get(&fs->lane_ns, node, lane, 0);
    if (!sum)
        return -1;
    *sum += ns;
    return 0;
}

static int fork_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    sp_graft_stream *fs = ctx;
    int64_t node = user & NODE_MASK;
    lane_chain *lane = lane_of(fs, call->lane);
    if (!lane)
        return -1;
    uint32_t len = (uint32_t)(user >> 32 & LEN_MASK);
    if (fs->sink.deliver_enter) {
        int64_t r = lane->rec[len - 1];
        if (r >= 0) { /* still waiting: its exit follows its entry */
            fs->recs[r].exited = 1;
            fs->recs[r].exclusive = call->exclusive;
        } else if (fs->sink.deliver_exit(fs->sink.ctx, call, node) != 0) {
            return -1;
        }
    }
    /* the innermost open kept call is now its parent (key one shorter) */
    lane->open--;
    lane->open_len = lane->open ? len - 1 : 0;
    int64_t duration = call->end - call->start;
    if (fs->sink.exit(fs->sink.ctx, call, node) != 0)
        return -1;
    if (user & MERGED_BIT) {
        /* a worker's call merged into its encountering thread's call */
        fork_parent *f = parent_entry(fs, call->fork_parent_id);
        if (add_lane_time(fs, node, call->lane, duration) != 0)
            return -1;
        if (f->exited) {
            if (f->end - call->end > 0 && fs->sink.barrier)
                fs->sink.barrier(fs->sink.ctx, f->node, f->end - call->end);
            if (!f->counted && add_lane_time(fs, f->node, f->lane, f->duration) != 0)
                return -1;
            f->counted = 1;
        } else {
            if (f->num_pending == f->cap_pending) {
                size_t cap = f->cap_pending ? f->cap_pending * 2 : 4;
                int64_t *grown = realloc(f->pending, cap * sizeof *grown);
                if (!grown)
                    return -1;
                f->pending = grown;
                f->cap_pending = cap;
            }
            f->pending[f->num_pending++] = call->end;
            f->has_merged = 1;
        }
        release(fs, f);
    }
    fork_parent *self = parent_entry(fs, call->call_id);
    if (self && self->kept) {
        self->exited = 1;
        self->end = call->end;
        self->duration = duration;
        self->lane = call->lane;
        for (size_t k = 0; k < self->num_pending; k++)
            if (self->end - self->pending[k] > 0 && fs->sink.barrier)
                fs->sink.barrier(fs->sink.ctx, self->node, self->end - self->pending[k]);
        free(self->pending);
        self->pending = NULL;
        self->num_pending = self->cap_pending = 0;
        if (self->has_merged && !self->counted) {
            if (add_lane_time(fs, self->node, self->lane, self->duration) != 0)
                return -1;
            self->counted = 1;
        }
        if (fs->refs[self->id] == 0)
            drop_parent(fs, self);
    }
    return fs->sink.deliver_enter ? deliver_ready(fs) : 0;
}

sp_call_visitor sp_graft_stream_visitor(sp_graft_stream *fs)
{
    return (sp_call_visitor){fork_enter, fork_exit, fs};
}

static int by_key(const void *a, const void *b, void *ctx)
{
    const key *keys = ctx;
    const key *x = &keys[*(const int64_t *)a], *y = &keys[*(const int64_t *)b];
    return key_cmp(x->at, x->len, y->at, y->len);
}

static int by_first(const void *a, const void *b, void *ctx)
{
    const key *keys = ctx;
    int64_t x = keys[*(const int64_t *)a].first, y = keys[*(const int64_t *)b].first;
    return (x > y) - (x < y);
}

int sp_graft_stream_order(const sp_graft_stream *fs, int64_t **order, size_t *num)
{
    *order = NULL;
    *num = 0;
    int64_t *o = malloc((fs->num_keyed ? fs->num_keyed : 1) * sizeof *o);
    if (!o)
        return -1;
    size_t n = 0;
    for (size_t k = 0; k < fs->cap_keys; k++)
        if (fs->node_key[k].len)
            o[n++] = (int64_t)k;
    /* a parent's key is a prefix of its first child call's: earlier (and
     * without a graft, a parent call enters before its children) */
    qsort_r(o, n, sizeof *o, fs->any_grafted ? by_key : by_first, fs->node_key);
    *order = o;
    *num = n;
    return 0;
}

int sp_graft_stream_finish(sp_graft_stream *fs, char *why, size_t whylen)
{
    if (fs->parents_seen != fs->num_parent_ids) {
        snprintf(why, whylen, "a fork parent id is no call of its rank");
        return 1;
    }
    const pair_map *m = &fs->lane_ns;
    for (size_t s = 0; fs->sink.lane_time && m->mask && s <= m->mask; s++)
        if (m->a[s] != INT64_MIN)
            fs->sink.lane_time(fs->sink.ctx, m->a[s], m->v[s]);
    /* every call has exited: the rest in order */
    while (fs->num_waiting)
        if (wait_pop(fs) != 0)
            return -1;
    return 0;
}

int sp_graft_stream_grafted(const sp_graft_stream *fs)
{
    return fs->any_grafted;
}

int sp_graft_stream_fell_back(const sp_graft_stream *fs, char *why, size_t whylen)
{
    if (fs->fell_back)
        snprintf(why, whylen, "%s", fs->why);
    return fs->fell_back;
}

void sp_graft_stream_free(sp_graft_stream *fs)
{
    if (!fs)
        return;
    free(fs->refs);
    free(fs->free_parents);
    map_free(&fs->parent_of);
    map_free(&fs->lane_ns);
    for (size_t k = 0; k < fs->num_parents; k++) {
        free(fs->parents[k].chain.at);
        free(fs->parents[k].pending);
    }
    free(fs->parents);
    for (size_t k = 0; k < fs->num_lanes; k++) {
        free(fs->lanes[k].chain.at);
        free(fs->lanes[k].rec);
    }
    free(fs->lanes);
    for (size_t k = 0; k < fs->cap_keys; k++)
        free(fs->node_key[k].at);
    free(fs->node_key);
    for (size_t k = 0; k < fs->num_waiting; k++)
        free(fs->recs[fs->heap[k]].k.at);
    free(fs->recs);
    free(fs->free_recs);
    free(fs->heap);
    free(fs);
}
