/* report_stream.c - sp_report_build on a run source: every rank's path tree
 * built while its calls stream past (src/stream/), one rank at a time, so
 * memory follows the distinct call paths, not the calls.  What is not
 * streamed yet sends the caller back to the in-memory path (docs/stream.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_fork_stream.h"
#include "report/report_jobs.h"
#include "scopeprof/h5.h"
#include "scopeprof/stream.h"
#include "stream/fork_ids_check.h"

typedef struct thread_counts {
    uint32_t rank;
    size_t n;
    uint64_t *calls;
    int64_t *busy;
} thread_counts;

typedef struct lane_kept {
    int64_t lane;
    int keep;
} lane_kept;

/* bare --lanes on a rank with fork edges: a lane's open kept calls, their
 * nodes in its lane tree */
typedef struct lane_open {
    int64_t lane;
    int64_t *nodes;
    size_t n, cap;
} lane_open;

typedef struct stream_ctx {
    const sp_run_source *src;
    const sp_selection *sel;
    unsigned char *region_keep;
    int64_t min_duration;
    /* --from/--to: calls kept when they intersect [from, to] (on the rank's
     * clock-adjusted times, as rank_calls.c); the wall is the span of the
     * events cut to [wall_from, wall_to] (raw times, as report.c). */
    int window;
    int64_t from, to, wall_from, wall_to;
    int64_t clip_lo, clip_hi;  /* of the rank being streamed */
    uint32_t rank;
    int64_t offset;
    lane_kept *lanes;          /* --lanes=LIST decisions of this rank */
    size_t num_lanes;
    int64_t first_start, last_end;
    thread_counts *threads;   /* per streamed rank, ascending */
    size_t num_threads;
    int fallback;             /* a rank could not be streamed */
    char *why;
    size_t whylen;
    sp_report_tree *tree;     /* of the rank being streamed */
    /* bare --lanes: the rank's tree per lane; a kept call's user word is
     * then its node in `tree` and, in the high 32 bits, in its lane's */
    int per_lane;
    sp_report_tree *lane_trees;
    size_t num_lane_trees, cached_lane_tree;
    lane_open *open;
    size_t num_open;
    const sp_report_call_hook *hook; /* options.call_hook */
    sp_report_jobs jobs;      /* worker processes (--jobs), count <= 1: none */
    int jobs_started;
    size_t next_rank;         /* next selected rank to take from the workers */
} stream_ctx;

/* --lanes=LIST: decided once per lane and rank. */
static int keeps_lane(stream_ctx *c, int64_t lane)
{
    for (size_t i = 0; i < c->num_lanes; i++)
        if (c->lanes[i].lane == lane)
            return c->lanes[i].keep;
    int keep = sp_selection_keeps_lane(c->sel, c->src->profile, c->rank, lane);
    lane_kept *grown = realloc(c->lanes, (c->num_lanes + 1) * sizeof *grown);
    if (grown) {
        c->lanes = grown;
        c->lanes[c->num_lanes++] = (lane_kept){lane, keep};
    }
    return keep;
}

/* --from/--to: the wall is the span of every event of the rank cut to the
 * window, nested or not (report.c's run_wall). */
static void on_event(void *ctx, int64_t s, int64_t e)
{
    stream_ctx *c = ctx;
    if (e < c->wall_from || s > c->wall_to)
        return;
    int64_t lo = (s > c->wall_from ? s : c->wall_from) - c->offset;
    int64_t hi = (e < c->wall_to ? e : c->wall_to) - c->offset;
    if (lo < c->clip_lo)
        c->clip_lo = lo;
    if (hi > c->clip_hi)
        c->clip_hi = hi;
}

/* The tree of a lane of the rank being streamed, created at its first
 * kept call; NULL out of memory. */
static sp_report_tree *lane_tree(stream_ctx *c, int64_t lane)
{
    if (c->cached_lane_tree < c->num_lane_trees &&
        c->lane_trees[c->cached_lane_tree].lane == lane)
        return &c->lane_trees[c->cached_lane_tree];
    for (size_t k = 0; k < c->num_lane_trees; k++)
        if (c->lane_trees[k].lane == lane) {
            c->cached_lane_tree = k;
            return &c->lane_trees[k];
        }
    sp_report_tree *grown =
        realloc(c->lane_trees, (c->num_lane_trees + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    c->lane_trees = grown;
    if (sp_report_tree_init(&grown[c->num_lane_trees], c->rank, lane) != 0)
        return NULL;
    c->cached_lane_tree = c->num_lane_trees;
    return &grown[c->num_lane_trees++];
}

/* The open kept calls of a lane (bare --lanes, fork edges); NULL out of
 * memory. */
static lane_open *open_of(stream_ctx *c, int64_t lane)
{
    for (size_t k = 0; k < c->num_open; k++)
        if (c->open[k].lane == lane)
            return &c->open[k];
    lane_open *grown = realloc(c->open, (c->num_open + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    c->open = grown;
    grown[c->num_open] = (lane_open){lane, NULL, 0, 0};
    return &grown[c->num_open++];
}

/* A kept call of a rank with fork edges in its lane's tree: under the
 * lane's innermost open kept call, as the stream hangs it (lane trees do
 * not graft). */
static int lane_call_enter(void *ctx, const sp_stream_call *call)
{
    stream_ctx *c = ctx;
    sp_report_tree *tree = lane_tree(c, call->lane);
    lane_open *o = tree ? open_of(c, call->lane) : NULL;
    if (!o)
        return -1;
    int64_t node = sp_report_tree_node(tree, o->n ? o->nodes[o->n - 1] : -1, call->region);
    if (node < 0)
        return -1;
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 16;
        int64_t *grown = realloc(o->nodes, cap * sizeof *grown);
        if (!grown)
            return -1;
        o->nodes = grown;
        o->cap = cap;
    }
    o->nodes[o->n++] = node;
    return 0;
}

static int lane_call_exit(void *ctx, const sp_stream_call *call)
{
    stream_ctx *c = ctx;
    sp_report_tree *tree = lane_tree(c, call->lane);
    lane_open *o = tree ? open_of(c, call->lane) : NULL;
    if (!o || !o->n)
        return -1;
    sp_report_node_add_call(&tree->nodes[o->nodes[--o->n]], call->end - call->start,
                            call->exclusive);
    return 0;
}

static void lane_trees_free(stream_ctx *c)
{
    for (size_t k = 0; k < c->num_open; k++)
        free(c->open[k].nodes);
    free(c->open);
    c->open = NULL;
    c->num_open = 0;
    for (size_t k = 0; k < c->num_lane_trees; k++)
        sp_report_tree_free(&c->lane_trees[k]);
    free(c->lane_trees);
    c->lane_trees = NULL;
    c->num_lane_trees = c->cached_lane_tree = 0;
}

/* The selection's verdict on a call, as rank_calls.c applies it. */
static int keeps_call(void *ctx, const sp_stream_call *call)
{
    stream_ctx *c = ctx;
    return c->region_keep[call->region] && call->end - call->start >= c->min_duration &&
           call->end >= c->from && call->start <= c->to &&
           !(c->sel && c->sel->lanes && !keeps_lane(c, call->select_lane));
}

static int on_call_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    stream_ctx *c = ctx;
    if (!keeps_call(c, call)) {
        *user = parent;
        return 0;
    }
    if (!c->per_lane) {
        *user = sp_report_tree_node(c->tree, parent, call->region);
        if (*user < 0)
            return -1;
    } else {
        sp_report_tree *lane = lane_tree(c, call->lane);
        int64_t node = sp_report_tree_node(c->tree, parent < 0 ? -1 : parent & 0xffffffff,
                                           call->region);
        int64_t lane_node = lane ? sp_report_tree_node(lane, parent < 0 ? -1 : parent >> 32,
                                                       call->region)
                                 : -1;
        if (node < 0 || lane_node < 0 || node > 0x7fffffff || lane_node > 0x7fffffff)
            return -1;
        *user = node | lane_node << 32;
    }
    if (c->hook &&
        c->hook->call(c->hook->ctx, call, c->tree, c->per_lane ? *user & 0xffffffff : *user, 0))
        return -1;
    return 1;
}

static int on_call_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    stream_ctx *c = ctx;
    int64_t duration = call->end - call->start;
    int64_t node = c->per_lane ? user & 0xffffffff : user;
    sp_report_node_add_call(&c->tree->nodes[node], duration, call->exclusive);
    if (c->per_lane) {
        sp_report_tree *lane = lane_tree(c, call->lane);
        if (!lane)
            return -1;
        sp_report_node_add_call(&lane->nodes[user >> 32], duration, call->exclusive);
    }
    if (c->hook && c->hook->call(c->hook->ctx, call, c->tree, node, 1) != 0)
        return -1;
    return 0;
}

/* The file holding `rank`, or -1. */
static long file_of_rank(const sp_run_source *src, uint32_t rank)
{
    for (size_t r = 0; r < src->profile->num_rows; r++)
        if (src->profile->rows[r].rank == rank)
            return (long)src->row_file[r];
    return -1;
}

/* A rank of a file with fork edges: the merged tree grafts forked work under
 * its fork parent and builds its nodes in a preorder of the grafted forest,
 * which the stream does not do yet.  The rank's file alone is read into
 * memory (with the reader's checks) and its tree built as report.c builds
 * it; memory is that of one file, whatever the number of files.  0, 1 (fall
 * back, why set), -1 failure. */
static int rank_tree_from_file(stream_ctx *c, sp_report *report, const sp_report_options *opt,
                               uint32_t rank, long file, sp_rank_result *out,
                               sp_rank_extra *extra, char *why, size_t whylen)
{
    const sp_run_source *src = c->src;
    /* Times do not enter the tree, but --from/--to need the run's origin,
     * and the file alone must read as it does within the run. */
    sp_profile *full;
    sp_rank_data data;
    if (sp_run_source_rank_alone(src, rank, file, opt->selection, c->window, &full, &data, why,
                                 whylen) != 0)
        return 1;
    int rc = sp_report_tree_init(&out->tree, rank, SP_REPORT_ALL_LANES) ? -1 : 0;
    out->has_tree = rc == 0;
    /* the run's region ids (the graft only compares them) */
    if (rc == 0)
        rc = sp_run_source_run_regions(src, full, &data);
    /* lane trees keep each lane apart: before the graft, as report.c */
    if (rc == 0 && opt->per_lane)
        rc = sp_report_add_lane_trees(report, rank, &data.calls);
    sp_graft_info graft = {NULL, NULL};
    if (rc == 0 && sp_selection_grafts(opt->selection))
        rc = sp_rank_data_graft(full, &data, &graft);
    /* the in-memory path words a damaged file's cycle */
    if (rc == SP_GRAFT_CYCLE) {
        sp_graft_failure(rc, rank, why, whylen);
        rc = 1;
    }
    if (rc == 0)
        rc = sp_report_tree_add_forks(&out->tree, &data.calls, graft.fork_of, graft.own_lane);
    sp_graft_info_free(&graft);
    if (rc == 0 && opt->call_hook && opt->on_rank)
        rc = opt->on_rank(opt->on_rank_ctx, src->profile, &data) ? -1 : 0;
    sp_rank_data_free(&data);
    /* wall span and thread counts, as report.c and report_lanes.c take them */
    size_t slots = 0;
    for (size_t r = 0; rc == 0 && r < full->num_rows; r++) {
        const sp_row *row = &full->rows[r];
        for (uint64_t e = row->offset; row->rank == rank && e < row->offset + row->count; e++) {
            if (full->start[e] - c->offset < extra->first_start)
                extra->first_start = full->start[e] - c->offset;
            if (full->end[e] - c->offset > extra->last_end)
                extra->last_end = full->end[e] - c->offset;
            if (full->thread_ids && full->thread_ids[e] >= 0 &&
                (size_t)full->thread_ids[e] >= slots)
                slots = (size_t)full->thread_ids[e] + 1;
        }
    }
    if (rc == 0 && slots > ((size_t)1 << 20)) {
        snprintf(why, whylen, "rank %u: thread index too large to count", rank);
        rc = 1;
    }
    if (rc == 0) {
        extra->num_thread_slots = slots;
        extra->thread_calls = calloc(slots + 1, sizeof *extra->thread_calls);
        extra->thread_busy = calloc(slots + 1, sizeof *extra->thread_busy);
        if (!extra->thread_calls || !extra->thread_busy)
            rc = -1;
    }
    for (size_t r = 0; rc == 0 && full->thread_ids && r < full->num_rows; r++) {
        const sp_row *row = &full->rows[r];
        if (row->rank != rank)
            continue;
        int omp = row->region < full->num_names && full->parent_ids &&
                  !strcmp(full->names[row->region], "omp parallel");
        for (uint64_t e = row->offset; e < row->offset + row->count; e++) {
            int64_t t = full->thread_ids[e];
            if (t < 0)
                continue;
            extra->thread_calls[t]++;
            if (omp && full->parent_ids[e] < 0)
                extra->thread_busy[t] += full->end[e] - full->start[e];
        }
    }
    sp_profile_free(full);
    if (rc < 0)
        snprintf(why, whylen, "out of memory while building the report");
    if (rc != 0) {
        sp_rank_result_free(out);
        free(extra->thread_calls);
        free(extra->thread_busy);
        *extra = (sp_rank_extra){INT64_MAX, INT64_MIN, 0, NULL, NULL};
    }
    return rc;
}

/* A rank with fork edges and a per-call hook without rank_apart (diff,
 * check): the rank streamed once more, its calls handed to the hook grafted,
 * in the in-memory path's order (report_fork_stream.c).  0; 1 when the
 * stream doubts what it has begun to hand over (why set: the whole build
 * falls back, not this rank alone); -1 the hook failed. */
static int hook_pass(stream_ctx *c, const sp_report_options *opt, uint32_t rank, long file,
                     sp_report_tree *tree, int grafted, char *why, size_t whylen)
{
    const sp_report_call_hook *hook = c->hook;
    if (hook->rank_begin(hook->ctx, rank) != 0)
        return -1;
    c->num_lanes = 0;
    sp_fork_stream *fs = NULL;
    int rc = sp_fork_stream_open_hook(&fs, c->src, rank, file, sp_selection_grafts(opt->selection),
                                      tree, keeps_call, c, hook, grafted, why, whylen);
    if (rc == 0) {
        sp_call_visitor visitor = sp_fork_stream_visitor(fs);
        sp_stream_options so = {NULL, NULL, 0};
        sp_rank_stream_info info;
        rc = sp_stream_rank_forks(c->src, rank, c->offset, &visitor, &so, &info, why, whylen);
        sp_rank_stream_info_free(&info);
        if (rc < 0 && sp_fork_stream_fell_back(fs, why, whylen))
            rc = 1; /* too many calls waiting: the whole build falls back */
        else if (rc == 0)
            rc = sp_fork_stream_finish(fs, why, whylen);
    }
    sp_fork_stream_free(fs);
    if (rc == 0 && hook->rank_end(hook->ctx, rank) != 0)
        rc = -1;
    return rc == 0 ? 0 : rc > 0 ? 1 : -1;
}

/* A rank of a file with fork edges: streamed, its forked work grafted on the
 * way (report_fork_stream.c), then the hook's pass (hook_pass, or the
 * caller's rank_apart), bare --lanes' lane trees beside; whatever the
 * graft on the stream doubts, the file is read in memory as
 * before (rank_tree_from_file).  0, 1 (fall back, why set), -1 failure. */
static int rank_with_forks(stream_ctx *c, sp_report *report, const sp_report_options *opt,
                           uint32_t rank, long file, sp_rank_result *out, sp_rank_extra *extra,
                           char *why, size_t whylen)
{
    char doubt[256] = "";
    const sp_report_call_hook *hook = c->hook;
    int rc = 1;
    sp_rank_stream_info info;
    memset(&info, 0, sizeof info);
    if (!doubt[0]) {
        if (sp_report_tree_init(&out->tree, rank, SP_REPORT_ALL_LANES) != 0) {
            snprintf(why, whylen, "out of memory while building the report");
            return -1;
        }
        out->has_tree = 1;
        c->rank = rank;
        c->num_lanes = 0;
        c->clip_lo = INT64_MAX;
        c->clip_hi = INT64_MIN;
        sp_fork_stream *fs = NULL;
        /* bare --lanes: each lane's tree beside, from the calls as they
         * stream (report.c adds them before the graft) */
        sp_fork_also lanes = {lane_call_enter, lane_call_exit, c};
        rc = sp_fork_stream_open(&fs, c->src, rank, file, sp_selection_grafts(opt->selection),
                                 &out->tree, keeps_call, c, c->per_lane ? &lanes : NULL, doubt,
                                 sizeof doubt);
        if (rc == 0) {
            sp_call_visitor visitor = sp_fork_stream_visitor(fs);
            /* a crossing or any problem: the file in memory words it;
             * --from/--to: the wall cut to the window (on_event) */
            sp_stream_options so = {c->window ? on_event : NULL, c, 0};
            rc = sp_stream_rank_forks(c->src, rank, c->offset, &visitor, &so, &info, doubt,
                                     sizeof doubt);
            if (rc < 0 && sp_fork_stream_fell_back(fs, doubt, sizeof doubt))
                rc = 1;
            else if (rc == 2)
                rc = 1;
            if (rc == 0)
                rc = sp_fork_stream_finish(fs, doubt, sizeof doubt);
        }
        int grafted = rc == 0 && sp_fork_stream_grafted(fs);
        sp_fork_stream_free(fs);
        /* the hook's pass over the rank: the caller's own (rank_apart, the
         * HTML page's model), or the calls once more, in the in-memory
         * path's order; once it has begun, a failure cannot fall back to
         * the file */
        int hooked = rc != 0 || !hook ? 0
                     : hook->rank_apart ? (hook->rank_apart(hook->ctx, rank) ? -1 : 0)
                                        : hook_pass(c, opt, rank, file, &out->tree, grafted, why,
                                                    whylen);
        if (hooked != 0) {
            sp_rank_stream_info_free(&info);
            sp_rank_result_free(out);
            if (hooked < 0)
                snprintf(why, whylen, "out of memory while building the report");
            return hooked;
        }
        if (rc == 0 && c->per_lane) {
            /* the report takes them, in the order the in-memory path adds them */
            if (sp_report_take_lane_trees(report, c->lane_trees, c->num_lane_trees) != 0)
                rc = -1;
            free(c->lane_trees);
            c->lane_trees = NULL;
            c->num_lane_trees = c->cached_lane_tree = 0;
        }
        lane_trees_free(c);
        if (rc == 0) {
            *extra = (sp_rank_extra){info.first_start, info.last_end, info.num_thread_slots,
                                     info.thread_calls, info.thread_busy};
            if (c->window) {
                extra->first_start = c->clip_lo;
                extra->last_end = c->clip_hi;
            }
            return 0;
        }
        sp_rank_stream_info_free(&info);
        sp_rank_result_free(out);
        out->rank = rank;
        if (rc < 0) {
            snprintf(why, whylen, "out of memory while building the report");
            return -1;
        }
    }
    /* For tests and benchmarks (docs/stream.md): the rank read whole. */
    const char *trace = getenv("SCOPEPROF_REPORT_TRACE");
    if (trace && !strcmp(trace, "1"))
        fprintf(stderr, "scopeprof report: rank %u with fork edges in memory: %s\n", rank,
                doubt);
    return rank_tree_from_file(c, report, opt, rank, file, out, extra, why, whylen);
}

/* A rank that does not nest: no tree, and the warning rank_calls.c words
 * (named after the run's profile, as the in-memory path names it; the
 * command puts the file's name in its place).  0, or -1 out of memory. */
static int rows_only(const sp_run_source *src, uint32_t rank, sp_rank_result *out,
                     const char *why)
{
    const char *named = src->profile->path ? src->profile->path : "profile";
    size_t len = strlen(named) + strlen(why) + 32;
    sp_report_tree_free(&out->tree);
    out->has_tree = 0;
    if (!(out->warning = malloc(len)))
        return -1;
    snprintf(out->warning, len, "%s: rank %u: %s", named, rank, why);
    return 0;
}

/* One rank: its tree and what else the pass learnt.  0, 1 (fall back,
 * why set), -1 failure.  Runs in the command or in a worker (report_jobs.c). */
static int stream_one_rank(void *ctx, sp_report *report, const sp_report_options *opt,
                           uint32_t rank, sp_rank_result *out, sp_rank_extra *extra, char *why,
                           size_t whylen)
{
    stream_ctx *c = ctx;
    memset(out, 0, sizeof *out);
    out->rank = rank;
    c->offset = sp_rank_clock_offset(report->profile, rank);
    *extra = (sp_rank_extra){INT64_MAX, INT64_MIN, 0, NULL, NULL};
    long file = file_of_rank(c->src, rank);
    if (file >= 0 && c->src->shapes[file].has_fork)
        return rank_with_forks(c, report, opt, rank, file, out, extra, why, whylen);
    if (sp_report_tree_init(&out->tree, rank, SP_REPORT_ALL_LANES) != 0) {
        snprintf(why, whylen, "out of memory while building the report");
        return -1;
    }
    out->has_tree = 1;
    c->tree = &out->tree;
    c->rank = rank;
    c->offset = sp_rank_clock_offset(report->profile, rank);
    c->clip_lo = INT64_MAX;
    c->clip_hi = INT64_MIN;
    c->num_lanes = 0;
    /* A rank whose calls do not nest streams too: the in-memory path shows
     * it from its rows, with the reconstruction's message as a warning. */
    sp_call_visitor visitor = {on_call_enter, on_call_exit, c};
    /* (not under a per-call hook: what it saw before a crossing cannot be
     * taken back, so such a run goes to the in-memory path, as before) */
    sp_stream_options so = {c->window ? on_event : NULL, c, !c->hook};
    sp_rank_stream_info info;
    int rc = c->hook && c->hook->rank_begin(c->hook->ctx, rank) != 0 ? -1 : 0;
    if (rc == 0)
        rc = sp_stream_rank_with(c->src, rank, c->offset, &visitor, &so, &info, why, whylen);
    else
        memset(&info, 0, sizeof info);
    int from_rows = rc == 2; /* the calls seen before the crossing are dropped */
    if (rc == 2) {
        rc = rows_only(c->src, rank, out, why);
        out->row_durations = info.row_durations;
        out->num_rows = info.num_rows;
        info.row_durations = NULL;
    }
    if (rc == 0 && c->hook && c->hook->rank_end(c->hook->ctx, rank) != 0)
        rc = -1;
    *extra = (sp_rank_extra){info.first_start, info.last_end, info.num_thread_slots,
                             info.thread_calls, info.thread_busy};
    if (c->window) {
        extra->first_start = c->clip_lo;
        extra->last_end = c->clip_hi;
    }
    if (rc == 0 && c->per_lane && !from_rows) {
        /* the report takes them, in the order the in-memory path adds them */
        rc = sp_report_take_lane_trees(report, c->lane_trees, c->num_lane_trees);
        free(c->lane_trees);
        c->lane_trees = NULL;
        c->num_lane_trees = c->cached_lane_tree = 0;
    }
    lane_trees_free(c);
    if (rc != 0) {
        sp_rank_stream_info_free(&info);
        *extra = (sp_rank_extra){INT64_MAX, INT64_MIN, 0, NULL, NULL};
        sp_rank_result_free(out);
        if (rc < 0)
            snprintf(why, whylen, "out of memory while building the report");
    }
    return rc;
}

/* The rank's wall span and thread counts join the run's. */
static int absorb(stream_ctx *c, uint32_t rank, sp_rank_extra *extra)
{
    if (extra->first_start < c->first_start)
        c->first_start = extra->first_start;
    if (extra->last_end > c->last_end)
        c->last_end = extra->last_end;
    thread_counts *grown = realloc(c->threads, (c->num_threads + 1) * sizeof *grown);
    if (!grown)
        return -1;
    c->threads = grown;
    grown[c->num_threads++] = (thread_counts){rank, extra->num_thread_slots, extra->thread_calls,
                                              extra->thread_busy};
    extra->thread_calls = NULL;
    extra->thread_busy = NULL;
    return 0;
}

static int rank_tree_streamed(void *ctx, sp_report *report, const sp_report_options *opt,
                              uint32_t rank, sp_rank_result *out, char *err, size_t errlen)
{
    stream_ctx *c = ctx;
    sp_rank_extra extra = {INT64_MAX, INT64_MIN, 0, NULL, NULL};
    int rc;
    const sp_report_remote *remote = opt->remote;
    if (remote && remote->count > 1) {
        /* Selected rank k is process k % count's, or owner's (sp_report_remote). */
        size_t k = c->next_rank++;
        int owner = remote->owner ? remote->owner(remote->ctx, rank)
                                  : (int)(k % (size_t)remote->count);
        if (owner == remote->self) {
            rc = stream_one_rank(c, report, opt, rank, out, &extra, c->why, c->whylen);
            if (remote->self != 0) {
                int sent = sp_report_remote_send(remote, rc, rank, out, &extra, c->why);
                if (sent != 0 && rc == 0) { /* process 0 wants no more: stop here */
                    snprintf(c->why, c->whylen, "process 0 stopped asking");
                    sp_rank_result_free(out);
                    rc = 1;
                }
            }
        } else if (remote->self == 0) {
            rc = sp_report_remote_fetch(remote, owner, out, &extra, c->why, c->whylen);
        } else {
            /* Another process's rank: an empty tree (this report is not printed). */
            memset(out, 0, sizeof *out);
            out->rank = rank;
            rc = sp_report_tree_init(&out->tree, rank, SP_REPORT_ALL_LANES) == 0 ? 0 : -1;
            out->has_tree = rc == 0;
        }
    } else if (c->jobs.count > 1 && report->num_ranks > 1 && !c->per_lane) {
        if (!c->jobs_started) {
            c->jobs_started = 1;
            if (sp_report_jobs_start(&c->jobs, report, opt) != 0) {
                snprintf(err, errlen, "cannot start the report's worker processes");
                return -1;
            }
        }
        rc = sp_report_jobs_next(&c->jobs, c->next_rank++, out, &extra, c->why, c->whylen);
    } else {
        rc = stream_one_rank(c, report, opt, rank, out, &extra, c->why, c->whylen);
    }
    if (rc == 0 && absorb(c, rank, &extra) != 0)
        rc = -1;
    free(extra.thread_calls);
    free(extra.thread_busy);
    if (rc != 0) {
        sp_rank_result_free(out);
        if (rc > 0)
            c->fallback = 1;
        snprintf(err, errlen, rc > 0 ? "%s" : "out of memory while building the report",
                 c->why);
        return -1;
    }
    return 0;
}

static int64_t wall_streamed(void *ctx, const sp_report *report, const sp_report_options *opt,
                             const rank_index *ix)
{
    const stream_ctx *c = ctx;
    (void)report;
    (void)opt;
    (void)ix;
    return c->last_end >= c->first_start ? c->last_end - c->first_start : -1;
}

static void thread_calls_streamed(void *ctx, uint32_t rank, uint64_t *counts, int64_t *busy,
                                  size_t num_counts)
{
    const stream_ctx *c = ctx;
    memset(counts, 0, num_counts * sizeof *counts);
    memset(busy, 0, num_counts * sizeof *busy);
    for (size_t k = 0; k < c->num_threads; k++) {
        const thread_counts *t = &c->threads[k];
        if (t->rank != rank)
            continue;
        for (size_t i = 0; i < t->n && i < num_counts; i++) {
            counts[i] = t->calls[i];
            busy[i] = t->busy[i];
        }
    }
}

static int is_selected_rank(const sp_report *report, uint32_t rank)
{
    for (size_t k = 0; k < report->num_ranks; k++)
        if (report->ranks[k] == rank)
            return 1;
    return 0;
}

/* The in-memory reader checks every rank of a file, selected or not: so
 * does the streamed path, without building anything, and the fork parent
 * ids of the files holding such ranks in windows (the selected ranks' are
 * checked by their grafting, report_fork_stream.c).  0, or 1 (why set). */
static int check_unselected_ranks(const sp_run_source *src, const sp_report *report, char *why,
                                  size_t whylen)
{
    const sp_profile *p = src->profile;
    uint32_t last = UINT32_MAX;
    for (size_t r = 0; r < p->num_rows; r++) {
        uint32_t rank = p->rows[r].rank;
        if (rank == last)
            continue;
        last = rank;
        if (is_selected_rank(report, rank))
            continue;
        /* the reader lets calls that do not nest pass */
        sp_stream_options so = {NULL, NULL, 1};
        sp_rank_stream_info info;
        int rc = sp_stream_rank_with(src, rank, 0, &sp_call_visitor_checks_only, &so, &info,
                                     why, whylen);
        sp_rank_stream_info_free(&info);
        if (rc != 0 && rc != 2)
            return 1;
    }
    for (size_t f = 0; f < src->num_paths; f++) {
        int unselected = 0;
        for (size_t r = 0; src->shapes[f].has_fork && r < p->num_rows && !unselected; r++)
            unselected = src->row_file[r] == f && !is_selected_rank(report, p->rows[r].rank);
        if (unselected && sp_stream_check_fork_ids(src, f, why, whylen) != 0)
            return 1;
    }
    return 0;
}

/* What the streamed path does not do yet (docs/stream.md). */
static const char *not_streamed(const sp_run_source *src, const sp_report_options *opt)
{
    if (opt->per_lane && opt->remote && opt->remote->count > 1)
        return "per-lane trees (--lanes) under an MPI launcher";
    if (opt->per_lane && opt->call_hook)
        return "per-lane trees (--lanes) with a per-call hook";
    if (opt->on_rank && !opt->call_hook)
        return "per-call collection";
    if (opt->call_hook && opt->remote)
        return "per-call collection shared with other processes";
    /* MPI columns: the MPI tables read them after the pass
     * (sp_report_mpi_build_stream) */
    return sp_run_source_unstreamable_calls(src);
}

int sp_report_build_stream(const sp_run_source *src, const sp_report_options *options,
                           sp_report *out, char *why, size_t whylen)
{
    static const sp_report_options defaults = {0};
    const sp_report_options *opt = options ? options : &defaults;
    const sp_profile *profile = src->profile;
    const char *reason = not_streamed(src, opt);
    if (reason) {
        snprintf(why, whylen, "%s", reason);
        memset(out, 0, sizeof *out);
        return 1;
    }
    const sp_selection *sel = opt->selection;
    /* --from/--to count from the run's origin: without metadata, the first
     * event of the run, from the rows' statistics or one read of the starts */
    int64_t origin = sp_profile_origin_ns(profile);
    if (sel && (sel->has_from || sel->has_to) &&
        sp_run_source_origin(src, &origin, why, whylen) != 0) {
        memset(out, 0, sizeof *out);
        return 1;
    }
    stream_ctx c = {.src = src, .first_start = INT64_MAX, .last_end = INT64_MIN, .why = why,
                    .whylen = whylen};
    /* a hook sees the calls in this process: no workers */
    c.hook = opt->call_hook;
    c.jobs = (sp_report_jobs){.count = c.hook ? 0 : opt->jobs, .compute = stream_one_rank,
                              .ctx = &c};
    c.per_lane = opt->per_lane;
    c.region_keep = malloc(profile->num_names ? profile->num_names : 1);
    if (!c.region_keep) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t r = 0; r < profile->num_names; r++)
        c.region_keep[r] =
            (unsigned char)sp_selection_keeps_region(opt->selection, profile->names[r]);
    c.min_duration = sel && sel->has_min_duration ? sp_selection_seconds_to_ns(sel->min_duration_s)
                                                  : INT64_MIN;
    c.sel = sel;
    c.window = sel && (sel->has_from || sel->has_to);
    c.from = sel && sel->has_from ? origin + sp_selection_seconds_to_ns(sel->from_s) : INT64_MIN;
    c.to = sel && sel->has_to ? origin + sp_selection_seconds_to_ns(sel->to_s) : INT64_MAX;
    /* report.c's run_wall rounds without clamping */
    c.wall_from = sel && sel->has_from ? origin + (int64_t)llround(sel->from_s * 1e9) : INT64_MIN;
    c.wall_to = sel && sel->has_to ? origin + (int64_t)llround(sel->to_s * 1e9) : INT64_MAX;
    sp_report_source source = {rank_tree_streamed, wall_streamed, thread_calls_streamed, &c};
    char err[1024];
    int rc = sp_report_build_from(profile, opt, &source, out, err, sizeof err);
    if (rc != 0)
        snprintf(why, whylen, "%s", err);
    if (rc == 0 && check_unselected_ranks(src, out, why, whylen) != 0) {
        sp_report_free(out);
        rc = -1;
        c.fallback = 1;
    }
    if (c.jobs_started)
        sp_report_jobs_stop(&c.jobs);
    free(c.region_keep);
    free(c.lanes);
    for (size_t k = 0; k < c.num_threads; k++) {
        free(c.threads[k].calls);
        free(c.threads[k].busy);
    }
    free(c.threads);
    return rc == 0 ? 0 : c.fallback ? 1 : -1;
}
