/* lane_map.h - small open-addressing map from lane id to the lane's current
 * innermost open call (internal to the reconstruction).
 *
 * Threads and tasks are usually few, so a map beats grouping the calls by
 * lane; its size is capped so that pathological inputs (a lane per call)
 * fall back to grouping instead of exceeding the scratch budget. */
#ifndef SCOPEPROF_LANE_MAP_H
#define SCOPEPROF_LANE_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct sp_lane_slot {
    int64_t lane;
    int64_t top; /* INT64_MIN: slot unused */
} sp_lane_slot;

typedef struct sp_lane_map {
    sp_lane_slot *slots;
    size_t capacity;     /* power of two */
    size_t count;
    size_t max_capacity; /* growth beyond this is refused */
} sp_lane_map;

/* Returns 0, or -1 if out of memory. */
int sp_lane_map_init(sp_lane_map *map, size_t max_capacity);
void sp_lane_map_free(sp_lane_map *map);

/* The slot of `lane`, inserted with top -1 if new; valid until the next
 * insertion.  NULL when the map would outgrow max_capacity or memory. */
sp_lane_slot *sp_lane_map_slot(sp_lane_map *map, int64_t lane);

#endif /* SCOPEPROF_LANE_MAP_H */
