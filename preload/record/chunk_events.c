/* chunk_events.c - the 16-byte events of a chunk (recorder.h, struct
 * sp_slot): the wide entries of the calls that do not fit, their reading
 * as the 24-byte events the writer takes, and their conversion to ns.
 *
 * The wide entries of a chunk are mapped on its first wide call with room
 * for every event of the chunk, and never moved: a reader on another thread
 * (finalize, statistics) that sees an event published sees its entry at a
 * fixed address, with no lock between them.  Only the pages entries are
 * written to become resident; they are counted against the memory cap as
 * they are touched. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "recorder.h"

#define WIDE_BYTES ((size_t)SP_CHUNK_EVENTS * sizeof(struct sp_wide))
#define WIDE_PER_PAGE (4096 / sizeof(struct sp_wide))

int sp_chunk_add_wide(struct sp_chunk *k, int64_t end, uint32_t region, int32_t task)
{
    if (!k->wide) {
        void *m = mmap(NULL, WIDE_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        if (m == MAP_FAILED)
            return -1;
        SP_RELEASE(k->wide, (struct sp_wide *)m);
    }
    uint32_t n = k->num_wide;
    if (n >= SP_CHUNK_EVENTS)
        return -1; /* cannot happen: one entry per event at most */
    if (n % WIDE_PER_PAGE == 0)
        __atomic_add_fetch(&sp_buffer_bytes, 4096, __ATOMIC_RELAXED);
    struct sp_wide *w = &k->wide[n];
    SP_STORE(w->end, end);
    SP_STORE(w->region, region);
    SP_STORE(w->task, task);
    /* the event's publication (lane->next, release) orders this for readers */
    SP_STORE(k->num_wide, n + 1);
    return 0;
}

void sp_chunk_free_wide(struct sp_chunk *k)
{
    if (!k->wide)
        return;
    uint32_t pages = (k->num_wide + WIDE_PER_PAGE - 1) / WIDE_PER_PAGE;
    munmap(k->wide, WIDE_BYTES);
    __atomic_sub_fetch(&sp_buffer_bytes, (uint64_t)pages * 4096, __ATOMIC_RELAXED);
    k->wide = NULL;
    k->num_wide = 0;
    k->wide_converted = 0;
}

void sp_chunk_reader_at(struct sp_chunk_reader *r, const struct sp_chunk *k, uint32_t index)
{
    r->chunk = k;
    r->index = index;
    r->wide = 0;
    if (!SP_ACQUIRE(k->wide))
        return;
    for (uint32_t i = 0; i < index; i++)
        r->wide += SP_LOAD(k->events[i].region) == SP_SLOT_WIDE;
}

void sp_chunk_reader_next(struct sp_chunk_reader *r, sp_event *out)
{
    const struct sp_slot *s = &r->chunk->events[r->index++];
    int64_t start = SP_LOAD(s->start);
    uint32_t region = SP_LOAD(s->region);
    out->start = start;
    if (region != SP_SLOT_WIDE) {
        out->end = start + (int64_t)(uint32_t)(SP_LOAD(s->end_low) - (uint32_t)start);
        out->region = region;
        out->task = SP_TASK_NONE;
        return;
    }
    const struct sp_wide *w = &SP_ACQUIRE(r->chunk->wide)[r->wide++];
    out->end = SP_LOAD(w->end);
    out->region = SP_LOAD(w->region);
    out->task = SP_LOAD(w->task);
}

void sp_chunk_expand(const struct sp_chunk *k, uint32_t from, uint32_t to, sp_event *out)
{
    struct sp_chunk_reader r;
    sp_chunk_reader_at(&r, k, from);
    for (uint32_t i = from; i < to; i++)
        sp_chunk_reader_next(&r, out++);
}

void sp_chunk_convert(struct sp_chunk *k, size_t end)
{
    if (k->converted >= end)
        return;
    if (!sp_timer_tsc) { /* ticks are ns */
        k->wide_converted = 0;
        for (uint32_t i = 0; i < end; i++)
            k->wide_converted += k->events[i].region == SP_SLOT_WIDE;
        k->converted = (uint32_t)end;
        return;
    }
    struct sp_chunk_reader r;
    r.chunk = k;
    r.index = k->converted;
    r.wide = k->wide_converted;
    int64_t latest = INT64_MIN;
    for (uint32_t i = k->converted; i < end; i++) {
        sp_event e;
        sp_chunk_reader_next(&r, &e);
        if (e.end > latest)
            latest = e.end;
    }
    sp_timer_convert_begin(latest);
    size_t hint = 0;
    uint32_t w = k->wide_converted;
    for (uint32_t i = k->converted; i < end; i++) {
        struct sp_slot *s = &k->events[i];
        int64_t start = sp_timer_convert_tick(s->start, &hint);
        if (s->region == SP_SLOT_WIDE) {
            k->wide[w].end = sp_timer_convert_tick(k->wide[w].end, &hint);
            w++;
        } else {
            int64_t tick_end = s->start + (int64_t)(uint32_t)(s->end_low - (uint32_t)s->start);
            int64_t ns_end = sp_timer_convert_tick(tick_end, &hint);
            /* Below 2^32 ns whenever a tick lasts at most 1 ns (a TSC of
             * 1 GHz or more); a slower one would lose the excess. */
            if (ns_end - start > (int64_t)UINT32_MAX)
                ns_end = start + (int64_t)UINT32_MAX;
            s->end_low = (uint32_t)ns_end;
        }
        s->start = start;
    }
    sp_timer_convert_end();
    k->wide_converted = w;
    k->converted = (uint32_t)end;
}
