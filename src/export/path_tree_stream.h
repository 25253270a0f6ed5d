/* path_tree_stream.h - the call-path tree of a run source (folded stacks,
 * the flame graph) built as the calls stream past (docs/stream.md,
 * "Exports"): the tree sp_path_tree_add builds from every selected rank
 * after sp_rank_data_load (and the graft, when the selection grafts), node
 * for node in the same order. */
#ifndef SP_EXPORT_PATH_TREE_STREAM_H
#define SP_EXPORT_PATH_TREE_STREAM_H

#include "scopeprof/export.h"
#include "scopeprof/stream.h"
#include "stream_filter.h"

/* with_ranks: each rank's calls under its SP_PATH_RANK node and their lane's
 * SP_PATH_LANE node (folded); else at the top (the flame graph).  Node
 * sources are the rows' of the run source's skeleton, which outlives the
 * tree's use.  *calls: the calls added.  0; 1 when this run must be read in
 * memory (why: MPI columns, a problem in a file, ...); -1 out of memory. */
int sp_path_tree_stream(sp_path_tree *tree, const sp_run_source *src, const sp_selection *sel,
                        int with_ranks, uint64_t *calls, char *why, size_t whylen);

/* One rank's step of sp_path_tree_stream, for an exporter that writes a
 * tree per rank (prof); the run's checks (sp_stream_check_run) are the
 * caller's.  filter: sp_stream_filter_init for src.  *calls grows by the
 * calls added.  0, 1 (why), -1 out of memory. */
int sp_path_tree_stream_rank(sp_path_tree *tree, const sp_run_source *src,
                             sp_stream_filter *filter, uint32_t rank, int with_ranks,
                             uint64_t *calls, char *why, size_t whylen);

#endif
