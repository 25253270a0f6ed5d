/* report_fork_stream.h - the merged (grafted) path tree of a rank with fork
 * edges, built while its calls stream past (docs/stream.md, "Ranks with
 * fork edges"). */
#ifndef SCOPEPROF_REPORT_FORK_STREAM_H
#define SCOPEPROF_REPORT_FORK_STREAM_H

#include "report/report_internal.h"
#include "scopeprof/stream.h"

typedef struct sp_fork_stream sp_fork_stream;

/* Whether the selection keeps a call (the report's filters). */
typedef int (*sp_fork_keep_fn)(void *ctx, const sp_stream_call *call);

/* Besides the merged tree, told of every kept call as it enters and exits,
 * in stream order (bare --lanes: the lane trees, which do not graft). */
typedef struct sp_fork_also {
    int (*enter)(void *ctx, const sp_stream_call *call);
    int (*exit)(void *ctx, const sp_stream_call *call);
    void *ctx;
} sp_fork_also;

/* Reads the rank's fork parent ids in windows (rows of `file` only, as the
 * stream reads them) and counts the calls forked from each call id; stream
 * the rank with sp_stream_rank_forks.  graft: sp_selection_grafts; also:
 * NULL, or copied.  0, 1 (fall back, why
 * set), -1 out of memory. */
int sp_fork_stream_open(sp_fork_stream **out, const sp_run_source *src, uint32_t rank,
                        long file, int graft, sp_report_tree *tree, sp_fork_keep_fn keep,
                        void *keep_ctx, const sp_fork_also *also, char *why, size_t whylen);
/* The rank streamed once more after sp_fork_stream_finish, for a per-call
 * hook (sp_report_call_hook): `tree` the finished tree (nothing added),
 * grafted: sp_fork_stream_grafted of that first pass.  The hook sees the
 * calls in the in-memory path's order and the nodes in its numbering;
 * finish adds nothing.  Returns as sp_fork_stream_open. */
int sp_fork_stream_open_hook(sp_fork_stream **out, const sp_run_source *src, uint32_t rank,
                             long file, int graft, sp_report_tree *tree, sp_fork_keep_fn keep,
                             void *keep_ctx, const sp_report_call_hook *hook, int grafted,
                             char *why, size_t whylen);
/* Whether a call was grafted (after the stream). */
int sp_fork_stream_grafted(const sp_fork_stream *fs);
/* The visitor that builds the tree. */
sp_call_visitor sp_fork_stream_visitor(sp_fork_stream *fs);
/* After the stream returned 0: the fork statistics, every fork parent id
 * checked, and the tree's nodes put in the in-memory path's order.  0, 1
 * (fall back, why set), -1 out of memory. */
int sp_fork_stream_finish(sp_fork_stream *fs, char *why, size_t whylen);
/* 1 when the visitor asked to fall back (why copied), else 0. */
int sp_fork_stream_fell_back(const sp_fork_stream *fs, char *why, size_t whylen);
void sp_fork_stream_free(sp_fork_stream *fs);

#endif
