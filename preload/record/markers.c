/* markers.c - the scope-profiler C marker API, recording into per-thread
 * lanes.  sp_begin/sp_end take no lock and make no syscall after a thread's
 * first call (clock_gettime(CLOCK_MONOTONIC) is served by the vDSO). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

static int filtering; /* include/exclude globs configured */
static int unmatched_reports;

void sp_markers_init(void)
{
    filtering = sp_cfg.num_include || sp_cfg.num_exclude;
}

static void set_error(struct sp_profiler *p, struct sp_lane *lane, sp_status s)
{
    if (lane) {
        if (lane->last_error != s)
            lane->last_error = s;
    } else if (p) {
        SP_STORE(p->last_error, s);
    }
}

/* ---- the hot path ------------------------------------------------------- */

/* An id that was never returned by sp_region: reported (the first few
 * times only, misuse in a loop must not flood stderr) and ignored. */
static __attribute__((noinline, cold)) void report_invalid_id(int region)
{
    static int reports;
    int n = __atomic_add_fetch(&reports, 1, __ATOMIC_RELAXED);
    if (n <= 10)
        sp_log("sp_begin/sp_end with region id %d, which no sp_region call returned; "
               "the call is ignored%s", region,
               n == 10 ? " (further invalid ids are not reported)" : "");
}

static inline int region_valid(struct sp_profiler *p, int region)
{
    if (SP_UNLIKELY((uint32_t)region >= SP_ACQUIRE(p->num_regions))) {
        report_invalid_id(region);
        return 0;
    }
    if (SP_UNLIKELY(filtering) && !sp_region_get(p, (uint32_t)region)->wanted)
        return 0;
    return 1;
}

/* Push an open call; returns its stack position or -1. */
static inline int64_t begin_call(struct sp_profiler *p, int region)
{
    struct sp_lane *lane = sp_lane_get(p);
    if (SP_UNLIKELY(!lane)) {
        set_error(p, NULL, SP_ERR_NO_MEMORY);
        return -1;
    }
    uint32_t depth = lane->depth;
    if (SP_UNLIKELY(depth == lane->stack_cap) && sp_lane_grow_stack(lane) != 0) {
        set_error(p, lane, SP_ERR_NO_MEMORY);
        return -1;
    }
    struct sp_open *o = &lane->stack[depth];
    int32_t task = lane->thread->task;
    SP_STORE(o->region, (uint32_t)region);
    SP_STORE(o->task, task);
    if (SP_UNLIKELY(task >= 0))
        sp_task_call_begins(lane, depth, task);
    SP_RELEASE(lane->depth, depth + 1);
    if (SP_UNLIKELY(lane->last_error != SP_OK))
        lane->last_error = SP_OK;
    /* The clock is read last, so the bookkeeping above is not timed. */
    SP_STORE(o->start, sp_ticks());
    return depth;
}

/* `caller`: return address of the sp_end call, to name where it was made
 * (and the region's registration) when call sites are on. */
static __attribute__((noinline, cold)) void report_unmatched(struct sp_profiler *p, int region,
                                                             uintptr_t caller)
{
    /* Misuse in a loop must not flood stderr. */
    int n = __atomic_add_fetch(&unmatched_reports, 1, __ATOMIC_RELAXED);
    if (n > 10)
        return;
    struct sp_region *r = sp_region_get(p, (uint32_t)region);
    char where[2600] = "";
    if (sp_cfg.callsites) {
        uintptr_t frames[SP_CALLSITE_FRAMES];
        char at[1200], registered[1200];
        sp_callsite_describe(frames, sp_callsite_capture(caller, frames), at, sizeof at);
        /* The region's frames may be backfilled concurrently. */
        uintptr_t reg_frames[SP_CALLSITE_FRAMES];
        pthread_mutex_lock(&p->lock);
        int num_reg_frames = r->num_frames;
        memcpy(reg_frames, r->frames, sizeof reg_frames);
        pthread_mutex_unlock(&p->lock);
        sp_callsite_describe(reg_frames, num_reg_frames, registered, sizeof registered);
        if (at[0] || registered[0])
            snprintf(where, sizeof where, " (sp_end at %s; region registered at %s)",
                     at[0] ? at : "?", registered[0] ? registered : "?");
    }
    sp_log("sp_end('%s') without a matching sp_begin%s%s", r->name, where,
           n == 10 ? " (further unmatched ends are not reported)" : "");
}

/* Close the open call at stack position pos with end time `now`. */
/* Closing a call that is not the innermost one: keep the others in order. */
static __attribute__((noinline, cold)) void remove_from_stack(struct sp_lane *lane, uint32_t pos,
                                                               uint32_t depth)
{
    for (uint32_t i = pos; i + 1 < depth; i++) {
        SP_STORE(lane->stack[i].start, lane->stack[i + 1].start);
        SP_STORE(lane->stack[i].region, lane->stack[i + 1].region);
        SP_STORE(lane->stack[i].task, lane->stack[i + 1].task);
        if (lane->await_base && i + 1 < lane->await_cap)
            lane->await_base[i] = lane->await_base[i + 1];
    }
}

/* Inlined into each caller: as a function of its own, saving and restoring
 * its registers cost as much as the rest of it. */
static inline __attribute__((always_inline)) void end_call(struct sp_lane *lane, uint32_t pos,
                                                           int64_t now)
{
    struct sp_open *o = &lane->stack[pos];
    int64_t start = o->start;
    uint32_t region = o->region;
    int32_t task = o->task;
    int64_t await = 0;
    if (SP_UNLIKELY(task >= 0))
        await = sp_task_call_await(lane, pos, task);
    uint32_t depth = lane->depth;
    if (SP_UNLIKELY(pos + 1 != depth))
        remove_from_stack(lane, pos, depth);
    SP_RELEASE(lane->depth, depth - 1);

    int64_t d = now - start;
    /* Counters are grown here, not in sp_begin: a call is counted as entered
     * while it is open on the stack (sum_counters), so sp_begin touches
     * nothing but the stack. */
    if (SP_UNLIKELY(region >= lane->num_counters) && sp_lane_grow_counters(lane, region) != 0)
        return; /* out of memory: this call is lost, the others are not */
    struct sp_counters *c = &lane->counters[region];
    SP_STORE(c->completed, c->completed + 1);
    SP_STORE(c->total_ns, c->total_ns + d);
    if (c->completed == 1 || d < c->min_ns)
        SP_STORE(c->min_ns, d);
    if (d > c->max_ns)
        SP_STORE(c->max_ns, d);

    /* Every 256th exit of the thread samples its CPU time (and checks
     * periodic spilling and a deferred signal exit): the position in the
     * event chunk (4096 events, a multiple of 256) counts exits for free. */
    uint32_t tick;
    if (SP_UNLIKELY(lane->stopped)) {
        SP_STORE(c->dropped, c->dropped + 1);
        SP_STORE(c->dropped_ns, c->dropped_ns + d);
        tick = ++lane->exits;
    } else {
        uint32_t used = lane->used;
        sp_event *e = &lane->tail->events[used];
        e->start = start;
        e->end = now;
        e->region = region;
        e->task = task;
        if (SP_UNLIKELY(task >= 0))
            sp_task_store_await(lane, used, await);
        SP_RELEASE(lane->used, used + 1);
        if (SP_UNLIKELY(used + 1 == SP_CHUNK_EVENTS))
            sp_lane_next_chunk(lane, now);
        tick = used + 1;
    }
    sp_timer_check(now);
    if (SP_UNLIKELY((tick & SP_CPU_SAMPLE_MASK) == 0)) {
        SP_STORE(lane->thread->cpu_ns, sp_thread_cpu_ns());
        sp_record_tick(lane, now);
    }
}

/* Innermost open call of `region` in the current task, or -1. */
static inline int64_t find_open(const struct sp_lane *lane, int region)
{
    int32_t task = lane->thread->task;
    for (uint32_t i = lane->depth; i-- > 0;)
        if (lane->stack[i].region == (uint32_t)region && lane->stack[i].task == task)
            return i;
    return -1;
}

/* The recording part of sp_begin/sp_end, out of line: the disabled path
 * (no profiler, or finalized) then returns before the function saves a
 * single register. */
static __attribute__((noinline)) void begin_active(sp_profiler *p, int region)
{
    if (region_valid(p, region))
        begin_call(p, region);
}

static inline __attribute__((always_inline)) void profiler_begin(sp_profiler *p, int region)
{
    if (SP_UNLIKELY(!p || !SP_LOAD(p->active)))
        return;
    begin_active(p, region);
}

static __attribute__((noinline)) void end_active(sp_profiler *p, int region, uintptr_t caller);

static inline __attribute__((always_inline)) void profiler_end(sp_profiler *p, int region)
{
    /* Disabled or finalized: one branch, no clock read. */
    if (SP_UNLIKELY(!p || !SP_LOAD(p->active)))
        return;
    end_active(p, region, (uintptr_t)__builtin_return_address(0));
}

static __attribute__((noinline)) void end_active(sp_profiler *p, int region, uintptr_t caller)
{
    int64_t now = sp_ticks();
    struct sp_lane *lane = sp_lane_get(p);
    if (SP_UNLIKELY(!lane))
        return;
    uint32_t depth = lane->depth;
    int64_t pos;
    /* The innermost open call is the usual case; only valid, wanted regions
     * are ever pushed, so a match needs no further check of the id. */
    if (SP_LIKELY(depth && lane->stack[depth - 1].region == (uint32_t)region &&
                  lane->stack[depth - 1].task == lane->thread->task)) {
        pos = depth - 1;
    } else {
        if (!region_valid(p, region))
            return;
        pos = find_open(lane, region);
    }
    if (SP_UNLIKELY(pos < 0)) {
        report_unmatched(p, region, caller);
        set_error(p, lane, SP_ERR_UNMATCHED_END);
        return;
    }
    end_call(lane, (uint32_t)pos, now);
    if (SP_UNLIKELY(lane->last_error != SP_OK))
        lane->last_error = SP_OK;
}

SP_EXPORT void sp_profiler_begin(sp_profiler *p, int region)
{
    profiler_begin(p, region);
}

SP_EXPORT void sp_profiler_end(sp_profiler *p, int region)
{
    profiler_end(p, region);
}

SP_EXPORT int sp_profiler_end_last(sp_profiler *p)
{
    int64_t now = sp_ticks();
    if (!p || !SP_LOAD(p->active))
        return SP_ERR_UNMATCHED_END;
    struct sp_lane *lane = sp_lane_get(p);
    if (!lane || lane->depth == 0) {
        set_error(p, lane, SP_ERR_UNMATCHED_END);
        return SP_ERR_UNMATCHED_END;
    }
    end_call(lane, lane->depth - 1, now);
    lane->last_error = SP_OK;
    return SP_OK;
}

SP_EXPORT sp_scope sp_profiler_scope_begin(sp_profiler *p, int region)
{
    sp_scope s = {p, region, -1};
    if (!p || !SP_LOAD(p->active) || !region_valid(p, region))
        return s;
    s.slot = begin_call(p, region);
    return s;
}

SP_EXPORT int sp_scope_end(sp_scope *s)
{
    int64_t now = sp_ticks();
    if (!s || s->slot < 0)
        return SP_ERR_UNMATCHED_END;
    struct sp_profiler *p = s->profiler;
    if (!p || !SP_LOAD(p->active) || !region_valid(p, s->region)) {
        s->slot = -1;
        return SP_ERR_UNMATCHED_END;
    }
    struct sp_lane *lane = sp_lane_get(p);
    /* Only the innermost open call may end: a token of an outer call is
     * refused (and stays valid) while calls opened after it are open. */
    if (!lane || (uint64_t)s->slot + 1 != lane->depth ||
        lane->stack[s->slot].region != (uint32_t)s->region) {
        set_error(p, lane, SP_ERR_UNMATCHED_END);
        return SP_ERR_UNMATCHED_END;
    }
    end_call(lane, (uint32_t)s->slot, now);
    s->slot = -1;
    lane->last_error = SP_OK;
    return SP_OK;
}

SP_EXPORT void sp_begin(int region)
{
    profiler_begin(sp_current_profiler(), region);
}

SP_EXPORT void sp_end(int region)
{
    profiler_end(sp_current_profiler(), region);
}

SP_EXPORT int sp_end_last(void) { return sp_profiler_end_last(sp_current_profiler()); }
