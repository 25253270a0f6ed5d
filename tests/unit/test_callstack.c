/* Call-tree reconstruction (include/scopeprof/callstack.h): the cases of
 * spec §11.1 and the tie rules of §5.2 with exact expectations, then
 * property tests on random forests against a deliberately naive reference
 * (O(n^2) scans) and, at 100 000 calls, against the generated tree itself. */
#include <criterion/criterion.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "callstack/radix_sort.h"
#include "scopeprof/callstack.h"

/* ------------------------------------------------------------------ */
/* helpers                                                             */

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static char err[1024];

/* Builds from flat columns; aborts the test on failure. */
static sp_calls build_ok(size_t n, const int64_t *start, const int64_t *end,
                         const uint32_t *region, const char *const *names,
                         size_t num_names, const int64_t *threads)
{
    sp_call_input in = {.n = n, .start = start, .end = end, .region = region,
                        .thread_ids = threads, .region_names = names,
                        .num_regions = num_names};
    sp_calls calls;
    err[0] = '\0';
    int rc = sp_calls_build(&in, &calls, err, sizeof err);
    cr_assert_eq(rc, 0, "build failed: %s", err);
    cr_assert_eq(calls.n, n);
    return calls;
}

static int build_fails(size_t n, const int64_t *start, const int64_t *end,
                       const uint32_t *region, const char *const *names,
                       size_t num_names, const int64_t *threads)
{
    sp_call_input in = {.n = n, .start = start, .end = end, .region = region,
                        .thread_ids = threads, .region_names = names,
                        .num_regions = num_names};
    sp_calls calls;
    err[0] = '\0';
    int rc = sp_calls_build(&in, &calls, err, sizeof err);
    if (rc == 0) {
        sp_calls_free(&calls);
        return 0;
    }
    cr_assert_eq(calls.n, 0, "a failed build must leave the output empty");
    cr_assert_null(calls.start);
    return 1;
}

static void expect_i64(const int64_t *got, const int64_t *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(got[i], want[i], "%s[%zu]: got %" PRId64 ", want %" PRId64,
                     what, i, got[i], want[i]);
}

static void expect_depths(const sp_calls *c, const uint32_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(c->depth[i], want[i], "depth[%zu]: got %" PRIu32 ", want %" PRIu32,
                     i, c->depth[i], want[i]);
}

static void expect_regions(const sp_calls *c, const uint32_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(c->region[i], want[i], "region[%zu]", i);
}

static void expect_path(const sp_calls *c, const char *const *names, size_t i, const char *want)
{
    char buf[256];
    size_t len = sp_call_path(c, names, i, NULL, buf, sizeof buf);
    cr_assert_str_eq(buf, want);
    cr_assert_eq(len, strlen(want));
}

/* ------------------------------------------------------------------ */
/* spec §11.1                                                          */

Test(nesting, outer_inner_leaf)
{
    static const char *const names[] = {"outer", "inner", "leaf"};
    int64_t start[] = {0, 10, 50, 15}, end[] = {100, 40, 90, 20};
    uint32_t region[] = {0, 1, 1, 2};
    sp_calls c = build_ok(4, start, end, region, names, 3, NULL);
    expect_regions(&c, (uint32_t[]){0, 1, 2, 1}, 4);
    expect_depths(&c, (uint32_t[]){0, 1, 2, 1}, 4);
    expect_i64(c.parent, (int64_t[]){-1, 0, 1, 0}, 4, "parent");
    expect_i64(c.exclusive, (int64_t[]){30, 25, 5, 40}, 4, "exclusive");
    expect_path(&c, names, 0, "outer");
    expect_path(&c, names, 1, "outer > inner");
    expect_path(&c, names, 2, "outer > inner > leaf");
    expect_path(&c, names, 3, "outer > inner");
    /* call_index counts within the region in input order; input_pos maps back. */
    cr_assert_eq(c.call_index[1], 0);
    cr_assert_eq(c.call_index[3], 1);
    cr_assert_eq(c.input_pos[2], 3);
    cr_assert_eq(c.input_pos[3], 2);
    cr_assert_null(c.lane);
    sp_calls_free(&c);
}

Test(nesting, touching_calls_are_siblings)
{
    int64_t start[] = {0, 10}, end[] = {10, 20};
    uint32_t region[] = {0, 0};
    sp_calls c = build_ok(2, start, end, region, NULL, 0, NULL);
    expect_depths(&c, (uint32_t[]){0, 0}, 2);
    expect_i64(c.parent, (int64_t[]){-1, -1}, 2, "parent");
    sp_calls_free(&c);
}

Test(nesting, recursion)
{
    int64_t start[] = {0, 10, 60}, end[] = {100, 90, 80};
    uint32_t region[] = {0, 0, 0};
    sp_calls c = build_ok(3, start, end, region, NULL, 0, NULL);
    expect_depths(&c, (uint32_t[]){0, 1, 2}, 3);
    expect_i64(c.parent, (int64_t[]){-1, 0, 1}, 3, "parent");
    sp_calls_free(&c);
}

Test(nesting, zero_length_ticks)
{
    static const char *const names[] = {"outer", "tick"};
    int64_t start[] = {0, 0, 50}, end[] = {100, 0, 50};
    uint32_t region[] = {0, 1, 1};
    sp_calls c = build_ok(3, start, end, region, names, 2, NULL);
    expect_depths(&c, (uint32_t[]){0, 1, 1}, 3);
    expect_i64(c.parent, (int64_t[]){-1, 0, 0}, 3, "parent");
    expect_i64(c.exclusive, (int64_t[]){100, 0, 0}, 3, "exclusive");
    sp_calls_free(&c);
}

Test(nesting, equal_start_longer_first)
{
    static const char *const names[] = {"outer", "inner"};
    /* inner given first: the sort, not the input, decides. */
    int64_t start[] = {5, 5}, end[] = {40, 100};
    uint32_t region[] = {1, 0};
    sp_calls c = build_ok(2, start, end, region, names, 2, NULL);
    expect_regions(&c, (uint32_t[]){0, 1}, 2);
    expect_i64(c.parent, (int64_t[]){-1, 0}, 2, "parent");
    sp_calls_free(&c);
}

Test(nesting, crossing_calls_name_both)
{
    static const char *const names[] = {"short", "long"};
    int64_t start[] = {0, 10}, end[] = {50, 200};
    uint32_t region[] = {0, 1};
    cr_assert(build_fails(2, start, end, region, names, 2, NULL));
    cr_assert(strstr(err, "not properly nested"), "%s", err);
    cr_assert(strstr(err, "'long' call 0 [10, 200] ns"), "%s", err);
    cr_assert(strstr(err, "'short' call 0 [0, 50] ns"), "%s", err);
    cr_assert(strstr(err, "recorded calls are not properly nested: 'long' call 0 [10, 200] ns "
                          "starts inside 'short' call 0 [0, 50] ns but ends after it."), "%s", err);
    cr_assert(strstr(err, "sp_end"), "%s", err);
    cr_assert(strstr(err, "SCOPE_PROFILER_TRACK_THREADS=0"), "%s", err);
}

Test(nesting, call_ending_before_it_starts)
{
    static const char *const names[] = {"fine", "broken"};
    int64_t start[] = {0, 5, 100}, end[] = {1, 6, 10};
    uint32_t region[] = {0, 1, 1};
    cr_assert(build_fails(3, start, end, region, names, 2, NULL));
    cr_assert(strstr(err, "a recorded call ends before it starts: 'broken' call 1 [100, 10] ns"),
              "%s", err);
    cr_assert(strstr(err, "SCOPE_PROFILER_TRACK_THREADS=0"), "%s", err);
}

Test(nesting, no_calls)
{
    sp_call_input in = {0};
    sp_calls c;
    cr_assert_eq(sp_calls_build(&in, &c, err, sizeof err), 0);
    cr_assert_eq(c.n, 0);
    cr_assert_null(c.start);
    static sp_lane_part dummy;
    sp_lane_part *parts = &dummy; /* must be reset to NULL */
    cr_assert_eq(sp_split_by_lane(&c, &parts), 0);
    cr_assert_null(parts);
    sp_calls_free(&c);
}

Test(nesting, unknown_region_is_rejected)
{
    static const char *const names[] = {"a"};
    int64_t start[] = {0, 1}, end[] = {5, 2};
    uint32_t region[] = {0, 1};
    cr_assert(build_fails(2, start, end, region, names, 1, NULL));
    cr_assert(strstr(err, "region index 1"), "%s", err);
}

Test(nesting, unnamed_regions_are_numbered_in_messages)
{
    int64_t start[] = {0, 10}, end[] = {50, 200};
    uint32_t region[] = {3, 7};
    cr_assert(build_fails(2, start, end, region, NULL, 0, NULL));
    cr_assert(strstr(err, "'#7' call 0 [10, 200] ns"), "%s", err);
    cr_assert(strstr(err, "'#3' call 0 [0, 50] ns"), "%s", err);
}

Test(nesting, given_call_indices_are_kept)
{
    int64_t start[] = {10, 0}, end[] = {20, 30};
    uint32_t region[] = {0, 0};
    uint64_t call_index[] = {41, 40};
    sp_call_input in = {.n = 2, .start = start, .end = end, .region = region,
                        .call_index = call_index};
    sp_calls c;
    cr_assert_eq(sp_calls_build(&in, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.call_index[0], 40);
    cr_assert_eq(c.call_index[1], 41);
    sp_calls_free(&c);
}

Test(lanes, overlap_needs_lanes)
{
    int64_t start[] = {0, 20}, end[] = {30, 50};
    uint32_t region[] = {0, 0};
    static const char *const names[] = {"a"};
    cr_assert(build_fails(2, start, end, region, names, 1, NULL));
    cr_assert(strstr(err, "'a' call 1 [20, 50] ns starts inside 'a' call 0 [0, 30] ns"), "%s", err);

    int64_t threads[] = {0, 1};
    sp_calls c = build_ok(2, start, end, region, names, 1, threads);
    expect_i64(c.parent, (int64_t[]){-1, -1}, 2, "parent");
    cr_assert_not_null(c.lane);
    expect_i64(c.lane, (int64_t[]){-2, -3}, 2, "lane");
    sp_calls_free(&c);
}

Test(lanes, lane_ids)
{
    int64_t lanes[4];
    sp_lane_ids((int64_t[]){0, 1, 2, -1}, NULL, 4, lanes);
    expect_i64(lanes, (int64_t[]){-2, -3, -4, -1}, 4, "lanes");
    sp_lane_ids((int64_t[]){0, 1, 2, -1}, (int64_t[]){-1, 7, -1, 0}, 4, lanes);
    expect_i64(lanes, (int64_t[]){-2, 7, -4, 0}, 4, "lanes");
    sp_lane_ids((int64_t[]){0, 1, 5, -1}, (int64_t[]){0, -1, 3, -1}, 4, lanes);
    expect_i64(lanes, (int64_t[]){0, -3, 3, -1}, 4, "lanes");
    cr_assert_eq(sp_lane_id(4, -1), -6);
    cr_assert_eq(sp_lane_id(-1, -1), -1);
}

Test(lanes, tasks_take_precedence_over_threads)
{
    /* Same thread, two tasks overlapping in time: separate lanes. */
    int64_t start[] = {0, 5, 6}, end[] = {10, 15, 8};
    uint32_t region[] = {0, 0, 1};
    int64_t threads[] = {0, 0, 0}, tasks[] = {1, 2, 2};
    sp_call_input in = {.n = 3, .start = start, .end = end, .region = region,
                        .thread_ids = threads, .task_ids = tasks};
    sp_calls c;
    cr_assert_eq(sp_calls_build(&in, &c, err, sizeof err), 0, "%s", err);
    expect_i64(c.lane, (int64_t[]){1, 2, 2}, 3, "lane");
    expect_i64(c.parent, (int64_t[]){-1, -1, 1}, 3, "parent");
    expect_i64(c.exclusive, (int64_t[]){10, 8, 2}, 3, "exclusive");
    sp_calls_free(&c);
}

Test(lanes, split_by_lane)
{
    static const char *const names[] = {"outer", "inner"};
    int64_t start[] = {0, 10, 20, 30}, end[] = {100, 110, 40, 50};
    uint32_t region[] = {0, 0, 1, 1};
    int64_t threads[] = {0, 1, 0, 1};
    sp_calls c = build_ok(4, start, end, region, names, 2, threads);
    /* Global ids: parents are global positions on the same lane. */
    expect_i64(c.parent, (int64_t[]){-1, -1, 0, 1}, 4, "parent");
    sp_lane_part *parts;
    long count = sp_split_by_lane(&c, &parts);
    cr_assert_eq(count, 2);
    cr_assert_eq(parts[0].lane, -3);
    cr_assert_eq(parts[1].lane, -2);
    for (long p = 0; p < count; p++) {
        cr_assert_eq(parts[p].calls.n, 2);
        expect_i64(parts[p].calls.parent, (int64_t[]){-1, 0}, 2, "part parent");
        expect_regions(&parts[p].calls, (uint32_t[]){0, 1}, 2);
        expect_i64(parts[p].calls.lane, (int64_t[]){parts[p].lane, parts[p].lane}, 2, "lane");
        expect_path(&parts[p].calls, names, 1, "outer > inner");
    }
    expect_i64(parts[0].calls.start, (int64_t[]){10, 30}, 2, "thread 1 starts");
    cr_assert_eq(parts[0].calls.input_pos[0], 1);
    cr_assert_eq(parts[0].calls.input_pos[1], 3);
    expect_i64(parts[1].calls.start, (int64_t[]){0, 20}, 2, "thread 0 starts");
    sp_lane_parts_free(parts, count);
    sp_calls_free(&c);
}

Test(lanes, split_single_lane_and_no_lane)
{
    int64_t start[] = {0, 10}, end[] = {100, 20};
    uint32_t region[] = {0, 0};
    int64_t threads[] = {2, 2};
    sp_lane_part *parts;

    sp_calls c = build_ok(2, start, end, region, NULL, 0, threads);
    long count = sp_split_by_lane(&c, &parts);
    cr_assert_eq(count, 1);
    cr_assert_eq(parts[0].lane, -4);
    expect_i64(parts[0].calls.parent, (int64_t[]){-1, 0}, 2, "parent");
    sp_lane_parts_free(parts, count);
    sp_calls_free(&c);

    c = build_ok(2, start, end, region, NULL, 0, NULL);
    count = sp_split_by_lane(&c, &parts);
    cr_assert_eq(count, 1);
    cr_assert_eq(parts[0].lane, -1);
    cr_assert_null(parts[0].calls.lane);
    expect_i64(parts[0].calls.parent, (int64_t[]){-1, 0}, 2, "parent");
    sp_lane_parts_free(parts, count);
    sp_calls_free(&c);
}

/* ------------------------------------------------------------------ */
/* spec §5.2 tie rules                                                 */

Test(ties, zero_length_at_end_is_not_a_child)
{
    int64_t start[] = {0, 100}, end[] = {100, 100};
    uint32_t region[] = {0, 1};
    sp_calls c = build_ok(2, start, end, region, NULL, 0, NULL);
    expect_depths(&c, (uint32_t[]){0, 0}, 2);
    expect_i64(c.parent, (int64_t[]){-1, -1}, 2, "parent");
    sp_calls_free(&c);
}

Test(ties, zero_length_between_siblings_joins_the_later)
{
    static const char *const names[] = {"a", "b", "z"};
    int64_t start[] = {10, 0, 10}, end[] = {10, 10, 20};
    uint32_t region[] = {2, 0, 1};
    sp_calls c = build_ok(3, start, end, region, names, 3, NULL);
    expect_regions(&c, (uint32_t[]){0, 1, 2}, 3);
    expect_i64(c.parent, (int64_t[]){-1, -1, 1}, 3, "parent");
    expect_path(&c, names, 2, "b > z");
    sp_calls_free(&c);
}

Test(ties, identical_intervals_nest_in_input_order)
{
    static const char *const names[] = {"a", "b"};
    int64_t start[] = {0, 0}, end[] = {10, 10};
    sp_calls c = build_ok(2, start, end, (uint32_t[]){0, 1}, names, 2, NULL);
    expect_regions(&c, (uint32_t[]){0, 1}, 2);
    expect_i64(c.parent, (int64_t[]){-1, 0}, 2, "parent");
    expect_i64(c.exclusive, (int64_t[]){0, 10}, 2, "exclusive");
    sp_calls_free(&c);

    c = build_ok(2, start, end, (uint32_t[]){1, 0}, names, 2, NULL);
    expect_regions(&c, (uint32_t[]){1, 0}, 2);
    expect_i64(c.parent, (int64_t[]){-1, 0}, 2, "parent");
    sp_calls_free(&c);
}

Test(ties, identical_zero_length_calls_nest)
{
    int64_t start[] = {5, 5, 5}, end[] = {5, 5, 5};
    uint32_t region[] = {0, 1, 2};
    sp_calls c = build_ok(3, start, end, region, NULL, 0, NULL);
    expect_regions(&c, (uint32_t[]){0, 1, 2}, 3);
    expect_i64(c.parent, (int64_t[]){-1, 0, 1}, 3, "parent");
    expect_depths(&c, (uint32_t[]){0, 1, 2}, 3);
    sp_calls_free(&c);
}

Test(ties, child_may_end_with_its_parent)
{
    int64_t start[] = {0, 40}, end[] = {100, 100};
    uint32_t region[] = {0, 1};
    sp_calls c = build_ok(2, start, end, region, NULL, 0, NULL);
    expect_i64(c.parent, (int64_t[]){-1, 0}, 2, "parent");
    expect_i64(c.exclusive, (int64_t[]){40, 60}, 2, "exclusive");
    sp_calls_free(&c);
}

Test(ties, extreme_and_negative_timestamps)
{
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    int64_t start[] = {hi - 10, -1, lo, -5, lo + 1, 3}, end[] = {hi, 0, lo + 5, 4, lo + 1, 3};
    uint32_t region[] = {0, 1, 2, 3, 4, 5};
    sp_calls c = build_ok(6, start, end, region, NULL, 0, NULL);
    expect_i64(c.start, (int64_t[]){lo, lo + 1, -5, -1, 3, hi - 10}, 6, "start");
    expect_i64(c.parent, (int64_t[]){-1, 0, -1, 2, 2, -1}, 6, "parent");
    expect_i64(c.exclusive, (int64_t[]){5, 0, 8, 1, 0, 10}, 6, "exclusive");
    sp_calls_free(&c);
}

/* ------------------------------------------------------------------ */
/* helpers on a reconstruction                                         */

Test(walk, exclusive_totals)
{
    int64_t start[] = {0, 200, 10}, end[] = {100, 300, 40};
    uint32_t region[] = {0, 0, 1};
    sp_calls c = build_ok(3, start, end, region, NULL, 0, NULL);
    int64_t totals[3] = {-7, -7, -7};
    sp_exclusive_totals(&c, 3, totals);
    expect_i64(totals, (int64_t[]){170, 30, 0}, 3, "totals");
    sp_calls_free(&c);
}

Test(walk, children_in_start_order)
{
    int64_t start[] = {0, 10, 50, 15, 200}, end[] = {100, 40, 90, 20, 300};
    uint32_t region[] = {0, 1, 1, 2, 0};
    sp_calls c = build_ok(5, start, end, region, NULL, 0, NULL);
    int64_t first_child[5], next_sibling[5], first_root;
    sp_calls_children(&c, first_child, next_sibling, &first_root);
    cr_assert_eq(first_root, 0);
    cr_assert_eq(next_sibling[0], 4);
    cr_assert_eq(next_sibling[4], -1);
    cr_assert_eq(first_child[0], 1);
    cr_assert_eq(next_sibling[1], 3);
    cr_assert_eq(next_sibling[3], -1);
    cr_assert_eq(first_child[1], 2);
    cr_assert_eq(first_child[2], -1);
    cr_assert_eq(first_child[3], -1);
    cr_assert_eq(first_child[4], -1);
    sp_calls_free(&c);
}

Test(walk, call_path_truncates_and_reports_length)
{
    static const char *const names[] = {"outer", "inner", "leaf"};
    int64_t start[] = {0, 10, 15}, end[] = {100, 40, 20};
    uint32_t region[] = {0, 1, 2};
    sp_calls c = build_ok(3, start, end, region, names, 3, NULL);
    char buf[10];
    memset(buf, 'x', sizeof buf);
    cr_assert_eq(sp_call_path(&c, names, 2, NULL, buf, sizeof buf), 20);
    cr_assert_str_eq(buf, "outer > i");
    cr_assert_eq(sp_call_path(&c, names, 2, ";", buf, sizeof buf), 16);
    cr_assert_str_eq(buf, "outer;inn");
    cr_assert_eq(sp_call_path(&c, names, 2, ";", NULL, 0), 16);
    char big[64];
    sp_call_path(&c, NULL, 2, ";", big, sizeof big);
    cr_assert_str_eq(big, "#0;#1;#2");
    sp_calls_free(&c);
}

Test(walk, million_deep_chain_without_recursion)
{
    size_t n = 1000000;
    int64_t *start = malloc(n * sizeof *start), *end = malloc(n * sizeof *end);
    uint32_t *region = calloc(n, sizeof *region);
    cr_assert(start && end && region);
    /* Recording order: the innermost call ends (is appended) first. */
    for (size_t i = 0; i < n; i++) {
        size_t level = n - 1 - i;
        start[i] = (int64_t)level;
        end[i] = (int64_t)(2 * n - level);
    }
    sp_calls c = build_ok(n, start, end, region, NULL, 0, NULL);
    for (size_t k = 0; k < n; k++) {
        cr_assert_eq(c.depth[k], k);
        cr_assert_eq(c.parent[k], (int64_t)k - 1);
        cr_assert_eq(c.exclusive[k], 2); /* every level is 1 ns wider on each side */
    }
    cr_assert_eq(c.call_index[0], n - 1);
    cr_assert_eq(sp_call_path(&c, NULL, n - 1, NULL, NULL, 0), n * 2 + (n - 1) * 3);
    free(start);
    free(end);
    free(region);
    sp_calls_free(&c);
}

/* ------------------------------------------------------------------ */
/* radix sorts on their own                                            */

static uint64_t rng_state;
static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
static uint64_t rnd_below(uint64_t bound) { return bound ? rnd() % bound : 0; }

Test(radix, pairs_match_a_comparison_sort_and_stay_stable)
{
    rng_state = 11;
    size_t sizes[] = {2, 3, 100, 20000, 70000};
    for (size_t t = 0; t < 3 * COUNT(sizes); t++) {
        size_t n = sizes[t / 3], pattern = t % 3;
        uint64_t *key = malloc(n * 8), *idx = malloc(n * 8), *ks = malloc(n * 8), *is = malloc(n * 8);
        cr_assert(key && idx && ks && is);
        for (size_t i = 0; i < n; i++) {
            /* Few distinct values around 0; keys differing only in a few
             * high bits (most digits skipped); mixed full-range values. */
            int64_t v = pattern == 0 ? (int64_t)rnd_below(7) - 3
                      : pattern == 1 ? (int64_t)(rnd_below(4) << 57) - INT64_C(5)
                      : (i & 1) ? (int64_t)rnd() : (int64_t)(rnd() >> 20) + INT64_MIN / 2;
            key[i] = sp_radix_key_ascending(v);
            idx[i] = i;
        }
        cr_assert_eq(sp_radix_sort_pairs(n, &key, &idx, &ks, &is), 0);
        for (size_t i = 1; i < n; i++) {
            cr_assert(key[i - 1] <= key[i], "n=%zu/%zu: keys out of order at %zu", n, pattern, i);
            if (key[i - 1] == key[i])
                cr_assert(idx[i - 1] < idx[i], "n=%zu/%zu: not stable at %zu", n, pattern, i);
        }
        free(key); free(idx); free(ks); free(is);
    }
}

Test(radix, indices_by_column_descending_and_stable)
{
    rng_state = 12;
    size_t n = 50000;
    int64_t *col = malloc(n * 8);
    uint64_t *idx = malloc(n * 8), *spare = malloc(n * 8);
    cr_assert(col && idx && spare);
    for (size_t i = 0; i < n; i++) {
        col[i] = (i & 1) ? (int64_t)rnd_below(1000) - 500 : (int64_t)rnd();
        idx[i] = i;
    }
    for (int desc = 0; desc <= 1; desc++) {
        for (size_t i = 0; i < n; i++)
            idx[i] = i;
        const uint64_t *out = sp_radix_sort_indices(n, col, desc, idx, spare);
        cr_assert_not_null(out);
        for (size_t i = 1; i < n; i++) {
            int64_t a = col[out[i - 1]], b = col[out[i]];
            cr_assert(desc ? a >= b : a <= b, "order at %zu", i);
            if (a == b)
                cr_assert(out[i - 1] < out[i], "stability at %zu", i);
        }
    }
    free(col); free(idx); free(spare);
}

/* ------------------------------------------------------------------ */
/* naive reference                                                     */

typedef struct ref_call {
    int64_t start, end, lane;
    size_t pos;
} ref_call;

static int ref_order(const void *pa, const void *pb)
{
    const ref_call *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1;
    return a->pos < b->pos ? -1 : (a->pos > b->pos);
}

/* Does sorted call j (earlier) enclose sorted call i under the §5.2 rules? */
static int ref_encloses(const ref_call *j, const ref_call *i)
{
    return j->lane == i->lane && i->end <= j->end &&
           (i->start < j->end || j->start == j->end);
}

/* Reference reconstruction by exhaustive scans.  Returns 0 with order
 * (input position per sorted position), parent and exclusive filled, -1 if
 * two calls on one lane cross, -2 if a call ends before it starts. */
static int ref_build(size_t n, const int64_t *start, const int64_t *end,
                     const int64_t *lane, uint64_t *order, int64_t *parent,
                     int64_t *exclusive, uint32_t *depth)
{
    for (size_t i = 0; i < n; i++)
        if (end[i] < start[i])
            return -2;
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++)
            if ((!lane || lane[a] == lane[b]) && start[a] < start[b] && start[b] < end[a] &&
                end[a] < end[b])
                return -1;
    ref_call *calls = malloc(n * sizeof *calls);
    cr_assert(n == 0 || calls);
    for (size_t i = 0; i < n; i++)
        calls[i] = (ref_call){start[i], end[i], lane ? lane[i] : -1, i};
    qsort(calls, n, sizeof *calls, ref_order);
    for (size_t i = 0; i < n; i++) {
        order[i] = calls[i].pos;
        parent[i] = -1;
        for (size_t j = i; j-- > 0;)
            if (ref_encloses(&calls[j], &calls[i])) {
                parent[i] = (int64_t)j;
                break;
            }
        depth[i] = parent[i] < 0 ? 0 : depth[parent[i]] + 1;
        exclusive[i] = calls[i].end - calls[i].start;
    }
    for (size_t i = 0; i < n; i++)
        if (parent[i] >= 0)
            exclusive[parent[i]] -= calls[i].end - calls[i].start;
    free(calls);
    return 0;
}

/* Checks a reconstruction against the reference on the same input. */
static void compare_with_reference(size_t n, const int64_t *start, const int64_t *end,
                                   const uint32_t *region, const int64_t *lane_of_input,
                                   const int64_t *threads, const int64_t *tasks)
{
    uint64_t *order = malloc((n + 1) * sizeof *order);
    int64_t *parent = malloc((n + 1) * sizeof *parent), *excl = malloc((n + 1) * sizeof *excl);
    uint32_t *depth = malloc((n + 1) * sizeof *depth);
    cr_assert(order && parent && excl && depth);
    int ref = ref_build(n, start, end, lane_of_input, order, parent, excl, depth);

    sp_call_input in = {.n = n, .start = start, .end = end, .region = region,
                        .thread_ids = threads, .task_ids = tasks};
    sp_calls c;
    err[0] = '\0';
    int rc = sp_calls_build(&in, &c, err, sizeof err);
    if (ref == -2) {
        cr_assert_eq(rc, -1);
        cr_assert(strstr(err, "ends before it starts"), "%s", err);
    } else if (ref == -1) {
        cr_assert_eq(rc, -1, "crossing calls accepted (n=%zu)", n);
        cr_assert(strstr(err, "not properly nested"), "%s", err);
    } else {
        cr_assert_eq(rc, 0, "valid forest rejected (n=%zu): %s", n, err);
        for (size_t k = 0; k < n; k++) {
            cr_assert_eq(c.input_pos[k], order[k], "order[%zu]", k);
            cr_assert_eq(c.parent[k], parent[k], "parent[%zu] (n=%zu)", k, n);
            cr_assert_eq(c.depth[k], depth[k], "depth[%zu]", k);
            cr_assert_eq(c.exclusive[k], excl[k], "exclusive[%zu]", k);
            cr_assert_eq(c.start[k], start[order[k]]);
            cr_assert_eq(c.end[k], end[order[k]]);
            cr_assert_eq(c.region[k], region[order[k]]);
            if (lane_of_input)
                cr_assert_eq(c.lane[k], lane_of_input[order[k]]);
        }
        sp_calls_free(&c);
    }
    free(order); free(parent); free(excl); free(depth);
}

/* ------------------------------------------------------------------ */
/* random forests                                                      */

typedef struct forest {
    size_t n;
    int64_t *start, *end, *thread, *task, *lane, *parent; /* parent: input position */
    int64_t *ident; /* which generated call: survives reordering */
    uint32_t *region, *depth;
} forest;

static void forest_alloc(forest *f, size_t n)
{
    f->n = n;
    f->start = malloc(n * 8); f->end = malloc(n * 8); f->thread = malloc(n * 8);
    f->task = malloc(n * 8); f->lane = malloc(n * 8); f->parent = malloc(n * 8);
    f->region = malloc(n * 4); f->depth = malloc(n * 4); f->ident = malloc(n * 8);
    cr_assert(f->start && f->end && f->thread && f->task && f->lane && f->parent &&
              f->region && f->depth && f->ident);
}

static void forest_free(forest *f)
{
    free(f->start); free(f->end); free(f->thread); free(f->task); free(f->lane);
    free(f->parent); free(f->region); free(f->depth); free(f->ident);
}

/* A random depth-first walk per lane: push = a call starts, pop = it ends.
 * With `unambiguous`, time gaps of 0 are only used where the tie rules give
 * back the generated tree (so it is the expected answer); otherwise ties are
 * taken freely (only the naive reference knows the answer).  Calls are
 * stored in recording order (when they end), lane after lane. */
static void forest_generate(forest *f, size_t n, unsigned lanes, unsigned regions,
                            unsigned push_percent, int64_t max_gap, int unambiguous)
{
    forest_alloc(f, n);
    int64_t *stack = malloc(n * 8), *node_of = malloc(n * 8);
    int64_t *open_start = malloc(n * 8);
    cr_assert(stack && node_of && open_start);
    size_t made = 0, stored = 0;
    for (unsigned l = 0; l < lanes; l++) {
        size_t quota = (n - made) / (lanes - l);
        int64_t thread = l % 3 == 2 ? (int64_t)rnd_below(4) : (int64_t)l;
        int64_t task = l % 3 == 2 ? 100 + (int64_t)l : -1;
        int64_t t = (int64_t)rnd_below(1000) - 500; /* lanes overlap in time */
        size_t top = 0, opened = 0;
        enum { NONE, PUSH, POP } prev = NONE;
        int64_t prev_node = -1; /* call whose event came last */
        while (opened < quota || top > 0) {
            int push = opened < quota && (top == 0 || rnd_below(100) < push_percent);
            int64_t min_gap = 0;
            if (push) {
                if (unambiguous && prev == POP && f->start[prev_node] == f->end[prev_node])
                    min_gap = 1; /* a zero-length call would nest into the next one */
                t += min_gap + (int64_t)rnd_below((uint64_t)max_gap + 1);
                int64_t id = (int64_t)(made + opened++);
                open_start[id] = t;
                f->start[id] = t;
                f->end[id] = t; /* provisional, for zero-length checks */
                f->parent[id] = top ? stack[top - 1] : -1;
                f->depth[id] = top ? f->depth[stack[top - 1]] + 1 : 0;
                f->region[id] = (uint32_t)rnd_below(regions);
                f->thread[id] = thread;
                f->task[id] = task;
                f->lane[id] = sp_lane_id(thread, task);
                stack[top++] = id;
                prev = PUSH;
                prev_node = id;
            } else {
                int64_t id = stack[--top];
                if (unambiguous && prev == POP &&
                    (f->start[prev_node] == f->end[prev_node] ||
                     f->start[prev_node] == f->start[id]))
                    min_gap = 1; /* child at parent's end, or identical to it */
                t += min_gap + (int64_t)rnd_below((uint64_t)max_gap + 1);
                f->end[id] = t;
                node_of[stored++] = id;
                prev = POP;
                prev_node = id;
            }
        }
        made += opened;
    }
    cr_assert_eq(made, n);
    /* Renumber nodes into recording order. */
    forest g;
    forest_alloc(&g, n);
    int64_t *new_id = open_start;
    for (size_t i = 0; i < n; i++)
        new_id[node_of[i]] = (int64_t)i;
    for (size_t i = 0; i < n; i++) {
        int64_t o = node_of[i];
        g.start[i] = f->start[o]; g.end[i] = f->end[o]; g.thread[i] = f->thread[o];
        g.task[i] = f->task[o]; g.lane[i] = f->lane[o]; g.region[i] = f->region[o];
        g.depth[i] = f->depth[o];
        g.ident[i] = (int64_t)i;
        g.parent[i] = f->parent[o] < 0 ? -1 : new_id[f->parent[o]];
    }
    forest_free(f);
    *f = g;
    free(stack); free(node_of); free(open_start);
}

/* Reorders the input (all columns) by `perm` (new position -> old). */
static void forest_permute(forest *f, const size_t *perm)
{
    forest g;
    forest_alloc(&g, f->n);
    size_t *inverse = malloc(f->n * sizeof *inverse);
    cr_assert(inverse);
    for (size_t i = 0; i < f->n; i++)
        inverse[perm[i]] = i;
    for (size_t i = 0; i < f->n; i++) {
        size_t o = perm[i];
        g.start[i] = f->start[o]; g.end[i] = f->end[o]; g.thread[i] = f->thread[o];
        g.task[i] = f->task[o]; g.lane[i] = f->lane[o]; g.region[i] = f->region[o];
        g.depth[i] = f->depth[o];
        g.ident[i] = f->ident[o];
        g.parent[i] = f->parent[o] < 0 ? -1 : (int64_t)inverse[f->parent[o]];
    }
    free(inverse);
    forest_free(f);
    *f = g;
}

static void shuffle(size_t *perm, size_t n)
{
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = rnd_below(i), t = perm[i - 1];
        perm[i - 1] = perm[j];
        perm[j] = t;
    }
}

Test(property, small_forests_with_free_ties_match_reference)
{
    rng_state = 21;
    for (int round = 0; round < 300; round++) {
        size_t n = 1 + rnd_below(round < 250 ? 40 : 1500);
        unsigned lanes = 1 + (unsigned)rnd_below(3);
        forest f;
        forest_generate(&f, n, lanes, 1 + (unsigned)rnd_below(4), 30 + (unsigned)rnd_below(50),
                        (int64_t)rnd_below(3), 0);
        size_t *perm = malloc(n * sizeof *perm);
        shuffle(perm, n);
        if (round % 2)
            forest_permute(&f, perm);
        compare_with_reference(n, f.start, f.end, f.region, f.lane, f.thread, f.task);
        free(perm);
        forest_free(&f);
    }
}

Test(property, arbitrary_small_intervals_match_reference)
{
    /* Mostly invalid sets: every crossing must be caught, every valid set
     * must be reconstructed like the reference. */
    rng_state = 22;
    int64_t start[8], end[8], lane[8];
    uint32_t region[8] = {0};
    for (int round = 0; round < 20000; round++) {
        size_t n = 1 + rnd_below(7);
        int with_lanes = round % 3 == 0;
        for (size_t i = 0; i < n; i++) {
            start[i] = (int64_t)rnd_below(6);
            end[i] = start[i] + (int64_t)rnd_below(5) - (round % 50 == 0);
            lane[i] = (int64_t)rnd_below(2);
            region[i] = (uint32_t)rnd_below(2);
        }
        int64_t lanes[8];
        sp_lane_ids(lane, NULL, n, lanes);
        compare_with_reference(n, start, end, region, with_lanes ? lanes : NULL,
                               with_lanes ? lane : NULL, NULL);
    }
}

Test(property, long_runs_of_equal_starts)
{
    /* Calls sharing a start nest by length (runs beyond the insertion-sort
     * cut-off take the radix path); equal lengths nest in input order. */
    rng_state = 24;
    enum { N = 900 };
    static int64_t start[N], end[N], threads[N], lanes[N];
    static uint32_t region[N];
    for (int round = 0; round < 4; round++) {
        for (size_t i = 0; i < N; i++) {
            start[i] = (int64_t)(i % 3) * 100000;
            end[i] = start[i] + (int64_t)rnd_below(round < 2 ? 60 : 100000);
            threads[i] = (int64_t)rnd_below(2);
            region[i] = (uint32_t)rnd_below(3);
        }
        sp_lane_ids(threads, NULL, N, lanes);
        compare_with_reference(N, start, end, region, round & 1 ? lanes : NULL,
                               round & 1 ? threads : NULL, NULL);
    }
}

Test(property, hundreds_of_lanes)
{
    /* More lanes than the lane map may hold: the calls are grouped by lane
     * instead; the result must not change. */
    rng_state = 25;
    for (int round = 0; round < 3; round++) {
        forest f;
        forest_generate(&f, 1000, 300 + 100 * (unsigned)round, 4, 55, 3, round == 2);
        size_t perm[1000];
        shuffle(perm, 1000);
        forest_permute(&f, perm);
        compare_with_reference(f.n, f.start, f.end, f.region, f.lane, f.thread, f.task);
        forest_free(&f);
    }
}

Test(property, heavy_ties_use_the_run_sort)
{
    /* Many equal starts (runs longer than the insertion-sort cut-off). */
    rng_state = 23;
    for (int round = 0; round < 6; round++) {
        forest f;
        forest_generate(&f, 1200, 2, 3, 70, 0 + (round & 1), 0);
        size_t perm[1200];
        shuffle(perm, 1200);
        forest_permute(&f, perm);
        compare_with_reference(f.n, f.start, f.end, f.region, f.lane, f.thread, f.task);
        forest_free(&f);
    }
}

/* Checks the invariants of a valid reconstruction of forest f, and that it
 * reproduces the generated tree. */
static void check_against_generated(const forest *f, const sp_calls *c, unsigned regions)
{
    size_t n = f->n;
    int64_t *id_of = malloc(n * 8);
    cr_assert(id_of);
    int64_t root_sum = 0, excl_sum = 0;
    int64_t *totals = calloc(regions, 8), *want_totals = calloc(regions, 8);
    cr_assert(totals && want_totals);
    for (size_t k = 0; k < n; k++)
        id_of[k] = (int64_t)c->input_pos[k];
    for (size_t k = 0; k < n; k++) {
        int64_t node = id_of[k];
        int64_t p = c->parent[k];
        cr_assert_eq(p < 0 ? -1 : id_of[p], f->parent[node], "parent of node %" PRId64, node);
        cr_assert_eq(c->depth[k], f->depth[node]);
        cr_assert_eq(c->lane[k], f->lane[node]);
        if (k > 0)
            cr_assert(c->start[k - 1] < c->start[k] ||
                      (c->start[k - 1] == c->start[k] && c->end[k - 1] >= c->end[k]),
                      "sorted order at %zu", k);
        int64_t inclusive = c->end[k] - c->start[k];
        cr_assert(c->exclusive[k] >= 0 && c->exclusive[k] <= inclusive);
        excl_sum += c->exclusive[k];
        if (p < 0)
            root_sum += inclusive;
        else
            cr_assert(p < (int64_t)k && c->start[p] <= c->start[k] && c->end[k] <= c->end[p]);
        want_totals[c->region[k]] += c->exclusive[k];
    }
    cr_assert_eq(excl_sum, root_sum);
    sp_exclusive_totals(c, regions, totals);
    expect_i64(totals, want_totals, regions, "totals");
    /* Exclusive from the generated tree directly. */
    int64_t *gen_excl = malloc(n * 8);
    cr_assert(gen_excl);
    for (size_t i = 0; i < n; i++)
        gen_excl[i] = f->end[i] - f->start[i];
    for (size_t i = 0; i < n; i++)
        if (f->parent[i] >= 0)
            gen_excl[f->parent[i]] -= f->end[i] - f->start[i];
    for (size_t k = 0; k < n; k++)
        cr_assert_eq(c->exclusive[k], gen_excl[id_of[k]]);
    free(gen_excl); free(id_of); free(totals); free(want_totals);
}

Test(property, small_unambiguous_forests_reproduce_the_tree)
{
    rng_state = 31;
    for (int round = 0; round < 200; round++) {
        size_t n = 1 + rnd_below(300);
        unsigned regions = 1 + (unsigned)rnd_below(5);
        forest f;
        forest_generate(&f, n, 1 + (unsigned)rnd_below(4), regions, 55, (int64_t)rnd_below(4), 1);
        if (round % 4 == 3) /* lanes far apart: starts span over 2^62 ns */
            for (size_t i = 0; i < n; i++) {
                int64_t shift = (f.lane[i] & 1) ? INT64_C(1) << 61 : -(INT64_C(1) << 61);
                f.start[i] += shift;
                f.end[i] += shift;
            }
        size_t *perm = malloc(n * sizeof *perm);
        shuffle(perm, n);
        forest_permute(&f, perm);
        sp_call_input in = {.n = n, .start = f.start, .end = f.end, .region = f.region,
                            .thread_ids = f.thread, .task_ids = f.task};
        sp_calls c;
        cr_assert_eq(sp_calls_build(&in, &c, err, sizeof err), 0, "%s", err);
        check_against_generated(&f, &c, regions);
        compare_with_reference(n, f.start, f.end, f.region, f.lane, f.thread, f.task);
        sp_calls_free(&c);
        free(perm);
        forest_free(&f);
    }
}

/* Input grouped by region, regions in the order `region_order`, each
 * region's calls in their current relative order; region ids relabelled to
 * the position of the region in that order. */
static void group_by_region(forest *f, const uint32_t *region_order, unsigned regions)
{
    size_t *perm = malloc(f->n * sizeof *perm), at = 0;
    uint32_t *label = malloc(regions * sizeof *label);
    cr_assert(perm && label);
    for (unsigned r = 0; r < regions; r++) {
        label[region_order[r]] = r;
        for (size_t i = 0; i < f->n; i++)
            if (f->region[i] == region_order[r])
                perm[at++] = i;
    }
    forest_permute(f, perm);
    for (size_t i = 0; i < f->n; i++)
        f->region[i] = label[f->region[i]];
    free(perm);
    free(label);
}

Test(property, large_forest_independent_of_region_order)
{
    rng_state = 41;
    const size_t n = 100000;
    const unsigned regions = 12;
    forest f;
    forest_generate(&f, n, 5, regions, 52, 3, 1);
    size_t *perm = malloc(n * sizeof *perm);
    shuffle(perm, n);
    forest_permute(&f, perm);

    sp_call_input in = {.n = n, .start = f.start, .end = f.end, .region = f.region,
                        .thread_ids = f.thread, .task_ids = f.task};
    sp_calls a;
    cr_assert_eq(sp_calls_build(&in, &a, err, sizeof err), 0, "%s", err);
    check_against_generated(&f, &a, regions);

    /* The same calls, grouped by region in a shuffled region order. */
    uint32_t order[12];
    size_t rp[12];
    shuffle(rp, regions);
    for (unsigned r = 0; r < regions; r++)
        order[r] = (uint32_t)rp[r];
    forest g = f;
    forest_alloc(&g, n);
    memcpy(g.start, f.start, n * 8); memcpy(g.end, f.end, n * 8);
    memcpy(g.thread, f.thread, n * 8); memcpy(g.task, f.task, n * 8);
    memcpy(g.lane, f.lane, n * 8); memcpy(g.parent, f.parent, n * 8);
    memcpy(g.region, f.region, n * 4); memcpy(g.depth, f.depth, n * 4);
    memcpy(g.ident, f.ident, n * 8);
    group_by_region(&g, order, regions);
    sp_call_input in2 = {.n = n, .start = g.start, .end = g.end, .region = g.region,
                         .thread_ids = g.thread, .task_ids = g.task};
    sp_calls b;
    cr_assert_eq(sp_calls_build(&in2, &b, err, sizeof err), 0, "%s", err);
    check_against_generated(&g, &b, regions);
    /* Every generated call gets the same parent, depth and exclusive time.
     * (Calls on different lanes may be identical intervals, so positions
     * can differ; compare by identity.) */
    size_t *where_a = malloc(n * sizeof *where_a), *where_b = malloc(n * sizeof *where_b);
    cr_assert(where_a && where_b);
    for (size_t k = 0; k < n; k++) {
        where_a[f.ident[a.input_pos[k]]] = k;
        where_b[g.ident[b.input_pos[k]]] = k;
    }
    for (size_t id = 0; id < n; id++) {
        size_t ka = where_a[id], kb = where_b[id];
        int64_t pa = a.parent[ka], pb = b.parent[kb];
        cr_assert_eq(pa < 0, pb < 0);
        if (pa >= 0)
            cr_assert_eq(f.ident[a.input_pos[pa]], g.ident[b.input_pos[pb]]);
        cr_assert_eq(a.depth[ka], b.depth[kb]);
        cr_assert_eq(a.exclusive[ka], b.exclusive[kb]);
        cr_assert_eq(a.call_index[ka], b.call_index[kb], "call index within the region");
        cr_assert_eq(order[b.region[kb]], a.region[ka]);
    }
    free(where_a);
    free(where_b);

    /* Splitting by lane keeps every lane's tree. */
    sp_lane_part *parts;
    long count = sp_split_by_lane(&a, &parts);
    cr_assert_eq(count, 5);
    size_t total = 0;
    for (long p = 0; p < count; p++) {
        const sp_calls *pc = &parts[p].calls;
        if (p > 0)
            cr_assert(parts[p - 1].lane < parts[p].lane);
        for (size_t j = 0; j < pc->n; j++) {
            cr_assert_eq(pc->lane[j], parts[p].lane);
            if (j > 0)
                cr_assert(pc->start[j - 1] <= pc->start[j]);
            int64_t q = pc->parent[j];
            int64_t want = f.parent[pc->input_pos[j]];
            cr_assert_eq(q < 0 ? -1 : (int64_t)pc->input_pos[q], want);
        }
        total += pc->n;
    }
    cr_assert_eq(total, n);
    sp_lane_parts_free(parts, count);

    /* Without the lane columns the overlapping lanes must be rejected. */
    sp_call_input flat = in;
    flat.thread_ids = NULL;
    flat.task_ids = NULL;
    sp_calls none;
    cr_assert_eq(sp_calls_build(&flat, &none, err, sizeof err), -1);
    cr_assert(strstr(err, "not properly nested"), "%s", err);

    sp_calls_free(&a);
    sp_calls_free(&b);
    forest_free(&g);
    forest_free(&f);
    free(perm);
}

Test(property, crossing_intervals_are_always_rejected)
{
    rng_state = 51;
    int rejected = 0;
    for (int round = 0; round < 300; round++) {
        size_t n = 2 + rnd_below(400);
        forest f;
        forest_generate(&f, n, 1 + (unsigned)rnd_below(3), 3, 60, (int64_t)rnd_below(3), 1);
        /* Stretch a child that starts after its parent past the parent's end. */
        size_t pick = rnd_below(n), victim = n;
        for (size_t s = 0; s < n && victim == n; s++) {
            size_t i = (pick + s) % n;
            if (f.parent[i] >= 0 && f.start[i] > f.start[f.parent[i]])
                victim = i;
        }
        if (victim < n) {
            f.end[victim] = f.end[f.parent[victim]] + 1 + (int64_t)rnd_below(5);
            sp_call_input in = {.n = n, .start = f.start, .end = f.end, .region = f.region,
                                .thread_ids = f.thread, .task_ids = f.task};
            sp_calls c;
            cr_assert_eq(sp_calls_build(&in, &c, err, sizeof err), -1,
                         "crossing call %zu accepted (round %d)", victim, round);
            cr_assert(strstr(err, "not properly nested"), "%s", err);
            cr_assert(strstr(err, "starts inside"), "%s", err);
            rejected++;
            if (n <= 300)
                compare_with_reference(n, f.start, f.end, f.region, f.lane, f.thread, f.task);
        }
        forest_free(&f);
    }
    cr_assert_gt(rejected, 200);
}
