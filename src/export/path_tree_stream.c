/* path_tree_stream.c - a run source's call-path tree, built while its calls
 * stream (path_tree_stream.h). */
#include "path_tree_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/h5.h"
#include "scopeprof/report.h" /* sp_rank_clock_offset */
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

/* A rank of a file with fork edges, grafted: the stream does not graft, so
 * the rank's file alone is read into memory (sp_stream_rank_grafted) and
 * added as the in-memory exporters add it. */
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
        rc = graft_rank_from_file(&p, src, sel, rank, file, why, whylen);
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
