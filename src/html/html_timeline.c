/* html_timeline.c - the timeline's level of detail, precomputed so a page
 * holding a 10^7-call run stays small and fluid.
 *
 * Level k cuts the run into HTML_TL_LEVEL0_BINS * 4^k bins of width w_k.
 * On every (lane, depth), the calls shorter than 2 w_k are summed into the
 * bins of level k they fall in (calls, covered time, the region that covers
 * most); calls of 2 w_L or more, L the finest level kept, are kept one by
 * one.  At a zoom of z ns per pixel the page draws the coarsest level with
 * w_k <= z plus the single calls of 2 w_k or more in the visible window, so
 * every call is drawn exactly once, as itself or inside a bin.  Fine levels
 * are dropped (coarsest kept) until the bins and the single calls fit their
 * budgets: the file size is bounded by the budgets, not by the run. */
#include <stdlib.h>
#include <string.h>

#include "html_model.h"

#define NO_BIN UINT64_MAX

int html_timeline_init(html_timeline *tl, int64_t origin, int64_t offset, int64_t span,
                       size_t bin_budget, size_t exact_budget)
{
    memset(tl, 0, sizeof *tl);
    tl->origin = origin;
    tl->offset = offset;
    tl->span = span > 0 ? span : 1;
    tl->bin_budget = bin_budget;
    tl->exact_budget = exact_budget;
    double w = (double)tl->span / HTML_TL_LEVEL0_BINS;
    for (int k = 0; k < HTML_TL_MAX_LEVELS; k++, w /= 4) {
        if (k > 0 && w < 1.0)
            break;
        tl->width[k] = w;
        tl->num_levels = k + 1;
    }
    return 0;
}

static void lane_free(html_tl_lane *l)
{
    for (int k = 0; k < HTML_TL_MAX_LEVELS; k++)
        free(l->bins[k].v);
    free(l->exact);
    free(l->label);
    free(l);
}

void html_timeline_free(html_timeline *tl)
{
    for (size_t i = 0; i < tl->num_lanes; i++)
        lane_free(tl->lanes[i]);
    free(tl->lanes);
    memset(tl, 0, sizeof *tl);
}

static int bins_push(html_timeline *tl, html_bins *b, const html_bin *v)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        html_bin *grown = realloc(b->v, cap * sizeof *grown);
        if (!grown) {
            tl->failed = 1;
            return -1;
        }
        b->v = grown;
        b->cap = cap;
    }
    b->v[b->n++] = *v;
    tl->bins_total++;
    return 0;
}

static void bin_add(html_timeline *tl, html_tl_lane *l, int k, uint32_t depth, uint64_t bin,
                    uint32_t region, int64_t portion, uint32_t calls)
{
    html_bin *cur = &l->open[k][depth];
    if (cur->bin != bin) {
        if (cur->bin != NO_BIN)
            bins_push(tl, &l->bins[k], cur);
        *cur = (html_bin){.bin = bin, .depth = depth, .region = region, .best_ns = -1};
    }
    cur->covered_ns += portion;
    cur->calls += calls;
    if (portion > cur->best_ns) {
        cur->best_ns = portion;
        cur->region = region;
    }
}

static void enforce_budgets(html_timeline *tl);

typedef struct walk_ctx {
    html_timeline *tl;
    html_tl_lane *lane;
    const sp_calls *calls;
    int64_t shift;
} walk_ctx;

static int exact_push(html_timeline *tl, html_tl_lane *l, const html_exact *e)
{
    if (l->num_exact == l->cap_exact) {
        size_t cap = l->cap_exact ? l->cap_exact * 2 : 256;
        html_exact *grown = realloc(l->exact, cap * sizeof *grown);
        if (!grown) {
            tl->failed = 1;
            return -1;
        }
        l->exact = grown;
        l->cap_exact = cap;
    }
    l->exact[l->num_exact++] = *e;
    tl->exact_total++;
    return 0;
}

/* One call of a lane, lane calls in start order (a depth-first walk of the
 * lane); start and end on the run's time axis.  Returns tl->failed. */
int html_timeline_call(html_timeline *tl, html_tl_lane *l, int64_t start, int64_t end,
                       uint32_t d, uint32_t region)
{
    if (d >= HTML_TL_MAX_DEPTH || tl->failed)
        return tl->failed;
    if (d > l->max_depth)
        l->max_depth = d;
    int64_t s = start - tl->origin;
    int64_t e = end - tl->origin;
    if (s < 0)
        s = 0;
    if (e > tl->span)
        e = tl->span;
    if (e < s)
        return 0; /* outside the --from/--to window */
    int64_t dur = e - s;
    enforce_budgets(tl); /* during the walk: one lane can hold the whole run */
    if ((double)dur >= 2 * tl->width[tl->num_levels - 1]) {
        html_exact x = {s, dur, d, region};
        exact_push(tl, l, &x);
    }
    for (int k = 0; k < tl->num_levels; k++) {
        double w = tl->width[k];
        if ((double)dur >= 2 * w)
            continue; /* drawn one by one at this level */
        uint64_t b0 = (uint64_t)((double)s / w);
        uint64_t b1 = (uint64_t)((double)(e > s ? e - 1 : s) / w);
        for (uint64_t b = b0; b <= b1; b++) {
            double lo = (double)b * w, hi = lo + w;
            double a = (double)s > lo ? (double)s : lo, z = (double)e < hi ? (double)e : hi;
            bin_add(tl, l, k, d, b, region, z > a ? (int64_t)(z - a + 0.5) : 0, b == b0);
        }
    }
    return 0;
}

static int visit(void *p, size_t i)
{
    walk_ctx *c = p;
    return html_timeline_call(c->tl, c->lane, c->calls->start[i] - c->shift,
                              c->calls->end[i] - c->shift, c->calls->depth[i],
                              c->calls->region[i]);
}

static size_t total_bins(const html_timeline *tl, int level)
{
    size_t n = 0;
    for (size_t i = 0; i < tl->num_lanes; i++)
        n += tl->lanes[i]->bins[level].n;
    return n;
}

/* Drop the finest level: its bins go, and the single calls now drawn inside
 * the bins of the new finest level leave the exact lists. */
static void drop_finest(html_timeline *tl)
{
    int k = --tl->num_levels;
    double min = 2 * tl->width[k - 1];
    tl->exact_total = 0;
    tl->bins_total -= total_bins(tl, k);
    for (size_t i = 0; i < tl->num_lanes; i++) {
        html_tl_lane *l = tl->lanes[i];
        free(l->bins[k].v);
        memset(&l->bins[k], 0, sizeof l->bins[k]);
        size_t kept = 0;
        for (size_t x = 0; x < l->num_exact; x++)
            if ((double)l->exact[x].dur >= min)
                l->exact[kept++] = l->exact[x];
        l->num_exact = kept;
        tl->exact_total += kept;
    }
}

static void enforce_budgets(html_timeline *tl)
{
    while (tl->num_levels > 1 &&
           (tl->bins_total > tl->bin_budget || tl->exact_total > tl->exact_budget))
        drop_finest(tl);
}

/* Bands of a rank: threads by index (MainThread first), then tasks, then
 * the unknown lane; walk->lanes is ascending lane id (tasks >= 0, -1
 * unknown, thread t = -2 - t), so threads come from the end. */
static size_t band_order(const sp_lane_walk *walk, size_t k)
{
    size_t threads = 0;
    while (threads < walk->num_lanes && walk->lanes[threads] <= -2)
        threads++;
    if (k < threads)
        return threads - 1 - k;
    size_t rest = k - threads; /* -1 (if any) then tasks; tasks first */
    int has_unknown = threads < walk->num_lanes && walk->lanes[threads] == -1;
    size_t tasks = walk->num_lanes - threads - (size_t)has_unknown;
    if (rest < tasks)
        return threads + (size_t)has_unknown + rest;
    return threads;
}

html_tl_lane *html_timeline_lane(html_timeline *tl, const sp_profile *profile, uint32_t rank,
                                 int64_t lane, int labelled)
{
    html_tl_lane *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    if (tl->num_lanes == tl->cap_lanes) {
        size_t cap = tl->cap_lanes ? tl->cap_lanes * 2 : 16;
        html_tl_lane **grown = realloc(tl->lanes, cap * sizeof *grown);
        if (!grown) {
            free(l);
            return NULL;
        }
        tl->lanes = grown;
        tl->cap_lanes = cap;
    }
    tl->lanes[tl->num_lanes++] = l;
    l->rank = rank;
    l->lane = lane;
    char label[512] = "";
    if (labelled)
        sp_lane_label(profile, rank, lane, label, sizeof label);
    l->label = strdup(label);
    if (!l->label)
        return NULL;
    for (int k = 0; k < HTML_TL_MAX_LEVELS; k++)
        for (int d = 0; d < HTML_TL_MAX_DEPTH; d++)
            l->open[k][d].bin = NO_BIN;
    return l;
}

/* The lane's bins still being filled join its levels. */
static void lane_finish(html_timeline *tl, html_tl_lane *l)
{
    for (int k = 0; k < tl->num_levels; k++)
        for (int d = 0; d < HTML_TL_MAX_DEPTH; d++)
            if (l->open[k][d].bin != NO_BIN)
                bins_push(tl, &l->bins[k], &l->open[k][d]);
    enforce_budgets(tl);
}

int html_timeline_add_rank(html_timeline *tl, const sp_profile *profile, uint32_t rank,
                           const sp_calls *calls, const sp_lane_walk *walk, int64_t shift)
{
    for (size_t b = 0; b < walk->num_lanes && !tl->failed; b++) {
        size_t w = band_order(walk, b);
        html_tl_lane *l = html_timeline_lane(tl, profile, rank, walk->lanes[w], calls->lane != NULL);
        if (!l)
            return -1;
        walk_ctx c = {tl, l, calls, shift};
        sp_lane_walk_visit(walk, calls, w, visit, NULL, &c);
        lane_finish(tl, l);
    }
    return tl->failed ? -1 : 0;
}

static int by_lane_id(const void *a, const void *b)
{
    const html_tl_lane *x = *(html_tl_lane *const *)a, *y = *(html_tl_lane *const *)b;
    return (x->lane > y->lane) - (x->lane < y->lane);
}

int html_timeline_end_rank(html_timeline *tl, size_t first_lane)
{
    size_t n = tl->num_lanes - first_lane;
    if (n == 0)
        return tl->failed ? -1 : 0;
    html_tl_lane **lanes = tl->lanes + first_lane;
    /* ascending lane id, as a lane walk lists them, then in band order */
    qsort(lanes, n, sizeof *lanes, by_lane_id);
    html_tl_lane **sorted = malloc(n * sizeof *sorted);
    int64_t *ids = malloc(n * sizeof *ids);
    if (!sorted || !ids) {
        free(sorted);
        free(ids);
        return -1;
    }
    memcpy(sorted, lanes, n * sizeof *sorted);
    for (size_t i = 0; i < n; i++)
        ids[i] = sorted[i]->lane;
    sp_lane_walk walk = {.lanes = ids, .num_lanes = n};
    for (size_t b = 0; b < n; b++)
        lanes[b] = sorted[band_order(&walk, b)];
    free(sorted);
    free(ids);
    for (size_t b = 0; b < n && !tl->failed; b++)
        lane_finish(tl, lanes[b]);
    return tl->failed ? -1 : 0;
}

/* ---- JSON ------------------------------------------------------------------- */

static int bin_order(const void *a, const void *b)
{
    const html_bin *x = a, *y = b;
    if (x->bin != y->bin)
        return x->bin < y->bin ? -1 : 1;
    return (x->depth > y->depth) - (x->depth < y->depth);
}

static int exact_order(const void *a, const void *b)
{
    const html_exact *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->depth > y->depth) - (x->depth < y->depth);
}

/* Compact columns: starts and bins delta-encoded (sorted), coverage in
 * thousandths of the bin. */
void html_timeline_json(sp_json *j, const html_timeline *tl)
{
    sp_json_begin_object(j);
    sp_json_key(j, "span");
    sp_json_int(j, tl->span);
    sp_json_key(j, "offset");
    sp_json_int(j, tl->offset);
    sp_json_key(j, "maxDepth");
    sp_json_int(j, HTML_TL_MAX_DEPTH);
    sp_json_key(j, "levels");
    sp_json_begin_array(j);
    for (int k = 0; k < tl->num_levels; k++)
        sp_json_double(j, tl->width[k]);
    sp_json_end_array(j);
    sp_json_key(j, "lanes");
    sp_json_begin_array(j);
    for (size_t i = 0; i < tl->num_lanes; i++) {
        html_tl_lane *l = tl->lanes[i];
        sp_json_newline(j);
        sp_json_begin_object(j);
        sp_json_key(j, "rank");
        sp_json_uint(j, l->rank);
        sp_json_key(j, "label");
        html_json_string(j, l->label);
        sp_json_key(j, "depth");
        sp_json_uint(j, l->max_depth + 1);
        if (l->num_exact)
            qsort(l->exact, l->num_exact, sizeof *l->exact, exact_order);
        sp_json_key(j, "exact");
        sp_json_begin_array(j);
        int64_t prev = 0;
        for (size_t x = 0; x < l->num_exact; x++) {
            const html_exact *e = &l->exact[x];
            sp_json_int(j, e->start - prev);
            sp_json_int(j, e->dur);
            sp_json_uint(j, e->depth);
            sp_json_uint(j, e->region);
            prev = e->start;
        }
        sp_json_end_array(j);
        sp_json_key(j, "bins");
        sp_json_begin_array(j);
        for (int k = 0; k < tl->num_levels; k++) {
            html_bins *b = &l->bins[k];
            if (b->n)
                qsort(b->v, b->n, sizeof *b->v, bin_order);
            sp_json_newline(j);
            sp_json_begin_array(j);
            uint64_t pb = 0;
            for (size_t x = 0; x < b->n; x++) {
                const html_bin *v = &b->v[x];
                sp_json_uint(j, v->bin - pb);
                sp_json_uint(j, v->depth);
                sp_json_uint(j, v->region);
                int64_t cov = (int64_t)((double)v->covered_ns * 1000.0 / tl->width[k] + 0.5);
                sp_json_int(j, cov > 1000 ? 1000 : cov);
                sp_json_uint(j, v->calls);
                pb = v->bin;
            }
            sp_json_end_array(j);
        }
        sp_json_end_array(j);
        sp_json_end_object(j);
    }
    sp_json_end_array(j);
    sp_json_end_object(j);
}
