/* lane_spill.h - the slice events of a rank's lanes set aside while the
 * rank streams once, then handed back lane by lane (docs/stream.md,
 * "Exports", perfetto): a trace written lane after lane needs each lane's
 * events together, and the stream interleaves them.
 *
 * Each lane keeps one block in memory (at most 64 KiB, smaller when the
 * rank has many lanes); a full block goes to one temporary file ($TMPDIR,
 * else /tmp, unlinked at once) and the lane remembers where.  An event is
 * 2 to 4 varints (time delta on the lane, region and kind, MPI event):
 * about 4 bytes for a call's begin or end. */
#ifndef SP_EXPORT_LANE_SPILL_H
#define SP_EXPORT_LANE_SPILL_H

#include <stddef.h>
#include <stdint.h>

typedef struct sx_lane_spill sx_lane_spill;

/* A spill for num_lanes lanes; NULL when no temporary file can be made or
 * out of memory (the caller then makes one pass per lane). */
sx_lane_spill *sx_lane_spill_open(size_t num_lanes);
/* One slice event of `lane` (its begin or end at t, the call's region and
 * MPI event).  When a block cannot be kept (the file cannot grow: a full
 * disk; out of memory) the lane is lost: its later events are dropped, and
 * the caller streams that lane once more on its own instead. */
void sx_lane_spill_put(sx_lane_spill *s, size_t lane, int64_t t, int begin, uint32_t region,
                       uint64_t event);
/* Was the lane lost (sx_lane_spill_put)? */
int sx_lane_spill_lost(const sx_lane_spill *s, size_t lane);
typedef int (*sx_lane_event_fn)(void *ctx, int64_t t, int begin, uint32_t region,
                                uint64_t event);
/* The events of `lane` in the order they were put, to fn (which returns 0,
 * else replay stops with -1).  0, -1. */
int sx_lane_spill_replay(sx_lane_spill *s, size_t lane, sx_lane_event_fn fn, void *ctx);
void sx_lane_spill_close(sx_lane_spill *s);

#endif
