/* test_html_timeline.c - the HTML timeline's level of detail: at every
 * level kept, each call is drawn exactly once (as a single call, or counted
 * in a bin), budgets drop fine levels instead of growing the page, and
 * clipping to a window keeps only the window. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "html/html_model.h"

/* n leaves of `dur` ns every `step` ns under one root on one lane. */
static void build(size_t n, int64_t step, int64_t dur, sp_calls *calls, sp_lane_walk *walk)
{
    size_t total = n + 1;
    int64_t *start = malloc(total * sizeof *start), *end = malloc(total * sizeof *end);
    uint32_t *region = malloc(total * sizeof *region);
    start[0] = 0;
    end[0] = (int64_t)n * step + 10;
    region[0] = 0;
    for (size_t i = 0; i < n; i++) {
        start[i + 1] = 5 + (int64_t)i * step;
        end[i + 1] = start[i + 1] + dur;
        region[i + 1] = 1 + (uint32_t)(i % 2);
    }
    static const char *const names[] = {"root", "a", "b"};
    sp_call_input in = {.n = total, .start = start, .end = end, .region = region,
                        .region_names = names, .num_regions = 3};
    char err[256];
    cr_assert_eq(sp_calls_build(&in, calls, err, sizeof err), 0, "%s", err);
    cr_assert_eq(sp_lane_walk_build(calls, walk), 0);
    free(start), free(end), free(region);
}

/* Calls each level shows: single calls of >= 2 w plus the bins' counts. */
static uint64_t shown_at(const html_timeline *tl, int k)
{
    uint64_t n = 0;
    for (size_t l = 0; l < tl->num_lanes; l++) {
        const html_tl_lane *lane = tl->lanes[l];
        for (size_t b = 0; b < lane->bins[k].n; b++)
            n += lane->bins[k].v[b].calls;
        for (size_t x = 0; x < lane->num_exact; x++)
            n += (double)lane->exact[x].dur >= 2 * tl->width[k];
    }
    return n;
}

static void check_levels(size_t n, size_t bins, size_t exact)
{
    sp_calls calls;
    sp_lane_walk walk;
    build(n, 100, 60, &calls, &walk);
    sp_profile *profile = sp_profile_new();
    html_timeline tl;
    html_timeline_init(&tl, 0, 0, calls.end[0], bins, exact);
    cr_assert_eq(html_timeline_add_rank(&tl, profile, 0, &calls, &walk, 0), 0);
    cr_assert_geq(tl.num_levels, 1);
    for (int k = 0; k < tl.num_levels; k++)
        cr_assert_eq(shown_at(&tl, k), n + 1, "level %d shows %llu calls of %zu", k,
                     (unsigned long long)shown_at(&tl, k), n + 1);
    if (tl.num_levels > 1) {
        cr_assert_leq(tl.bins_total, bins);
        cr_assert_leq(tl.exact_total, exact);
    }
    html_timeline_free(&tl);
    sp_profile_free(profile);
    sp_lane_walk_free(&walk);
    sp_calls_free(&calls);
}

Test(html_timeline, every_call_once_per_level)
{
    check_levels(1000, 1000000, 1000000);
}

Test(html_timeline, budgets_drop_fine_levels)
{
    check_levels(200000, 50000, 1000);
}

Test(html_timeline, window_clips_calls)
{
    sp_calls calls;
    sp_lane_walk walk;
    build(100, 100, 60, &calls, &walk);
    sp_profile *profile = sp_profile_new();
    html_timeline tl;
    /* window [2000, 3000): calls outside it are not drawn, the root is cut */
    html_timeline_init(&tl, 2000, 2000, 1000, 1000000, 1000000);
    cr_assert_eq(html_timeline_add_rank(&tl, profile, 0, &calls, &walk, 0), 0);
    const html_tl_lane *lane = tl.lanes[0];
    int64_t last = tl.num_levels - 1;
    uint64_t leaves = 0;
    for (size_t b = 0; b < lane->bins[last].n; b++)
        leaves += lane->bins[last].v[b].depth == 1 ? lane->bins[last].v[b].calls : 0;
    for (size_t x = 0; x < lane->num_exact; x++) {
        cr_assert_leq(lane->exact[x].start + lane->exact[x].dur, 1000);
        leaves += lane->exact[x].depth == 1;
    }
    /* leaves start at 5 + 100 i: i = 20..29 intersect [2000, 3000] */
    cr_assert_eq(leaves, 10, "%llu leaves in the window", (unsigned long long)leaves);
    html_timeline_free(&tl);
    sp_profile_free(profile);
    sp_lane_walk_free(&walk);
    sp_calls_free(&calls);
}
