/* capture_stream.c - the schema-3 file of a capture whose events do not fit
 * in memory (they were spilled under SCOPE_PROFILER_MAX_MEMORY), written
 * without ever holding all of them: memory is one window of the output
 * event columns plus the lanes' stacks of open calls, whatever the number
 * of calls.  The file is the one sp_capture_to_profile + sp_h5_write make
 * of the same capture, except that call_ids are numbered differently (here:
 * the call's position in the event columns).
 *
 * How (docs/robustness.md, "The final write"):
 *
 *  1. One forward pass indexes the spill files' frames and counts the
 *     events per region (rows and their offsets follow), and checks that
 *     on every lane (thread or task) the calls come in end order - they do,
 *     a call being recorded when it ends.  A capture where they do not is
 *     handed back to the in-memory path.
 *  2. A scan walks the events backwards (last chunk first, each chunk from
 *     its end).  Each event's output position is known on the way: rows are
 *     in region order, events of a row in recording order, so a per-region
 *     cursor counts down from the row's end.  Backwards in end order, every
 *     call comes after its enclosing calls (reverse post-order of the call
 *     tree), so its parent is found on a stack that holds only the lane's
 *     current chain of ancestors.  Calls of one lane that end at the same
 *     instant are put in the order the tree needs first (spec §5.2 ties:
 *     zero-length at the instant first, then start ascending, then output
 *     position).  A stack entry that must leave while it still contains the
 *     call being placed is a partial overlap: a nesting error, as in
 *     sp_calls_build.  Exclusive time: each entry sums its children's
 *     durations and adds its own exclusive time to its region on leaving.
 *  3. The output is cut into windows of W positions (a multiple of the
 *     dataset chunk, so each compressed chunk is written once).  Scan p keeps
 *     the events whose position falls in window p, then the window's part of
 *     every column is written as one hyperslab; the first scan also yields
 *     the exclusive totals, the nesting verdict and each row's total (the
 *     mean that the summary statistics' second moment needs), so statistics
 *     accumulate window after window in row order, bit-identical to
 *     sp_summary_compute.
 *  4. The file goes to a temporary file on disk whose space is reserved
 *     first, and is published like every other (h5_publish.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture_internal.h"
#include "capture/capture_source.h"
#include "h5/h5_internal.h"
#include "model/lane_map.h"
#include "scopeprof/callstack.h"

/* Windows of at least this many bytes, whatever the cap. */
#define SP_STREAM_MIN_BUDGET ((uint64_t)32 << 20)

/* A call on a lane's stack of open calls. */
struct open_call {
    int64_t start, end;
    uint64_t pos;          /* output position */
    uint64_t children;     /* durations of its direct children, wrapping sum */
    uint32_t region;       /* capture region */
};

/* A call waiting in its lane's run of calls that end at the same instant. */
struct tie {
    int64_t start;
    uint64_t pos;
    uint32_t region;
};

struct lane {
    struct open_call *stack;
    size_t depth, stack_cap;
    struct tie *run;
    size_t run_len, run_cap;
    int64_t run_end;
    int64_t last_end;      /* forward pass: the ends must not go back */
    int seen;
};

/* The part of the output columns being assembled. */
struct window {
    uint64_t first, count;
    int64_t *start, *end, *parent, *thread, *task, *await;
    int64_t *mpi[SP_EXTRA_N];  /* the MPI columns, when the capture has them */
};

#define MPI_FIRST SP_EXTRA_MPI_SENT_BYTES
#define MPI_LAST SP_EXTRA_MPI_RECV_TAG

struct stream {
    const sp_capture *c;
    sp_source source;
    sp_profile *skel;
    uint64_t *counts;      /* per capture region */
    int64_t *row_of;       /* per capture region: row or -1 */
    uint64_t *cursor;      /* per capture region: next output position + 1 */
    int64_t *row_total;    /* per row: wrapping sum of durations */
    int64_t *exclusive;    /* per name: wrapping sum of exclusive times */
    int has_tasks;
    int out_of_order;      /* some lane's ends go back */
    int nested;            /* 0 once the calls are known not to nest */
    int first_scan;
    /* the calls named by the nesting warning */
    int64_t bad_start[2], bad_end[2];
    uint64_t bad_pos[2];   /* forward pass: call index within the region */
    uint32_t bad_region[2];
    int bad_calls;
    sp_lane_map map;
    struct lane *lanes;
    size_t num_lanes, lanes_cap;
    struct window win;
    sp_mpi_match *mpi;     /* NULL: no MPI side data */
    sp_fork_resolver forks; /* fork edges as output positions */
    char *err;
    size_t errlen;
};

/* Room for one more element in a growing array: 0 or -1. */
static int make_room(void **array, size_t *cap, size_t used, size_t size, size_t first_cap)
{
    if (used < *cap)
        return 0;
    size_t grown_cap = *cap ? *cap * 2 : first_cap;
    void *grown = realloc(*array, grown_cap * size);
    if (!grown)
        return -1;
    *array = grown;
    *cap = grown_cap;
    return 0;
}

static int64_t lane_of_event(const struct stream *st, int64_t thread, int32_t task)
{
    return st->c->track_threads ? sp_lane_id(thread, task) : -1;
}

static struct lane *find_lane(struct stream *st, int64_t id)
{
    sp_lane_slot *slot = sp_lane_map_slot(&st->map, id);
    if (!slot)
        return NULL;
    if (slot->top < 0) {
        if (make_room((void **)&st->lanes, &st->lanes_cap, st->num_lanes, sizeof *st->lanes, 16))
            return NULL;
        memset(&st->lanes[st->num_lanes], 0, sizeof *st->lanes);
        slot->top = (int64_t)st->num_lanes++;
    }
    return &st->lanes[slot->top];
}

static int64_t duration(int64_t start, int64_t end)
{
    /* wraps instead of overflowing on absurd (hostile) timestamps */
    return (int64_t)((uint64_t)end - (uint64_t)start);
}

/* ---- pass 1: index, counts, order ---------------------------------------- */

static void note_bad_call(struct stream *st, int k, uint32_t region, uint64_t index,
                          int64_t start, int64_t end)
{
    st->bad_region[k] = region;
    st->bad_pos[k] = index;
    st->bad_start[k] = start;
    st->bad_end[k] = end;
}

static int count_chunk(void *ctx, const sp_capture_chunk *ch)
{
    struct stream *st = ctx;
    struct lane *lane = NULL;
    int64_t lane_id = 0;
    for (size_t i = 0; i < ch->count; i++) {
        const sp_event *e = &ch->events[i];
        if (e->region >= st->c->num_regions) {
            snprintf(st->err, st->errlen, "internal error: event of unknown region %u", e->region);
            return -1;
        }
        if (e->end < e->start && st->nested) {
            st->nested = 0;
            st->bad_calls = 1;
            note_bad_call(st, 0, e->region, st->counts[e->region], e->start, e->end);
        }
        st->counts[e->region]++;
        st->has_tasks |= e->task >= 0;
        if (st->mpi && sp_mpi_match_count(st->mpi, ch->thread, e->region) != 0) {
            snprintf(st->err, st->errlen, "out of memory");
            return -1;
        }
        int64_t id = lane_of_event(st, ch->thread, e->task);
        if (!lane || id != lane_id) {
            lane_id = id;
            if (!(lane = find_lane(st, id))) {
                snprintf(st->err, st->errlen, "out of memory");
                return -1;
            }
        }
        if (lane->seen && e->end < lane->last_end)
            st->out_of_order = 1;
        lane->seen = 1;
        lane->last_end = e->end;
    }
    return 0;
}

/* ---- the backward scan ----------------------------------------------------- */

/* Does a precede b in the reconstruction's sort order (start ascending,
 * end descending, output position)? */
static int sorted_before(int64_t a_start, int64_t a_end, uint64_t a_pos,
                         int64_t b_start, int64_t b_end, uint64_t b_pos)
{
    if (a_start != b_start)
        return a_start < b_start;
    if (a_end != b_end)
        return a_end > b_end;
    return a_pos < b_pos;
}

/* As in callstack.c: is a call [start, end] over before a call starting at
 * `at`?  Touching calls are siblings; a zero-length call stays open at its
 * own instant. */
static int closed_before(int64_t start, int64_t end, int64_t at)
{
    return end < at || (end == at && start != end);
}

static void leave(struct stream *st, const struct open_call *t)
{
    if (!st->first_scan)
        return;
    uint32_t name = st->skel->rows[st->row_of[t->region]].region;
    int64_t exclusive = (int64_t)((uint64_t)duration(t->start, t->end) - t->children);
    st->exclusive[name] = (int64_t)((uint64_t)st->exclusive[name] + (uint64_t)exclusive);
}

static uint64_t call_index(const struct stream *st, uint32_t region, uint64_t pos)
{
    return pos - st->skel->rows[st->row_of[region]].offset;
}

/* Places call x (ending at `end`) under the innermost call of the lane's
 * stack that contains it.  0, or -1 out of memory. */
static int place(struct stream *st, struct lane *lane, const struct tie *x, int64_t end)
{
    while (lane->depth > 0) {
        struct open_call *t = &lane->stack[lane->depth - 1];
        if (sorted_before(t->start, t->end, t->pos, x->start, end, x->pos) &&
            !closed_before(t->start, t->end, x->start))
            break; /* t contains x */
        /* t leaves: it must lie after x entirely, else the two cross */
        if (!sorted_before(x->start, end, x->pos, t->start, t->end, t->pos) ||
            !closed_before(x->start, end, t->start)) {
            st->nested = 0;
            st->bad_calls = 2;
            note_bad_call(st, 0, x->region, call_index(st, x->region, x->pos), x->start, end);
            note_bad_call(st, 1, t->region, call_index(st, t->region, t->pos), t->start, t->end);
            return 0;
        }
        leave(st, t);
        lane->depth--;
    }
    int64_t parent = -1;
    if (lane->depth > 0) {
        struct open_call *p = &lane->stack[lane->depth - 1];
        parent = (int64_t)p->pos;
        p->children += (uint64_t)duration(x->start, end);
    }
    if (st->win.parent && x->pos - st->win.first < st->win.count)
        st->win.parent[x->pos - st->win.first] = parent;
    if (make_room((void **)&lane->stack, &lane->stack_cap, lane->depth, sizeof *lane->stack, 16))
        return -1;
    lane->stack[lane->depth++] = (struct open_call){x->start, end, x->pos, 0, x->region};
    return 0;
}

/* Calls ending at one instant, parents first: a zero-length call at that
 * instant encloses nothing that ends there but itself, then the earlier
 * start encloses the later, then identical calls nest in output order. */
static int tie_order(const void *pa, const void *pb, void *run_end)
{
    const struct tie *a = pa, *b = pb;
    int64_t end = *(const int64_t *)run_end;
    int a_zero = a->start == end, b_zero = b->start == end;
    if (a_zero != b_zero)
        return a_zero ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int flush_run(struct stream *st, struct lane *lane)
{
    if (lane->run_len > 1)
        qsort_r(lane->run, lane->run_len, sizeof *lane->run, tie_order, &lane->run_end);
    for (size_t k = 0; k < lane->run_len && st->nested; k++)
        if (place(st, lane, &lane->run[k], lane->run_end) != 0)
            return -1;
    lane->run_len = 0;
    return 0;
}

static int visit(struct stream *st, const sp_capture_chunk *ch, size_t i, struct lane **lane,
                 int64_t *lane_id)
{
    const sp_event *e = &ch->events[i];
    int64_t row = e->region < st->c->num_regions ? st->row_of[e->region] : -1;
    if (row < 0 || st->cursor[e->region] == st->skel->rows[row].offset) {
        /* a spill file that changed between the passes */
        snprintf(st->err, st->errlen, "the recorded events changed while being written");
        return -1;
    }
    uint64_t pos = --st->cursor[e->region];
    struct window *w = &st->win;
    if (pos - w->first < w->count) {
        size_t j = (size_t)(pos - w->first);
        w->start[j] = e->start;
        w->end[j] = e->end;
        if (w->thread)
            w->thread[j] = ch->thread;
        if (w->task) {
            w->task[j] = e->task;
            w->await[j] = ch->await_ns ? ch->await_ns[i] : 0;
        }
    }
    if (st->mpi) {
        /* every event of the group, in or out of the window: the count down */
        const sp_capture_mpi *r = sp_mpi_match_event_back(st->mpi, ch->thread, e->region);
        if (pos - w->first < w->count) {
            int64_t values[SP_EXTRA_N];
            sp_mpi_values(r, values);
            for (int c = MPI_FIRST; c <= MPI_LAST; c++)
                w->mpi[c][pos - w->first] = values[c];
        }
    }
    if (st->first_scan)
        st->row_total[row] = (int64_t)((uint64_t)st->row_total[row] +
                                       (uint64_t)duration(e->start, e->end));
    if (!st->nested)
        return 0;
    int64_t id = lane_of_event(st, ch->thread, e->task);
    if (!*lane || id != *lane_id) {
        *lane_id = id;
        if (!(*lane = find_lane(st, id)))
            goto oom;
    }
    struct lane *l = *lane;
    if (l->run_len && l->run_end != e->end && flush_run(st, l) != 0)
        goto oom;
    if (make_room((void **)&l->run, &l->run_cap, l->run_len, sizeof *l->run, 8))
        goto oom;
    l->run[l->run_len++] = (struct tie){e->start, pos, e->region};
    l->run_end = e->end;
    return 0;
oom:
    snprintf(st->err, st->errlen, "out of memory reconstructing the call tree");
    return -1;
}

/* One backward scan over every event, keeping those of the window. */
static int scan(struct stream *st)
{
    for (size_t r = 0; r < st->c->num_regions; r++)
        if (st->row_of[r] >= 0) {
            const sp_row *row = &st->skel->rows[st->row_of[r]];
            st->cursor[r] = row->offset + row->count;
        }
    for (size_t l = 0; l < st->num_lanes; l++)
        st->lanes[l].depth = st->lanes[l].run_len = 0;
    sp_mpi_match_rewind(st->mpi);
    struct lane *lane = NULL;
    int64_t lane_id = 0;
    for (size_t k = st->source.num_segments; k-- > 0;) {
        sp_capture_chunk ch;
        if (sp_source_chunk(&st->source, k, &ch, st->err, st->errlen) != 0)
            return -1;
        for (size_t i = ch.count; i-- > 0;)
            if (visit(st, &ch, i, &lane, &lane_id) != 0)
                return -1;
    }
    for (size_t l = 0; l < st->num_lanes; l++) {
        struct lane *ln = &st->lanes[l];
        if (st->nested && flush_run(st, ln) != 0) {
            snprintf(st->err, st->errlen, "out of memory reconstructing the call tree");
            return -1;
        }
        while (st->nested && ln->depth > 0)
            leave(st, &ln->stack[--ln->depth]);
    }
    for (size_t r = 0; r < st->c->num_regions; r++)
        if (st->row_of[r] >= 0 && st->cursor[r] != st->skel->rows[st->row_of[r]].offset) {
            snprintf(st->err, st->errlen, "the recorded events changed while being written");
            return -1;
        }
    return 0;
}

/* ---- writing --------------------------------------------------------------- */

struct writer {
    sp_h5_sink *sink;
    sp_summary_acc *acc;   /* per row */
    size_t row;            /* row of the window's first event */
    int64_t carry_start;   /* start of the event before the window */
    char why[512];
};

/* Statistics of the window's events, row by row, in row order. */
static void add_window_stats(struct stream *st, struct writer *wr)
{
    const struct window *w = &st->win;
    for (size_t r = wr->row; r < st->skel->num_rows; r++) {
        const sp_row *row = &st->skel->rows[r];
        uint64_t lo = row->offset > w->first ? row->offset : w->first;
        uint64_t hi = row->offset + row->count < w->first + w->count ? row->offset + row->count
                                                                    : w->first + w->count;
        if (lo >= w->first + w->count)
            break;
        if (lo < hi)
            sp_summary_add(&wr->acc[r], w->start + (lo - w->first), w->end + (lo - w->first),
                           NULL, (size_t)(hi - lo));
    }
}

static int put(struct writer *wr, const struct window *w, int column, const int64_t *values)
{
    if (!sp_h5_sink_has_events(wr->sink, column))
        return 0;
    return sp_h5_sink_put_events(wr->sink, column, w->first, w->count, values, wr->why,
                                 sizeof wr->why);
}

/* The window's part of every event column.  Turns start and end into
 * their encodings in place, so it comes after the statistics. */
static int write_window(struct stream *st, struct writer *wr)
{
    struct window *w = &st->win;
    size_t n = (size_t)w->count;
    for (size_t j = 0; j < n; j++)
        w->end[j] = duration(w->start[j], w->end[j]);
    if (put(wr, w, SP_EV_DUR, w->end) < 0)
        return -1;
    /* start deltas, from the back so that each start is still there for its
     * successor; rows begin with their absolute start (spec §1.5) */
    int64_t last_start = w->start[n - 1];
    size_t row = wr->row;
    for (size_t j = n; j-- > 0;) {
        uint64_t pos = w->first + j;
        while (row + 1 < st->skel->num_rows && st->skel->rows[row + 1].offset <= pos)
            row++;
        while (st->skel->rows[row].offset > pos)
            row--;
        if (pos == st->skel->rows[row].offset)
            continue;
        int64_t before = j ? w->start[j - 1] : wr->carry_start;
        w->start[j] = duration(before, w->start[j]);
    }
    if (put(wr, w, SP_EV_START, w->start) < 0)
        return -1;
    wr->carry_start = last_start;
    /* call ids: the output positions */
    for (size_t j = 0; j < n; j++)
        w->end[j] = (int64_t)(w->first + j);
    if (put(wr, w, SP_EV_CALL, w->end) < 0 || put(wr, w, SP_EV_PARENT, w->parent) < 0 ||
        put(wr, w, SP_EV_THREAD, w->thread) < 0 || put(wr, w, SP_EV_TASK, w->task) < 0 ||
        put(wr, w, SP_EV_AWAIT, w->await) < 0)
        return -1;
    for (int c = MPI_FIRST; c <= MPI_LAST; c++)
        if (w->mpi[c] && put(wr, w, SP_EV_EXTRA + c, w->mpi[c]) < 0)
            return -1;
    if (sp_h5_sink_has_events(wr->sink, SP_EV_FORK)) {
        /* fork parents: output positions, i.e. call ids */
        for (size_t j = 0; j < n; j++)
            w->end[j] = sp_fork_resolver_parent(&st->forks, w->first + j, w->thread[j],
                                                w->parent[j], w->task ? w->task[j] : -1);
        if (put(wr, w, SP_EV_FORK, w->end) < 0)
            return -1;
    }
    /* the next window starts in the row holding this window's last event */
    while (wr->row + 1 < st->skel->num_rows &&
           st->skel->rows[wr->row + 1].offset <= w->first + w->count)
        wr->row++;
    return 0;
}

/* What the file can take at most: every event column uncompressed (the
 * deflate filter stores a chunk as it is when compressing does not help),
 * chunk indexes, tables, strings, metadata, and slack for HDF5's own. */
static uint64_t bound_bytes(const sp_profile *p, int columns)
{
    uint64_t bytes = (uint64_t)4 << 20;
    uint64_t events = p->num_events * 8 * (uint64_t)columns;
    bytes += events + events / 256 + (p->num_events / SP_H5_EVENT_CHUNK + 1) * 64 * columns;
    for (size_t i = 0; i < p->num_names; i++)
        bytes += strlen(p->names[i]) + 64;
    for (size_t r = 0; r < p->num_rows; r++)
        bytes += 512 + strlen(p->rows[r].source_file) + strlen(p->rows[r].source_text) +
                 strlen(p->rows[r].tags) + strlen(p->rows[r].event_metadata);
    for (size_t t = 0; t < p->num_threads; t++)
        bytes += 256 + strlen(p->threads[t].name);
    bytes += p->num_tasks * (uint64_t)512;
    for (size_t m = 0; m < p->num_meta; m++) {
        const sp_meta *meta = &p->meta[m];
        bytes += 256 + strlen(meta->key) + (meta->s ? strlen(meta->s) : 0);
        for (size_t k = 0; k < meta->list_len; k++)
            bytes += 64 + strlen(meta->list[k]);
    }
    return bytes;
}

static int alloc_window(struct stream *st, uint64_t events)
{
    struct window *w = &st->win;
    size_t cells = (size_t)(events ? events : 1);
    w->start = malloc(cells * sizeof *w->start);
    w->end = malloc(cells * sizeof *w->end);
    w->parent = malloc(cells * sizeof *w->parent);
    int ok = w->start && w->end && w->parent;
    if (st->c->track_threads)
        ok &= (w->thread = malloc(cells * sizeof *w->thread)) != NULL;
    if (st->has_tasks) {
        ok &= (w->task = malloc(cells * sizeof *w->task)) != NULL;
        ok &= (w->await = malloc(cells * sizeof *w->await)) != NULL;
    }
    for (int c = MPI_FIRST; st->mpi && c <= MPI_LAST; c++)
        ok &= (w->mpi[c] = malloc(cells * sizeof *w->mpi[c])) != NULL;
    return ok ? 0 : -1;
}

static void free_window(struct window *w)
{
    free(w->start);
    free(w->end);
    free(w->parent);
    free(w->thread);
    free(w->task);
    free(w->await);
    for (int c = 0; c < SP_EXTRA_N; c++)
        free(w->mpi[c]);
    memset(w, 0, sizeof *w);
}

/* Events per window: the budget over the bytes an event takes in it,
 * whole dataset chunks. */
static uint64_t window_events(const struct stream *st, uint64_t budget)
{
    uint64_t per_event = 8 * (3 + (st->c->track_threads ? 1 : 0) + (st->has_tasks ? 2 : 0) +
                              (st->mpi ? MPI_LAST - MPI_FIRST + 1 : 0));
    if (budget < SP_STREAM_MIN_BUDGET)
        budget = SP_STREAM_MIN_BUDGET;
    uint64_t w = budget / per_event / SP_H5_EVENT_CHUNK * SP_H5_EVENT_CHUNK;
    return w ? w : SP_H5_EVENT_CHUNK;
}

/* The nesting warning, in sp_calls_build's words: the same check run on
 * just the calls concerned. */
static void nesting_warning(const struct stream *st, char *warning, size_t warnlen)
{
    const sp_profile *p = st->skel;
    int64_t start[2], end[2];
    uint32_t region[2];
    uint64_t index[2];
    for (int k = 0; k < st->bad_calls; k++) {
        start[k] = st->bad_start[k];
        end[k] = st->bad_end[k];
        region[k] = p->rows[st->row_of[st->bad_region[k]]].region;
        index[k] = st->bad_pos[k];
    }
    sp_call_input in = {
        .n = (size_t)st->bad_calls,
        .start = start,
        .end = end,
        .region = region,
        .call_index = index,
        .region_names = (const char *const *)p->names,
        .num_regions = p->num_names,
    };
    sp_calls calls;
    char why[2048] = "";
    if (sp_calls_build(&in, &calls, why, sizeof why) == 0) {
        sp_calls_free(&calls);
        snprintf(why, sizeof why, "recorded calls are not properly nested");
    }
    sp_capture_append_callsites(p, st->c, st->row_of, why, sizeof why);
    snprintf(warning, warnlen, "call graph not recorded: %s", why);
}

static int write_file(struct stream *st, uint64_t window, char *warning, size_t warnlen)
{
    const sp_capture *c = st->c;
    sp_profile *p = st->skel;
    uint64_t n = p->num_events;
    struct writer wr = {0};
    sp_h5_publish pub;
    if (sp_h5_publish_begin(&pub, c->path, 0, st->err, st->errlen) < 0)
        return -1;
    int rc = -1;
    sp_summary_stats *stats = NULL;
    wr.acc = calloc(p->num_rows ? p->num_rows : 1, sizeof *wr.acc);
    if (!wr.acc || alloc_window(st, window < n ? window : n) != 0) {
        snprintf(wr.why, sizeof wr.why, "out of memory");
        goto fail;
    }

    /* window 0, and with it the call tree's verdict */
    st->win.first = 0;
    st->win.count = window < n ? window : n;
    st->first_scan = 1;
    if (scan(st) != 0)
        goto failed_scan;
    st->first_scan = 0;
    if (!st->nested) {
        nesting_warning(st, warning, warnlen);
        free(st->win.parent);
        st->win.parent = NULL;
    } else {
        for (size_t r = 0; r < p->num_rows; r++)
            p->rows[r].exclusive_total = st->exclusive[p->rows[r].region];
    }

    sp_h5_layout layout = {0};
    sp_h5_layout_add(&layout, p);
    layout.has_call_ids = layout.has_parent_ids = st->nested;
    layout.has_thread_ids = c->track_threads != 0;
    layout.has_task_ids = layout.has_await = st->has_tasks;
    for (int k = MPI_FIRST; st->mpi && k <= MPI_LAST; k++)
        layout.has_extra[k] = 1;
    layout.has_fork = st->nested && c->track_threads && st->forks.linked;
    int columns = 2 + 2 * st->nested + layout.has_thread_ids + 2 * st->has_tasks +
                  (st->mpi ? MPI_LAST - MPI_FIRST + 1 : 0) + layout.has_fork;
    if (sp_h5_publish_reserve(&pub, bound_bytes(p, columns), st->err, st->errlen) != 0) {
        sp_h5_publish_abort(&pub);
        goto out;
    }
    if (!(wr.sink = sp_h5_sink_create(pub.file, &layout, wr.why, sizeof wr.why)))
        goto fail;
    for (size_t r = 0; r < p->num_rows; r++)
        sp_summary_begin(&wr.acc[r], st->row_total[r], p->rows[r].count);
    while (n > 0) {
        add_window_stats(st, &wr);
        if (write_window(st, &wr) != 0)
            goto fail;
        uint64_t next = st->win.first + st->win.count;
        if (next >= n)
            break;
        st->win.first = next;
        st->win.count = n - next < window ? n - next : window;
        if (scan(st) != 0)
            goto failed_scan;
    }
    if (!(stats = malloc((p->num_rows ? p->num_rows : 1) * sizeof *stats))) {
        snprintf(wr.why, sizeof wr.why, "out of memory");
        goto fail;
    }
    for (size_t r = 0; r < p->num_rows; r++)
        sp_summary_end(&wr.acc[r], &stats[r]);
    if (sp_h5_sink_put_rows(wr.sink, p, stats, wr.why, sizeof wr.why) < 0)
        goto fail;
    sp_h5_sink *sink = wr.sink;
    wr.sink = NULL;
    if (sp_h5_sink_finish(sink, (const char *const *)p->names, p->num_names, p, NULL,
                          wr.why, sizeof wr.why) < 0)
        goto fail;
    rc = sp_h5_publish_commit(&pub, st->err, st->errlen);
    goto out;
failed_scan:
    sp_h5_sink_abort(wr.sink);
    sp_h5_publish_abort(&pub);
    goto out;
fail:
    sp_h5_sink_abort(wr.sink);
    sp_h5_errf(st->err, st->errlen, "%s: %s%s; a previous file at this path is left "
               "untouched", c->path, wr.why, sp_h5_write_hint(wr.why));
    sp_h5_publish_abort(&pub);
out:
    free(stats);
    free(wr.acc);
    free_window(&st->win);
    return rc;
}

/* One forward pass: output positions of the calls the fork edges name
 * (call ids are output positions here).  Memory: the edges only. */
static int resolve_forks(struct stream *st)
{
    const sp_capture *c = st->c;
    if (sp_fork_resolver_init(&st->forks, c) != 0)
        goto oom;
    if (!st->forks.active)
        return 0;
    uint64_t *fill = calloc(c->num_regions ? c->num_regions : 1, sizeof *fill);
    if (!fill)
        goto oom;
    for (size_t k = 0; k < st->source.num_segments; k++) {
        sp_capture_chunk ch;
        if (sp_source_chunk(&st->source, k, &ch, st->err, st->errlen) != 0) {
            free(fill);
            return -1;
        }
        for (size_t i = 0; i < ch.count; i++) {
            uint32_t r = ch.events[i].region;
            if (r >= c->num_regions || st->row_of[r] < 0 || !st->forks.wanted[r])
                continue;
            uint64_t pos = st->skel->rows[st->row_of[r]].offset + fill[r]++;
            if (sp_fork_resolver_see(&st->forks, ch.thread, r, pos) != 0) {
                free(fill);
                goto oom;
            }
        }
    }
    free(fill);
    if (sp_fork_resolver_finish(&st->forks) != 0)
        goto oom;
    return 0;
oom:
    snprintf(st->err, st->errlen, "out of memory resolving fork edges");
    return -1;
}

static void stream_free(struct stream *st)
{
    sp_fork_resolver_free(&st->forks);
    sp_source_close(&st->source);
    sp_profile_free(st->skel);
    free(st->counts);
    free(st->row_of);
    free(st->cursor);
    free(st->row_total);
    free(st->exclusive);
    for (size_t l = 0; l < st->num_lanes; l++) {
        free(st->lanes[l].stack);
        free(st->lanes[l].run);
    }
    free(st->lanes);
    sp_lane_map_free(&st->map);
    sp_mpi_match_free(st->mpi);
}

int sp_capture_write_stream(const sp_capture *c, uint64_t window, uint64_t *events_out,
                            char *warning, size_t warnlen, char *err, size_t errlen)
{
    if (warnlen)
        warning[0] = '\0';
    struct stream st;
    memset(&st, 0, sizeof st);
    st.c = c;
    st.nested = 1;
    st.err = err;
    st.errlen = errlen;
    size_t regions = c->num_regions ? c->num_regions : 1;
    int rc = -1;
    if (sp_lane_map_init(&st.map, SIZE_MAX / 2) != 0 ||
        !(st.counts = calloc(regions, sizeof *st.counts)) ||
        !(st.row_of = calloc(regions, sizeof *st.row_of)) ||
        !(st.cursor = calloc(regions, sizeof *st.cursor))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    /* MPI side data: every MPI event counted on the first pass, the records
     * (in memory and in the spill files) known after it. */
    if (!(st.mpi = sp_mpi_match_new(c))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (sp_source_open(&st.source, c, count_chunk, &st, err, errlen) != 0)
        goto out;
    if (c->num_mpi + st.source.num_mpi == 0) {
        sp_mpi_match_free(st.mpi);
        st.mpi = NULL;
    } else if (sp_mpi_match_add_records(st.mpi, c->mpi, c->num_mpi, st.source.mpi,
                                        st.source.num_mpi) != 0) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (st.out_of_order && st.nested) {
        rc = 1; /* the in-memory path sorts them */
        goto out;
    }
    if (!(st.skel = sp_capture_skeleton(c, st.counts, st.row_of, err, errlen)))
        goto out;
    if (!(st.row_total = calloc(st.skel->num_rows ? st.skel->num_rows : 1,
                                sizeof *st.row_total)) ||
        !(st.exclusive = calloc(st.skel->num_names ? st.skel->num_names : 1,
                                sizeof *st.exclusive))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (resolve_forks(&st) != 0)
        goto out;
    if (window == 0)
        window = window_events(&st, c->max_memory);
    if (write_file(&st, window, warning, warnlen) == 0) {
        rc = 0;
        if (events_out)
            *events_out = st.skel->num_events;
    }
out:
    stream_free(&st);
    return rc;
}
