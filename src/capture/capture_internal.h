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

/* capture_mpi.c: MPI side data matched to events (regions named MPI_*).
 * Create, add the records (the capture's and the spill files'), then feed
 * every event of a thread in recording order to sp_mpi_match_event
 * (threads may interleave), which returns the event's record or NULL.
 * Backwards (the streaming writer): count every event first
 * (sp_mpi_match_count), then per scan rewind and feed the events in
 * reverse recording order to sp_mpi_match_event_back.  -1: out of memory. */
typedef struct sp_mpi_match sp_mpi_match;
sp_mpi_match *sp_mpi_match_new(const sp_capture *c);
int sp_mpi_match_count(sp_mpi_match *m, int64_t thread, uint32_t region);
int sp_mpi_match_add_records(sp_mpi_match *m, const sp_capture_mpi *a, size_t na,
                             const sp_capture_mpi *b, size_t nb);
size_t sp_mpi_match_records(const sp_mpi_match *m);
const sp_capture_mpi *sp_mpi_match_event(sp_mpi_match *m, int64_t thread, uint32_t region);
void sp_mpi_match_rewind(sp_mpi_match *m);
const sp_capture_mpi *sp_mpi_match_event_back(sp_mpi_match *m, int64_t thread, uint32_t region);
void sp_mpi_match_free(sp_mpi_match *m);
/* The MPI columns of p (cells events, all -1), one record stored, and a
 * record's values by column (all -1 for NULL). */
int sp_mpi_alloc_columns(sp_profile *p, size_t cells);
void sp_mpi_store(sp_profile *p, size_t at, const sp_capture_mpi *r);
void sp_mpi_values(const sp_capture_mpi *r, int64_t out[SP_EXTRA_N]);
/* capture_forks.c: the capture's fork edges as event positions.  Feed
 * every event of the regions in `wanted` (others may be fed too) with its
 * output position, in recording order per thread and region; then ask for
 * the position of each call's fork parent.  Functions return 0 or -1 (out
 * of memory). */
typedef struct sp_fork_resolver {
    const sp_capture *c;
    int active;               /* some edge to resolve */
    int linked;               /* after finish: some call has a fork parent */
    uint8_t *wanted;          /* per capture region */
    struct fork_key *keys;
    size_t mask, used;
    int64_t *pairs;           /* (child position, parent position), by child */
    size_t num_pairs;
    int64_t *root_parent;     /* per thread: parent position of its root calls */
    size_t num_threads;
} sp_fork_resolver;
int sp_fork_resolver_init(sp_fork_resolver *r, const sp_capture *c);
int sp_fork_resolver_see(sp_fork_resolver *r, int64_t thread, uint32_t region, uint64_t pos);
int sp_fork_resolver_finish(sp_fork_resolver *r);
/* Position of the fork parent of the call at `pos` (its thread, parent
 * position on its lane or -1, task or -1), or -1. */
int64_t sp_fork_resolver_parent(const sp_fork_resolver *r, uint64_t pos, int64_t thread,
                                int64_t parent, int64_t task);
void sp_fork_resolver_free(sp_fork_resolver *r);

/* p->fork_parent_ids from the capture's fork edges, once call_ids are
 * known (left NULL when no edge names a kept call). */
int sp_capture_add_forks(sp_profile *p, const sp_capture *c, const int64_t *row_of);

#endif /* SCOPEPROF_CAPTURE_INTERNAL_H */
