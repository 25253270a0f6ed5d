/* path_tree_stream.c - a run source's call-path tree, built while its calls
 * stream (path_tree_stream.h). */
#include "path_tree_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/h5.h"
#include "scopeprof/report.h" /* sp_rank_clock_offset */
#include "stream/graft_stream.h"
#include "stream_filter.h"

typedef struct tree_pass {
    sp_stream_filter *filter;
    sp_path_tree *tree;
    const sp_profile *profile;   /* the skeleton: rows for the nodes' sources */
    int with_ranks;
    uint32_t rank;
    int64_t *row_of_region;      /* of the rank being streamed, -1: none */
    int64_t rank_node;           /* -1: not created yet (no kept call so far) */
    int64_t cached_lane, cached_node;
    uint64_t calls;
} tree_pass;

static int tree_enter(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user)
{
    tree_pass *p = ctx;
    *user = parent;
    if (!sp_stream_filter_keeps(p->filter, call))
        return 0;
    int64_t up = parent;
    if (up < 0 && p->with_ranks) {
        if (p->rank_node < 0 &&
            (p->rank_node = sp_path_tree_child(p->tree, -1, SP_PATH_RANK, p->rank)) < 0)
            return -1;
        if (p->cached_node == -2 || call->lane != p->cached_lane) {
            p->cached_lane = call->lane;
            p->cached_node = sp_path_tree_child(p->tree, p->rank_node, SP_PATH_LANE, call->lane);
            if (p->cached_node < 0)
                return -1;
        }
        up = p->cached_node;
    }
    int64_t node = sp_path_tree_child(p->tree, up, SP_PATH_REGION, call->region);
    if (node < 0)
        return -1;
    sp_path_node *nd = &p->tree->nodes[node];
    if (nd->calls == 0 && p->row_of_region[call->region] >= 0) {
        const sp_row *row = &p->profile->rows[p->row_of_region[call->region]];
        nd->source_file = row->source_file ? row->source_file : "";
        nd->source_line = row->source_line;
    }
    nd->calls++;
    nd->inclusive_ns += call->end - call->start;
    p->calls++;
    *user = node;
    return 1;
}

static int tree_exit(void *ctx, const sp_stream_call *call, int64_t user)
{
    tree_pass *p = ctx;
    p->tree->nodes[user].exclusive_ns += call->exclusive;
    return 0;
}

/* A rank of a file with fork edges, grafted on the stream
 * (src/stream/graft_stream.c) into a tree of its own: roots under their
 * lane's node when with_ranks, else at the top.  Its nodes then join the
 * run's tree in the order the in-memory path creates them. */
typedef struct graft_pass {
    tree_pass *p;
    sp_path_tree local;
} graft_pass;

static int graft_keep(void *ctx, const sp_stream_call *call)
{
    graft_pass *g = ctx;
    return sp_stream_filter_keeps(g->p->filter, call);
}

static int64_t graft_node(void *ctx, int64_t parent, const sp_stream_call *call)
{
    graft_pass *g = ctx;
    if (parent < 0 && g->p->with_ranks &&
        (parent = sp_path_tree_child(&g->local, -1, SP_PATH_LANE, call->lane)) < 0)
        return -1;
    return sp_path_tree_child(&g->local, parent, SP_PATH_REGION, call->region);
}

static int graft_enter(void *ctx, const sp_stream_call *call, int64_t node)
{
    graft_pass *g = ctx;
    g->local.nodes[node].calls++;
    g->local.nodes[node].inclusive_ns += call->end - call->start;
    g->p->calls++;
    return 0;
}

static int graft_exit(void *ctx, const sp_stream_call *call, int64_t node)
{
    graft_pass *g = ctx;
    g->local.nodes[node].exclusive_ns += call->exclusive;
    return 0;
}

/* The rank's nodes into the run's tree, in the in-memory creation order
 * (sp_path_tree_add over the grafted calls: a node made at its first call
 * in preorder, a lane's node just before its first root).  0 or -1. */
static int graft_join(tree_pass *p, sp_path_tree *local, const int64_t *order, size_t n)
{
    int64_t *map = malloc((local->n ? local->n : 1) * sizeof *map);
    if (!map)
        return -1;
    int rc = 0;
    if (n && p->with_ranks &&
        (p->rank_node = sp_path_tree_child(p->tree, -1, SP_PATH_RANK, p->rank)) < 0)
        rc = -1;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const sp_path_node *nd = &local->nodes[order[k]];
        int64_t up = nd->parent;
        if (up >= 0 && local->nodes[up].kind == SP_PATH_LANE)
            up = sp_path_tree_child(p->tree, p->rank_node, SP_PATH_LANE, local->nodes[up].value);
        else if (up >= 0)
            up = map[up]; /* a parent's key comes first: mapped */
        int64_t node = up < -1 ? -1 : sp_path_tree_child(p->tree, up, SP_PATH_REGION, nd->value);
        if (node < 0) {
            rc = -1;
            break;
        }
        map[order[k]] = node;
        sp_path_node *dst = &p->tree->nodes[node];
        if (dst->calls == 0 && p->row_of_region[nd->value] >= 0) {
            const sp_row *row = &p->profile->rows[p->row_of_region[nd->value]];
            dst->source_file = row->source_file ? row->source_file : "";
            dst->source_line = row->source_line;
        }
        dst->calls += nd->calls;
        dst->inclusive_ns += nd->inclusive_ns;
        dst->exclusive_ns += nd->exclusive_ns;
    }
    free(map);
    return rc;
}

/* 0, 1 (the rank goes to the file in memory, why set), -1 out of memory. */
static int graft_rank_streamed(tree_pass *p, const sp_run_source *src, uint32_t rank,
                               long file, char *why, size_t whylen)
{
    graft_pass g = {p, {0}};
    sp_path_tree_init(&g.local);
    sp_graft_sink sink = {graft_keep, graft_node, graft_enter, graft_exit, NULL, NULL,
                          NULL,       NULL,       &g};
    sp_graft_stream *gs = NULL;
    uint64_t calls_before = p->calls;
    sp_stream_filter_rank(p->filter, rank);
    int rc = sp_graft_stream_open(&gs, src, rank, file, 1, &sink, why, whylen);
    if (rc == 0) {
        sp_call_visitor visitor = sp_graft_stream_visitor(gs);
        sp_stream_options so = {NULL, NULL, 0};
        sp_rank_stream_info info;
        rc = sp_stream_rank_forks(src, rank, sp_rank_clock_offset(src->profile, rank), &visitor,
                                  &so, &info, why, whylen);
        sp_rank_stream_info_free(&info);
        if (rc < 0 && sp_graft_stream_fell_back(gs, why, whylen))
            rc = 1;
        else if (rc == 2)
            rc = 1;
        if (rc == 0)
            rc = sp_graft_stream_finish(gs, why, whylen);
    }
    int64_t *order = NULL;
    size_t n = 0;
    if (rc == 0 && sp_graft_stream_order(gs, &order, &n) != 0)
        rc = -1;
    if (rc == 0)
        rc = graft_join(p, &g.local, order, n);
    free(order);
    sp_graft_stream_free(gs);
    sp_path_tree_free(&g.local);
    if (rc != 0)
        p->calls = calls_before;
    return rc;
}

/* A rank of a file with fork edges, grafted from the rank's file alone in
 * memory (sp_stream_rank_grafted), added as the in-memory exporters add it:
 * what the graft on the stream doubts. */
static int graft_rank_from_file(tree_pass *p, const sp_run_source *src,
                                const sp_selection *sel, uint32_t rank, long file, char *why,
                                size_t whylen)
{
    sp_profile *full;
    sp_rank_data data;
    int rc = sp_stream_rank_grafted(src, sel, rank, file, &full, &data, why, whylen);
    if (rc != 0)
        return rc;
    if (data.calls.n) {
        int64_t top = -1;
        if ((p->with_ranks &&
             (top = sp_path_tree_child(p->tree, -1, SP_PATH_RANK, rank)) < 0) ||
            sp_path_tree_add(p->tree, src->profile, &data, top, p->with_ranks, NULL) < 0)
            rc = -1;
        p->calls += data.calls.n;
    }
    sp_rank_data_free(&data);
    sp_profile_free(full);
    return rc;
}

int sp_path_tree_stream_rank(sp_path_tree *tree, const sp_run_source *src,
                             sp_stream_filter *filter, uint32_t rank, int with_ranks,
                             uint64_t *calls, char *why, size_t whylen)
{
    const sp_profile *profile = src->profile;
    const sp_selection *sel = filter->sel;
    long file = sp_stream_rank_file(src, rank);
    if (file < 0)
        return 0; /* no rows: no calls */
    tree_pass p = {.tree = tree, .profile = profile, .with_ranks = with_ranks, .rank = rank,
                   .rank_node = -1, .cached_node = -2, .filter = filter};
    int rc;
    if (src->shapes[file].has_fork && sp_selection_grafts(sel)) {
        if (!(p.row_of_region = malloc((profile->num_names ? profile->num_names : 1) *
                                       sizeof *p.row_of_region)))
            return -1;
        sp_stream_rows_of_rank(profile, rank, p.row_of_region);
        char doubt[1024] = "";
        rc = graft_rank_streamed(&p, src, rank, file, doubt, sizeof doubt);
        free(p.row_of_region);
        p.row_of_region = NULL;
        if (rc == 1) {
            /* for tests and benchmarks (docs/stream.md): the rank read whole */
            const char *trace = getenv("SCOPEPROF_EXPORT_TRACE");
            if (trace && !strcmp(trace, "1"))
                fprintf(stderr, "scopeprof export: rank %u with fork edges in memory: %s\n",
                        rank, doubt);
            rc = graft_rank_from_file(&p, src, sel, rank, file, why, whylen);
        }
    } else if (!(p.row_of_region =
                     malloc((profile->num_names ? profile->num_names : 1) *
                            sizeof *p.row_of_region))) {
        rc = -1;
    } else {
        sp_stream_rows_of_rank(profile, rank, p.row_of_region);
        sp_stream_filter_rank(filter, rank);
        sp_call_visitor visitor = {tree_enter, tree_exit, &p};
        sp_rank_stream_info info;
        rc = sp_stream_rank(src, rank, sp_rank_clock_offset(profile, rank), &visitor, &info,
                            why, whylen);
        sp_rank_stream_info_free(&info);
        free(p.row_of_region);
    }
    *calls += p.calls;
    if (rc < 0)
        snprintf(why, whylen, "out of memory");
    return rc;
}

int sp_path_tree_stream(sp_path_tree *tree, const sp_run_source *src, const sp_selection *sel,
                        int with_ranks, uint64_t *calls, char *why, size_t whylen)
{
    *calls = 0;
    /* (MPI columns are not part of this output: the stream leaves them) */
    const char *reason = sp_run_source_unstreamable_calls(src);
    if (reason) {
        snprintf(why, whylen, "%s", reason);
        return 1;
    }
    sp_stream_filter filter;
    int rc = sp_stream_filter_init(&filter, src, sel, why, whylen);
    if (rc != 0)
        return rc;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(src->profile, sel, &ranks);
    if (num_ranks < 0)
        rc = -1;
    if (rc == 0 && sp_stream_check_run(src, ranks, num_ranks, NULL, why, whylen))
        rc = 1;
    for (long k = 0; k < num_ranks && rc == 0; k++)
        rc = sp_path_tree_stream_rank(tree, src, &filter, ranks[k], with_ranks, calls, why,
                                      whylen);
    if (rc < 0)
        snprintf(why, whylen, "out of memory");
    sp_stream_filter_free(&filter);
    free(ranks);
    return rc;
}
