/* rank_calls.c - one rank's calls out of a profile, reconstructed, checked
 * against stored call_ids/parent_ids, then filtered by the selection. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/analysis.h"
#include "scopeprof/report.h"

/* The rank's events as reconstruction input, plus where each came from. */
typedef struct gathered {
    sp_call_input in;
    int64_t *start, *end, *threads, *tasks;
    uint32_t *region;
    uint64_t *call_index;
    uint64_t *event;   /* input position -> profile event index */
    int64_t *id;       /* input position -> call id (filled after the first build) */
} gathered;

static void gathered_free(gathered *g)
{
    free(g->start);
    free(g->end);
    free(g->threads);
    free(g->tasks);
    free(g->region);
    free(g->call_index);
    free(g->event);
    free(g->id);
    memset(g, 0, sizeof *g);
}

static const char *file_name(const sp_profile *p)
{
    return p->path ? p->path : "profile";
}

static int gather(const sp_profile *p, uint32_t rank, int64_t *row_of_region, gathered *g,
                  char *err, size_t errlen)
{
    size_t n = 0;
    for (size_t r = 0; r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        if (row->rank != rank)
            continue;
        if (row->region >= p->num_names) {
            snprintf(err, errlen, "%s: rank %u has a row for region id %u but only %zu names",
                     file_name(p), rank, row->region, p->num_names);
            return -1;
        }
        if (row_of_region[row->region] >= 0) {
            snprintf(err, errlen, "%s: rank %u has two rows for region '%s'", file_name(p), rank,
                     p->names[row->region]);
            return -1;
        }
        if (row->offset > p->num_events || row->count > p->num_events - row->offset) {
            snprintf(err, errlen, "%s: rank %u region '%s' points past the event columns",
                     file_name(p), rank, p->names[row->region]);
            return -1;
        }
        row_of_region[row->region] = (int64_t)r;
        n += row->count;
    }
    size_t alloc = n ? n : 1;
    g->start = malloc(alloc * sizeof *g->start);
    g->end = malloc(alloc * sizeof *g->end);
    g->region = malloc(alloc * sizeof *g->region);
    g->call_index = malloc(alloc * sizeof *g->call_index);
    g->event = malloc(alloc * sizeof *g->event);
    g->id = malloc(alloc * sizeof *g->id);
    if (p->thread_ids)
        g->threads = malloc(alloc * sizeof *g->threads);
    if (p->task_ids)
        g->tasks = malloc(alloc * sizeof *g->tasks);
    if (!g->start || !g->end || !g->region || !g->call_index || !g->event || !g->id ||
        (p->thread_ids && !g->threads) || (p->task_ids && !g->tasks)) {
        snprintf(err, errlen, "%s: out of memory gathering rank %u (%zu calls)", file_name(p),
                 rank, n);
        return -1;
    }
    /* Ranks of other hosts are put on the lowest rank's clock (MPI sync
     * points, report_clock.c). */
    int64_t offset = sp_rank_clock_offset(p, rank);
    size_t k = 0;
    for (size_t r = 0; r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        if (row->rank != rank)
            continue;
        for (uint64_t j = 0; j < row->count; j++, k++) {
            uint64_t e = row->offset + j;
            g->start[k] = p->start[e] - offset;
            g->end[k] = p->end[e] - offset;
            g->region[k] = row->region;
            g->call_index[k] = j;
            g->event[k] = e;
            if (g->threads)
                g->threads[k] = p->thread_ids[e];
            if (g->tasks)
                g->tasks[k] = p->task_ids[e];
        }
    }
    g->in = (sp_call_input){
        .n = n,
        .start = g->start,
        .end = g->end,
        .region = g->region,
        .call_index = g->call_index,
        .thread_ids = g->threads,
        .task_ids = g->tasks,
        .region_names = (const char *const *)p->names,
        .num_regions = p->num_names,
    };
    return 0;
}

/* Assign call ids: stored ones when the file has them for this rank, else
 * the position in the reconstruction.  Stored parent ids, when there are
 * any, must describe the tree the times give.  Call ids without parent ids
 * are still the ids the file's fork parent ids name (and the ids a writer
 * supplied): they are kept, the parents taken from the times. */
static int assign_ids(const sp_profile *p, uint32_t rank, gathered *g, const sp_calls *calls,
                      int *stored, char *err, size_t errlen)
{
    size_t with_ids = 0;
    if (p->call_ids)
        for (size_t k = 0; k < g->in.n; k++)
            with_ids += p->call_ids[g->event[k]] >= 0;
    *stored = with_ids > 0;
    if (with_ids > 0 && with_ids < g->in.n) {
        snprintf(err, errlen, "%s: rank %u stores call_ids for only %zu of its %zu calls",
                 file_name(p), rank, with_ids, g->in.n);
        return -1;
    }
    for (size_t i = 0; i < calls->n; i++) {
        uint64_t pos = calls->input_pos[i];
        g->id[pos] = *stored ? p->call_ids[g->event[pos]] : (int64_t)i;
    }
    if (!*stored || !p->parent_ids)
        return 0;
    for (size_t i = 0; i < calls->n; i++) {
        uint64_t e = g->event[calls->input_pos[i]];
        int64_t parent = calls->parent[i];
        int64_t expected = parent >= 0 ? g->id[calls->input_pos[parent]] : -1;
        if (p->parent_ids[e] != expected) {
            snprintf(err, errlen,
                     "%s: rank %u '%s' call %llu [%lld, %lld] ns has stored parent id %lld but "
                     "its timestamps nest it under call id %lld; the call_ids/parent_ids "
                     "columns disagree with the recorded times",
                     file_name(p), rank, p->names[calls->region[i]],
                     (unsigned long long)calls->call_index[i], (long long)calls->start[i],
                     (long long)calls->end[i], (long long)p->parent_ids[e], (long long)expected);
            return -1;
        }
    }
    return 0;
}

/* Small cache so lane selectors are matched once per lane, not per call. */
typedef struct lane_keep {
    int64_t lane;
    int keep;
} lane_keep;

static int lane_kept(const sp_profile *p, uint32_t rank, const sp_selection *sel, int64_t lane,
                     lane_keep **cache, size_t *count)
{
    for (size_t i = 0; i < *count; i++)
        if ((*cache)[i].lane == lane)
            return (*cache)[i].keep;
    int keep = sp_selection_keeps_lane(sel, p, rank, lane);
    lane_keep *grown = realloc(*cache, (*count + 1) * sizeof *grown);
    if (grown) {
        *cache = grown;
        (*cache)[(*count)++] = (lane_keep){lane, keep};
    }
    return keep;
}

int64_t sp_selection_seconds_to_ns(double s)
{
    double ns = s * 1e9;
    if (ns > 9.2e18)
        return INT64_MAX;
    if (ns < -9.2e18)
        return INT64_MIN;
    return (int64_t)llround(ns);
}

/* The per-call part of a selection, prepared once per rank. */
typedef struct call_filter {
    const sp_profile *profile;
    const sp_selection *sel;
    uint32_t rank;
    unsigned char *region_keep;
    int64_t from, to, min_dur;
    lane_keep *cache;
    size_t cached;
} call_filter;

static int call_filter_init(call_filter *f, const sp_profile *p, const sp_selection *sel,
                            uint32_t rank)
{
    memset(f, 0, sizeof *f);
    f->profile = p;
    f->sel = sel;
    f->rank = rank;
    f->region_keep = malloc(p->num_names ? p->num_names : 1);
    if (!f->region_keep)
        return -1;
    for (size_t r = 0; r < p->num_names; r++)
        f->region_keep[r] = (unsigned char)sp_selection_keeps_region(sel, p->names[r]);
    int64_t origin = sp_profile_origin_ns(p);
    f->from = sel->has_from ? origin + sp_selection_seconds_to_ns(sel->from_s) : INT64_MIN;
    f->to = sel->has_to ? origin + sp_selection_seconds_to_ns(sel->to_s) : INT64_MAX;
    f->min_dur = sel->has_min_duration ? sp_selection_seconds_to_ns(sel->min_duration_s) : INT64_MIN;
    return 0;
}

static void call_filter_free(call_filter *f)
{
    free(f->region_keep);
    free(f->cache);
}

static int call_filter_keeps(call_filter *f, uint32_t region, int64_t start, int64_t end,
                             int64_t thread, int64_t task, int lane_column)
{
    if (!f->region_keep[region] || end < f->from || start > f->to || end - start < f->min_dur)
        return 0;
    if (!f->sel->lanes)
        return 1;
    int64_t lane = lane_column ? sp_lane_id(thread, task) : -1;
    return lane_kept(f->profile, f->rank, f->sel, lane, &f->cache, &f->cached);
}

/* Drop the input positions the selection rejects, compacting every column. */
static int filter_input(const sp_profile *p, uint32_t rank, const sp_selection *sel, gathered *g,
                        char *err, size_t errlen)
{
    call_filter f;
    if (call_filter_init(&f, p, sel, rank) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int lane_column = g->threads || g->tasks;
    size_t kept = 0;
    for (size_t k = 0; k < g->in.n; k++) {
        if (!call_filter_keeps(&f, g->region[k], g->start[k], g->end[k],
                               g->threads ? g->threads[k] : -1, g->tasks ? g->tasks[k] : -1,
                               lane_column))
            continue;
        g->start[kept] = g->start[k];
        g->end[kept] = g->end[k];
        g->region[kept] = g->region[k];
        g->call_index[kept] = g->call_index[k];
        g->event[kept] = g->event[k];
        g->id[kept] = g->id[k];
        if (g->threads)
            g->threads[kept] = g->threads[k];
        if (g->tasks)
            g->tasks[kept] = g->tasks[k];
        kept++;
    }
    g->in.n = kept;
    call_filter_free(&f);
    return 0;
}

int64_t sp_selection_first_start(const sp_profile *profile, const sp_selection *sel)
{
    sp_selection all;
    sp_selection_init(&all);
    if (!sel)
        sel = &all;
    int64_t first = INT64_MAX, offset = 0;
    int lane_column = profile->thread_ids || profile->task_ids;
    uint32_t rank = UINT32_MAX;
    call_filter f = {0};
    int ready = 0;
    for (size_t r = 0; r < profile->num_rows; r++) {
        const sp_row *row = &profile->rows[r];
        if (!sp_selection_has_rank(sel, row->rank) || row->region >= profile->num_names ||
            row->offset > profile->num_events || row->count > profile->num_events - row->offset)
            continue;
        if (!ready || row->rank != rank) {
            if (ready)
                call_filter_free(&f);
            ready = call_filter_init(&f, profile, sel, row->rank) == 0;
            rank = row->rank;
            offset = sp_rank_clock_offset(profile, rank);
            if (!ready)
                return 0;
        }
        for (uint64_t e = row->offset; e < row->offset + row->count; e++)
            if (profile->start[e] - offset < first &&
                call_filter_keeps(&f, row->region, profile->start[e] - offset,
                                  profile->end[e] - offset,
                                  profile->thread_ids ? profile->thread_ids[e] : -1,
                                  profile->task_ids ? profile->task_ids[e] : -1, lane_column))
                first = profile->start[e] - offset;
    }
    if (ready)
        call_filter_free(&f);
    return first == INT64_MAX ? 0 : first;
}

static int compare_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Distinct lanes: sorted set with binary search, O(n log lanes). */
static size_t count_lanes(const sp_calls *calls)
{
    if (!calls->lane)
        return calls->n ? 1 : 0;
    int64_t *set = NULL;
    size_t count = 0, cap = 0;
    for (size_t i = 0; i < calls->n; i++) {
        int64_t lane = calls->lane[i];
        if (i > 0 && calls->lane[i - 1] == lane)
            continue;
        if (count && bsearch(&lane, set, count, sizeof lane, compare_i64))
            continue;
        if (count == cap) {
            cap = cap ? 2 * cap : 16;
            int64_t *grown = realloc(set, cap * sizeof *grown);
            if (!grown)
                break;
            set = grown;
        }
        size_t at = count;
        while (at > 0 && set[at - 1] > lane) {
            set[at] = set[at - 1];
            at--;
        }
        set[at] = lane;
        count++;
    }
    free(set);
    return count;
}

int sp_rank_data_load(const sp_profile *profile, uint32_t rank, const sp_selection *sel,
                      sp_rank_data *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->rank = rank;
    if (profile->aggregate) {
        snprintf(err, errlen,
                 "%s: written in the aggregate layout, which keeps no individual calls",
                 file_name(profile));
        return -1;
    }
    gathered g = {0};
    sp_calls calls = {0};
    out->row_of_region = malloc((profile->num_names ? profile->num_names : 1) * sizeof(int64_t));
    if (!out->row_of_region) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t r = 0; r < profile->num_names; r++)
        out->row_of_region[r] = -1;
    if (gather(profile, rank, out->row_of_region, &g, err, errlen) < 0)
        goto fail;
    char why[1024];
    if (sp_calls_build(&g.in, &calls, why, sizeof why) < 0) {
        snprintf(err, errlen, "%s: rank %u: %s", file_name(profile), rank, why);
        goto fail;
    }
    if (assign_ids(profile, rank, &g, &calls, &out->stored_ids, err, errlen) < 0)
        goto fail;
    if (sp_selection_filters_calls(sel) || (sel && sel->lanes)) {
        sp_calls_free(&calls);
        if (filter_input(profile, rank, sel, &g, err, errlen) < 0)
            goto fail;
        /* A subset of properly nested calls is properly nested: cannot fail
         * on nesting, only on memory. */
        if (sp_calls_build(&g.in, &calls, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s: rank %u: %s", file_name(profile), rank, why);
            goto fail;
        }
    }
    size_t n = calls.n ? calls.n : 1;
    out->event = malloc(n * sizeof *out->event);
    out->call_id = malloc(n * sizeof *out->call_id);
    out->parent_id = malloc(n * sizeof *out->parent_id);
    if (!out->event || !out->call_id || !out->parent_id) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < calls.n; i++) {
        uint64_t pos = calls.input_pos[i];
        out->event[i] = g.event[pos];
        out->call_id[i] = g.id[pos];
    }
    for (size_t i = 0; i < calls.n; i++)
        out->parent_id[i] = calls.parent[i] >= 0 ? out->call_id[calls.parent[i]] : -1;
    out->calls = calls;
    out->num_lanes = count_lanes(&calls);
    gathered_free(&g);
    return 0;
fail:
    sp_calls_free(&calls);
    gathered_free(&g);
    sp_rank_data_free(out);
    out->rank = rank;
    return -1;
}

void sp_rank_data_free(sp_rank_data *data)
{
    sp_calls_free(&data->calls);
    free(data->event);
    free(data->call_id);
    free(data->parent_id);
    free(data->row_of_region);
    memset(data, 0, sizeof *data);
}

int sp_rank_calls(const sp_profile *profile, uint32_t rank, sp_calls *out, char *err,
                  size_t errlen)
{
    sp_rank_data data;
    memset(out, 0, sizeof *out);
    if (sp_rank_data_load(profile, rank, NULL, &data, err, errlen) < 0)
        return -1;
    *out = data.calls;
    memset(&data.calls, 0, sizeof data.calls);
    sp_rank_data_free(&data);
    return 0;
}

const sp_row *sp_rank_data_row(const sp_profile *profile, const sp_rank_data *data, size_t i)
{
    int64_t r = data->row_of_region[data->calls.region[i]];
    return r >= 0 ? &profile->rows[r] : NULL;
}
