/* test_report_fork_hook.c - the streamed report's per-call hook on ranks
 * with fork edges (sp_report_call_hook, report_stream.c's hook_pass): the
 * hook sees the grafted calls in the order of the in-memory path's on_rank
 * (a preorder of the grafted forest when a call is grafted, else the
 * reconstruction order), its nodes numbered in the order they first come,
 * and no rank is read whole (on_rank is not called).  Inputs: gen_forks.py
 * (a worker's leaves start between the encountering thread's, so the
 * stream's order is not the preorder) and a crafted rank with a pthread
 * forked from main, with filters that leave nothing grafted. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_test_util.h"
#include "scopeprof/export.h"
#include "scopeprof/h5.h"
#include "scopeprof/report.h"
#include "scopeprof/stream.h"

typedef struct seen {
    int64_t path, start, end, exclusive;
} seen;

typedef struct recorder {
    sp_path_tree paths;       /* shared by both sides: the same path ids */
    seen *calls;
    size_t n, cap;
    int64_t *path_of_node;    /* hook: report node -> path */
    size_t num_mapped, cap_mapped;
    int bad_node_order, in_memory_ranks;
} recorder;

static void note(recorder *r, int64_t path, int64_t start, int64_t end, int64_t exclusive)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->calls = realloc(r->calls, r->cap * sizeof *r->calls);
        cr_assert_not_null(r->calls);
    }
    r->calls[r->n++] = (seen){path, start, end, exclusive};
}

static int on_rank(void *ctx, const sp_profile *profile, const sp_rank_data *data)
{
    recorder *r = ctx;
    (void)profile;
    r->in_memory_ranks++;
    const sp_calls *c = &data->calls;
    int64_t *path = malloc((c->n ? c->n : 1) * sizeof *path);
    cr_assert_not_null(path);
    for (size_t i = 0; i < c->n; i++) {
        path[i] = sp_path_tree_child(&r->paths, c->parent[i] >= 0 ? path[c->parent[i]] : -1,
                                     SP_PATH_REGION, c->region[i]);
        note(r, path[i], c->start[i], c->end[i], c->exclusive[i]);
    }
    free(path);
    return 0;
}

static int hook_begin(void *ctx, uint32_t rank)
{
    recorder *r = ctx;
    (void)rank;
    r->num_mapped = 0;
    return 0;
}

static int hook_end(void *ctx, uint32_t rank)
{
    (void)ctx;
    (void)rank;
    return 0;
}

static int hook_call(void *ctx, const sp_stream_call *call, const sp_report_tree *tree,
                     int64_t node, int exit)
{
    recorder *r = ctx;
    if ((size_t)node > r->num_mapped) {
        r->bad_node_order = 1; /* a node before the ones made earlier */
        return -1;
    }
    if ((size_t)node == r->num_mapped) {
        if (r->num_mapped == r->cap_mapped) {
            r->cap_mapped = r->cap_mapped ? 2 * r->cap_mapped : 64;
            r->path_of_node = realloc(r->path_of_node, r->cap_mapped * sizeof *r->path_of_node);
            cr_assert_not_null(r->path_of_node);
        }
        int64_t parent = tree->nodes[node].parent;
        r->path_of_node[r->num_mapped++] =
            sp_path_tree_child(&r->paths, parent >= 0 ? r->path_of_node[parent] : -1,
                               SP_PATH_REGION, tree->nodes[node].region);
    }
    int64_t path = r->path_of_node[node];
    if (!exit) {
        note(r, path, call->start, call->end, INT64_MIN);
        return 0;
    }
    /* the exclusive time: on the latest entered call of that path and start */
    for (size_t i = r->n; i-- > 0;)
        if (r->calls[i].path == path && r->calls[i].start == call->start &&
            r->calls[i].end == call->end && r->calls[i].exclusive == INT64_MIN) {
            r->calls[i].exclusive = call->exclusive;
            return 0;
        }
    return -1;
}

static void free_recorder(recorder *r)
{
    sp_path_tree_free(&r->paths);
    free(r->calls);
    free(r->path_of_node);
}

/* Both paths on `path` with `sel`: the same calls in the same order. */
static void compare(const char *path, const sp_selection *sel, const char *label)
{
    recorder streamed = {0}, in_memory = {0};
    sp_path_tree_init(&streamed.paths);
    sp_path_tree_init(&in_memory.paths);
    char why[1024];
    sp_run_source src;
    const char *paths[] = {path};
    cr_assert_eq(sp_run_source_open(&src, paths, 1, why, sizeof why), 0, "%s", why);
    sp_report_call_hook hook = {hook_begin, hook_call, hook_end, NULL, &streamed};
    sp_report_options so = {.selection = sel, .on_rank = on_rank, .on_rank_ctx = &streamed,
                            .call_hook = &hook};
    sp_report a, b;
    cr_assert_eq(sp_report_build_stream(&src, &so, &a, why, sizeof why), 0, "%s: %s", label,
                 why);
    cr_expect_eq(streamed.in_memory_ranks, 0, "%s: a rank was read in memory", label);
    cr_expect_eq(streamed.bad_node_order, 0, "%s", label);
    sp_profile *p = sp_load_run(paths, 1, why, sizeof why);
    cr_assert_not_null(p, "%s", why);
    sp_report_options mo = {.selection = sel, .on_rank = on_rank, .on_rank_ctx = &in_memory};
    cr_assert_eq(sp_report_build(p, &mo, &b, why, sizeof why), 0, "%s", why);
    cr_assert_eq(streamed.n, in_memory.n, "%s: %zu calls, in memory %zu", label, streamed.n,
                 in_memory.n);
    /* path ids differ between the two trees: compare through the names */
    size_t differ = streamed.n;
    for (size_t i = 0; i < streamed.n && differ == streamed.n; i++) {
        const seen *s = &streamed.calls[i], *m = &in_memory.calls[i];
        if (s->start != m->start || s->end != m->end || s->exclusive != m->exclusive ||
            streamed.paths.nodes[s->path].value != in_memory.paths.nodes[m->path].value ||
            (s->path != m->path))
            differ = i;
    }
    cr_expect_eq(differ, streamed.n, "%s: call %zu differs", label, differ);
    sp_report_free(&a);
    sp_report_free(&b);
    sp_profile_free(p);
    sp_run_source_close(&src);
    free_recorder(&streamed);
    free_recorder(&in_memory);
}

Test(report_fork_hook, the_hook_sees_the_in_memory_order)
{
    char dir[256], file[512], cmd[1400];
    make_temp_dir(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/forks.h5", dir);
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s/../scripts/bench/gen_forks.py %s 7000",
             TEST_SOURCE_DIR, file);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    const char *excludes[] = {NULL, "^omp parallel$", "^outer$", "leaf"};
    for (size_t k = 0; k < sizeof excludes / sizeof excludes[0]; k++) {
        sp_selection sel;
        sp_selection_init(&sel);
        char err[256];
        if (excludes[k])
            cr_assert_eq(sp_selection_set_exclude(&sel, excludes[k], err, sizeof err), 0);
        compare(file, &sel, excludes[k] ? excludes[k] : "everything");
        sp_selection_free(&sel);
    }
    sp_selection sel;
    sp_selection_init(&sel);
    sel.no_graft = 1;
    compare(file, &sel, "--no-graft");
    sp_selection_free(&sel);
    remove_tree(dir);
}
