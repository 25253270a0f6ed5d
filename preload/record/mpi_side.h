/* mpi_side.h - side data attached to recorded calls of MPI functions
 * (bytes, peer, tag, communicator), and calls counted without events (MPI
 * polling calls).  Kept per lane, apart from the events so the hot path of
 * sp_begin/sp_end does not change: a record names its event by (region,
 * ordinal among the region's kept events on the lane), which the writer
 * matches (src/capture/capture_mpi.c). */
#ifndef SCOPEPROF_MPI_SIDE_H
#define SCOPEPROF_MPI_SIDE_H

#include "recorder.h"

#define SP_MPI_SIDE_BLOCK 1024

struct sp_mpi_side_block {
    struct sp_mpi_side_block *next;
    uint32_t used;          /* published (release) by the owner */
    sp_capture_mpi records[SP_MPI_SIDE_BLOCK];
};

/* One per lane (struct sp_lane.mpi_side), created on the lane's first MPI
 * call; the owner thread appends, the writer reads under lane->lock. */
struct sp_mpi_side {
    struct sp_mpi_side_block *head, *tail;   /* list changes under lane->lock */
    uint64_t total;         /* records appended, published (release) */
    uint64_t skip;          /* records dropped by sp_reset (lane->lock) */
    uint64_t first;         /* number of the head block's first record (the
                               blocks before it were spilled and freed) */
    /* Per region: calls of it this lane kept as events since the last
     * sp_reset, i.e. the ordinal of the next one minus 1.  The hot path
     * counts nothing per region (docs/hot-path.md), so MPI regions count
     * their own (owner thread only). */
    uint64_t *kept;
    uint32_t num_kept;
};

/* Close the innermost call of `region` (sp_profiler_end) and attach `side`
 * to it (thread, region and ordinal are filled in here).  Nothing is
 * attached when the call was not kept as an event. */
void sp_record_end_with_side(struct sp_profiler *p, int region, const sp_capture_mpi *side);

/* Count a call of `region` from tick `start` to `end` without an event:
 * its counters grow as for ON_FULL=stop (completed and dropped), so the
 * file has its number of calls and total time but no timeline entry. */
void sp_record_aggregated(struct sp_profiler *p, int region, int64_t start, int64_t end);

/* The writer's view (lane->lock held): calls fn for each record. */
void sp_mpi_side_each(struct sp_lane *lane, void (*fn)(void *ctx, const sp_capture_mpi *r),
                      void *ctx);
/* sp_reset: forget the records so far (lane->lock held). */
void sp_mpi_side_reset(struct sp_lane *lane);

/* Spilling (lifecycle/spill.c, on the lane's own thread, spill lock held):
 * hand every record to `write` in runs (nonzero stops with that value),
 * then, once the spill file holds them, sp_mpi_side_drop frees them. */
int sp_mpi_side_spill(struct sp_lane *lane,
                      int (*write)(void *ctx, const sp_capture_mpi *records, size_t n), void *ctx);
void sp_mpi_side_drop(struct sp_lane *lane);

#endif
