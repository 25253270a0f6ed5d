/* test_report.c - the numbers of `scopeprof report` on hand-built profiles:
 * tree by call path, flat table and its orders, cross-rank statistics,
 * thread table, fallbacks, clock offsets and duration formatting. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/analysis.h"
#include "scopeprof/report.h"

/* ---- building profiles by hand ------------------------------------------- */

typedef struct ev {
    uint32_t rank;
    const char *region;
    int64_t start, end;
    int64_t thread;
} ev;

/* Rows grouped by (rank, region) in first-seen order per rank, ranks
 * ascending; events of a row in the order given. */
static sp_profile *build(const ev *evs, size_t n, int with_threads)
{
    sp_profile *p = sp_profile_new();
    cr_assert_not_null(p);
    p->start = malloc(n * sizeof *p->start);
    p->end = malloc(n * sizeof *p->end);
    if (with_threads)
        p->thread_ids = malloc(n * sizeof *p->thread_ids);
    p->rows = calloc(n, sizeof *p->rows);
    uint32_t max_rank = 0;
    for (size_t i = 0; i < n; i++)
        if (evs[i].rank > max_rank)
            max_rank = evs[i].rank;
    char *used = calloc(n, 1);
    for (uint32_t rank = 0; rank <= max_rank; rank++) {
        for (size_t i = 0; i < n; i++) {
            if (used[i] || evs[i].rank != rank)
                continue;
            sp_row *row = &p->rows[p->num_rows++];
            int64_t region = sp_profile_intern_name(p, evs[i].region);
            cr_assert_geq(region, 0);
            row->region = (uint32_t)region;
            row->rank = rank;
            row->offset = p->num_events;
            row->source_line = -1;
            row->exclusive_total = -1;
            row->source_file = strdup("");
            row->source_text = strdup("");
            row->tags = strdup("[]");
            row->event_metadata = strdup("[]");
            for (size_t j = i; j < n; j++) {
                if (used[j] || evs[j].rank != rank || strcmp(evs[j].region, evs[i].region))
                    continue;
                used[j] = 1;
                p->start[p->num_events] = evs[j].start;
                p->end[p->num_events] = evs[j].end;
                if (with_threads)
                    p->thread_ids[p->num_events] = evs[j].thread;
                p->num_events++;
                row->count++;
            }
            sp_summary_compute(p->start + row->offset, p->end + row->offset, NULL, row->count,
                               &row->stats);
        }
    }
    free(used);
    p->num_ranks = max_rank + 1;
    return p;
}

static void add_thread(sp_profile *p, uint32_t rank, int64_t index, const char *name,
                       int64_t start, int64_t end, int64_t cpu)
{
    p->has_thread_table = 1;
    p->threads = realloc(p->threads, (p->num_threads + 1) * sizeof *p->threads);
    p->threads[p->num_threads++] = (sp_thread_row){
        .rank = rank, .index = index, .ident = 100 + index, .native_id = 200 + index,
        .start_ns = start, .end_ns = end, .cpu_ns = cpu, .name = strdup(name)};
}

static uint32_t region_of(const sp_profile *p, const char *name)
{
    for (size_t r = 0; r < p->num_names; r++)
        if (!strcmp(p->names[r], name))
            return (uint32_t)r;
    cr_assert_fail("no region %s", name);
    return 0;
}

/* Two ranks; rank 0 has a main thread and a worker running `solve`.
 *   rank 0 thread 0: main [0,1000] > solve [100,400], solve [500,900], io [950,1000]
 *   rank 0 thread 1: solve [200,700] > assemble [300,400]
 *   rank 1 thread 0: main [0,2000] > solve [100,1900] > assemble [200,500] */
static const ev two_ranks[] = {
    {0, "main", 0, 1000, 0},    {0, "solve", 100, 400, 0}, {0, "solve", 500, 900, 0},
    {0, "io", 950, 1000, 0},    {0, "solve", 200, 700, 1}, {0, "assemble", 300, 400, 1},
    {1, "main", 0, 2000, 0},    {1, "solve", 100, 1900, 0}, {1, "assemble", 200, 500, 0},
};

static sp_profile *two_rank_profile(void)
{
    sp_profile *p = build(two_ranks, sizeof two_ranks / sizeof two_ranks[0], 1);
    add_thread(p, 0, 0, "MainThread", 0, 1000, 800);
    add_thread(p, 0, 1, "worker", 150, 750, 300);
    add_thread(p, 1, 0, "MainThread", 0, 2000, 1000);
    return p;
}

static void build_report(const sp_profile *p, const sp_report_options *opt, sp_report *r)
{
    char err[256] = "";
    cr_assert_eq(sp_report_build(p, opt, r, err, sizeof err), 0, "%s", err);
}

static void expect_node(const sp_report_tree *t, const sp_profile *p, const char *path,
                        uint64_t calls, int64_t incl, int64_t excl, int64_t min, int64_t max)
{
    int64_t n = sp_report_tree_find(t, p, path);
    cr_assert_geq(n, 0, "no node %s", path);
    const sp_report_node *node = &t->nodes[n];
    cr_expect_eq(node->calls, calls, "%s calls %llu", path, (unsigned long long)node->calls);
    cr_expect_eq(node->inclusive, incl, "%s inclusive %lld", path, (long long)node->inclusive);
    cr_expect_eq(node->exclusive, excl, "%s exclusive %lld", path, (long long)node->exclusive);
    cr_expect_eq(node->minimum, min, "%s min", path);
    cr_expect_eq(node->maximum, max, "%s max", path);
}

static const sp_report_flat_row *flat_of(const sp_report *r, const sp_profile *p,
                                         const char *name)
{
    const sp_report_flat_row *f = sp_report_flat_find(r, region_of(p, name));
    cr_assert_not_null(f, "no flat row %s", name);
    return f;
}

static const sp_report_cross_row *cross_of(const sp_report *r, const sp_profile *p,
                                           const char *name)
{
    uint32_t region = region_of(p, name);
    for (size_t k = 0; k < r->num_cross; k++)
        if (r->cross[k].region == region)
            return &r->cross[k];
    cr_assert_fail("no cross-rank row %s", name);
    return NULL;
}

/* ---- tree ------------------------------------------------------------------- */

Test(report_tree, merges_identical_paths_across_lanes_and_ranks)
{
    sp_profile *p = two_rank_profile();
    sp_report r;
    build_report(p, NULL, &r);
    cr_assert(r.has_tree);
    cr_expect_eq(r.tree.num_ranks, 2);
    cr_expect_eq(r.tree.num_nodes, 6);
    expect_node(&r.tree, p, "main", 2, 3000, 450, 1000, 2000);
    expect_node(&r.tree, p, "main > solve", 3, 2500, 2200, 300, 1800);
    expect_node(&r.tree, p, "main > solve > assemble", 1, 300, 300, 300, 300);
    expect_node(&r.tree, p, "main > io", 1, 50, 50, 50, 50);
    expect_node(&r.tree, p, "solve", 1, 500, 400, 500, 500);
    expect_node(&r.tree, p, "solve > assemble", 1, 100, 100, 100, 100);
    cr_expect_eq(r.num_calls, 9);
    cr_expect_eq(r.wall_ns, 2000);
    sp_report_free(&r);
    sp_profile_free(p);
}

Test(report_tree, children_ordered_by_inclusive_time)
{
    sp_profile *p = two_rank_profile();
    sp_report r;
    build_report(p, NULL, &r);
    /* roots: main (3000) before solve (500) */
    int64_t first = r.tree.first_root;
    cr_assert_geq(first, 0);
    cr_expect_str_eq(p->names[r.tree.nodes[first].region], "main");
    int64_t second = r.tree.nodes[first].next_sibling;
    cr_assert_geq(second, 0);
    cr_expect_str_eq(p->names[r.tree.nodes[second].region], "solve");
    cr_expect_eq(r.tree.nodes[second].next_sibling, -1);
    /* main's children: solve (2500) then io (50) */
    int64_t c = r.tree.nodes[first].first_child;
    cr_assert_geq(c, 0);
    cr_expect_str_eq(p->names[r.tree.nodes[c].region], "solve");
    c = r.tree.nodes[c].next_sibling;
    cr_assert_geq(c, 0);
    cr_expect_str_eq(p->names[r.tree.nodes[c].region], "io");
    cr_expect_eq(r.tree.nodes[c].depth, 1);
    sp_report_free(&r);
    sp_profile_free(p);
}

Test(report_tree, one_tree_per_rank_and_lane)
{
    sp_profile *p = two_rank_profile();
    sp_report_options opt = {.per_lane = 1};
    sp_report r;
    build_report(p, &opt, &r);
    cr_assert_eq(r.num_lane_trees, 3);
    /* rank 0: thread 0 (lane -2) before thread 1 (lane -3); then rank 1 */
    cr_expect_eq(r.lane_trees[0].rank, 0);
    cr_expect_eq(r.lane_trees[0].lane, -2);
    cr_expect_eq(r.lane_trees[1].rank, 0);
    cr_expect_eq(r.lane_trees[1].lane, -3);
    cr_expect_eq(r.lane_trees[2].rank, 1);
    cr_expect_eq(r.lane_trees[2].lane, -2);
    expect_node(&r.lane_trees[1], p, "solve > assemble", 1, 100, 100, 100, 100);
    cr_expect_eq(sp_report_tree_find(&r.lane_trees[1], p, "main"), -1);
    expect_node(&r.lane_trees[0], p, "main > solve", 2, 700, 700, 300, 400);
    expect_node(&r.lane_trees[2], p, "main > solve > assemble", 1, 300, 300, 300, 300);
    char label[64];
    sp_lane_label(p, 0, r.lane_trees[1].lane, label, sizeof label);
    cr_expect_str_eq(label, "worker");
    sp_report_free(&r);
    sp_profile_free(p);
}

Test(report_tree, selection_ranks_and_include)
{
    sp_profile *p = two_rank_profile();
    sp_selection sel;
    sp_selection_init(&sel);
    char err[256];
    cr_assert_eq(sp_selection_set_include(&sel, "^(solve|assemble)$", err, sizeof err), 0);
    sp_report_options opt = {.selection = &sel};
    sp_report r;
    build_report(p, &opt, &r);
    /* main is gone: its solve calls become roots and merge with the worker's */
    cr_expect_eq(sp_report_tree_find(&r.tree, p, "main"), -1);
    expect_node(&r.tree, p, "solve", 4, 3000, 2600, 300, 1800);
    expect_node(&r.tree, p, "solve > assemble", 2, 400, 400, 100, 300);
    cr_expect_eq(r.num_calls, 6);
    sp_report_free(&r);

    cr_assert_eq(sp_selection_add_ranks(&sel, "1", err, sizeof err), 0);
    build_report(p, &opt, &r);
    cr_expect_eq(r.num_ranks, 1);
    cr_expect_eq(r.ranks[0], 1);
    expect_node(&r.tree, p, "solve", 1, 1800, 1500, 1800, 1800);
    cr_expect_eq(r.num_cross, 0, "one rank: no cross-rank table");
    cr_expect_eq(r.num_threads, 1, "threads of rank 1 only");
    sp_report_free(&r);
    sp_selection_free(&sel);
    sp_profile_free(p);
}

/* ---- flat ------------------------------------------------------------------ */

Test(report_flat, numbers_per_region)
{
    sp_profile *p = two_rank_profile();
    sp_report r;
    build_report(p, NULL, &r);
    cr_assert_eq(r.num_flat, 4);
    const sp_report_flat_row *f = flat_of(&r, p, "solve");
    cr_expect_eq(f->calls, 4);
    cr_expect_eq(f->inclusive, 3000);
    cr_expect_eq(f->total, 3000);
    cr_expect_eq(f->exclusive, 2600);
    cr_expect_eq(f->minimum, 300);
    cr_expect_eq(f->maximum, 1800);
    cr_expect_float_eq(f->mean, 750.0, 1e-9);
    f = flat_of(&r, p, "main");
    cr_expect_eq(f->calls, 2);
    cr_expect_eq(f->exclusive, 450);
    cr_expect_float_eq(f->mean, 1500.0, 1e-9);
    f = flat_of(&r, p, "assemble");
    cr_expect_eq(f->inclusive, 400);
    cr_expect_eq(f->minimum, 100);
    cr_expect_eq(f->maximum, 300);
    sp_report_free(&r);
    sp_profile_free(p);
}

static void expect_order(const sp_report *r, const sp_profile *p, const char *const *names)
{
    for (size_t k = 0; k < r->num_flat; k++)
        cr_expect_str_eq(p->names[r->flat[k].region], names[k], "position %zu", k);
}

Test(report_flat, sort_keys)
{
    sp_profile *p = two_rank_profile();
    sp_report r;
    build_report(p, NULL, &r);
    expect_order(&r, p, (const char *const[]){"solve", "main", "assemble", "io"});
    sp_report_sort_flat(&r, SP_SORT_CALLS); /* main and assemble tie: inclusive decides */
    expect_order(&r, p, (const char *const[]){"solve", "main", "assemble", "io"});
    sp_report_sort_flat(&r, SP_SORT_NAME);
    expect_order(&r, p, (const char *const[]){"assemble", "io", "main", "solve"});
    sp_report_sort_flat(&r, SP_SORT_MAX);
    expect_order(&r, p, (const char *const[]){"main", "solve", "assemble", "io"});
    sp_report_sort_flat(&r, SP_SORT_MEAN);
    expect_order(&r, p, (const char *const[]){"main", "solve", "assemble", "io"});
    sp_report_sort_flat(&r, SP_SORT_INCLUSIVE); /* main and solve tie: name decides */
    expect_order(&r, p, (const char *const[]){"main", "solve", "assemble", "io"});
    sp_report_sort sort;
    cr_expect_eq(sp_report_parse_sort("max", &sort), 0);
    cr_expect_eq(sort, SP_SORT_MAX);
    cr_expect_eq(sp_report_parse_sort("bogus", &sort), -1);
    sp_report_free(&r);
    sp_profile_free(p);
}

Test(report_flat, recursion_counted_once_in_inclusive)
{
    static const ev evs[] = {
        {0, "f", 0, 100, 0}, {0, "f", 10, 50, 0}, {0, "f", 20, 30, 0}, {0, "g", 60, 90, 0}};
    sp_profile *p = build(evs, 4, 0);
    sp_report r;
    build_report(p, NULL, &r);
    const sp_report_flat_row *f = flat_of(&r, p, "f");
    cr_expect_eq(f->calls, 3);
    cr_expect_eq(f->inclusive, 100);
    cr_expect_eq(f->total, 150);
    cr_expect_eq(f->exclusive, 30 + 30 + 10); /* outer, middle, inner */
    cr_expect_float_eq(f->mean, 50.0, 1e-9);
    expect_node(&r.tree, p, "f > f > f", 1, 10, 10, 10, 10);
    cr_expect(r.tree.nodes[sp_report_tree_find(&r.tree, p, "f > f")].recursive);
    cr_expect(!r.tree.nodes[sp_report_tree_find(&r.tree, p, "f > g")].recursive);
    sp_report_free(&r);
    sp_profile_free(p);
}

/* ---- fallbacks ---------------------------------------------------------------- */

Test(report_fallback, rank_not_nested_uses_row_statistics)
{
    static const ev evs[] = {
        {0, "a", 0, 100, 0}, {0, "b", 10, 20, 0},                      /* rank 0 fine */
        {1, "a", 0, 100, 0}, {1, "b", 50, 150, 0}, {1, "b", 200, 210, 0}, /* partial overlap */
    };
    sp_profile *p = build(evs, 5, 0);
    sp_report r;
    build_report(p, NULL, &r);
    cr_assert_eq(r.num_warnings, 1);
    cr_expect_eq(r.warnings[0].rank, 1);
    cr_expect_neq(strstr(r.warnings[0].message, "rank 1"), NULL, "%s", r.warnings[0].message);
    cr_expect(r.has_tree);
    cr_expect_eq(r.tree.num_ranks, 1);
    expect_node(&r.tree, p, "a > b", 1, 10, 10, 10, 10);
    const sp_report_flat_row *b = flat_of(&r, p, "b");
    cr_expect_eq(b->calls, 3);
    cr_expect_eq(b->inclusive, 120);
    cr_expect_eq(b->exclusive, -1);
    cr_expect_eq(b->minimum, 10);
    cr_expect_eq(b->maximum, 100);
    const sp_report_cross_row *c = cross_of(&r, p, "b");
    cr_expect_eq(c->exclusive_mean, -1);
    cr_expect_eq(c->inclusive_max, 110);
    cr_expect_eq(c->slowest_rank, 1);
    sp_report_free(&r);
    sp_profile_free(p);
}

Test(report_fallback, aggregate_layout_from_agg_fields)
{
    sp_profile *p = sp_profile_new();
    p->aggregate = 1;
    p->rows = calloc(3, sizeof *p->rows);
    const struct {
        uint32_t rank;
        const char *name;
        uint64_t count;
        int64_t total, min, max, excl;
    } rows[] = {{0, "step", 10, 1000, 50, 200, 600},
                {1, "step", 20, 3000, 60, 300, 2000},
                {1, "io", 1, 70, 70, 70, -1}};
    for (size_t k = 0; k < 3; k++) {
        sp_row *row = &p->rows[p->num_rows++];
        row->region = (uint32_t)sp_profile_intern_name(p, rows[k].name);
        row->rank = rows[k].rank;
        row->source_line = -1;
        row->exclusive_total = -1;
        row->source_file = strdup("");
        row->source_text = strdup("");
        row->tags = strdup("[]");
        row->event_metadata = strdup("[]");
        row->agg_count = rows[k].count;
        row->agg_total = rows[k].total;
        row->agg_minimum = rows[k].min;
        row->agg_maximum = rows[k].max;
        row->agg_exclusive = rows[k].excl;
    }
    p->num_ranks = 2;
    sp_report r;
    build_report(p, NULL, &r);
    cr_expect(!r.has_tree);
    cr_expect_eq(r.num_warnings, 0);
    const sp_report_flat_row *f = flat_of(&r, p, "step");
    cr_expect_eq(f->calls, 30);
    cr_expect_eq(f->inclusive, 4000);
    cr_expect_eq(f->exclusive, 2600);
    cr_expect_eq(f->minimum, 50);
    cr_expect_eq(f->maximum, 300);
    cr_expect_eq(flat_of(&r, p, "io")->exclusive, -1);
    const sp_report_cross_row *c = cross_of(&r, p, "step");
    cr_expect_float_eq(c->inclusive_mean, 2000.0, 1e-9);
    cr_expect_float_eq(c->imbalance, 1.5, 1e-12);
    cr_expect_eq(c->slowest_rank, 1);
    sp_report_free(&r);
    sp_profile_free(p);
}

/* ---- cross-rank ------------------------------------------------------------------ */

Test(report_cross, min_mean_max_imbalance_slowest)
{
    sp_profile *p = two_rank_profile();
    sp_report r;
    build_report(p, NULL, &r);
    cr_assert_eq(r.num_cross, 4);
    const sp_report_cross_row *c = cross_of(&r, p, "main");
    cr_expect_eq(c->inclusive_min, 1000);
    cr_expect_float_eq(c->inclusive_mean, 1500.0, 1e-9);
    cr_expect_eq(c->inclusive_max, 2000);
    cr_expect_float_eq(c->imbalance, 2000.0 / 1500.0, 1e-12);
    cr_expect_eq(c->slowest_rank, 1);
    cr_expect_eq(c->exclusive_min, 200);
    cr_expect_float_eq(c->exclusive_mean, 225.0, 1e-9);
    cr_expect_eq(c->exclusive_max, 250);

    c = cross_of(&r, p, "solve"); /* rank 0: 3 calls, worker's included */
    cr_expect_eq(c->calls_min, 1);
    cr_expect_float_eq(c->calls_mean, 2.0, 1e-12);
    cr_expect_eq(c->calls_max, 3);
    cr_expect_eq(c->inclusive_min, 1200);
    cr_expect_eq(c->inclusive_max, 1800);
    cr_expect_float_eq(c->imbalance, 1.2, 1e-12);
    cr_expect_eq(c->exclusive_min, 1100);
    cr_expect_eq(c->exclusive_max, 1500);

    c = cross_of(&r, p, "io"); /* rank 1 has none: counts as 0 */
    cr_expect_eq(c->ranks_with_calls, 1);
    cr_expect_eq(c->calls_min, 0);
    cr_expect_float_eq(c->calls_mean, 0.5, 1e-12);
    cr_expect_eq(c->inclusive_min, 0);
    cr_expect_float_eq(c->inclusive_mean, 25.0, 1e-9);
    cr_expect_float_eq(c->imbalance, 2.0, 1e-12);
    cr_expect_eq(c->slowest_rank, 0);

    /* sorted by mean inclusive: main 1500 and solve 1500 by name, assemble 200, io 25 */
    cr_expect_str_eq(p->names[r.cross[0].region], "main");
    cr_expect_str_eq(p->names[r.cross[1].region], "solve");
    cr_expect_str_eq(p->names[r.cross[2].region], "assemble");
    cr_expect_str_eq(p->names[r.cross[3].region], "io");
    sp_report_free(&r);
    sp_profile_free(p);
}

Test(report_cross, slowest_rank_tie_goes_to_lowest_rank)
{
    static const ev evs[] = {{0, "x", 0, 10, 0}, {1, "x", 0, 30, 0}, {2, "x", 5, 35, 0}};
    sp_profile *p = build(evs, 3, 0);
    sp_report r;
    build_report(p, NULL, &r);
    const sp_report_cross_row *c = cross_of(&r, p, "x");
    cr_expect_eq(c->slowest_rank, 1);
    cr_expect_float_eq(c->imbalance, 30.0 / (70.0 / 3.0), 1e-12);
    sp_report_free(&r);
    sp_profile_free(p);
}

/* ---- threads ----------------------------------------------------------------- */

Test(report_threads, wall_cpu_and_calls)
{
    sp_profile *p = two_rank_profile();
    sp_report r;
    build_report(p, NULL, &r);
    cr_assert_eq(r.num_threads, 3);
    const sp_report_thread_row *t = &r.threads[0];
    cr_expect_str_eq(t->name, "MainThread");
    cr_expect_eq(t->wall_ns, 1000);
    cr_expect_eq(t->cpu_ns, 800);
    cr_expect_float_eq(t->cpu_percent, 80.0, 1e-9);
    cr_expect_eq(t->calls, 4);
    t = &r.threads[1];
    cr_expect_str_eq(t->name, "worker");
    cr_expect_eq(t->wall_ns, 600);
    cr_expect_float_eq(t->cpu_percent, 50.0, 1e-9);
    cr_expect_eq(t->calls, 2);
    t = &r.threads[2];
    cr_expect_eq(t->rank, 1);
    cr_expect_eq(t->calls, 3);
    cr_expect_float_eq(t->cpu_percent, 50.0, 1e-9);
    sp_report_free(&r);
    sp_profile_free(p);
}

Test(report_threads, alive_thread_lives_until_finalize)
{
    sp_profile *p = two_rank_profile();
    p->threads[1].end_ns = -1;
    p->threads[1].cpu_ns = -1;
    sp_report r;
    build_report(p, NULL, &r);
    cr_expect_eq(r.threads[1].wall_ns, -1, "no finalize time: unknown");
    cr_expect_eq(r.threads[1].cpu_percent, -1);
    sp_report_free(&r);
    sp_profile_set_meta_int(p, "start_time_ns", 0);
    sp_profile_set_meta_int(p, "finalize_time_ns", 1150);
    build_report(p, NULL, &r);
    cr_expect_eq(r.threads[1].wall_ns, 1000);
    sp_report_free(&r);
    sp_profile_free(p);
}

Test(report_threads, task_rows_of_selected_ranks)
{
    sp_profile *p = two_rank_profile();
    p->has_task_table = 1;
    p->num_tasks = 2;
    p->tasks = calloc(2, sizeof *p->tasks);
    p->tasks[0] = (sp_task_row){.rank = 0, .index = 0, .thread_index = 1, .created_ns = 10,
                                .done_ns = 90, .steps = 3, .running_ns = 50, .suspended_ns = 20,
                                .kind = strdup("task"), .name = strdup("Task-1"),
                                .coro_name = strdup("app.fetch")};
    p->tasks[1] = (sp_task_row){.rank = 1, .index = 0, .thread_index = 0, .steps = 1,
                                .kind = strdup("greenlet"), .name = strdup("g"),
                                .coro_name = strdup("")};
    sp_selection sel;
    sp_selection_init(&sel);
    char err[128];
    cr_assert_eq(sp_selection_add_ranks(&sel, "0", err, sizeof err), 0);
    sp_report_options opt = {.selection = &sel};
    sp_report r;
    build_report(p, &opt, &r);
    cr_assert_eq(r.num_tasks, 1);
    cr_expect_str_eq(r.tasks[0].kind, "task");
    cr_expect_str_eq(r.tasks[0].name, "Task-1");
    cr_expect_eq(r.tasks[0].thread_index, 1);
    cr_expect_eq(r.tasks[0].steps, 3);
    cr_expect_eq(r.tasks[0].running_ns, 50);
    cr_expect_eq(r.tasks[0].suspended_ns, 20);
    sp_report_free(&r);
    sp_selection_free(&sel);
    sp_profile_free(p);
}

/* ---- clock offsets ----------------------------------------------------------- */

Test(report_clock, ranks_shifted_by_their_sync_point)
{
    sp_profile *p = two_rank_profile();
    cr_expect_eq(sp_rank_clock_offset(p, 1), 0, "no sync points: no shift");
    sp_profile_set_meta_int(p, "mpi_sync_init_ns.rank0", 5000);
    sp_profile_set_meta_int(p, "mpi_sync_init_ns.rank1", 4000);
    cr_expect_eq(sp_rank_clock_offset(p, 0), 0);
    cr_expect_eq(sp_rank_clock_offset(p, 1), -1000);
    sp_report r;
    build_report(p, NULL, &r);
    /* rank 1 runs [1000, 3000] on rank 0's axis: the run lasts 3000 ns */
    cr_expect_eq(r.wall_ns, 3000);
    sp_report_free(&r);
    sp_profile_free(p);
}

Test(report_clock, same_host_needs_no_shift)
{
    sp_profile *p = two_rank_profile();
    sp_profile_set_meta_int(p, "mpi_sync_init_ns.rank0", 5000);
    sp_profile_set_meta_int(p, "mpi_sync_init_ns.rank1", 4000);
    sp_profile_set_meta_string(p, "hostname.rank0", "node1");
    sp_profile_set_meta_string(p, "hostname.rank1", "node1");
    cr_expect_eq(sp_rank_clock_offset(p, 1), 0, "one host, one clock: raw times are exact");
    sp_profile_set_meta_string(p, "hostname.rank1", "node2");
    cr_expect_eq(sp_rank_clock_offset(p, 1), -1000);
    /* the calls every export and the tree use are on rank 0's axis */
    sp_calls calls;
    char err[256];
    cr_assert_eq(sp_rank_calls(p, 1, &calls, err, sizeof err), 0, "%s", err);
    int64_t lo = INT64_MAX;
    for (size_t i = 0; i < calls.n; i++)
        lo = calls.start[i] < lo ? calls.start[i] : lo;
    int64_t raw = INT64_MAX;
    for (size_t r = 0; r < p->num_rows; r++)
        for (uint64_t e = p->rows[r].offset; p->rows[r].rank == 1 && e < p->rows[r].offset + p->rows[r].count; e++)
            raw = p->start[e] < raw ? p->start[e] : raw;
    cr_expect_eq(lo, raw + 1000);
    sp_calls_free(&calls);
    sp_profile_free(p);
}

Test(report_clock, own_file_value)
{
    static const ev evs[] = {{3, "x", 0, 10, 0}};
    sp_profile *p = build(evs, 1, 0);
    sp_profile_set_meta_int(p, "mpi_sync_init_ns", 777);
    int64_t v = 0;
    cr_expect_eq(sp_rank_sync_point(p, 3, "mpi_sync_init_ns", &v), 0);
    cr_expect_eq(v, 777);
    cr_expect_eq(sp_rank_sync_point(p, 2, "mpi_sync_init_ns", &v), -1);
    cr_expect_eq(sp_rank_clock_offset(p, 3), 0, "no other rank to compare with");
    sp_profile_free(p);
}

/* ---- units ------------------------------------------------------------------ */

static void expect_duration(int64_t ns, const char *text)
{
    char buf[32];
    sp_format_duration(ns, buf, sizeof buf);
    cr_expect_str_eq(buf, text, "%lld ns", (long long)ns);
}

Test(report_units, unit_per_value)
{
    expect_duration(0, "0 ns");
    expect_duration(999, "999 ns");
    expect_duration(1000, "1.00 \xc2\xb5s");
    expect_duration(12345, "12.3 \xc2\xb5s");
    expect_duration(123456, "123 \xc2\xb5s");
    expect_duration(999999, "1.00 ms");
    expect_duration(45600000, "45.6 ms");
    expect_duration(1500000000, "1.50 s");
    expect_duration(4211000000000, "4211 s");
    expect_duration(-1, "-");
}
