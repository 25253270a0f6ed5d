/* report_fork_stream.c - the merged path tree of a rank with fork edges
 * (events/fork_parent_ids) from its streamed calls, the same tree as the
 * in-memory path's sp_rank_data_graft + sp_report_tree_add_forks.  The
 * graft itself is src/stream/graft_stream.c's; this file keeps the report
 * tree's nodes, their fork statistics, and puts the nodes in the in-memory
 * creation order once the rank has streamed (the call tree breaks ties
 * between siblings by that order). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_fork_stream.h"
#include "stream/graft_stream.h"

struct sp_fork_stream {
    sp_graft_stream *graft;
    sp_report_tree *tree;
    sp_fork_keep_fn keep;
    void *keep_ctx;
    const sp_report_call_hook *hook; /* sp_fork_stream_open_hook */
    size_t num_nodes;                /* the finished tree's */
    sp_fork_also also;               /* .enter NULL: none */
};

static int sink_keep(void *ctx, const sp_stream_call *call)
{
    sp_fork_stream *fs = ctx;
    return fs->keep(fs->keep_ctx, call);
}

static int64_t sink_node(void *ctx, int64_t parent, const sp_stream_call *call)
{
    sp_fork_stream *fs = ctx;
    return sp_report_tree_node(fs->tree, parent, call->region);
}

static int sink_enter(void *ctx, const sp_stream_call *call, int64_t node)
{
    sp_fork_stream *fs = ctx;
    (void)node;
    return fs->also.enter(fs->also.ctx, call);
}

static int sink_exit(void *ctx, const sp_stream_call *call, int64_t node)
{
    sp_fork_stream *fs = ctx;
    sp_report_node_add_call(&fs->tree->nodes[node], call->end - call->start, call->exclusive);
    return fs->also.exit ? fs->also.exit(fs->also.ctx, call) : 0;
}

static void sink_barrier(void *ctx, int64_t node, int64_t ns)
{
    sp_fork_stream *fs = ctx;
    fs->tree->nodes[node].fork_barrier += ns;
}

static void sink_lane_time(void *ctx, int64_t node, int64_t ns)
{
    sp_fork_stream *fs = ctx;
    sp_report_node *nd = &fs->tree->nodes[node];
    nd->fork_lanes++;
    nd->fork_lane_total += ns;
    if (ns > nd->fork_lane_max)
        nd->fork_lane_max = ns;
}

int sp_fork_stream_open(sp_fork_stream **out, const sp_run_source *src, uint32_t rank,
                        long file, int graft, sp_report_tree *tree, sp_fork_keep_fn keep,
                        void *keep_ctx, const sp_fork_also *also, char *why, size_t whylen)
{
    *out = NULL;
    sp_fork_stream *fs = calloc(1, sizeof *fs);
    if (!fs)
        return -1;
    *fs = (sp_fork_stream){NULL, tree, keep, keep_ctx, NULL, 0,
                           also ? *also : (sp_fork_also){NULL, NULL, NULL}};
    sp_graft_sink sink = {sink_keep,    sink_node,      fs->also.enter ? sink_enter : NULL,
                          sink_exit,    sink_barrier,   sink_lane_time,
                          NULL,         NULL,           fs};
    int rc = sp_graft_stream_open(&fs->graft, src, rank, file, graft, &sink, why, whylen);
    if (rc != 0) {
        free(fs);
        return rc;
    }
    *out = fs;
    return 0;
}

/* ---- the calls once more, to a per-call hook ------------------------------ */

/* The finished tree's node: every node is there already. */
static int64_t hook_node(void *ctx, int64_t parent, const sp_stream_call *call)
{
    sp_fork_stream *fs = ctx;
    int64_t node = sp_report_tree_node(fs->tree, parent, call->region);
    return fs->tree->num_nodes == fs->num_nodes ? node : -1;
}

static int hook_enter(void *ctx, const sp_stream_call *call, int64_t node)
{
    sp_fork_stream *fs = ctx;
    return fs->hook->call(fs->hook->ctx, call, fs->tree, node, 0) ? -1 : 0;
}

static int hook_exit(void *ctx, const sp_stream_call *call, int64_t node)
{
    sp_fork_stream *fs = ctx;
    return fs->hook->call(fs->hook->ctx, call, fs->tree, node, 1) ? -1 : 0;
}

static int hook_ignore_exit(void *ctx, const sp_stream_call *call, int64_t node)
{
    (void)ctx;
    (void)call;
    (void)node;
    return 0;
}

int sp_fork_stream_open_hook(sp_fork_stream **out, const sp_run_source *src, uint32_t rank,
                             long file, int graft, sp_report_tree *tree, sp_fork_keep_fn keep,
                             void *keep_ctx, const sp_report_call_hook *hook, int grafted,
                             char *why, size_t whylen)
{
    *out = NULL;
    sp_fork_stream *fs = calloc(1, sizeof *fs);
    if (!fs)
        return -1;
    *fs = (sp_fork_stream){NULL, tree, keep, keep_ctx, hook, tree->num_nodes,
                           (sp_fork_also){NULL, NULL, NULL}};
    /* grafted: the entries in preorder (each exit after its entry); else
     * as they stream (the reconstruction order) */
    sp_graft_sink sink = {sink_keep,
                          hook_node,
                          grafted ? NULL : hook_enter,
                          grafted ? hook_ignore_exit : hook_exit,
                          NULL,
                          NULL,
                          grafted ? hook_enter : NULL,
                          grafted ? hook_exit : NULL,
                          fs};
    int rc = sp_graft_stream_open(&fs->graft, src, rank, file, graft, &sink, why, whylen);
    if (rc != 0) {
        free(fs);
        return rc;
    }
    *out = fs;
    return 0;
}

int sp_fork_stream_grafted(const sp_fork_stream *fs)
{
    return sp_graft_stream_grafted(fs->graft);
}

sp_call_visitor sp_fork_stream_visitor(sp_fork_stream *fs)
{
    return sp_graft_stream_visitor(fs->graft);
}

/* Nodes renumbered by their first call in preorder: the in-memory order. */
static int renumber(sp_fork_stream *fs)
{
    sp_report_tree *tree = fs->tree;
    size_t n = tree->num_nodes, num_order;
    if (n == 0)
        return 0;
    int64_t *order, *map = malloc(n * sizeof *map);
    if (sp_graft_stream_order(fs->graft, &order, &num_order) != 0 || num_order != n) {
        free(order);
        free(map);
        return -1;
    }
    sp_report_tree fresh;
    int rc = order && map ? sp_report_tree_init(&fresh, tree->rank, tree->lane) : -1;
    if (rc != 0) {
        free(order);
        free(map);
        return -1;
    }
    for (size_t k = 0; rc == 0 && k < n; k++) {
        const sp_report_node *old = &tree->nodes[order[k]];
        /* a parent's key is a prefix of its first child call's: earlier */
        int64_t id = sp_report_tree_node(&fresh, old->parent >= 0 ? map[old->parent] : -1,
                                         old->region);
        if (id < 0) {
            rc = -1;
            break;
        }
        sp_report_node *dst = &fresh.nodes[id];
        dst->calls = old->calls;
        dst->inclusive = old->inclusive;
        dst->exclusive = old->exclusive;
        dst->minimum = old->minimum;
        dst->maximum = old->maximum;
        dst->fork_lanes = old->fork_lanes;
        dst->fork_lane_total = old->fork_lane_total;
        dst->fork_lane_max = old->fork_lane_max;
        dst->fork_barrier = old->fork_barrier;
        map[order[k]] = id;
    }
    free(order);
    free(map);
    if (rc != 0) {
        sp_report_tree_free(&fresh);
        return -1;
    }
    fresh.num_ranks = tree->num_ranks;
    sp_report_tree_free(tree);
    *tree = fresh;
    return 0;
}

int sp_fork_stream_finish(sp_fork_stream *fs, char *why, size_t whylen)
{
    int rc = sp_graft_stream_finish(fs->graft, why, whylen);
    if (rc == 0 && !fs->hook && renumber(fs) != 0) {
        snprintf(why, whylen, "out of memory while building the report");
        return -1;
    }
    return rc;
}

int sp_fork_stream_fell_back(const sp_fork_stream *fs, char *why, size_t whylen)
{
    return sp_graft_stream_fell_back(fs->graft, why, whylen);
}

void sp_fork_stream_free(sp_fork_stream *fs)
{
    if (!fs)
        return;
    sp_graft_stream_free(fs->graft);
    free(fs);
}
