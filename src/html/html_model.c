/* html_model.c - one run's numbers for the HTML report: one pass over the
 * selected ranks (each reconstructed once) feeds the call-path tree with
 * min/max/p95 per node, the per-rank region times, the share of time inside
 * regions and the timeline pyramid; the tables shared with the terminal
 * report come from sp_report_build, so both print the same numbers. */
#include <stdlib.h>
#include <string.h>

#include "html_model.h"


/* ---- per-rank region time (recursion counted once) ------------------------- */

typedef struct region_walk {
    const sp_calls *calls;
    uint32_t *open;           /* per region: calls of it open on the path */
    int64_t *acc;             /* per region: inclusive ns on this rank */
} region_walk;

static int region_open(void *p, size_t i)
{
    region_walk *w = p;
    uint32_t r = w->calls->region[i];
    if (w->open[r]++ == 0)
        w->acc[r] += w->calls->end[i] - w->calls->start[i];
    return 0;
}

static int region_close(void *p, size_t i)
{
    region_walk *w = p;
    w->open[w->calls->region[i]]--;
    return 0;
}

/* ---- time covered by at least one call on any lane ------------------------- */

typedef struct interval {
    int64_t a, b;
} interval;

static int interval_order(const void *x, const void *y)
{
    const interval *p = x, *q = y;
    return (p->a > q->a) - (p->a < q->a);
}

/* Time with a call open on some lane, and the rank's wall time: from the
 * run start (`origin`, on the rank's own clock) to its last call's end. */
static int64_t covered_time(const sp_calls *c, int64_t origin, int64_t *wall)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++)
        n += c->parent[i] < 0;
    *wall = 0;
    if (!n)
        return 0;
    interval *v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->parent[i] < 0)
            v[n++] = (interval){c->start[i], c->end[i]};
    qsort(v, n, sizeof *v, interval_order);
    int64_t covered = 0, a = v[0].a, b = v[0].b, last = v[0].b;
    for (size_t i = 1; i < n; i++) {
        if (v[i].b > last)
            last = v[i].b;
        if (v[i].a > b) {
            covered += b - a;
            a = v[i].a;
            b = v[i].b;
        } else if (v[i].b > b) {
            b = v[i].b;
        }
    }
    covered += b - a;
    *wall = last - (origin < v[0].a ? origin : v[0].a);
    free(v);
    return covered;
}

/* ---- p95 per node --------------------------------------------------------- */

/* k-th smallest of v[0..n) (Hoare's selection, v reordered). */
static int64_t select_kth(int64_t *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                int64_t t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    return v[k];
}

typedef struct dur_log {
    uint32_t *node;
    int64_t *dur;
    size_t n, cap;
} dur_log;

static int dur_log_reserve(dur_log *d, size_t more)
{
    if (d->n + more <= d->cap)
        return 0;
    size_t cap = d->cap ? d->cap : 4096;
    while (cap < d->n + more)
        cap *= 2;
    uint32_t *node = realloc(d->node, cap * sizeof *node);
    if (!node)
        return -1;
    d->node = node;
    int64_t *dur = realloc(d->dur, cap * sizeof *dur);
    if (!dur)
        return -1;
    d->dur = dur;
    d->cap = cap;
    return 0;
}

size_t html_p95_rank(size_t n)
{
    size_t rank = (size_t)((double)n * 0.95 + 0.999999999);
    return rank < 1 ? 1 : rank;
}

/* p95 = the value at rank ceil(0.95 n) (nearest-rank definition). */
static int compute_p95(html_run *run, dur_log *log)
{
    size_t nodes = run->tree.n;
    size_t *first = calloc(nodes + 1, sizeof *first);
    int64_t *sorted = malloc((log->n ? log->n : 1) * sizeof *sorted);
    if (!first || !sorted) {
        free(first), free(sorted);
        return -1;
    }
    for (size_t i = 0; i < log->n; i++)
        first[log->node[i] + 1]++;
    for (size_t k = 0; k < nodes; k++)
        first[k + 1] += first[k];
    size_t *fill = malloc((nodes ? nodes : 1) * sizeof *fill);
    if (!fill) {
        free(first), free(sorted);
        return -1;
    }
    memcpy(fill, first, nodes * sizeof *fill);
    for (size_t i = 0; i < log->n; i++)
        sorted[fill[log->node[i]]++] = log->dur[i];
    for (size_t k = 0; k < nodes; k++) {
        size_t n = first[k + 1] - first[k];
        if (!n) {
            run->stats[k].p95 = -1;
            continue;
        }
        run->stats[k].p95 = select_kth(sorted + first[k], n, html_p95_rank(n) - 1);
    }
    free(fill), free(first), free(sorted);
    return 0;
}

/* ---- the run -------------------------------------------------------------- */

/* Start and span of the timeline on the run's time axis (clock offsets
 * applied): the selected calls, cut to --from/--to when given. */
static void time_axis(const sp_profile *profile, const sp_selection *sel, int64_t *origin,
                      int64_t *span)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t r = 0; r < profile->num_rows; r++) {
        const sp_row *row = &profile->rows[r];
        if (!sp_selection_has_rank(sel, row->rank))
            continue;
        int64_t shift = sp_rank_clock_offset(profile, row->rank);
        for (uint64_t e = row->offset; e < row->offset + row->count && e < profile->num_events;
             e++) {
            if (profile->start[e] - shift < lo)
                lo = profile->start[e] - shift;
            if (profile->end[e] - shift > hi)
                hi = profile->end[e] - shift;
        }
    }
    int64_t meta = sp_profile_origin_ns(profile);
    *origin = lo == INT64_MAX ? meta : (meta < lo ? meta : lo);
    if (sel && sel->has_from && meta + (int64_t)(sel->from_s * 1e9) > *origin)
        *origin = meta + (int64_t)(sel->from_s * 1e9);
    if (sel && sel->has_to && meta + (int64_t)(sel->to_s * 1e9) < hi)
        hi = meta + (int64_t)(sel->to_s * 1e9);
    *span = hi > *origin ? hi - *origin : 1;
}

static int rank_pass(html_run *run, uint32_t rank, size_t rank_index, const html_options *opt,
                     dur_log *log, uint32_t *open, char *err, size_t errlen)
{
    const sp_profile *profile = run->profile;
    sp_rank_data data;
    if (sp_rank_data_load(profile, rank, opt->selection, &data, err, errlen) < 0)
        return 1; /* not nested: already a warning of the report; no tree */
    int rc = -1;
    int64_t *node_of_call = malloc((data.calls.n ? data.calls.n : 1) * sizeof *node_of_call);
    sp_lane_walk walk;
    memset(&walk, 0, sizeof walk);
    if (!node_of_call || dur_log_reserve(log, data.calls.n) < 0)
        goto out;
    size_t before = run->tree.n;
    if (sp_path_tree_add(&run->tree, profile, &data, -1, 0, node_of_call) < 0)
        goto out;
    if (run->tree.n > before) {
        html_tree_stats *grown = realloc(run->stats, run->tree.n * sizeof *grown);
        if (!grown)
            goto out;
        run->stats = grown;
        for (size_t k = before; k < run->tree.n; k++)
            run->stats[k] = (html_tree_stats){INT64_MAX, INT64_MIN, -1};
    }
    const sp_calls *c = &data.calls;
    for (size_t i = 0; i < c->n; i++) {
        int64_t d = c->end[i] - c->start[i];
        html_tree_stats *s = &run->stats[node_of_call[i]];
        if (d < s->minimum)
            s->minimum = d;
        if (d > s->maximum)
            s->maximum = d;
        log->node[log->n] = (uint32_t)node_of_call[i];
        log->dur[log->n++] = d;
    }
    run->tree_calls += c->n;
    if (sp_lane_walk_build(c, &walk) < 0)
        goto out;
    size_t names = profile->num_names;
    region_walk rw = {c, open, run->rank_region_ns + rank_index * names};
    for (size_t r = 0; r < names; r++)
        rw.acc[r] = 0;
    for (size_t l = 0; l < walk.num_lanes; l++)
        sp_lane_walk_visit(&walk, c, l, region_open, region_close, &rw);
    int64_t shift = sp_rank_clock_offset(profile, rank);
    int64_t wall = 0, covered = covered_time(c, sp_profile_origin_ns(profile) + shift, &wall);
    if (covered < 0)
        goto out;
    run->rank_covered_ns[rank_index] = covered;
    run->rank_wall_ns[rank_index] = wall;
    if (run->has_timeline &&
        html_timeline_add_rank(&run->timeline, profile, rank, c, &walk, shift) < 0)
        goto out;
    rc = 0;
out:
    if (rc < 0)
        snprintf(err, errlen, "out of memory building the report of rank %u", rank);
    sp_lane_walk_free(&walk);
    free(node_of_call);
    sp_rank_data_free(&data);
    return rc;
}

int html_run_build(html_run *run, const sp_profile *profile, const char *const *files,
                   size_t num_files, const html_options *opt, char *err, size_t errlen)
{
    memset(run, 0, sizeof *run);
    run->profile = profile;
    run->files = files;
    run->num_files = num_files;
    run->inside_share = -1;
    sp_path_tree_init(&run->tree);
    sp_report_options ro = {.selection = opt->selection, .sort = SP_SORT_EXCLUSIVE};
    if (sp_report_build(profile, &ro, &run->report, err, errlen) != 0)
        return -1;
    size_t nr = run->report.num_ranks, names = profile->num_names;
    size_t cells = nr * names;
    run->rank_region_ns = malloc((cells ? cells : 1) * sizeof *run->rank_region_ns);
    run->rank_wall_ns = calloc(nr ? nr : 1, sizeof *run->rank_wall_ns);
    run->rank_covered_ns = calloc(nr ? nr : 1, sizeof *run->rank_covered_ns);
    uint32_t *open = calloc(names ? names : 1, sizeof *open);
    dur_log log = {0};
    int rc = -1;
    if (!run->rank_region_ns || !run->rank_wall_ns || !run->rank_covered_ns || !open) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < nr * names; k++)
        run->rank_region_ns[k] = -1;
    if (!profile->aggregate && nr) {
        int64_t origin, span;
        time_axis(profile, opt->selection, &origin, &span);
        html_timeline_init(&run->timeline, origin, origin - sp_profile_origin_ns(profile), span,
                           opt->bin_budget ? opt->bin_budget : HTML_DEFAULT_BIN_BUDGET,
                           opt->exact_budget ? opt->exact_budget : HTML_DEFAULT_EXACT_BUDGET);
        run->has_timeline = 1;
    }
    int64_t covered = 0, wall = 0;
    for (size_t k = 0; k < nr && !profile->aggregate; k++) {
        int r = rank_pass(run, run->report.ranks[k], k, opt, &log, open, err, errlen);
        if (r < 0)
            goto out;
        if (r == 0) {
            covered += run->rank_covered_ns[k];
            wall += run->rank_wall_ns[k];
        } else {
            for (size_t n = 0; n < names; n++)
                run->rank_region_ns[k * names + n] = -1;
            err[0] = 0;
        }
    }
    if (wall > 0)
        run->inside_share = (double)covered / (double)wall;
    if (run->tree.n && compute_p95(run, &log) < 0) {
        snprintf(err, errlen, "out of memory computing percentiles");
        goto out;
    }
    /* Ranks not in the tree: the heatmap falls back to the rows' totals. */
    for (size_t r = 0; r < profile->num_rows; r++) {
        const sp_row *row = &profile->rows[r];
        for (size_t k = 0; k < nr; k++)
            if (run->report.ranks[k] == row->rank &&
                run->rank_region_ns[k * names + row->region] < 0 && row->count)
                run->rank_region_ns[k * names + row->region] = row->stats.total;
    }
    rc = 0;
out:
    free(open);
    free(log.node);
    free(log.dur);
    return rc;
}

void html_run_free(html_run *run)
{
    sp_report_free(&run->report);
    sp_path_tree_free(&run->tree);
    free(run->stats);
    free(run->rank_region_ns);
    free(run->rank_wall_ns);
    free(run->rank_covered_ns);
    if (run->has_timeline)
        html_timeline_free(&run->timeline);
    memset(run, 0, sizeof *run);
}
