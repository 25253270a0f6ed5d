/* rank_stream.c - one rank's calls from windows of its event columns,
 * reconstructed per lane with a stack of open calls.
 *
 * Rows are stored by region, so time order needs a merge.  Pass 1 reads
 * start and duration of every row once and cuts it into runs: maximal
 * stretches of one row already in reconstruction order (start ascending,
 * longer first).  Pass 2 merges the runs through a heap keyed by (start,
 * end descending, run order); runs follow the file order, so ties keep it,
 * exactly the stable sort of spec §5.2.  Every run reads through its own
 * window.  A scattered rank (too many runs, or many short ones) is sorted
 * externally instead: blocks of calls sorted into a temporary file, the
 * sorted runs merged the same way (external_sort).  Every check the
 * in-memory reader and reconstruction make on events is made on the way; a
 * failure returns 1 and the caller redoes the work in memory, which words
 * the message. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scopeprof/analysis.h"
#include "scopeprof/callstack.h"
#include "scopeprof/stream.h"
#include "model/temp_file.h"

/* Memory allowed for the runs of one rank (windows, records, cursors, heap)
 * before handing the rank to the in-memory path. */
#define RUN_WINDOW_BUDGET ((size_t)96 << 20)
#define MIN_WINDOW 1024
#define MAX_WINDOW ((size_t)1 << 16)
/* Thread indices counted for the thread table. */
#define MAX_THREAD_SLOTS ((size_t)1 << 20)
/* Lanes the in-memory reconstruction links in one sweep in time order (its
 * lane map: at least 64 slots, kept half full), so that its first crossing
 * is the stream's; with more it may group the calls by lane first. */
#define SWEEP_LANES 32

typedef struct run {
    uint64_t begin, end;      /* event positions in the file */
    uint64_t row_offset;      /* first event of the run's row */
    size_t slot;              /* the row's entry in stream_state.checks */
    int64_t first_start;      /* decoded absolute start of event `begin` */
    int64_t last_start;       /* pass 1: start of the last event seen */
    int ends_known;           /* pass 1: the last event's end was read */
} run;

typedef struct cursor {
    uint64_t pos;             /* next event */
    uint64_t base;            /* first event in the window */
    size_t len;               /* events in the window */
    int64_t prev_start;
    int64_t *col[SP_H5_COL_N];
    int64_t *xcol[SP_EXTRA_N]; /* sp_stream_rank_mpi: the MPI columns the file has */
    int64_t *fcol;            /* options.fork_ids: events/fork_parent_ids */
    int64_t *acol;            /* sp_stream_rank_mpi: events/await_ns */
    int64_t start, end;       /* of event pos (decoded) */
} cursor;

/* One call as read, whichever way: its decoded times (the file's clock),
 * where it sits, its other columns (-1 where not read, await_ns 0). */
enum {
    EV_START,
    EV_END,
    EV_INDEX,                 /* call index in its row */
    EV_SLOT,                  /* its row's entry in stream_state.checks */
    EV_COL,                   /* + SP_H5_COL_* (GPU, call, parent, thread, task) */
    EV_XCOL = EV_COL + SP_H5_COL_N, /* + SP_EXTRA_* */
    EV_FORK = EV_XCOL + SP_EXTRA_N,
    EV_AWAIT,
    EV_N
};
typedef struct event {
    int64_t v[EV_N];
} event;

typedef struct open_call {
    sp_stream_call call;
    int64_t call_id;
    int64_t child_sum;
    int64_t user;
    long kept_above;          /* stack index of the nearest kept ancestor, -1 none */
    int kept;
} open_call;

typedef struct lane_stack {
    int64_t lane;
    open_call *calls;
    size_t depth, cap;
} lane_stack;

typedef struct row_check row_check;
typedef struct heap_node heap_node;

typedef struct stream_state {
    const sp_run_source *src;
    const sp_h5_event_shape *shape;
    sp_h5_event_reader *reader;
    uint32_t rank;
    int64_t offset;
    size_t window;
    run *runs;
    size_t num_runs, runs_cap;
    cursor *cursors;
    int64_t *slab;            /* every cursor's windows */
    heap_node *heap;
    size_t heap_len;
    lane_stack *lanes;
    size_t num_lanes, lanes_cap;
    size_t last_lane;
    /* stored call ids: uniqueness within the rank */
    unsigned char *seen_ids;
    uint64_t seen_span, seen_limit;
    uint64_t with_ids;
    /* thread ids the thread / task tables list for this rank */
    int64_t *thread_keys, *task_keys;
    size_t num_thread_keys, num_task_keys;
    row_check *checks;        /* per row of the rank */
    size_t num_checks, rank_rows;
    int sum_rows;             /* statistics accumulated (checked or handed over) */
    const sp_call_visitor *visitor;
    sp_stream_options opt;
    sp_rank_stream_info *info;
    char *why;
    size_t whylen;
    int visitor_failed;
    int scattered;            /* too many runs: sorted (external_sort) */
    /* rows_on_crossing: the first crossing, worded; the rest only checked */
    int crossed;
    char crossing[1024];
    unsigned char *referenced; /* parent ids seen after the crossing */
    uint64_t referenced_span;
    /* sp_stream_rank_mpi: the MPI columns read with the others, handed to
     * enter (-1 where the file lacks a column, as the in-memory run has it) */
    int mpi;
    int forks;                /* sp_stream_rank_forks: read fork parent ids */
    /* calls visited: with fork parent ids and no stored call ids, a call's
     * id is its position in the reconstruction, as rank_calls.c numbers
     * it and as the fork parent ids name it */
    int64_t position;
    int64_t mpi_values[SP_EXTRA_N];
} stream_state;

static int give_up(stream_state *st, const char *what)
{
    snprintf(st->why, st->whylen, "rank %u: %s", st->rank, what);
    return 1;
}

static int64_t wrap_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sorted ids of the rank's lane table rows; duplicates are a reader problem. */
static int lane_keys(stream_state *st)
{
    const sp_profile *p = st->src->profile;
    st->thread_keys = malloc((p->num_threads + 1) * sizeof *st->thread_keys);
    st->task_keys = malloc((p->num_tasks + 1) * sizeof *st->task_keys);
    if (!st->thread_keys || !st->task_keys)
        return give_up(st, "out of memory");
    for (size_t i = 0; i < p->num_threads; i++)
        if (p->threads[i].rank == st->rank)
            st->thread_keys[st->num_thread_keys++] = p->threads[i].index;
    for (size_t i = 0; i < p->num_tasks; i++)
        if (p->tasks[i].rank == st->rank)
            st->task_keys[st->num_task_keys++] = p->tasks[i].index;
    qsort(st->thread_keys, st->num_thread_keys, sizeof *st->thread_keys, cmp_i64);
    qsort(st->task_keys, st->num_task_keys, sizeof *st->task_keys, cmp_i64);
    for (size_t i = 1; i < st->num_thread_keys; i++)
        if (st->thread_keys[i] == st->thread_keys[i - 1])
            return give_up(st, "thread_table lists an index twice");
    for (size_t i = 1; i < st->num_task_keys; i++)
        if (st->task_keys[i] == st->task_keys[i - 1])
            return give_up(st, "task_table lists an index twice");
    return 0;
}

static size_t window_end(const stream_state *st, uint64_t pos, uint64_t end)
{
    uint64_t next = (pos / st->window + 1) * st->window;
    return (size_t)((next < end ? next : end) - pos);
}

/* ---- pass 1: runs, summary statistics, wall ------------------------------ */

/* What a run costs besides its windows: its record, cursor and heap entry. */
#define RUN_OVERHEAD (sizeof(run) + sizeof(cursor) + 3 * sizeof(int64_t))

static int add_run(stream_state *st, const run *r)
{
    if ((st->num_runs + 1) * RUN_OVERHEAD > RUN_WINDOW_BUDGET)
        return -1;
    if (st->num_runs == st->runs_cap) {
        size_t cap = st->runs_cap ? 2 * st->runs_cap : 64;
        run *grown = realloc(st->runs, cap * sizeof *grown);
        if (!grown)
            return -1;
        st->runs = grown;
        st->runs_cap = cap;
    }
    st->runs[st->num_runs++] = *r;
    return 0;
}

/* Pass 1 reads starts only; ends only for windows where two neighbours
 * start together (the tie rule needs them), the rest is checked in pass 2. */
static int scan_row(stream_state *st, const sp_row *row, size_t slot, int64_t *buf)
{
    const sp_h5_event_shape *sh = st->shape;
    int64_t *raw_s = buf, *raw_e = buf + st->window;
    run cur = {.row_offset = row->offset, .slot = slot};
    int64_t prev_s = 0, prev_e = 0;
    uint64_t end = row->offset + row->count;
    for (uint64_t pos = row->offset; pos < end;) {
        size_t n = window_end(st, pos, end);
        if (sp_h5_event_reader_read(st->reader, SP_H5_COL_START, pos, n, raw_s))
            return give_up(st, "event columns cannot be read");
        int ties = 0;
        for (size_t i = 0; i < n; i++) {
            int64_t s = sh->deltas && pos + i > row->offset ? wrap_add(prev_s, raw_s[i])
                                                            : raw_s[i];
            raw_s[i] = s;
            ties |= (pos + i > row->offset && s == prev_s);
            prev_s = s;
        }
        if (ties && sp_h5_event_reader_read(st->reader, SP_H5_COL_SECOND, pos, n, raw_e))
            return give_up(st, "event columns cannot be read");
        prev_s = pos > row->offset ? cur.last_start : 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t e = pos + i;
            int64_t s = raw_s[i];
            int64_t t = ties ? (sh->deltas ? wrap_add(s, raw_e[i]) : raw_e[i]) : 0;
            /* A new run where the row leaves reconstruction order. */
            if (e == row->offset || s < prev_s ||
                (s == prev_s && (t > prev_e || !cur.ends_known))) {
                if (e > row->offset) {
                    cur.end = e;
                    if (add_run(st, &cur)) {
                        st->scattered = 1;
                        return give_up(st, "too many runs of sorted calls to merge in "
                                           "bounded memory");
                    }
                }
                cur.begin = e;
                cur.first_start = s;
            }
            prev_s = s;
            prev_e = t;
            cur.ends_known = ties;
        }
        cur.last_start = prev_s;
        pos += n;
    }
    if (row->count) {
        cur.end = end;
        if (add_run(st, &cur)) {
            st->scattered = 1;
            return give_up(st, "too many runs of sorted calls to merge in bounded memory");
        }
    }
    st->info->calls += row->count;
    return 0;
}

/* The row statistics the reader checks against the events, accumulated in
 * merge order (none of them depends on it). */
struct row_check {
    const sp_row *row;
    int omp_parallel;         /* region is "omp parallel" (thread busy time) */
    int started;
    int64_t total, minimum, maximum, start_minimum, end_maximum;
    uint64_t gpu_count;
};

static void row_check_add(row_check *c, int64_t s, int64_t e, int64_t gpu)
{
    int64_t d = (int64_t)((uint64_t)e - (uint64_t)s);
    if (!c->started) {
        c->started = 1;
        c->minimum = c->maximum = d;
        c->start_minimum = s;
        c->end_maximum = e;
    }
    c->total = wrap_add(c->total, d);
    if (d < c->minimum)
        c->minimum = d;
    if (d > c->maximum)
        c->maximum = d;
    if (s < c->start_minimum)
        c->start_minimum = s;
    if (e > c->end_maximum)
        c->end_maximum = e;
    c->gpu_count += gpu >= 0;
}

static int row_check_agrees(const row_check *c)
{
    const sp_summary_stats *s = &c->row->stats;
    return !c->started ||
           (s->total == c->total && s->minimum == c->minimum && s->maximum == c->maximum &&
            s->start_minimum == c->start_minimum && s->end_maximum == c->end_maximum &&
            s->gpu_count == c->gpu_count);
}

/* ---- pass 2: merge --------------------------------------------------------- */

static int cursor_fill(stream_state *st, size_t k)
{
    cursor *c = &st->cursors[k];
    const run *r = &st->runs[k];
    size_t n = window_end(st, c->pos, r->end);
    for (int col = 0; col < SP_H5_COL_N; col++)
        if (c->col[col] && sp_h5_event_reader_read(st->reader, col, c->pos, n, c->col[col]))
            return -1;
    for (int x = 0; x < SP_EXTRA_N; x++)
        if (c->xcol[x] && sp_h5_event_reader_read_extra(st->reader, x, c->pos, n, c->xcol[x]))
            return -1;
    if (c->fcol && sp_h5_event_reader_read(st->reader, SP_H5_COL_FORK, c->pos, n, c->fcol))
        return -1;
    if (c->acol && sp_h5_event_reader_read(st->reader, SP_H5_COL_AWAIT, c->pos, n, c->acol))
        return -1;
    c->base = c->pos;
    c->len = n;
    return 0;
}

/* Decode the event at c->pos (its window loaded). */
static void cursor_decode(stream_state *st, size_t k)
{
    cursor *c = &st->cursors[k];
    const run *r = &st->runs[k];
    size_t i = (size_t)(c->pos - c->base);
    int64_t s = c->pos == r->begin ? r->first_start
                : st->shape->deltas ? wrap_add(c->prev_start, c->col[SP_H5_COL_START][i])
                                    : c->col[SP_H5_COL_START][i];
    c->start = s;
    c->end = st->shape->deltas ? wrap_add(s, c->col[SP_H5_COL_SECOND][i])
                               : c->col[SP_H5_COL_SECOND][i];
    c->prev_start = s;
}

/* The call at c->pos (decoded). */
static void event_at(const stream_state *st, size_t k, event *ev)
{
    const cursor *c = &st->cursors[k];
    const run *r = &st->runs[k];
    size_t i = (size_t)(c->pos - c->base);
    ev->v[EV_START] = c->start;
    ev->v[EV_END] = c->end;
    ev->v[EV_INDEX] = (int64_t)(c->pos - r->row_offset);
    ev->v[EV_SLOT] = (int64_t)r->slot;
    for (int col = SP_H5_COL_SECOND + 1; col < SP_H5_COL_N; col++)
        ev->v[EV_COL + col] = c->col[col] ? c->col[col][i] : -1;
    for (int x = 0; x < SP_EXTRA_N; x++)
        ev->v[EV_XCOL + x] = c->xcol[x] ? c->xcol[x][i] : -1;
    ev->v[EV_FORK] = c->fcol ? c->fcol[i] : -1;
    ev->v[EV_AWAIT] = c->acol ? c->acol[i] : 0;
}

/* Heap entries carry their keys: the merge compares them once per call. */
struct heap_node {
    int64_t start, end;
    size_t run;
};

static int before(const heap_node *x, const heap_node *y)
{
    if (x->start != y->start)
        return x->start < y->start;
    if (x->end != y->end)
        return x->end > y->end;
    return x->run < y->run;
}

static void sift_down(heap_node *h, size_t n, size_t i)
{
    heap_node moving = h[i];
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n)
            break;
        size_t best = l + 1 < n && before(&h[l + 1], &h[l]) ? l + 1 : l;
        if (!before(&h[best], &moving))
            break;
        h[i] = h[best];
        i = best;
    }
    h[i] = moving;
}

static lane_stack *lane_of(stream_state *st, int64_t lane)
{
    if (st->num_lanes && st->lanes[st->last_lane].lane == lane)
        return &st->lanes[st->last_lane];
    for (size_t i = 0; i < st->num_lanes; i++)
        if (st->lanes[i].lane == lane) {
            st->last_lane = i;
            return &st->lanes[i];
        }
    if (st->num_lanes == st->lanes_cap) {
        size_t cap = st->lanes_cap ? 2 * st->lanes_cap : 8;
        lane_stack *grown = realloc(st->lanes, cap * sizeof *grown);
        if (!grown)
            return NULL;
        st->lanes = grown;
        st->lanes_cap = cap;
    }
    st->lanes[st->num_lanes] = (lane_stack){.lane = lane};
    st->last_lane = st->num_lanes;
    return &st->lanes[st->num_lanes++];
}

static int pop(stream_state *st, lane_stack *ls)
{
    open_call *c = &ls->calls[--ls->depth];
    if (!c->kept)
        return 0;
    int64_t duration = c->call.end - c->call.start;
    c->call.exclusive = duration - c->child_sum;
    if (c->kept_above >= 0)
        ls->calls[c->kept_above].child_sum += duration;
    if (st->visitor->exit(st->visitor->ctx, &c->call, c->user) != 0) {
        st->visitor_failed = 1;
        return -1;
    }
    return 0;
}

static int check_lane_id(const int64_t *keys, size_t n, int64_t id)
{
    return id == -1 || (id >= 0 && bsearch(&id, keys, n, sizeof id, cmp_i64));
}

static int note_call_id(stream_state *st, int64_t id)
{
    if (id < 0)
        return give_up(st, "some calls have no stored call id");
    if ((uint64_t)id >= st->seen_span) {
        uint64_t span = st->seen_span ? st->seen_span : 64;
        while (span <= (uint64_t)id)
            span *= 2;
        if (span > st->seen_limit)
            return give_up(st, "call ids too sparse to check in bounded memory");
        unsigned char *grown = realloc(st->seen_ids, (size_t)(span / 8));
        if (!grown)
            return give_up(st, "out of memory");
        memset(grown + st->seen_span / 8, 0, (size_t)((span - st->seen_span) / 8));
        st->seen_ids = grown;
        st->seen_span = span;
    }
    unsigned char bit = (unsigned char)(1u << (id & 7));
    if (st->seen_ids[id >> 3] & bit)
        return give_up(st, "a call id appears twice");
    st->seen_ids[id >> 3] |= bit;
    st->with_ids++;
    return 0;
}

/* After a crossing the stack no longer says who the parent is: the
 * reader's own check remains, a parent id is -1 or a call id of the rank
 * (checked against the seen ids at the end). */
static int note_parent_id(stream_state *st, int64_t id)
{
    if (id == -1)
        return 0;
    if (id < 0)
        return give_up(st, "a parent id that is no call id");
    if ((uint64_t)id >= st->referenced_span) {
        uint64_t span = st->referenced_span ? st->referenced_span : 64;
        while (span <= (uint64_t)id)
            span *= 2;
        if (span > st->seen_limit)
            return give_up(st, "parent ids too sparse to check in bounded memory");
        unsigned char *grown = realloc(st->referenced, (size_t)(span / 8));
        if (!grown)
            return give_up(st, "out of memory");
        memset(grown + st->referenced_span / 8, 0,
               (size_t)((span - st->referenced_span) / 8));
        st->referenced = grown;
        st->referenced_span = span;
    }
    st->referenced[id >> 3] |= (unsigned char)(1u << (id & 7));
    return 0;
}

/* Every parent id noted after the crossing names a call of the rank. */
static int parents_are_calls(const stream_state *st)
{
    for (uint64_t b = 0; b < st->referenced_span / 8; b++) {
        unsigned char seen = b < st->seen_span / 8 ? st->seen_ids[b] : 0;
        if (st->referenced[b] & (unsigned char)~seen)
            return 0;
    }
    return 1;
}

/* The first crossing: worded as sp_calls_build words it. */
static void note_crossing(stream_state *st, const event *ev, const open_call *outer)
{
    const sp_profile *p = st->src->profile;
    sp_call_ref in = {st->checks[ev->v[EV_SLOT]].row->region, (uint64_t)ev->v[EV_INDEX],
                      ev->v[EV_START] - st->offset, ev->v[EV_END] - st->offset};
    sp_call_ref out = {outer->call.region, outer->call.call_index, outer->call.start,
                       outer->call.end};
    sp_calls_nesting_message(st->crossing, sizeof st->crossing, (const char *const *)p->names,
                             p->num_names, &in, &out);
    st->crossed = 1;
}

static int count_thread(stream_state *st, int64_t t, int64_t busy)
{
    sp_rank_stream_info *info = st->info;
    if (t < 0)
        return 0;
    if ((uint64_t)t >= MAX_THREAD_SLOTS)
        return give_up(st, "thread index too large to count");
    if ((size_t)t >= info->num_thread_slots) {
        size_t n = info->num_thread_slots ? info->num_thread_slots : 16;
        while (n <= (size_t)t)
            n *= 2;
        uint64_t *calls = realloc(info->thread_calls, n * sizeof *calls);
        if (calls)
            info->thread_calls = calls;
        int64_t *b = calls ? realloc(info->thread_busy, n * sizeof *b) : NULL;
        if (!b)
            return give_up(st, "out of memory");
        info->thread_busy = b;
        memset(calls + info->num_thread_slots, 0, (n - info->num_thread_slots) * sizeof *calls);
        memset(b + info->num_thread_slots, 0, (n - info->num_thread_slots) * sizeof *b);
        info->num_thread_slots = n;
    }
    info->thread_calls[t]++;
    info->thread_busy[t] += busy;
    return 0;
}

/* One call, in reconstruction order. */
static int visit(stream_state *st, const event *ev)
{
    const sp_h5_event_shape *sh = st->shape;
    const row_check *row = &st->checks[ev->v[EV_SLOT]];
    int64_t s = ev->v[EV_START], e = ev->v[EV_END];
    int64_t thread = ev->v[EV_COL + SP_H5_COL_THREAD];
    int64_t task = ev->v[EV_COL + SP_H5_COL_TASK];
    int64_t position = st->position++;
    int64_t call_id = sh->has[SP_H5_COL_CALL] ? ev->v[EV_COL + SP_H5_COL_CALL]
                      : st->forks                ? position
                                                 : -1;
    int64_t parent_id = ev->v[EV_COL + SP_H5_COL_PARENT];
    const sp_profile *p = st->src->profile;
    if (e < s)
        return give_up(st, "a recorded call ends before it starts");
    if (st->opt.event)
        st->opt.event(st->opt.event_ctx, s, e);
    if (s - st->offset < st->info->first_start)
        st->info->first_start = s - st->offset;
    if (e - st->offset > st->info->last_end)
        st->info->last_end = e - st->offset;
    if (st->sum_rows)
        row_check_add(&st->checks[ev->v[EV_SLOT]], s, e, ev->v[EV_COL + SP_H5_COL_GPU]);
    if (sh->has[SP_H5_COL_THREAD] && p->has_thread_table &&
        !check_lane_id(st->thread_keys, st->num_thread_keys, thread))
        return give_up(st, "a thread id the thread table does not list");
    if (sh->has[SP_H5_COL_TASK] && p->has_task_table &&
        !check_lane_id(st->task_keys, st->num_task_keys, task))
        return give_up(st, "a task id the task table does not list");
    if (sh->has[SP_H5_COL_CALL] && note_call_id(st, call_id))
        return 1;
    if (sh->has[SP_H5_COL_THREAD] &&
        count_thread(st, thread,
                     row->omp_parallel && st->src->any_parent && parent_id < 0 ? e - s : 0))
        return 1;
    if (st->crossed)
        return sh->has[SP_H5_COL_CALL] && sh->has[SP_H5_COL_PARENT]
                   ? note_parent_id(st, parent_id)
                   : 0;

    int64_t lane = st->src->any_thread ? sp_lane_id(thread, task) : -1;
    int64_t select_lane =
        st->src->any_thread || st->src->any_task ? sp_lane_id(thread, task) : -1;
    lane_stack *ls = lane_of(st, lane);
    if (!ls)
        return give_up(st, "out of memory");
    /* Close what ended before this call starts (doubled timestamps of
     * spec §5.2: a zero-length call is still open at its own time). */
    while (ls->depth) {
        const open_call *top = &ls->calls[ls->depth - 1];
        if (!(top->call.end + st->offset < s ||
              (top->call.end + st->offset == s && top->call.start != top->call.end)))
            break;
        if (pop(st, ls))
            return -1;
    }
    const open_call *parent = ls->depth ? &ls->calls[ls->depth - 1] : NULL;
    if (parent && e - st->offset > parent->call.end) {
        if (!st->opt.rows_on_crossing || st->num_lanes > SWEEP_LANES)
            return give_up(st, "recorded calls are not properly nested");
        note_crossing(st, ev, parent);
        return sh->has[SP_H5_COL_CALL] && sh->has[SP_H5_COL_PARENT]
                   ? note_parent_id(st, parent_id)
                   : 0;
    }
    if (sh->has[SP_H5_COL_CALL] && st->src->any_parent &&
        parent_id != (parent ? parent->call_id : -1))
        return give_up(st, "stored parent ids disagree with the recorded times");
    long kept_above = -1;
    if (parent)
        kept_above = parent->kept ? (long)ls->depth - 1 : parent->kept_above;
    /* (parent points into the stack: not used below the growth) */
    if (ls->depth == ls->cap) {
        size_t cap = ls->cap ? 2 * ls->cap : 64;
        open_call *grown = realloc(ls->calls, cap * sizeof *grown);
        if (!grown)
            return give_up(st, "out of memory");
        ls->calls = grown;
        ls->cap = cap;
    }
    open_call *oc = &ls->calls[ls->depth];
    *oc = (open_call){
        .call = {.region = row->row->region, .depth = (uint32_t)ls->depth, .lane = lane,
                 .select_lane = select_lane,
                 .call_index = (uint64_t)ev->v[EV_INDEX], .start = s - st->offset,
                 .end = e - st->offset, .call_id = call_id},
        .call_id = call_id,
        .kept_above = kept_above,
    };
    int64_t parent_user = kept_above >= 0 ? ls->calls[kept_above].user : -1;
    oc->call.fork_parent_id = ev->v[EV_FORK];
    if (st->mpi) {
        memcpy(st->mpi_values, &ev->v[EV_XCOL], sizeof st->mpi_values);
        oc->call.mpi = st->mpi_values;
        oc->call.gpu_ns = ev->v[EV_COL + SP_H5_COL_GPU];
        oc->call.await_ns = ev->v[EV_AWAIT];
    }
    int keep = st->visitor->enter(st->visitor->ctx, &oc->call, parent_user, &oc->user);
    oc->call.mpi = NULL; /* valid during enter only */
    if (keep < 0) {
        st->visitor_failed = 1;
        return -1;
    }
    oc->kept = keep;
    ls->depth++;
    return 0;
}

/* Columns pass 2 reads: GPU durations only for the statistics check or
 * the calls' values (sp_stream_rank_mpi). */
static int wanted(const stream_state *st, const sp_h5_event_shape *sh, int col)
{
    return sh->has[col] && (col != SP_H5_COL_GPU || sh->has_stats || st->mpi);
}

/* How many columns a cursor reads. */
static size_t columns_read(const stream_state *st)
{
    const sp_h5_event_shape *sh = st->shape;
    size_t cols = 0;
    for (int col = 0; col < SP_H5_COL_N; col++)
        cols += wanted(st, sh, col);
    for (int x = 0; st->mpi && x < SP_EXTRA_N; x++)
        cols += sh->has_extra[x] != 0;
    cols += st->forks && sh->has_fork;
    cols += st->mpi && sh->has_await;
    return cols;
}

/* A cursor's windows of `len` values each, taken from *next. */
static void cursor_windows(const stream_state *st, cursor *c, size_t len, int64_t **next)
{
    const sp_h5_event_shape *sh = st->shape;
    for (int col = 0; col < SP_H5_COL_N; col++)
        if (wanted(st, sh, col)) {
            c->col[col] = *next;
            *next += len;
        }
    for (int x = 0; st->mpi && x < SP_EXTRA_N; x++)
        if (sh->has_extra[x]) {
            c->xcol[x] = *next;
            *next += len;
        }
    if (st->forks && sh->has_fork) {
        c->fcol = *next;
        *next += len;
    }
    if (st->mpi && sh->has_await) {
        c->acol = *next;
        *next += len;
    }
}

/* After the last call: close what is open, then the checks that need the
 * whole rank. */
static int finish(stream_state *st)
{
    const sp_h5_event_shape *sh = st->shape;
    /* After a crossing the calls still open are dropped with the others. */
    for (size_t l = 0; l < st->num_lanes && !st->crossed; l++)
        while (st->lanes[l].depth)
            if (pop(st, &st->lanes[l]))
                return -1;
    if (sh->has[SP_H5_COL_CALL] && st->src->any_parent && st->with_ids &&
        st->with_ids < st->info->calls)
        return give_up(st, "call ids stored for only some calls");
    for (size_t r = 0; sh->has_stats && r < st->num_checks; r++)
        if (!row_check_agrees(&st->checks[r]))
            return give_up(st, "summary_statistics disagree with the events");
    if (st->crossed && !parents_are_calls(st))
        return give_up(st, "a parent id that is no call id of the rank");
    return 0;
}

static int merge_runs(stream_state *st)
{
    size_t cols = columns_read(st);
    /* A run's window never exceeds the run: many short rows cost their size. */
    size_t values;
    for (;;) {
        values = 0;
        for (size_t k = 0; k < st->num_runs; k++) {
            uint64_t len = st->runs[k].end - st->runs[k].begin;
            values += cols * (size_t)(len < st->window ? len : st->window);
        }
        if (values * sizeof(int64_t) + st->num_runs * RUN_OVERHEAD <= RUN_WINDOW_BUDGET ||
            st->window <= MIN_WINDOW)
            break;
        st->window /= 2;
    }
    st->scattered = values * sizeof(int64_t) + st->num_runs * RUN_OVERHEAD > RUN_WINDOW_BUDGET;
    if (st->scattered)
        return give_up(st, "too many runs of sorted calls to merge in bounded memory");
    st->cursors = calloc(st->num_runs + 1, sizeof *st->cursors);
    st->slab = malloc((values + 1) * sizeof *st->slab);
    st->heap = malloc((st->num_runs + 1) * sizeof *st->heap);
    if (!st->cursors || !st->slab || !st->heap)
        return give_up(st, "out of memory");
    int64_t *next = st->slab;
    for (size_t k = 0; k < st->num_runs; k++) {
        cursor *c = &st->cursors[k];
        uint64_t len = st->runs[k].end - st->runs[k].begin;
        cursor_windows(st, c, len < st->window ? (size_t)len : st->window, &next);
        c->pos = st->runs[k].begin;
        if (cursor_fill(st, k))
            return give_up(st, "event columns cannot be read");
        cursor_decode(st, k);
        st->heap[st->heap_len++] = (heap_node){c->start, c->end, k};
    }
    for (size_t i = st->heap_len / 2; i-- > 0;)
        sift_down(st->heap, st->heap_len, i);
    while (st->heap_len) {
        size_t k = st->heap[0].run;
        event ev;
        event_at(st, k, &ev);
        int rc = visit(st, &ev);
        if (rc)
            return rc;
        cursor *c = &st->cursors[k];
        if (++c->pos == st->runs[k].end) {
            st->heap[0] = st->heap[--st->heap_len];
        } else {
            if (c->pos == c->base + c->len && cursor_fill(st, k))
                return give_up(st, "event columns cannot be read");
            cursor_decode(st, k);
            st->heap[0].start = c->start;
            st->heap[0].end = c->end;
        }
        sift_down(st->heap, st->heap_len, 0);
    }
    return finish(st);
}

/* ---- no temporary file for a scattered rank: sorted in memory, replayed -- *
 *
 * The fallback of external_sort (below) when no temporary file can be
 * made: the rank's file is read whole (sp_h5_read, which
 * makes the reader's checks), the rank reconstructed in memory
 * (sp_rank_calls, which refuses what does not nest), and its calls handed
 * to the visitor in the same order.  Exits come after every enter (the
 * exclusive times are known by then). */
static int replay_in_memory(stream_state *st, const char *path)
{
    /* The file alone must read as it does within the run. */
    const sp_h5_event_shape *sh = st->shape;
    if (st->src->any_thread != sh->has[SP_H5_COL_THREAD] ||
        st->src->any_task != sh->has[SP_H5_COL_TASK] ||
        st->src->any_parent != sh->has[SP_H5_COL_PARENT])
        return give_up(st, "files of the run with other lane or parent columns");
    char err[1024];
    sp_profile *full = sp_h5_read(path, err, sizeof err);
    if (!full)
        return give_up(st, "the file has a problem the reader reports");
    sp_calls calls;
    if (sp_rank_calls(full, st->rank, &calls, err, sizeof err) != 0) {
        sp_profile_free(full);
        return give_up(st, "the rank does not reconstruct in memory");
    }
    int rc = 0;
    size_t n = calls.n;
    uint32_t *region = malloc((full->num_names + 1) * sizeof *region);
    int64_t *user = malloc((n + 1) * sizeof *user), *kept_above = malloc((n + 1) * sizeof *kept_above);
    int64_t *child_sum = calloc(n + 1, sizeof *child_sum);
    unsigned char *kept = malloc(n + 1);
    if (!region || !user || !kept_above || !child_sum || !kept)
        rc = give_up(st, "out of memory");
    /* the run's region ids (names interned in the run's order) */
    sp_profile *skeleton = (sp_profile *)st->src->profile;
    for (size_t r = 0; rc == 0 && r < full->num_names; r++) {
        int64_t id = sp_profile_intern_name(skeleton, full->names[r]);
        if (id < 0)
            rc = give_up(st, "out of memory");
        else
            region[r] = (uint32_t)id;
    }
    /* sp_rank_calls put the calls on the file's own clock offset: the shift
     * to the run's is read off one call (input positions follow the rows of
     * the rank in file order, events in row order). */
    int64_t shift = 0;
    if (rc == 0 && n) {
        uint64_t pos = calls.input_pos[0], seen = 0;
        for (size_t r = 0; r < full->num_rows; r++) {
            const sp_row *row = &full->rows[r];
            if (row->rank != st->rank)
                continue;
            if (pos < seen + row->count) {
                int64_t raw = full->start[row->offset + (pos - seen)];
                shift = (raw - calls.start[0]) - st->offset;
                break;
            }
            seen += row->count;
        }
    }
    /* the stored call ids: event = the row's offset + the call's index in it */
    int64_t *row_offset = malloc((full->num_names + 1) * sizeof *row_offset);
    if (rc == 0 && !row_offset)
        rc = give_up(st, "out of memory");
    for (size_t r = 0; rc == 0 && r < full->num_names; r++)
        row_offset[r] = -1;
    for (size_t r = 0; rc == 0 && r < full->num_rows; r++)
        if (full->rows[r].rank == st->rank && full->rows[r].region < full->num_names)
            row_offset[full->rows[r].region] = (int64_t)full->rows[r].offset;
    sp_rank_stream_info *info = st->info;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int64_t p = calls.parent[i];
        kept_above[i] = p < 0 ? -1 : kept[p] ? p : kept_above[p];
        sp_stream_call call = {.region = region[calls.region[i]], .depth = calls.depth[i],
                               .lane = calls.lane ? calls.lane[i] : -1,
                               .call_index = calls.call_index[i],
                               .start = calls.start[i] + shift, .end = calls.end[i] + shift};
        call.select_lane = call.lane;
        if (st->opt.event)
            st->opt.event(st->opt.event_ctx, call.start + st->offset, call.end + st->offset);
        int64_t at = row_offset[calls.region[i]];
        call.call_id = full->call_ids && at >= 0 ? full->call_ids[at + calls.call_index[i]]
                       : st->forks                ? (int64_t)i
                                                  : -1;
        call.fork_parent_id = full->fork_parent_ids && at >= 0
                                  ? full->fork_parent_ids[at + calls.call_index[i]]
                                  : -1;
        if (st->mpi) {
            for (int x = 0; x < SP_EXTRA_N; x++)
                st->mpi_values[x] = full->extra[x] && at >= 0
                                        ? full->extra[x][at + calls.call_index[i]]
                                        : -1;
            call.mpi = st->mpi_values;
            call.gpu_ns = full->gpu && at >= 0 ? full->gpu[at + calls.call_index[i]] : -1;
            call.await_ns =
                full->await_ns && at >= 0 ? full->await_ns[at + calls.call_index[i]] : 0;
        }
        if (call.start < info->first_start)
            info->first_start = call.start;
        if (call.end > info->last_end)
            info->last_end = call.end;
        int keep = st->visitor->enter(st->visitor->ctx, &call,
                                      kept_above[i] >= 0 ? user[kept_above[i]] : -1, &user[i]);
        if (keep < 0) {
            st->visitor_failed = 1;
            rc = -1;
        }
        kept[i] = keep > 0;
        if (kept[i] && kept_above[i] >= 0)
            child_sum[kept_above[i]] += calls.end[i] - calls.start[i];
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!kept[i])
            continue;
        int64_t duration = calls.end[i] - calls.start[i];
        sp_stream_call call = {.region = region[calls.region[i]], .depth = calls.depth[i],
                               .lane = calls.lane ? calls.lane[i] : -1,
                               .call_index = calls.call_index[i],
                               .start = calls.start[i] + shift, .end = calls.end[i] + shift,
                               .exclusive = duration - child_sum[i]};
        if (st->visitor->exit(st->visitor->ctx, &call, user[i]) != 0) {
            st->visitor_failed = 1;
            rc = -1;
        }
    }
    /* thread table counts, as report_lanes.c takes them from the columns */
    for (size_t r = 0; rc == 0 && full->thread_ids && r < full->num_rows; r++) {
        const sp_row *row = &full->rows[r];
        if (row->rank != st->rank)
            continue;
        int omp = row->region < full->num_names && full->parent_ids &&
                  !strcmp(full->names[row->region], "omp parallel");
        for (uint64_t e = row->offset; rc == 0 && e < row->offset + row->count; e++)
            rc = count_thread(st, full->thread_ids[e],
                              omp && full->parent_ids[e] < 0 ? full->end[e] - full->start[e]
                                                             : 0);
    }
    info->calls = n;
    free(row_offset);
    free(region);
    free(user);
    free(kept_above);
    free(child_sum);
    free(kept);
    sp_calls_free(&calls);
    sp_profile_free(full);
    return rc;
}

/* ---- a scattered rank: an external merge sort ----------------------------- *
 *
 * Rows far out of time order (many short runs) would cost more in windows
 * than the rank's calls, and many short runs merge slowly.  The rank's rows
 * are read instead in chunk-aligned windows, row after row, into a block
 * of records (the call's times, place and every column the visitor is
 * handed); a full block is sorted by (start, end descending, file order)
 * and written to an unlinked temporary file as a sorted run.  The runs are
 * then merged through a heap, each read through its own buffer, and the
 * calls go through visit() as the natural runs' do: the same nesting, the
 * same checks.  A rank that fits one block is visited from it, no file.
 * Only when no temporary file can be made is the rank replayed from memory
 * (replay_in_memory, above). */

/* Default block (records and their sort keys); SCOPEPROF_SORT_BLOCK sets
 * it in bytes (K, M, G suffixes), for tests and benchmarks. */
#define SORT_BLOCK ((size_t)64 << 20)
#define SORT_MIN_BLOCK ((size_t)4 << 10)
/* Bytes staged per write of a sorted run, and at most per run's buffer. */
#define SORT_IO ((size_t)1 << 20)
/* Natural runs from which the sort is taken instead of the windows' merge,
 * when they are short on average (scripts/bench/scattered, docs/stream.md). */
#define SORT_RUNS 4096
#define SORT_RUN_LENGTH 32

/* Words of a record before the columns read: start, end, index, slot. */
#define REC_HEAD (EV_SLOT + 1)

typedef struct sort_key {
    int64_t start, end;
    uint64_t at;              /* record in the block: file order */
} sort_key;

static int cmp_key(const void *a, const void *b)
{
    const sort_key *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    return (x->at > y->at) - (x->at < y->at);
}

/* The block's keys in merge order: a stable radix sort on the start (the
 * bits in which the starts differ, 11 at a time, through `spare`), then
 * each stretch of equal starts sorted by end descending and file order. */
#define RADIX_BITS 11
static void sort_keys(sort_key *keys, sort_key *spare, size_t n)
{
    if (n < 2)
        return;
    int64_t lo = keys[0].start, hi = keys[0].start;
    for (size_t i = 1; i < n; i++) {
        lo = keys[i].start < lo ? keys[i].start : lo;
        hi = keys[i].start > hi ? keys[i].start : hi;
    }
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    sort_key *from = keys, *to = spare;
    for (int shift = 0; shift < 64 && range >> shift; shift += RADIX_BITS) {
        size_t count[(1 << RADIX_BITS) + 1] = {0};
        for (size_t i = 0; i < n; i++)
            count[(((uint64_t)from[i].start - (uint64_t)lo) >> shift & ((1 << RADIX_BITS) - 1)) +
                  1]++;
        for (size_t d = 1; d <= (1 << RADIX_BITS); d++)
            count[d] += count[d - 1];
        for (size_t i = 0; i < n; i++)
            to[count[((uint64_t)from[i].start - (uint64_t)lo) >> shift &
                     ((1 << RADIX_BITS) - 1)]++] = from[i];
        sort_key *t = from;
        from = to;
        to = t;
    }
    if (from != keys)
        memcpy(keys, from, n * sizeof *keys);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && keys[j].start == keys[i].start;)
            j++;
        if (j - i > 1)
            qsort(keys + i, j - i, sizeof *keys, cmp_key);
    }
}

typedef struct run_reader {
    uint64_t next, end;       /* records of the run in the file */
    int64_t *buf;
    size_t len, at;           /* records in buf, the current one */
} run_reader;

typedef struct sorter {
    int fd;
    size_t fields[EV_N];      /* event words a record carries after its head */
    size_t num_fields, words; /* words = REC_HEAD + num_fields */
    int64_t *recs;
    sort_key *keys, *spare;   /* spare: the radix sort's other half */
    size_t n, cap;            /* records in the block, its capacity */
    uint64_t written;         /* records in the file */
    uint64_t *run_end;        /* records in the file at the end of each run */
    size_t num_runs;
    run_reader *readers;
    size_t per_run;           /* records a reader's buffer holds */
    int64_t *io;
    int open_errno;           /* why no temporary file */
    size_t block;             /* bytes */
} sorter;

static size_t sort_block_bytes(void)
{
    const char *env = getenv("SCOPEPROF_SORT_BLOCK");
    if (!env || !*env)
        return SORT_BLOCK;
    char *rest;
    unsigned long long v = strtoull(env, &rest, 10);
    int shift = *rest == 'K' || *rest == 'k' ? 10 : *rest == 'M' || *rest == 'm' ? 20
              : *rest == 'G' || *rest == 'g' ? 30 : 0;
    v <<= shift;
    return v < SORT_MIN_BLOCK ? SORT_MIN_BLOCK : (size_t)v;
}

static void pack(const sorter *so, const event *ev, int64_t *rec)
{
    memcpy(rec, ev->v, REC_HEAD * sizeof *rec);
    for (size_t f = 0; f < so->num_fields; f++)
        rec[REC_HEAD + f] = ev->v[so->fields[f]];
}

static void unpack(const sorter *so, const int64_t *rec, event *ev)
{
    for (size_t w = REC_HEAD; w < EV_N; w++)
        ev->v[w] = -1;
    ev->v[EV_AWAIT] = 0;
    memcpy(ev->v, rec, REC_HEAD * sizeof *rec);
    for (size_t f = 0; f < so->num_fields; f++)
        ev->v[so->fields[f]] = rec[REC_HEAD + f];
}

/* The event words the cursor of run 0 reads besides times and place. */
static void record_fields(const stream_state *st, sorter *so)
{
    const cursor *c = &st->cursors[0];
    for (int col = SP_H5_COL_SECOND + 1; col < SP_H5_COL_N; col++)
        if (c->col[col])
            so->fields[so->num_fields++] = EV_COL + (size_t)col;
    for (int x = 0; x < SP_EXTRA_N; x++)
        if (c->xcol[x])
            so->fields[so->num_fields++] = EV_XCOL + (size_t)x;
    if (c->fcol)
        so->fields[so->num_fields++] = EV_FORK;
    if (c->acol)
        so->fields[so->num_fields++] = EV_AWAIT;
    so->words = REC_HEAD + so->num_fields;
}

/* The block, sorted, appended to the file as one run.  0; -1 (why set);
 * 3 when no temporary file can be made. */
static int write_run(stream_state *st, sorter *so)
{
    if (so->fd < 0) {
        so->fd = sp_temp_file_open("scopeprof-sort");
        if (so->fd < 0) {
            so->open_errno = errno;
            return 3;
        }
    }
    sort_keys(so->keys, so->spare, so->n);
    size_t rec_bytes = so->words * sizeof(int64_t), per_io = SORT_IO / rec_bytes, staged = 0;
    for (size_t i = 0; i < so->n; i++) {
        memcpy(so->io + staged * so->words, so->recs + so->keys[i].at * so->words, rec_bytes);
        if (++staged == per_io || i + 1 == so->n) {
            if (sp_temp_file_write(so->fd, so->io, staged * rec_bytes,
                                   (off_t)(so->written * rec_bytes)))
                return give_up(st, "the temporary file of the sort cannot be written");
            so->written += staged;
            staged = 0;
        }
    }
    so->run_end[so->num_runs++] = so->written;
    so->n = 0;
    return 0;
}

/* Pass over the rank's rows into sorted blocks. */
static int gather(stream_state *st, sorter *so)
{
    cursor *c = &st->cursors[0];
    run *r = &st->runs[0];
    for (size_t slot = 0; slot < st->num_checks; slot++) {
        const sp_row *row = st->checks[slot].row;
        if (!row->count)
            continue;
        *r = (run){.begin = row->offset, .end = row->offset + row->count,
                   .row_offset = row->offset, .slot = slot};
        c->pos = row->offset;
        if (cursor_fill(st, 0))
            return give_up(st, "event columns cannot be read");
        r->first_start = c->col[SP_H5_COL_START][0];
        for (;;) {
            cursor_decode(st, 0);
            if (so->n == so->cap) {
                int rc = write_run(st, so);
                if (rc)
                    return rc;
            }
            event ev;
            event_at(st, 0, &ev);
            pack(so, &ev, so->recs + so->n * so->words);
            so->keys[so->n] = (sort_key){c->start, c->end, so->n};
            so->n++;
            if (++c->pos == r->end)
                break;
            if (c->pos == c->base + c->len && cursor_fill(st, 0))
                return give_up(st, "event columns cannot be read");
        }
        st->info->calls += row->count;
    }
    return 0;
}

/* The next record of run k into its reader; 0, or -1 at a read error. */
static int reader_refill(sorter *so, size_t k)
{
    run_reader *rr = &so->readers[k];
    uint64_t left = rr->end - rr->next;
    size_t n = left < so->per_run ? (size_t)left : so->per_run;
    size_t rec_bytes = so->words * sizeof(int64_t);
    if (sp_temp_file_read(so->fd, rr->buf, n * rec_bytes, (off_t)(rr->next * rec_bytes)))
        return -1;
    rr->next += n;
    rr->len = n;
    rr->at = 0;
    return 0;
}

/* The sorted runs merged into visit(). */
static int merge_sorted(stream_state *st, sorter *so)
{
    size_t rec_bytes = so->words * sizeof(int64_t);
    size_t per_run = so->block / so->num_runs / rec_bytes;
    if (per_run > SORT_IO / rec_bytes)
        per_run = SORT_IO / rec_bytes;
    if (per_run < 16)
        per_run = 16;
    so->per_run = per_run;
    /* one slab: every reader's buffer */
    free(so->recs);
    so->recs = malloc(so->num_runs * per_run * rec_bytes);
    so->readers = calloc(so->num_runs, sizeof *so->readers);
    st->heap = malloc(so->num_runs * sizeof *st->heap);
    if (!so->recs || !so->readers || !st->heap)
        return give_up(st, "out of memory");
    for (size_t k = 0; k < so->num_runs; k++)
        so->readers[k].buf = so->recs + k * per_run * so->words;
    for (size_t k = 0; k < so->num_runs; k++) {
        run_reader *rr = &so->readers[k];
        rr->next = k ? so->run_end[k - 1] : 0;
        rr->end = so->run_end[k];
        if (reader_refill(so, k))
            return give_up(st, "the temporary file of the sort cannot be read");
        st->heap[st->heap_len++] = (heap_node){rr->buf[EV_START], rr->buf[EV_END], k};
    }
    for (size_t i = st->heap_len / 2; i-- > 0;)
        sift_down(st->heap, st->heap_len, i);
    while (st->heap_len) {
        size_t k = st->heap[0].run;
        run_reader *rr = &so->readers[k];
        event ev;
        unpack(so, rr->buf + rr->at * so->words, &ev);
        int rc = visit(st, &ev);
        if (rc)
            return rc;
        if (++rr->at == rr->len) {
            if (rr->next == rr->end) {
                st->heap[0] = st->heap[--st->heap_len];
                sift_down(st->heap, st->heap_len, 0);
                continue;
            }
            if (reader_refill(so, k))
                return give_up(st, "the temporary file of the sort cannot be read");
        }
        const int64_t *rec = rr->buf + rr->at * so->words;
        st->heap[0].start = rec[EV_START];
        st->heap[0].end = rec[EV_END];
        sift_down(st->heap, st->heap_len, 0);
    }
    return finish(st);
}

/* Whether SCOPEPROF_REPORT_TRACE or SCOPEPROF_EXPORT_TRACE is 1. */
static int tracing(void)
{
    const char *r = getenv("SCOPEPROF_REPORT_TRACE"), *e = getenv("SCOPEPROF_EXPORT_TRACE");
    return (r && !strcmp(r, "1")) || (e && !strcmp(e, "1"));
}

static int external_sort(stream_state *st, const char *path)
{
    sorter so = {.fd = -1, .block = sort_block_bytes()};
    /* run 0 and its cursor walk the rows; its windows, one slab */
    free(st->runs);
    st->runs = calloc(1, sizeof *st->runs);
    st->runs_cap = st->num_runs = 0;
    st->cursors = calloc(1, sizeof *st->cursors);
    size_t cols = columns_read(st);
    st->slab = malloc((cols * st->window + 1) * sizeof *st->slab);
    int rc = 0;
    if (!st->runs || !st->cursors || !st->slab)
        rc = give_up(st, "out of memory");
    if (rc == 0) {
        int64_t *next = st->slab;
        cursor_windows(st, &st->cursors[0], st->window, &next);
        record_fields(st, &so);
        size_t rec_bytes = so.words * sizeof(int64_t);
        so.cap = so.block / (rec_bytes + 2 * sizeof(sort_key));
        if (so.cap < 16)
            so.cap = 16;
        so.recs = malloc(so.cap * rec_bytes);
        so.keys = malloc(so.cap * sizeof *so.keys);
        so.spare = malloc(so.cap * sizeof *so.spare);
        so.io = malloc(SORT_IO > rec_bytes ? SORT_IO : rec_bytes);
        uint64_t calls = 0;
        for (size_t r = 0; r < st->num_checks; r++)
            calls += st->checks[r].row->count;
        so.run_end = malloc((size_t)(calls / so.cap + 1) * sizeof *so.run_end);
        if (!so.recs || !so.keys || !so.spare || !so.io || !so.run_end)
            rc = give_up(st, "out of memory");
    }
    if (rc == 0)
        rc = gather(st, &so);
    if (rc == 0 && !so.num_runs) {
        /* the rank fits one block: visited from it */
        sort_keys(so.keys, so.spare, so.n);
        for (size_t i = 0; rc == 0 && i < so.n; i++) {
            event ev;
            unpack(&so, so.recs + so.keys[i].at * so.words, &ev);
            rc = visit(st, &ev);
        }
        if (rc == 0)
            rc = finish(st);
    } else if (rc == 0) {
        rc = so.n ? write_run(st, &so) : 0;
        free(so.keys);
        free(so.spare);
        so.keys = so.spare = NULL;
        if (rc == 0)
            rc = merge_sorted(st, &so);
    }
    st->info->sorted_runs = so.num_runs;
    if (so.fd >= 0)
        close(so.fd);
    free(so.recs);
    free(so.keys);
    free(so.spare);
    free(so.io);
    free(so.run_end);
    free(so.readers);
    if (rc == 3 && st->forks && st->shape->has_fork) {
        /* the graft (graft_stream.c) takes the calls nested only: the
         * caller's in-memory path takes the rank */
        rc = give_up(st, "no temporary file for the sort of a scattered rank with fork edges");
    } else if (rc == 3) {
        /* nothing was visited yet (the first block was full) */
        if (tracing())
            fprintf(stderr, "scopeprof: rank %u: no temporary file for the sort (%s): "
                            "the rank replayed from memory\n", st->rank,
                    strerror(so.open_errno));
        memset(st->info, 0, sizeof *st->info);
        st->info->first_start = INT64_MAX;
        st->info->last_end = INT64_MIN;
        rc = replay_in_memory(st, path);
        st->info->replayed = 1;
    }
    return rc;
}

/* A rank that does not nest, read to its end: 2 with its rows' numbers, as
 * the in-memory path shows it; 1 when its rows are not all in this file. */
static int rows_of_crossed_rank(stream_state *st)
{
    if (st->num_checks != st->rank_rows)
        return give_up(st, "rows of the rank in several files");
    sp_rank_stream_info *info = st->info;
    info->row_durations = malloc((st->num_checks + 1) * sizeof *info->row_durations);
    if (!info->row_durations)
        return give_up(st, "out of memory");
    info->num_rows = st->num_checks;
    for (size_t r = 0; r < st->num_checks; r++) {
        const row_check *c = &st->checks[r];
        info->row_durations[r][0] = c->started ? c->total : 0;
        info->row_durations[r][1] = c->started ? c->minimum : 0;
        info->row_durations[r][2] = c->started ? c->maximum : 0;
    }
    snprintf(st->why, st->whylen, "%s", st->crossing);
    return 2;
}

void sp_rank_stream_info_free(sp_rank_stream_info *info)
{
    free(info->thread_calls);
    free(info->thread_busy);
    free(info->row_durations);
    memset(info, 0, sizeof *info);
}

int sp_stream_rank(const sp_run_source *src, uint32_t rank, int64_t clock_offset,
                   const sp_call_visitor *visitor, sp_rank_stream_info *info, char *why,
                   size_t whylen)
{
    return sp_stream_rank_with(src, rank, clock_offset, visitor, NULL, info, why, whylen);
}

/* One file's event reader is kept open from one rank to the next: the
 * ranks of a merged file share chunks (a 16,384-event chunk holds the
 * calls of many small ranks), and the reader's chunk cache then
 * decompresses each chunk about once instead of once per rank.  Released
 * when its run source closes, or before report workers fork
 * (sp_stream_release_reader). */
static struct {
    const sp_run_source *src;
    long file;
    size_t cache;
    char *path;              /* a source not closed must not pass for a new one */
    sp_h5_event_reader *reader;
} kept;

static sp_h5_event_reader *kept_reader(const sp_run_source *src, long file, size_t cache)
{
    if (kept.reader && kept.src == src && kept.file == file && kept.cache == cache &&
        !strcmp(kept.path, src->paths[file]))
        return kept.reader;
    sp_stream_release_reader(NULL);
    char err[256];
    kept.path = strdup(src->paths[file]);
    kept.reader = kept.path ? sp_h5_event_reader_open(src->paths[file], &src->shapes[file], cache,
                                                      err, sizeof err)
                            : NULL;
    if (!kept.reader) {
        free(kept.path);
        kept.path = NULL;
        return NULL;
    }
    kept.src = src;
    kept.file = file;
    kept.cache = cache;
    return kept.reader;
}

void sp_stream_release_reader(const sp_run_source *src)
{
    if (!kept.reader || (src && kept.src != src))
        return;
    sp_h5_event_reader_close(kept.reader);
    free(kept.path);
    memset(&kept, 0, sizeof kept);
}

static int stream_rank(const sp_run_source *src, uint32_t rank, int64_t clock_offset,
                       const sp_call_visitor *visitor, const sp_stream_options *options,
                       int mpi, int forks, sp_rank_stream_info *info, char *why,
                       size_t whylen);

int sp_stream_rank_with(const sp_run_source *src, uint32_t rank, int64_t clock_offset,
                        const sp_call_visitor *visitor, const sp_stream_options *options,
                        sp_rank_stream_info *info, char *why, size_t whylen)
{
    return stream_rank(src, rank, clock_offset, visitor, options, 0, 0, info, why, whylen);
}

int sp_stream_rank_forks(const sp_run_source *src, uint32_t rank, int64_t clock_offset,
                         const sp_call_visitor *visitor, const sp_stream_options *options,
                         sp_rank_stream_info *info, char *why, size_t whylen)
{
    return stream_rank(src, rank, clock_offset, visitor, options, 0, 1, info, why, whylen);
}

int sp_stream_rank_mpi(const sp_run_source *src, uint32_t rank, int64_t clock_offset,
                       const sp_call_visitor *visitor, sp_rank_stream_info *info, char *why,
                       size_t whylen)
{
    return stream_rank(src, rank, clock_offset, visitor, NULL, 1, 0, info, why, whylen);
}

static int stream_rank(const sp_run_source *src, uint32_t rank, int64_t clock_offset,
                       const sp_call_visitor *visitor, const sp_stream_options *options,
                       int mpi, int forks, sp_rank_stream_info *info, char *why,
                       size_t whylen)
{
    memset(info, 0, sizeof *info);
    info->first_start = INT64_MAX;
    info->last_end = INT64_MIN;
    stream_state st = {.src = src, .rank = rank, .offset = clock_offset, .visitor = visitor,
                       .info = info, .why = why, .whylen = whylen, .mpi = mpi,
                       .forks = forks};
    if (options)
        st.opt = *options;
    const sp_profile *p = src->profile;
    long file = -1;
    for (size_t r = 0; r < p->num_rows && file < 0; r++)
        if (p->rows[r].rank == rank)
            file = (long)src->row_file[r];
    if (file < 0)
        return 0;
    st.shape = &src->shapes[file];
    uint64_t chunk = st.shape->chunk;
    st.window = chunk && chunk <= 2 * MAX_WINDOW ? (size_t)chunk : MAX_WINDOW;
    if (st.window < MIN_WINDOW)
        st.window = MIN_WINDOW;
    /* Ids are 0..n-1 in files we and the Python package write; a bitmap of
     * up to 8 bits per event (or 1 MiB) keeps the check bounded. */
    st.seen_limit = 8 * st.shape->num_events + ((uint64_t)8 << 20);
    int64_t *buf = malloc(2 * st.window * sizeof *buf);
    int rc = buf ? lane_keys(&st) : give_up(&st, "out of memory");
    if (rc == 0) {
        size_t cache = chunk > st.window ? (size_t)chunk * 8 * 8 : (size_t)4 << 20;
        st.reader = kept_reader(src, file, cache);
        if (!st.reader)
            rc = give_up(&st, "event columns cannot be opened");
    }
    size_t rows = 0;
    for (size_t r = 0; r < p->num_rows; r++)
        rows += p->rows[r].rank == rank;
    st.checks = calloc(rows + 1, sizeof *st.checks);
    if (rc == 0 && !st.checks)
        rc = give_up(&st, "out of memory");
    st.rank_rows = rows;
    st.sum_rows = st.shape->has_stats || st.opt.rows_on_crossing;
    for (size_t r = 0; rc == 0 && r < p->num_rows; r++)
        if (p->rows[r].rank == rank && src->row_file[r] == (size_t)file) {
            row_check *c = &st.checks[st.num_checks++];
            c->row = &p->rows[r];
            c->omp_parallel = !strcmp(p->names[c->row->region], "omp parallel");
        }
    for (size_t r = 0; rc == 0 && r < st.num_checks; r++)
        rc = scan_row(&st, st.checks[r].row, r, buf);
    free(buf);
    /* many short runs: sorted rather than merged in windows */
    if (rc == 0 && st.num_runs > SORT_RUNS && info->calls < SORT_RUN_LENGTH * st.num_runs)
        st.scattered = 1;
    else if (rc == 0 && st.num_runs)
        rc = merge_runs(&st);
    if ((rc == 0 || rc == 1) && st.scattered && !st.visitor_failed) {
        /* nothing was visited yet */
        memset(info, 0, sizeof *info);
        info->first_start = INT64_MAX;
        info->last_end = INT64_MIN;
        rc = external_sort(&st, src->paths[file]);
    }
    if (st.visitor_failed)
        rc = -1;
    else if (rc == 0 && st.crossed)
        rc = rows_of_crossed_rank(&st);
    /* st.reader stays open for the next rank of the file (kept_reader) */
    free(st.runs);
    free(st.cursors);
    free(st.slab);
    free(st.heap);
    for (size_t l = 0; l < st.num_lanes; l++)
        free(st.lanes[l].calls);
    free(st.lanes);
    free(st.seen_ids);
    free(st.referenced);
    free(st.checks);
    free(st.thread_keys);
    free(st.task_keys);
    return rc;
}

static int checks_only_enter(void *ctx, const sp_stream_call *call, int64_t parent,
                             int64_t *user)
{
    (void)ctx;
    (void)call;
    *user = parent;
    return 0;
}

static int checks_only_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    (void)ctx;
    (void)call;
    (void)user;
    return 0;
}

const sp_call_visitor sp_call_visitor_checks_only = {checks_only_enter, checks_only_exit, NULL};
