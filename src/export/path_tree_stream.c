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
    sp_stream_filter filter;
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
    if (!sp_stream_filter_keeps(&p->filter, call))
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

/* The skeleton's row of each region for `rank` (what sp_rank_data_row gives
 * in memory: the run has one row per rank and region). */
static void rows_of_rank(tree_pass *p, uint32_t rank)
{
    for (size_t r = 0; r < p->profile->num_names; r++)
        p->row_of_region[r] = -1;
    for (size_t r = 0; r < p->profile->num_rows; r++) {
        const sp_row *row = &p->profile->rows[r];
        if (row->rank == rank && row->region < p->profile->num_names)
            p->row_of_region[row->region] = (int64_t)r;
    }
}

/* A rank of a file with fork edges, grafted: the stream does not graft, so
 * the rank's file alone is read into memory (with the reader's checks) and
 * added as the in-memory exporters add it; memory is that of one file,
 * whatever the number of files.  The file alone must read as it does
 * within the run: not with --from/--to (the run's origin) nor with columns
 * other files lack.  0, 1 (why), -1 out of memory. */
static int graft_rank_from_file(tree_pass *p, const sp_run_source *src,
                                const sp_selection *sel, uint32_t rank, long file, char *why,
                                size_t whylen)
{
    sp_profile *full;
    sp_rank_data data;
    if (sp_run_source_rank_alone(src, rank, file, sel, sel && (sel->has_from || sel->has_to),
                                 &full, &data, why, whylen) != 0)
        return 1;
    int rc = sp_rank_data_graft(full, &data, NULL) != 0 ? -1 : 0;
    /* the run's region ids, and the skeleton's rows */
    sp_profile *skeleton = (sp_profile *)src->profile;
    if (rc == 0)
        rc = sp_run_source_run_regions(src, full, &data);
    if (rc == 0 && data.calls.n) {
        int64_t *rows = malloc((skeleton->num_names ? skeleton->num_names : 1) * sizeof *rows);
        if (rows) {
            free(data.row_of_region);
            data.row_of_region = rows;
            p->row_of_region = rows;
            rows_of_rank(p, rank);
            p->row_of_region = NULL;
        }
        int64_t top = -1;
        if (!rows || (p->with_ranks && (top = sp_path_tree_child(p->tree, -1, SP_PATH_RANK,
                                                                 rank)) < 0) ||
            sp_path_tree_add(p->tree, skeleton, &data, top, p->with_ranks, NULL) < 0)
            rc = -1;
        p->calls += data.calls.n;
    }
    sp_rank_data_free(&data);
    sp_profile_free(full);
    return rc;
}

int sp_path_tree_stream(sp_path_tree *tree, const sp_run_source *src, const sp_selection *sel,
                        int with_ranks, uint64_t *calls, char *why, size_t whylen)
{
    const sp_profile *profile = src->profile;
    *calls = 0;
    const char *reason = sp_run_source_unstreamable(src);
    if (reason) {
        snprintf(why, whylen, "%s", reason);
        return 1;
    }
    tree_pass p = {.tree = tree, .profile = profile, .with_ranks = with_ranks};
    int rc = sp_stream_filter_init(&p.filter, src, sel, why, whylen);
    if (rc != 0)
        return rc;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    if (num_ranks < 0)
        rc = -1;
    if (rc == 0 && sp_stream_check_run(src, ranks, num_ranks, NULL, why, whylen))
        rc = 1;
    sp_call_visitor visitor = {tree_enter, tree_exit, &p};
    int64_t *rows = NULL;
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        long file = sp_stream_rank_file(src, ranks[k]);
        if (file < 0)
            continue; /* no rows: no calls */
        if (src->shapes[file].has_fork && sp_selection_grafts(sel)) {
            rc = graft_rank_from_file(&p, src, sel, ranks[k], file, why, whylen);
            continue;
        }
        if (!rows && !(rows = malloc((profile->num_names ? profile->num_names : 1) *
                                     sizeof *rows))) {
            rc = -1;
            break;
        }
        p.row_of_region = rows;
        rows_of_rank(&p, ranks[k]);
        p.rank = ranks[k];
        p.rank_node = -1;
        p.cached_node = -2;
        sp_stream_filter_rank(&p.filter, ranks[k]);
        sp_rank_stream_info info;
        rc = sp_stream_rank(src, ranks[k], sp_rank_clock_offset(profile, ranks[k]), &visitor,
                            &info, why, whylen);
        sp_rank_stream_info_free(&info);
    }
    if (rc < 0)
        snprintf(why, whylen, "out of memory");
    *calls = p.calls;
    free(rows);
    sp_stream_filter_free(&p.filter);
    free(ranks);
    return rc;
}
