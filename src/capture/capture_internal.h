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

/* capture_mpi.c: MPI side data matched to events.  Feed every event of a
 * thread in recording order to sp_mpi_match_event (threads may interleave);
 * it returns the event's record or NULL. */
typedef struct sp_mpi_match sp_mpi_match;
sp_mpi_match *sp_mpi_match_new(const sp_capture *c);
const sp_capture_mpi *sp_mpi_match_event(sp_mpi_match *m, int64_t thread, uint32_t region);
void sp_mpi_match_free(sp_mpi_match *m);
/* The MPI columns of p (cells events, all -1), and one record stored. */
int sp_mpi_alloc_columns(sp_profile *p, size_t cells);
void sp_mpi_store(sp_profile *p, size_t at, const sp_capture_mpi *r);

#endif /* SCOPEPROF_CAPTURE_INTERNAL_H */
