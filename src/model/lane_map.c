/* Open-addressing (linear probing) map from lane id to the lane's top call. */
#include "model/lane_map.h"

#include <stdlib.h>

enum { INITIAL_CAPACITY = 16 };

static void clear_slots(sp_lane_slot *slots, size_t capacity)
{
    for (size_t i = 0; i < capacity; i++)
        slots[i].top = INT64_MIN;
}

static size_t home_of(int64_t lane, size_t capacity)
{
    /* Fibonacci hashing spreads consecutive ids (threads, tasks) apart. */
    uint64_t h = (uint64_t)lane * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32) & (capacity - 1);
}

int sp_lane_map_init(sp_lane_map *map, size_t max_capacity)
{
    map->capacity = INITIAL_CAPACITY;
    map->count = 0;
    map->max_capacity = max_capacity < INITIAL_CAPACITY ? INITIAL_CAPACITY : max_capacity;
    map->slots = malloc(map->capacity * sizeof *map->slots);
    if (!map->slots)
        return -1;
    clear_slots(map->slots, map->capacity);
    return 0;
}

void sp_lane_map_free(sp_lane_map *map)
{
    free(map->slots);
    map->slots = NULL;
}

static sp_lane_slot *probe(sp_lane_slot *slots, size_t capacity, int64_t lane)
{
    size_t i = home_of(lane, capacity);
    while (slots[i].top != INT64_MIN && slots[i].lane != lane)
        i = (i + 1) & (capacity - 1);
    return &slots[i];
}

/* Doubles the table (keeping it at most half full). */
static int grow(sp_lane_map *map)
{
    size_t capacity = map->capacity * 2;
    if (capacity > map->max_capacity)
        return -1;
    sp_lane_slot *slots = malloc(capacity * sizeof *slots);
    if (!slots)
        return -1;
    clear_slots(slots, capacity);
    for (size_t i = 0; i < map->capacity; i++)
        if (map->slots[i].top != INT64_MIN)
            *probe(slots, capacity, map->slots[i].lane) = map->slots[i];
    free(map->slots);
    map->slots = slots;
    map->capacity = capacity;
    return 0;
}

sp_lane_slot *sp_lane_map_slot(sp_lane_map *map, int64_t lane)
{
    sp_lane_slot *slot = probe(map->slots, map->capacity, lane);
    if (slot->top != INT64_MIN)
        return slot;
    if (2 * (map->count + 1) > map->capacity) {
        if (grow(map) != 0)
            return NULL;
        slot = probe(map->slots, map->capacity, lane);
    }
    slot->lane = lane;
    slot->top = -1;
    map->count++;
    return slot;
}
