/* forks.h - fork edges: which call a worker's call (an OpenMP implicit
 * task) or a new thread's root calls were forked from (docs/tasks.md).
 * Calls are named by (thread, region, ordinal), see model/capture.h. */
#ifndef SCOPEPROF_FORKS_H
#define SCOPEPROF_FORKS_H

#include "recorder.h"

/* The calling thread's innermost open call on p, as the edge's parent
 * (ordinal: the completed calls of its region on this thread so far, which
 * is its ordinal unless the same region recurses inside it).  0 when there
 * is one, -1 otherwise. */
int sp_fork_open_parent(struct sp_profiler *p, sp_fork_edge *edge);
/* The ordinal of the call of `region` the calling thread ended last on p,
 * or -1. */
int64_t sp_fork_last_ordinal(struct sp_profiler *p, uint32_t region);
/* Keep an edge of profiler p (copied; dropped when out of memory). */
void sp_fork_add(struct sp_profiler *p, const sp_fork_edge *edge);
/* p's edges kept since *cursor (0 at first), copied into a malloc'd array
 * (NULL, *count 0 if none or out of memory); *cursor moves past them only
 * when the copy was made. */
sp_fork_edge *sp_forks_since(struct sp_profiler *p, size_t *cursor, size_t *count);

#endif
