/* html_model_stream.c - the HTML report's model of one run from a run
 * source (scopeprof/stream.h), in bounded memory, in the streamed report's
 * pass: its call hook hands over every call the report keeps (the
 * selection applied as rank_calls.c applies it), which feeds the call-path
 * tree, the per-rank region times, the time inside regions and the
 * timeline, each the way html_model.c computes them, so the page is the
 * same byte for byte.  html_model.c does not graft: a rank with fork edges,
 * which the report reads in memory and grafts, is streamed once more here,
 * on its own.
 *
 * Memory: the distinct call paths, the timeline's budgets, and for the p95
 * of every path its largest durations, as many as the p95 of its region's
 * calls in the rows can need (5 %; a min-heap per path): the p95 is exact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/stream_filter.h"
#include "html_model.h"
#include "scopeprof/stream.h"

/* The largest durations of a path: a min-heap of at most `cap` values. */
typedef struct top_heap {
    int64_t *v;
    size_t n, alloc;
} top_heap;

typedef struct node_extra {
    uint32_t depth;           /* among the kept calls */
    int recursive;            /* its region is on an ancestor path */
    top_heap top;
} node_extra;

typedef struct tl_lane_ref {
    int64_t lane;
    html_tl_lane *l;
} tl_lane_ref;

typedef struct html_pass {
    html_run *run;
    const sp_run_source *src;
    sp_stream_filter filter;
    node_extra *extra;        /* per tree node */
    size_t extra_cap, num_extra;
    size_t *top_cap;          /* per region: durations a path keeps for its p95 */
    int64_t *row_of_region;   /* of the rank being streamed */
    int64_t *acc;             /* its region times (rank_region_ns row) */
    int64_t shift;
    int64_t origin;           /* the run's (sp_run_source_origin: the skeleton has no events) */
    /* kept roots, in start order: the time they cover */
    int any_root;
    int64_t first_a, a, b, last, covered;
    tl_lane_ref *lanes;       /* timeline lanes of the rank */
    size_t num_lanes, lanes_cap, first_lane, last_lane;
    const sp_selection *sel;
    size_t *rows_by_rank;     /* row indices, ascending rank, profile order within */
    uint32_t *ranks;          /* the report's ranks (selected, with rows), ascending */
    size_t num_ranks, next_rank;
    int64_t *node_of;         /* streamed rank: its report tree node -> path node */
    size_t num_mapped, map_cap;
    int failed;               /* a rank streamed here could not be: why */
    char why[512];
    uint32_t rank;
} html_pass;

/* k-th largest durations a p95 of n calls needs (html_p95_rank). */
static size_t top_needed(size_t n)
{
    return n ? n - html_p95_rank(n) + 1 : 0;
}

static int top_add(top_heap *h, size_t cap, int64_t d)
{
    if (h->n < cap) {
        if (h->n == h->alloc) {
            size_t a = h->alloc ? 2 * h->alloc : 4;
            if (a > cap)
                a = cap;
            int64_t *grown = realloc(h->v, a * sizeof *grown);
            if (!grown)
                return -1;
            h->v = grown;
            h->alloc = a;
        }
        size_t i = h->n++;
        while (i > 0 && h->v[(i - 1) / 2] > d) {
            h->v[i] = h->v[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        h->v[i] = d;
        return 0;
    }
    if (cap == 0 || d <= h->v[0])
        return 0;
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        int64_t mv = d;
        if (l < h->n && h->v[l] < mv)
            m = l, mv = h->v[l];
        if (r < h->n && h->v[r] < mv)
            m = r;
        if (m == i)
            break;
        h->v[i] = h->v[m];
        i = m;
    }
    h->v[i] = d;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* A new tree node: its depth, recursion flag and statistics. */
static int node_made(html_pass *p, int64_t node)
{
    html_run *run = p->run;
    if ((size_t)node >= p->extra_cap) {
        size_t cap = p->extra_cap ? 2 * p->extra_cap : 256;
        node_extra *grown = realloc(p->extra, cap * sizeof *grown);
        html_tree_stats *stats = realloc(run->stats, cap * sizeof *stats);
        if (grown)
            p->extra = grown;
        if (stats)
            run->stats = stats;
        if (!grown || !stats)
            return -1;
        p->extra_cap = cap;
    }
    const sp_path_node *nd = &run->tree.nodes[node];
    node_extra *x = &p->extra[node];
    *x = (node_extra){0};
    p->num_extra = (size_t)node + 1;
    x->depth = nd->parent >= 0 ? p->extra[nd->parent].depth + 1 : 0;
    for (int64_t up = nd->parent; up >= 0 && !x->recursive; up = run->tree.nodes[up].parent)
        x->recursive = run->tree.nodes[up].value == nd->value;
    run->stats[node] = (html_tree_stats){INT64_MAX, INT64_MIN, -1};
    return 0;
}

static html_tl_lane *lane_of(html_pass *p, int64_t lane)
{
    if (p->last_lane < p->num_lanes && p->lanes[p->last_lane].lane == lane)
        return p->lanes[p->last_lane].l; /* lanes change rarely between calls */
    for (size_t i = p->num_lanes; i-- > 0;)
        if (p->lanes[i].lane == lane) {
            p->last_lane = i;
            return p->lanes[i].l;
        }
    if (p->num_lanes == p->lanes_cap) {
        size_t cap = p->lanes_cap ? 2 * p->lanes_cap : 8;
        tl_lane_ref *grown = realloc(p->lanes, cap * sizeof *grown);
        if (!grown)
            return NULL;
        p->lanes = grown;
        p->lanes_cap = cap;
    }
    html_tl_lane *l = html_timeline_lane(&p->run->timeline, p->run->profile, p->rank, lane,
                                         p->src->any_thread);
    if (l) {
        p->last_lane = p->num_lanes;
        p->lanes[p->num_lanes++] = (tl_lane_ref){lane, l};
    }
    return l;
}

/* A kept call entering: `parent` its parent's path node (-1: a root).
 * Its path node, or -1 out of memory. */
static int64_t kept_call(html_pass *p, const sp_stream_call *call, int64_t parent)
{
    html_run *run = p->run;
    size_t before = run->tree.n;
    int64_t node = sp_path_tree_child(&run->tree, parent, SP_PATH_REGION, call->region);
    if (node < 0 || (run->tree.n > before && node_made(p, node) != 0))
        return -1;
    sp_path_node *nd = &run->tree.nodes[node];
    int64_t d = call->end - call->start;
    if (nd->calls == 0 && p->row_of_region[call->region] >= 0) {
        const sp_row *row = &run->profile->rows[p->row_of_region[call->region]];
        nd->source_file = row->source_file ? row->source_file : "";
        nd->source_line = row->source_line;
    }
    nd->calls++;
    nd->inclusive_ns += d;
    html_tree_stats *s = &run->stats[node];
    if (d < s->minimum)
        s->minimum = d;
    if (d > s->maximum)
        s->maximum = d;
    node_extra *x = &p->extra[node];
    if (top_add(&x->top, p->top_cap[call->region], d) != 0)
        return -1;
    run->tree_calls++;
    if (!x->recursive)
        p->acc[call->region] += d;
    if (parent < 0) {
        /* the stream's times are shifted: the rank's own clock is + shift */
        int64_t a = call->start + p->shift, b = call->end + p->shift;
        if (!p->any_root) {
            p->any_root = 1;
            p->first_a = p->a = a;
            p->b = p->last = b;
        } else {
            if (b > p->last)
                p->last = b;
            if (a > p->b) {
                p->covered += p->b - p->a;
                p->a = a;
                p->b = b;
            } else if (b > p->b) {
                p->b = b;
            }
        }
    }
    if (run->has_timeline) {
        html_tl_lane *l = lane_of(p, call->lane);
        if (!l || html_timeline_call(&run->timeline, l, call->start, call->end, x->depth,
                                     call->region) != 0)
            return -1;
    }
    return node;
}

static int pass_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    html_pass *p = ctx;
    *user = parent;
    if (!sp_stream_filter_keeps(&p->filter, call))
        return 0;
    *user = kept_call(p, call, parent);
    return *user < 0 ? -1 : 1;
}

static int pass_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    html_pass *p = ctx;
    p->run->tree.nodes[user].exclusive_ns += call->exclusive;
    return 0;
}

/* Before rank k's calls. */
static void rank_begin(html_pass *p, size_t k)
{
    html_run *run = p->run;
    const sp_profile *profile = run->profile;
    uint32_t rank = p->ranks[k];
    size_t names = profile->num_names;
    p->rank = rank;
    p->acc = run->rank_region_ns + k * names;
    for (size_t r = 0; r < names; r++) {
        p->acc[r] = 0;
        p->row_of_region[r] = -1;
    }
    /* the rank's rows (the last of a region wins, as a loop over all rows) */
    size_t lo = 0, hi = profile->num_rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (profile->rows[p->rows_by_rank[mid]].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < profile->num_rows && profile->rows[p->rows_by_rank[i]].rank == rank;
         i++) {
        size_t r = p->rows_by_rank[i];
        if (profile->rows[r].region < names)
            p->row_of_region[profile->rows[r].region] = (int64_t)r;
    }
    p->shift = sp_rank_clock_offset(profile, rank);
    p->any_root = 0;
    p->covered = 0;
    p->num_lanes = 0;
    p->num_mapped = 0;
    p->first_lane = run->timeline.num_lanes;
}

/* After them: its covered time and wall, its timeline lanes.  0 or -1. */
static int rank_end(html_pass *p, size_t k)
{
    html_run *run = p->run;
    int64_t wall = 0, covered = 0;
    if (p->any_root) {
        covered = p->covered + (p->b - p->a);
        int64_t origin = p->origin + p->shift;
        wall = p->last - (origin < p->first_a ? origin : p->first_a);
    }
    run->rank_covered_ns[k] = covered;
    run->rank_wall_ns[k] = wall;
    if (run->has_timeline && html_timeline_end_rank(&run->timeline, p->first_lane) != 0)
        return -1;
    return 0;
}

/* ---- the calls from the streamed report (sp_report_call_hook) ------------- */

static int hook_rank_begin(void *ctx, uint32_t rank)
{
    html_pass *p = ctx;
    size_t k = p->next_rank++;
    if (k >= p->num_ranks || p->ranks[k] != rank)
        return -1; /* the report's ranks are ours, in the same order */
    rank_begin(p, k);
    return 0;
}

static int hook_rank_end(void *ctx, uint32_t rank)
{
    html_pass *p = ctx;
    (void)rank;
    return rank_end(p, p->next_rank - 1);
}

/* The report tree's node -> the path node: made at the node's first call
 * in the rank (a new node is the next one), with the parent's. */
static int hook_call(void *ctx, const sp_stream_call *call, const sp_report_tree *tree,
                     int64_t node, int exit)
{
    html_pass *p = ctx;
    if (exit) {
        if ((size_t)node >= p->num_mapped)
            return -1;
        p->run->tree.nodes[p->node_of[node]].exclusive_ns += call->exclusive;
        return 0;
    }
    int64_t parent = tree->nodes[node].parent;
    int64_t up = parent >= 0 ? p->node_of[parent] : -1;
    int64_t path = kept_call(p, call, up);
    if (path < 0)
        return -1;
    if ((size_t)node == p->num_mapped) {
        if (p->num_mapped == p->map_cap) {
            size_t cap = p->map_cap ? 2 * p->map_cap : 256;
            int64_t *grown = realloc(p->node_of, cap * sizeof *grown);
            if (!grown)
                return -1;
            p->node_of = grown;
            p->map_cap = cap;
        }
        p->node_of[p->num_mapped++] = path;
    }
    return (size_t)node < p->num_mapped && p->node_of[node] == path ? 0 : -1;
}

/* A rank with fork edges: the report grafts it (on the stream, or from
 * the file in memory), while the page's model does not graft, so the rank
 * is streamed here on its own, the selection applied by the stream filter. */
static int rank_on_its_own(html_pass *p, uint32_t rank)
{
    size_t k = p->next_rank++;
    if (k >= p->num_ranks || p->ranks[k] != rank)
        return -1;
    rank_begin(p, k);
    sp_stream_filter_rank(&p->filter, p->rank);
    sp_call_visitor visitor = {pass_enter, pass_exit, p};
    sp_rank_stream_info info;
    int rc = sp_stream_rank(p->src, p->rank, p->shift, &visitor, &info, p->why, sizeof p->why);
    sp_rank_stream_info_free(&info);
    if (rc > 0)
        p->failed = 1; /* the report then fails: the in-memory path words it */
    return rc != 0 || rank_end(p, k) != 0 ? -1 : 0;
}

static int hook_rank_in_memory(void *ctx, const sp_profile *profile, const sp_rank_data *data)
{
    (void)profile;
    return rank_on_its_own(ctx, data->rank);
}

static int hook_rank_apart(void *ctx, uint32_t rank)
{
    return rank_on_its_own(ctx, rank);
}

/* Start and span of the timeline (html_model.c's time_axis) from the rows'
 * first start and last end, which the streamed report checked against the
 * events; meta: the run's origin (sp_profile_origin_ns of the loaded run). */
static void time_axis(const sp_profile *profile, const sp_selection *sel, int64_t meta,
                      int64_t *origin, int64_t *span)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t r = 0; r < profile->num_rows; r++) {
        const sp_row *row = &profile->rows[r];
        if (!sp_selection_has_rank(sel, row->rank) || row->count == 0)
            continue;
        int64_t shift = sp_rank_clock_offset(profile, row->rank);
        if (row->stats.start_minimum - shift < lo)
            lo = row->stats.start_minimum - shift;
        if (row->stats.end_maximum - shift > hi)
            hi = row->stats.end_maximum - shift;
    }
    *origin = lo == INT64_MAX ? meta : (meta < lo ? meta : lo);
    if (sel && sel->has_from && meta + (int64_t)(sel->from_s * 1e9) > *origin)
        *origin = meta + (int64_t)(sel->from_s * 1e9);
    if (sel && sel->has_to && meta + (int64_t)(sel->to_s * 1e9) < hi)
        hi = meta + (int64_t)(sel->to_s * 1e9);
    *span = hi > *origin ? hi - *origin : 1;
}

/* Per region: the durations a path of it keeps, enough for the p95 of
 * every call of the region on the selected ranks. */
static int top_caps(html_pass *p)
{
    const sp_profile *profile = p->run->profile;
    size_t names = profile->num_names;
    uint64_t *calls = calloc(names ? names : 1, sizeof *calls);
    p->top_cap = malloc((names ? names : 1) * sizeof *p->top_cap);
    if (!calls || !p->top_cap) {
        free(calls);
        return -1;
    }
    for (size_t r = 0; r < profile->num_rows; r++) {
        const sp_row *row = &profile->rows[r];
        /* the report's ranks: the selected ranks that have rows */
        if (sp_selection_has_rank(p->sel, row->rank) && row->region < names)
            calls[row->region] += row->count;
    }
    for (size_t r = 0; r < names; r++)
        p->top_cap[r] = top_needed((size_t)calls[r]);
    free(calls);
    return 0;
}

static int by_rank(const void *a, const void *b, void *ctx)
{
    const sp_profile *profile = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    uint32_t rx = profile->rows[x].rank, ry = profile->rows[y].rank;
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return (x > y) - (x < y);
}

static int index_rows(html_pass *p)
{
    const sp_profile *profile = p->run->profile;
    p->rows_by_rank = malloc((profile->num_rows ? profile->num_rows : 1) * sizeof *p->rows_by_rank);
    if (!p->rows_by_rank)
        return -1;
    for (size_t r = 0; r < profile->num_rows; r++)
        p->rows_by_rank[r] = r;
    qsort_r(p->rows_by_rank, profile->num_rows, sizeof *p->rows_by_rank, by_rank,
            (void *)profile);
    return 0;
}

static int p95_of_paths(html_pass *p)
{
    html_run *run = p->run;
    for (size_t k = 0; k < run->tree.n; k++) {
        top_heap *h = &p->extra[k].top;
        size_t n = (size_t)run->tree.nodes[k].calls, need = top_needed(n);
        if (need == 0 || h->n < need)
            return -1; /* the rows promised more calls than came: cannot be */
        qsort(h->v, h->n, sizeof *h->v, cmp_i64);
        run->stats[k].p95 = h->v[h->n - need];
    }
    return 0;
}

static void pass_free(html_pass *p)
{
    for (size_t k = 0; k < p->num_extra; k++)
        free(p->extra[k].top.v);
    free(p->extra);
    free(p->top_cap);
    free(p->row_of_region);
    free(p->lanes);
    free(p->rows_by_rank);
    free(p->ranks);
    free(p->node_of);
    sp_stream_filter_free(&p->filter);
}

int html_run_build_stream(html_run *run, const sp_run_source *src, const char *const *files,
                          size_t num_files, const html_options *opt, char *why, size_t whylen)
{
    const sp_profile *profile = src->profile;
    memset(run, 0, sizeof *run);
    run->profile = profile;
    run->files = files;
    run->num_files = num_files;
    run->inside_share = -1;
    sp_path_tree_init(&run->tree);
    /* The timeline's axis comes from the rows' statistics. */
    for (size_t f = 0; f < src->num_paths; f++)
        if (!src->shapes[f].has_stats) {
            snprintf(why, whylen, "%s: rows without summary statistics", src->paths[f]);
            return 1;
        }
    html_pass p = {.run = run, .src = src, .sel = opt->selection};
    /* The in-memory model counts the rank walls, the timeline and
     * --from/--to from the loaded run's origin: metadata start_time_ns,
     * else its first event, which the skeleton has not (the rows'
     * start_minimum, checked against the events by the stream). */
    if (sp_run_source_origin(src, &p.origin, why, whylen) != 0) {
        if (strcmp(why, "out of memory") != 0)
            snprintf(why, whylen, "no metadata start_time_ns, and events outside every row "
                                  "(the page's origin is the first event)");
        return 1;
    }
    int rc = sp_stream_filter_init(&p.filter, src, opt->selection, why, whylen);
    if (rc != 0)
        return rc;
    rc = -1;
    long nr = sp_selected_ranks(profile, opt->selection, &p.ranks);
    size_t names = profile->num_names;
    size_t cells = nr > 0 ? (size_t)nr * names : 0;
    p.num_ranks = nr > 0 ? (size_t)nr : 0;
    run->rank_region_ns = malloc((cells ? cells : 1) * sizeof *run->rank_region_ns);
    run->rank_wall_ns = calloc(p.num_ranks ? p.num_ranks : 1, sizeof *run->rank_wall_ns);
    run->rank_covered_ns = calloc(p.num_ranks ? p.num_ranks : 1, sizeof *run->rank_covered_ns);
    p.row_of_region = malloc((names ? names : 1) * sizeof *p.row_of_region);
    if (nr < 0 || !run->rank_region_ns || !run->rank_wall_ns || !run->rank_covered_ns ||
        !p.row_of_region || top_caps(&p) != 0 || index_rows(&p) != 0)
        goto out;
    for (size_t k = 0; k < cells; k++)
        run->rank_region_ns[k] = -1;
    if (p.num_ranks) {
        int64_t origin, span;
        time_axis(profile, opt->selection, p.origin, &origin, &span);
        html_timeline_init(&run->timeline, origin, origin - p.origin, span,
                           opt->bin_budget ? opt->bin_budget : HTML_DEFAULT_BIN_BUDGET,
                           opt->exact_budget ? opt->exact_budget : HTML_DEFAULT_EXACT_BUDGET);
        run->has_timeline = 1;
    }
    /* One pass: the report's tables and, through its hook, the page's model. */
    sp_report_call_hook hook = {hook_rank_begin, hook_call, hook_rank_end, hook_rank_apart,
                                &p};
    sp_report_options ro = {.selection = opt->selection, .sort = SP_SORT_EXCLUSIVE,
                            .on_rank = hook_rank_in_memory, .on_rank_ctx = &p,
                            .call_hook = &hook};
    int built = sp_report_build_stream(src, &ro, &run->report, why, whylen);
    if (built != 0) {
        if (p.failed) /* the report's words are its own failure's */
            snprintf(why, whylen, "%s", p.why);
        rc = built > 0 || p.failed ? 1 : -1;
        goto out;
    }
    if (run->report.num_ranks != p.num_ranks || p.next_rank != p.num_ranks) {
        snprintf(why, whylen, "the report's ranks are not the page's");
        rc = 1;
        goto out;
    }
    int64_t covered = 0, wall = 0;
    for (size_t k = 0; k < p.num_ranks; k++) {
        covered += run->rank_covered_ns[k];
        wall += run->rank_wall_ns[k];
    }
    if (wall > 0)
        run->inside_share = (double)covered / (double)wall;
    /* The page draws nothing from the MPI columns (html_mpi.c: the MPI
     * regions' times); that they read, as the in-memory path requires, was
     * checked when the run source opened (run_source.c). */
    if (p95_of_paths(&p) != 0)
        goto out;
    rc = 0;
out:
    if (rc < 0)
        snprintf(why, whylen, "out of memory building the report");
    pass_free(&p);
    if (rc != 0)
        html_run_free(run);
    return rc;
}
