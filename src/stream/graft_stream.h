/* graft_stream.h - a rank with fork edges (events/fork_parent_ids) grafted
 * while its calls stream past: forked work hangs under the call that forked
 * it, as sp_rank_data_graft does in memory (docs/stream.md, "Ranks with
 * fork edges").  Shared by the report's tree (report_fork_stream.c) and the
 * exports' call-path tree (path_tree_stream.c): the client owns the nodes,
 * this module decides under which node each kept call goes and, at the end,
 * in which order the in-memory path would have created them. */
#ifndef SCOPEPROF_STREAM_GRAFT_STREAM_H
#define SCOPEPROF_STREAM_GRAFT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "scopeprof/stream.h"

typedef struct sp_graft_stream sp_graft_stream;

/* What the client does with the calls.  Node ids are the client's (0 to
 * 0x7fffffff); every node the graft is handed gets a preorder key. */
typedef struct sp_graft_sink {
    /* whether the selection keeps the call */
    int (*keep)(void *ctx, const sp_stream_call *call);
    /* the node of call->region under node `parent` (-1: a root, of the
     * call's own lane), made when new; -1 out of memory */
    int64_t (*node)(void *ctx, int64_t parent, const sp_stream_call *call);
    /* a kept call on `node`: entered (enter, may be NULL) and exited (its
     * exclusive time known); 0 or -1 */
    int (*enter)(void *ctx, const sp_stream_call *call, int64_t node);
    int (*exit)(void *ctx, const sp_stream_call *call, int64_t node);
    /* fork statistics (NULL: not kept).  barrier: time from a merged
     * call's end to its fork parent's, added to the fork parent's node;
     * lane_time, from sp_graft_stream_finish: once per (node, own lane) of
     * a merged node, the time of its calls on that lane. */
    void (*barrier)(void *ctx, int64_t node, int64_t ns);
    void (*lane_time)(void *ctx, int64_t node, int64_t ns);
    /* NULL, or every kept call handed over once more in the preorder of
     * the grafted forest (the in-memory path's order when a call is
     * grafted: sp_graft_stream_grafted): deliver_enter as soon as no call
     * to come can precede it (a worker's calls wait for the end of their
     * encountering thread's region), deliver_exit after it, once the call
     * has exited; the rest from sp_graft_stream_finish.  At most 1 Mi
     * calls wait (then the visitor fails, fell_back set).  0 or -1. */
    int (*deliver_enter)(void *ctx, const sp_stream_call *call, int64_t node);
    int (*deliver_exit)(void *ctx, const sp_stream_call *call, int64_t node);
    void *ctx;
} sp_graft_sink;

/* Reads the rank's fork parent ids in windows (rows of `file` only, as the
 * stream reads them) and counts the calls forked from each call id; stream
 * the rank with sp_stream_rank_forks and sp_graft_stream_visitor.  graft:
 * sp_selection_grafts (0: forked calls stay roots of their lanes).  The
 * sink is copied.  0, 1 (fall back to the file in memory, why set), -1 out
 * of memory. */
int sp_graft_stream_open(sp_graft_stream **out, const sp_run_source *src, uint32_t rank,
                         long file, int graft, const sp_graft_sink *sink, char *why,
                         size_t whylen);
sp_call_visitor sp_graft_stream_visitor(sp_graft_stream *gs);
/* After the stream returned 0: every fork parent id checked, the lane
 * times handed to the sink, the calls still waiting delivered.  0, 1
 * (fall back, why set), -1 (the sink failed). */
int sp_graft_stream_finish(sp_graft_stream *gs, char *why, size_t whylen);
/* The nodes the graft was handed, by their first call in the preorder of
 * the grafted forest: the order in which the in-memory path creates them
 * (a parent before its children).  *order is malloc'd; 0 or -1. */
int sp_graft_stream_order(const sp_graft_stream *gs, int64_t **order, size_t *num);
/* Whether a call was grafted: the in-memory path then orders the calls in
 * a preorder of the grafted forest, else in reconstruction order. */
int sp_graft_stream_grafted(const sp_graft_stream *gs);
/* 1 when the visitor asked to fall back (why copied), else 0. */
int sp_graft_stream_fell_back(const sp_graft_stream *gs, char *why, size_t whylen);
void sp_graft_stream_free(sp_graft_stream *gs);

#endif
