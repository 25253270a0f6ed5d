/* buffer.c - the slow paths behind the hot path: growing a lane's stack of
 * open calls and its per-region counters, and moving to a new event chunk
 * (every SP_CHUNK_EVENTS calls).  The memory cap is enforced here, never on
 * every call. */
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

uint64_t sp_buffer_bytes;

int sp_lane_grow_stack(struct sp_lane *lane)
{
    uint32_t cap = lane->stack_cap ? lane->stack_cap * 2 : 64;
    struct sp_open *grown = malloc((size_t)cap * sizeof *grown);
    if (!grown)
        return -1;
    uint32_t depth = lane->depth;
    for (uint32_t i = 0; i < depth; i++) {
        grown[i].start = SP_LOAD(lane->stack[i].start);
        grown[i].region = SP_LOAD(lane->stack[i].region);
        grown[i].task = SP_LOAD(lane->stack[i].task);
    }
    /* Readers on other threads may still hold the old array (exit-time
     * reports): it is retired, not freed.  Geometric growth bounds the
     * waste to the size of the live stack. */
    pthread_mutex_lock(&lane->lock);
    lane->stack = grown;
    lane->stack_cap = cap;
    pthread_mutex_unlock(&lane->lock);
    return 0;
}

int sp_lane_grow_counters(struct sp_lane *lane, uint32_t region)
{
    uint32_t n = lane->num_counters ? lane->num_counters : 16;
    while (n <= region)
        n *= 2;
    struct sp_counters *grown = calloc(n, sizeof *grown);
    if (!grown)
        return -1;
    pthread_mutex_lock(&lane->lock);
    for (uint32_t i = 0; i < lane->num_counters; i++) {
        grown[i].abandoned = SP_LOAD(lane->counters[i].abandoned);
        grown[i].completed = SP_LOAD(lane->counters[i].completed);
        grown[i].total_ns = SP_LOAD(lane->counters[i].total_ns);
        grown[i].min_ns = SP_LOAD(lane->counters[i].min_ns);
        grown[i].max_ns = SP_LOAD(lane->counters[i].max_ns);
        grown[i].dropped = SP_LOAD(lane->counters[i].dropped);
        grown[i].dropped_ns = SP_LOAD(lane->counters[i].dropped_ns);
        grown[i].aggregated = SP_LOAD(lane->counters[i].aggregated);
    }
    lane->counters = grown; /* old array retired, as for the stack */
    SP_RELEASE(lane->num_counters, n);
    pthread_mutex_unlock(&lane->lock);
    return 0;
}

int sp_lane_next_chunk(struct sp_lane *lane, int64_t now)
{
    /* At the memory cap the full chunk is spilled and reused, or the lane
     * stops keeping events (lifecycle/spill.c); periodic spilling is
     * checked there too. */
    int (*chunk_full)(struct sp_lane *, int64_t) = SP_LOAD(sp_record_hooks.chunk_full);
    if (chunk_full && chunk_full(lane, now))
        return 0;
    /* Not calloc: zeroing 96 KiB per chunk cost more than the calls stored
     * in it; only the header needs values, events are written before use. */
    struct sp_chunk *chunk = malloc(sizeof *chunk);
    if (chunk) {
        chunk->next = NULL;
        chunk->count = 0;
        chunk->converted = 0;
        chunk->await_ns = NULL;
    }
    if (!chunk) {
        /* No memory for more events: keep exact counts and totals only
         * (the hot path never writes past a full chunk). */
        if (!lane->stopped)
            sp_log("out of memory for more events on thread %lld; from now on its calls are "
                   "counted but not kept as events", (long long)lane->thread->index);
        lane->stopped = 1;
        return -1;
    }
    __atomic_add_fetch(&sp_buffer_bytes, sizeof *chunk, __ATOMIC_RELAXED);
    pthread_mutex_lock(&lane->lock);
    lane->tail->count = SP_CHUNK_EVENTS;
    lane->tail->next = chunk;
    lane->tail = chunk;
    SP_RELEASE(lane->used, 0);
    pthread_mutex_unlock(&lane->lock);
    return 0;
}
