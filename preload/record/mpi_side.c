/* mpi_side.c - see mpi_side.h. */
#include <stdlib.h>

#include "mpi_side.h"

static __attribute__((noinline, cold)) struct sp_mpi_side_block *new_block(struct sp_lane *lane)
{
    if (!lane->mpi_side) {
        struct sp_mpi_side *side = calloc(1, sizeof *side);
        if (!side)
            return NULL;
        pthread_mutex_lock(&lane->lock);
        lane->mpi_side = side;
        pthread_mutex_unlock(&lane->lock);
    }
    struct sp_mpi_side_block *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    __atomic_add_fetch(&sp_buffer_bytes, sizeof *b, __ATOMIC_RELAXED);
    struct sp_mpi_side *side = lane->mpi_side;
    pthread_mutex_lock(&lane->lock);
    if (side->tail)
        side->tail->next = b;
    else
        side->head = b;
    side->tail = b;
    pthread_mutex_unlock(&lane->lock);
    return b;
}

/* The ordinal of the call of `region` just kept: its count, grown as needed.
 * 0 when out of memory. */
static uint64_t next_ordinal(struct sp_mpi_side *side, uint32_t region)
{
    if (region >= side->num_kept) {
        uint32_t n = side->num_kept ? side->num_kept : 64;
        while (n <= region)
            n *= 2;
        uint64_t *grown = realloc(side->kept, (size_t)n * sizeof *grown);
        if (!grown)
            return 0;
        for (uint32_t i = side->num_kept; i < n; i++)
            grown[i] = 0;
        side->kept = grown;
        side->num_kept = n;
    }
    return ++side->kept[region];
}

void sp_record_end_with_side(struct sp_profiler *p, int region, const sp_capture_mpi *side)
{
    struct sp_lane *lane = p ? sp_lane_of(p) : NULL;
    if (!lane) {
        sp_profiler_end(p, region);
        return;
    }
    /* Kept as an event = the lane's tail moved (not filtered, not
     * unmatched, not counted without an event at the memory cap). */
    struct sp_chunk *tail = lane->tail;
    const struct sp_slot *next = lane->next;
    sp_profiler_end(p, region);
    if (lane->tail == tail && lane->next == next)
        return;
    struct sp_mpi_side_block *b = lane->mpi_side ? lane->mpi_side->tail : NULL;
    if (!b || b->used == SP_MPI_SIDE_BLOCK)
        b = new_block(lane);
    uint64_t ordinal = b ? next_ordinal(lane->mpi_side, (uint32_t)region) : 0;
    if (!ordinal)
        return; /* out of memory: the call keeps -1 columns */
    sp_capture_mpi *r = &b->records[b->used];
    *r = *side;
    r->thread = lane->thread->index;
    r->region = (uint32_t)region;
    r->ordinal = ordinal;
    SP_RELEASE(b->used, b->used + 1);
    SP_RELEASE(lane->mpi_side->total, lane->mpi_side->total + 1);
}

void sp_record_aggregated(struct sp_profiler *p, int region, int64_t start, int64_t end)
{
    if (!p || !SP_LOAD(p->active) || (uint32_t)region >= SP_ACQUIRE(p->num_regions) ||
        !sp_region_get(p, (uint32_t)region)->wanted)
        return;
    struct sp_lane *lane = sp_lane_of(p);
    if (!lane)
        return;
    if ((uint32_t)region >= lane->num_counters && sp_lane_grow_counters(lane, (uint32_t)region) != 0)
        return;
    /* Counted like a call the memory cap dropped: the statistics add the
     * dropped calls to the ones derived from events (marker_api.c). */
    struct sp_counters *c = &lane->counters[region];
    sp_counters_add_dropped(c, end - start);
    SP_STORE(c->aggregated, c->aggregated + 1);
}

void sp_mpi_side_each(struct sp_lane *lane, void (*fn)(void *ctx, const sp_capture_mpi *r),
                      void *ctx)
{
    struct sp_mpi_side *side = lane->mpi_side;
    if (!side)
        return;
    uint64_t k = side->first, skip = side->skip;
    for (struct sp_mpi_side_block *b = side->head; b; b = b->next) {
        uint32_t used = SP_ACQUIRE(b->used);
        for (uint32_t i = 0; i < used; i++, k++)
            if (k >= skip)
                fn(ctx, &b->records[i]);
    }
}

void sp_mpi_side_reset(struct sp_lane *lane)
{
    if (lane->mpi_side) {
        lane->mpi_side->skip = SP_ACQUIRE(lane->mpi_side->total);
        /* sp_reset drops the events: the writer counts from here */
        for (uint32_t i = 0; i < lane->mpi_side->num_kept; i++)
            lane->mpi_side->kept[i] = 0;
    }
}

int sp_mpi_side_spill(struct sp_lane *lane,
                      int (*write)(void *ctx, const sp_capture_mpi *records, size_t n), void *ctx)
{
    struct sp_mpi_side *side = lane->mpi_side;
    if (!side)
        return 0;
    uint64_t k = side->first;
    for (struct sp_mpi_side_block *b = side->head; b; b = b->next) {
        uint32_t used = b->used, from = 0;
        if (k + used <= side->skip) {
            k += used;
            continue;
        }
        if (k < side->skip)
            from = (uint32_t)(side->skip - k);
        int rc = write(ctx, b->records + from, used - from);
        if (rc)
            return rc;
        k += used;
    }
    return 0;
}

void sp_mpi_side_drop(struct sp_lane *lane)
{
    struct sp_mpi_side *side = lane->mpi_side;
    if (!side)
        return;
    pthread_mutex_lock(&lane->lock);
    struct sp_mpi_side_block *b = side->head;
    side->head = side->tail = NULL;
    side->first = side->total;
    pthread_mutex_unlock(&lane->lock);
    while (b) {
        struct sp_mpi_side_block *next = b->next;
        free(b);
        __atomic_sub_fetch(&sp_buffer_bytes, sizeof *b, __ATOMIC_RELAXED);
        b = next;
    }
}
