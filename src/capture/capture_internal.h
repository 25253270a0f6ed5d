/* capture_internal.h - what the in-memory conversion (capture_to_profile.c)
 * and the streaming writer (capture_stream.c) share. */
#ifndef SCOPEPROF_CAPTURE_INTERNAL_H
#define SCOPEPROF_CAPTURE_INTERNAL_H

#include "model/capture.h"

/* The profile of a capture without its events: one row per region with
 * counts[region] > 0 (row_of[region] = its row or -1), offsets packed in
 * region order, num_events their sum, exclusive totals -1, and the names,
 * region functions, lane tables and metadata.  NULL with err set. */
sp_profile *sp_capture_skeleton(const sp_capture *c, const uint64_t *counts, int64_t *row_of,
                                char *err, size_t errlen);

/* Append to a nesting message where the regions it names were registered. */
void sp_capture_append_callsites(const sp_profile *p, const sp_capture *c,
                                 const int64_t *row_of, char *msg, size_t len);

/* capture_forks.c: p->fork_parent_ids from the capture's fork edges, once
 * call_ids are known (left NULL when no edge names a kept call).  -1 when
 * out of memory. */
int sp_capture_add_forks(sp_profile *p, const sp_capture *c, const int64_t *row_of);

#endif /* SCOPEPROF_CAPTURE_INTERNAL_H */
