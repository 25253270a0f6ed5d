/* report.c - sp_report_build: one pass over the selected ranks feeding the
 * call tree, the flat table and the cross-rank accumulators.
 *
 * Each rank is reconstructed once (sp_rank_data_load applies the selection),
 * aggregated into its own path tree, and that tree is merged into the run's
 * tree; the rank's per-region numbers are read off its tree.  Memory stays
 * at one rank's calls plus per-region accumulators, whatever the rank count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_internal.h"

/* ---- one rank's numbers per region --------------------------------------- */

static int values_init(sp_rank_values *v, size_t num_names)
{
    size_t n = num_names ? num_names : 1;
    v->row = calloc(n, sizeof *v->row);
    v->seen = calloc(n, 1);
    v->touched = malloc(n * sizeof *v->touched);
    v->num_touched = 0;
    return v->row && v->seen && v->touched ? 0 : -1;
}

static void values_free(sp_rank_values *v)
{
    free(v->row);
    free(v->seen);
    free(v->touched);
    memset(v, 0, sizeof *v);
}

static void values_reset(sp_rank_values *v)
{
    for (size_t k = 0; k < v->num_touched; k++)
        v->seen[v->touched[k]] = 0;
    v->num_touched = 0;
}

static sp_report_flat_row *values_at(sp_rank_values *v, uint32_t region)
{
    sp_report_flat_row *row = &v->row[region];
    if (!v->seen[region]) {
        v->seen[region] = 1;
        v->touched[v->num_touched++] = region;
        *row = (sp_report_flat_row){
            .region = region, .minimum = INT64_MAX, .maximum = INT64_MIN};
    }
    return row;
}

static void values_add(sp_report_flat_row *row, uint64_t calls, int64_t inclusive,
                       int64_t total, int64_t exclusive, int64_t minimum, int64_t maximum)
{
    row->calls += calls;
    row->inclusive += inclusive;
    row->total += total;
    /* One unknown contribution makes the sum unknown. */
    row->exclusive = row->exclusive < 0 || exclusive < 0 ? -1 : row->exclusive + exclusive;
    if (minimum < row->minimum)
        row->minimum = minimum;
    if (maximum > row->maximum)
        row->maximum = maximum;
}

/* From the rank's path tree: a node below a node of the same region is
 * recursion, already inside the outer call's inclusive time. */
static void values_from_tree(sp_rank_values *v, const sp_report_tree *tree)
{
    for (size_t n = 0; n < tree->num_nodes; n++) {
        const sp_report_node *node = &tree->nodes[n];
        values_add(values_at(v, node->region), node->calls,
                   node->recursive ? 0 : node->inclusive, node->inclusive, node->exclusive,
                   node->minimum, node->maximum);
    }
}

/* From the rows alone, for a rank that cannot be reconstructed or an
 * aggregate profile.  Only region filters can apply here. */
static void values_from_rows(sp_rank_values *v, const sp_profile *profile,
                             const sp_selection *sel, const size_t *rows, size_t num_rows,
                             const sp_rank_result *result)
{
    int given = result && result->row_durations && result->num_rows == num_rows;
    for (size_t k = 0; k < num_rows; k++) {
        const sp_row *row = &profile->rows[rows[k]];
        if (!sp_selection_keeps_region(sel, profile->names[row->region]))
            continue;
        if (profile->aggregate) {
            if (row->agg_count == 0)
                continue;
            values_add(values_at(v, row->region), row->agg_count, row->agg_total,
                       row->agg_total, row->agg_exclusive >= 0 ? row->agg_exclusive : -1,
                       row->agg_minimum, row->agg_maximum);
        } else {
            if (row->count == 0)
                continue;
            const int64_t *d = given ? result->row_durations[k] : NULL;
            int64_t total = d ? d[0] : row->stats.total;
            values_add(values_at(v, row->region), row->count, total, total,
                       row->exclusive_total >= 0 ? row->exclusive_total : -1,
                       d ? d[1] : row->stats.minimum, d ? d[2] : row->stats.maximum);
        }
    }
}

/* ---- rows of one rank ------------------------------------------------------ */

static int by_rank(const void *a, const void *b, void *ctx)
{
    const sp_profile *p = ctx;
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    uint32_t rx = p->rows[x].rank, ry = p->rows[y].rank;
    if (rx != ry)
        return rx < ry ? -1 : 1;
    return (x > y) - (x < y);
}

static int rank_index_build(rank_index *ix, const sp_profile *profile)
{
    ix->num_rows = profile->num_rows;
    ix->rows = malloc((ix->num_rows ? ix->num_rows : 1) * sizeof *ix->rows);
    if (!ix->rows)
        return -1;
    for (size_t r = 0; r < ix->num_rows; r++)
        ix->rows[r] = r;
    qsort_r(ix->rows, ix->num_rows, sizeof *ix->rows, by_rank, (void *)profile);
    return 0;
}

/* The rows of `rank`: *first and the count. */
static size_t rank_rows(const rank_index *ix, const sp_profile *profile, uint32_t rank,
                        size_t *first)
{
    size_t lo = 0, hi = ix->num_rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (profile->rows[ix->rows[mid]].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < ix->num_rows && profile->rows[ix->rows[end]].rank == rank)
        end++;
    *first = lo;
    return end - lo;
}

/* ---- wall time ------------------------------------------------------------ */

static int64_t seconds_to_ns(double s)
{
    return (int64_t)llround(s * 1e9);
}

/* Span of the selected ranks' events (region filters ignored: the run lasted
 * that long whatever is shown), cut to --from/--to, on the run's time axis. */
static int64_t run_wall(const sp_profile *profile, const sp_selection *sel,
                        const rank_index *ix, const uint32_t *ranks, size_t num_ranks)
{
    if (profile->aggregate) {
        int64_t start, finalize;
        if (sp_profile_meta_int(profile, "start_time_ns", &start) == 0 &&
            sp_profile_meta_int(profile, "finalize_time_ns", &finalize) == 0 &&
            finalize >= start)
            return finalize - start;
        return -1;
    }
    int64_t origin = sp_profile_origin_ns(profile);
    int64_t from = sel && sel->has_from ? origin + seconds_to_ns(sel->from_s) : INT64_MIN;
    int64_t to = sel && sel->has_to ? origin + seconds_to_ns(sel->to_s) : INT64_MAX;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t k = 0; k < num_ranks; k++) {
        int64_t offset = sp_rank_clock_offset(profile, ranks[k]);
        size_t first, n = rank_rows(ix, profile, ranks[k], &first);
        for (size_t j = first; j < first + n; j++) {
            const sp_row *row = &profile->rows[ix->rows[j]];
            for (uint64_t e = row->offset; e < row->offset + row->count; e++) {
                if (profile->end[e] < from || profile->start[e] > to)
                    continue;
                int64_t s = (profile->start[e] > from ? profile->start[e] : from) - offset;
                int64_t t = (profile->end[e] < to ? profile->end[e] : to) - offset;
                if (s < lo)
                    lo = s;
                if (t > hi)
                    hi = t;
            }
        }
    }
    return hi >= lo ? hi - lo : -1;
}

/* ---- build ------------------------------------------------------------------ */

static int fail_oom(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory while building the report");
    return -1;
}

static int add_warning(sp_report *report, uint32_t rank, const char *message)
{
    sp_report_warning *w =
        realloc(report->warnings, (report->num_warnings + 1) * sizeof *report->warnings);
    if (!w)
        return -1;
    report->warnings = w;
    char *copy = strdup(message);
    if (!copy)
        return -1;
    w[report->num_warnings++] = (sp_report_warning){.rank = rank, .message = copy};
    return 0;
}

/* Reading order: threads by index (the main thread first), then tasks,
 * then calls on an unknown lane. */
static int lane_group(int64_t lane)
{
    return lane <= -2 ? 0 : lane >= 0 ? 1 : 2;
}

static int cmp_lane(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    int gx = lane_group(x), gy = lane_group(y);
    if (gx != gy)
        return gx - gy;
    if (gx == 0) /* thread index -2 - lane */
        return (x < y) - (x > y);
    return (x > y) - (x < y);
}

static int cmp_lane_tree(const void *a, const void *b)
{
    return cmp_lane(&((const sp_report_tree *)a)->lane, &((const sp_report_tree *)b)->lane);
}

int sp_report_take_lane_trees(sp_report *report, sp_report_tree *trees, size_t n)
{
    if (n == 0)
        return 0;
    qsort(trees, n, sizeof *trees, cmp_lane_tree);
    sp_report_tree *all =
        realloc(report->lane_trees, (report->num_lane_trees + n) * sizeof *all);
    int rc = all ? 0 : -1;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        trees[k].num_ranks = 1;
        if (sp_report_tree_order(&trees[k]))
            rc = -1;
    }
    if (all)
        report->lane_trees = all;
    for (size_t k = 0; k < n; k++) {
        if (rc == 0)
            all[report->num_lane_trees++] = trees[k];
        else
            sp_report_tree_free(&trees[k]);
    }
    return rc;
}

int sp_report_add_lane_trees(sp_report *report, uint32_t rank, const sp_calls *calls)
{
    /* Collect every call's lane, sort, keep distinct. */
    int64_t *lanes = malloc((calls->n ? calls->n : 1) * sizeof *lanes);
    if (!lanes)
        return -1;
    size_t num_lanes = 0;
    if (!calls->lane) {
        if (calls->n)
            lanes[num_lanes++] = -1;
    } else {
        for (size_t i = 0; i < calls->n; i++)
            lanes[num_lanes++] = calls->lane[i];
        qsort(lanes, num_lanes, sizeof *lanes, cmp_lane);
        size_t u = 0;
        for (size_t i = 0; i < num_lanes; i++)
            if (u == 0 || lanes[u - 1] != lanes[i])
                lanes[u++] = lanes[i];
        num_lanes = u;
    }
    sp_report_tree *trees =
        realloc(report->lane_trees, (report->num_lane_trees + num_lanes) * sizeof *trees);
    if (!trees) {
        free(lanes);
        return -1;
    }
    report->lane_trees = trees;
    for (size_t k = 0; k < num_lanes; k++) {
        sp_report_tree *tree = &trees[report->num_lane_trees];
        if (sp_report_tree_init(tree, rank, lanes[k]) != 0) {
            free(lanes);
            return -1;
        }
        report->num_lane_trees++;
        tree->num_ranks = 1;
        if (sp_report_tree_add_calls(tree, calls, calls->lane ? lanes[k] : SP_REPORT_ALL_LANES) ||
            sp_report_tree_order(tree)) {
            free(lanes);
            return -1;
        }
    }
    free(lanes);
    return 0;
}

/* Feed the flat accumulators with one rank's values. */
static void flat_add_rank(sp_rank_values *flat, const sp_rank_values *values)
{
    for (size_t k = 0; k < values->num_touched; k++) {
        const sp_report_flat_row *v = &values->row[values->touched[k]];
        values_add(values_at(flat, v->region), v->calls, v->inclusive, v->total, v->exclusive,
                   v->minimum, v->maximum);
    }
}

static int first_source(sp_report *report, const sp_profile *profile)
{
    size_t n = profile->num_names ? profile->num_names : 1;
    report->source_file = calloc(n, sizeof *report->source_file);
    report->source_line = malloc(n * sizeof *report->source_line);
    if (!report->source_file || !report->source_line)
        return -1;
    for (size_t r = 0; r < profile->num_names; r++)
        report->source_line[r] = -1;
    for (size_t k = 0; k < profile->num_rows; k++) {
        const sp_row *row = &profile->rows[k];
        if (row->region >= profile->num_names || report->source_file[row->region])
            continue;
        if (row->source_file && row->source_file[0]) {
            report->source_file[row->region] = row->source_file;
            report->source_line[row->region] = row->source_line;
        }
    }
    return 0;
}

/* ---- the per-rank step: rank -> its path tree ----------------------------- */

/* In memory: reconstruct (sp_rank_data_load applies the selection), or say
 * why not.  Lane trees go straight into the report. */
static int rank_tree_in_memory(void *ctx, sp_report *report, const sp_report_options *opt,
                               uint32_t rank, sp_rank_result *out, char *err, size_t errlen)
{
    (void)ctx;
    const sp_profile *profile = report->profile;
    const sp_selection *sel = opt->selection;
    memset(out, 0, sizeof *out);
    out->rank = rank;
    if (profile->aggregate)
        return 0;
    sp_rank_data data;
    char why[1024];
    if (sp_rank_data_load(profile, rank, sel, &data, why, sizeof why) != 0) {
        if (!(out->warning = strdup(why)))
            return fail_oom(err, errlen);
        return 0;
    }
    int rc = sp_report_tree_init(&out->tree, rank, SP_REPORT_ALL_LANES);
    out->has_tree = rc == 0;
    /* Lane trees keep each lane apart; the merged tree grafts forked work
     * under its fork parent. */
    if (rc == 0 && opt->per_lane)
        rc = sp_report_add_lane_trees(report, rank, &data.calls);
    sp_graft_info graft = {NULL, NULL};
    int grafted = 0;
    if (rc == 0 && sp_selection_grafts(sel))
        rc = grafted = sp_rank_data_graft(profile, &data, &graft);
    if (rc == 0)
        rc = sp_report_tree_add_forks(&out->tree, &data.calls, graft.fork_of, graft.own_lane);
    sp_graft_info_free(&graft);
    if (rc == 0 && opt->on_rank)
        rc = opt->on_rank(opt->on_rank_ctx, profile, &data) ? -1 : 0;
    sp_rank_data_free(&data);
    if (rc != 0) {
        sp_rank_result_free(out);
        return grafted ? sp_graft_failure(grafted, rank, err, errlen) : fail_oom(err, errlen);
    }
    return 0;
}

void sp_rank_result_free(sp_rank_result *result)
{
    if (result->has_tree)
        sp_report_tree_free(&result->tree);
    free(result->warning);
    free(result->row_durations);
    memset(result, 0, sizeof *result);
}

/* ---- the run step: add a rank's tree to the run's report ------------------ */

int sp_report_add_rank(sp_report *report, const sp_report_options *opt, const rank_index *ix,
                       sp_rank_result *result, sp_rank_values *values)
{
    const sp_profile *profile = report->profile;
    values_reset(values);
    if (!result->has_tree) {
        /* No tree: the rank's rows, and the reason as a warning. */
        if (result->warning && add_warning(report, result->rank, result->warning) != 0)
            return -1;
        size_t first, num_rows = rank_rows(ix, profile, result->rank, &first);
        values_from_rows(values, profile, opt->selection, ix->rows + first, num_rows, result);
        return 0;
    }
    if (sp_report_tree_merge(&report->tree, &result->tree) != 0)
        return -1;
    values_from_tree(values, &result->tree);
    report->tree.num_ranks++;
    report->has_tree = 1;
    return 0;
}

static int64_t wall_in_memory(void *ctx, const sp_report *report, const sp_report_options *opt,
                              const rank_index *ix)
{
    (void)ctx;
    return run_wall(report->profile, opt->selection, ix, report->ranks, report->num_ranks);
}

int sp_report_build(const sp_profile *profile, const sp_report_options *options,
                    sp_report *out, char *err, size_t errlen)
{
    static const sp_report_source in_memory = {rank_tree_in_memory, wall_in_memory, NULL, NULL};
    return sp_report_build_from(profile, options, &in_memory, out, err, errlen);
}

int sp_report_build_from(const sp_profile *profile, const sp_report_options *options,
                         const sp_report_source *source, sp_report *out, char *err,
                         size_t errlen)
{
    static const sp_report_options defaults = {0};
    const sp_report_options *opt = options ? options : &defaults;
    memset(out, 0, sizeof *out);
    out->profile = profile;
    out->tree.first_root = -1;
    out->wall_ns = -1;

    rank_index ix = {0};
    sp_rank_values values = {0}, flat = {0};
    sp_cross_acc cross = {0};
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, opt->selection, &ranks);
    if (num_ranks < 0)
        return fail_oom(err, errlen);
    out->ranks = ranks;
    out->num_ranks = (size_t)num_ranks;
    if (rank_index_build(&ix, profile) || values_init(&values, profile->num_names) ||
        values_init(&flat, profile->num_names) || sp_cross_acc_init(&cross, profile->num_names) ||
        first_source(out, profile) ||
        sp_report_tree_init(&out->tree, SP_REPORT_ALL_RANKS, SP_REPORT_ALL_LANES))
        goto oom;

    /* Ranks in ascending order, each: its tree, then added to the run's. */
    for (size_t k = 0; k < out->num_ranks; k++) {
        sp_rank_result result;
        if (source->rank_tree(source->ctx, out, opt, ranks[k], &result, err, errlen) != 0)
            goto fail;
        int rc = sp_report_add_rank(out, opt, &ix, &result, &values);
        sp_rank_result_free(&result);
        if (rc != 0)
            goto oom;
        flat_add_rank(&flat, &values);
        sp_cross_acc_add_rank(&cross, ranks[k], &values);
    }
    if (sp_report_tree_order(&out->tree) != 0)
        goto oom;

    out->flat = malloc((flat.num_touched ? flat.num_touched : 1) * sizeof *out->flat);
    if (!out->flat)
        goto oom;
    for (size_t k = 0; k < flat.num_touched; k++) {
        sp_report_flat_row row = flat.row[flat.touched[k]];
        row.mean = row.calls ? (double)row.total / (double)row.calls : 0;
        out->flat[out->num_flat++] = row;
        out->num_calls += row.calls;
    }
    sp_report_sort_flat(out, opt->sort);

    if (out->num_ranks > 1 &&
        sp_cross_acc_finish(&cross, profile, out->num_ranks, &out->cross, &out->num_cross) != 0)
        goto oom;
    if (sp_report_lane_tables(out, profile, opt->selection, source) != 0)
        goto oom;
    out->wall_ns = source->wall(source->ctx, out, opt, &ix);

    free(ix.rows);
    values_free(&values);
    values_free(&flat);
    sp_cross_acc_free(&cross);
    return 0;
oom:
    fail_oom(err, errlen);
fail:
    free(ix.rows);
    values_free(&values);
    values_free(&flat);
    sp_cross_acc_free(&cross);
    sp_report_free(out);
    return -1;
}

void sp_report_free(sp_report *report)
{
    free(report->ranks);
    sp_report_tree_free(&report->tree);
    for (size_t k = 0; k < report->num_lane_trees; k++)
        sp_report_tree_free(&report->lane_trees[k]);
    free(report->lane_trees);
    free(report->flat);
    free(report->cross);
    free(report->threads);
    free(report->tasks);
    for (size_t k = 0; k < report->num_warnings; k++)
        free(report->warnings[k].message);
    free(report->warnings);
    free(report->source_file);
    free(report->source_line);
    memset(report, 0, sizeof *report);
    report->tree.first_root = -1;
}

/* ---- flat table order --------------------------------------------------- */

typedef struct sort_ctx {
    const sp_profile *profile;
    sp_report_sort key;
} sort_ctx;

static int cmp_i64_desc(int64_t a, int64_t b)
{
    return (a < b) - (a > b);
}

static int flat_cmp(const void *a, const void *b, void *ctx)
{
    const sp_report_flat_row *x = a, *y = b;
    const sort_ctx *c = ctx;
    int r = 0;
    switch (c->key) {
    case SP_SORT_EXCLUSIVE: r = cmp_i64_desc(x->exclusive, y->exclusive); break;
    case SP_SORT_INCLUSIVE: r = cmp_i64_desc(x->inclusive, y->inclusive); break;
    case SP_SORT_CALLS: r = (x->calls < y->calls) - (x->calls > y->calls); break;
    case SP_SORT_MEAN: r = (x->mean < y->mean) - (x->mean > y->mean); break;
    case SP_SORT_MAX: r = cmp_i64_desc(x->maximum, y->maximum); break;
    case SP_SORT_NAME: break;
    }
    /* Unknown exclusive times (-1) sort last; ties by inclusive, then name. */
    if (r == 0 && c->key != SP_SORT_NAME)
        r = cmp_i64_desc(x->inclusive, y->inclusive);
    if (r == 0)
        r = strcmp(c->profile->names[x->region], c->profile->names[y->region]);
    return r;
}

void sp_report_sort_flat(sp_report *report, sp_report_sort key)
{
    sort_ctx ctx = {report->profile, key};
    qsort_r(report->flat, report->num_flat, sizeof *report->flat, flat_cmp, &ctx);
}

int sp_report_parse_sort(const char *text, sp_report_sort *out)
{
    static const char *const names[] = {"exclusive", "inclusive", "calls", "mean", "max", "name"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (!strcmp(text, names[k])) {
            *out = (sp_report_sort)k;
            return 0;
        }
    return -1;
}

const sp_report_flat_row *sp_report_flat_find(const sp_report *report, uint32_t region)
{
    for (size_t k = 0; k < report->num_flat; k++)
        if (report->flat[k].region == region)
            return &report->flat[k];
    return NULL;
}
