/* markers.c - the scope-profiler C marker API, recording into per-thread
 * lanes.  sp_begin/sp_end take no lock and make no syscall after a thread's
 * first call (clock_gettime(CLOCK_MONOTONIC) is served by the vDSO). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"
#include "spill.h"

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

SP_EXPORT const char *sp_error_string(int status)
{
    switch (status) {
    case SP_OK: return "ok";
    case SP_ERR_INACTIVE: return "profiler is not active";
    case SP_ERR_NO_CLOCK: return "no monotonic clock available";
    case SP_ERR_NO_MEMORY: return "out of memory";
    case SP_ERR_IO: return "output file could not be written";
    case SP_ERR_UNMATCHED_END: return "no open call to end";
    case SP_ERR_OPEN_SCOPES: return "a region is still open";
    case SP_ERR_UNSUPPORTED: return "output format not available in this build";
    default: return "unknown status";
    }
}

SP_EXPORT int64_t sp_now_ns(void)
{
    return sp_clock_ns();
}

/* ---- contexts ---------------------------------------------------------- */

SP_EXPORT sp_profiler *sp_create(const char *prefix, int rank)
{
    if (sp_cfg.disable)
        return NULL;
    struct sp_profiler *p = sp_profiler_new(prefix, rank, 0);
    if (p) {
        p->explicit_init = 1;
        p->rank_set = 1;
    }
    return p;
}

SP_EXPORT void sp_destroy(sp_profiler *p)
{
    /* Threads may still be inside a call of this profiler: it is switched
     * off, never written, and its memory stays valid. */
    if (p)
        SP_STORE(p->active, 0);
}

static int region_register(sp_profiler *p, const char *name, const char *file,
                           int line, uintptr_t callsite)
{
    if (!p)
        return SP_INVALID_REGION;
    if (!SP_LOAD(p->active) || !name) {
        SP_STORE(p->last_error, SP_ERR_INACTIVE);
        return SP_INVALID_REGION;
    }
    int want_frames = sp_cfg.callsites && callsite;
    int id = sp_region_lookup(p, name, file, line, NULL, 0, want_frames);
    if (id == SP_REGION_NEEDS_FRAMES) {
        /* A new region (or one without a call site yet): walk the stack
         * once, outside the profiler's lock. */
        uintptr_t frames[SP_CALLSITE_FRAMES];
        int n = sp_callsite_capture(callsite, frames);
        id = sp_region_lookup(p, name, file, line, frames, n, 0);
    }
    if (id < 0)
        SP_STORE(p->last_error, SP_ERR_NO_MEMORY);
    return id;
}

#define CALLER ((uintptr_t)__builtin_return_address(0))

SP_EXPORT int sp_profiler_region(sp_profiler *p, const char *name)
{
    return region_register(p, name, NULL, -1, CALLER);
}

SP_EXPORT int sp_profiler_region_at(sp_profiler *p, const char *name, const char *file, int line)
{
    return region_register(p, name, file, file ? line : -1, CALLER);
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
        sp_spill_tick(lane, now);
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

/* ---- queries ------------------------------------------------------------ */

/* Sum the counters of `region` over every lane of p; returns the number of
 * calls entered: completed, still open, or left open by an exiting thread. */
static int64_t sum_counters(struct sp_profiler *p, int region, struct sp_counters *sum)
{
    memset(sum, 0, sizeof *sum);
    int64_t open = 0;
    pthread_mutex_lock(&p->lock);
    for (struct sp_lane *lane = p->lanes; lane; lane = lane->next_in_profiler) {
        pthread_mutex_lock(&lane->lock);
        if ((uint32_t)region < SP_ACQUIRE(lane->num_counters)) {
            const struct sp_counters *c = &lane->counters[region];
            int64_t completed = SP_LOAD(c->completed);
            sum->abandoned += SP_LOAD(c->abandoned);
            if (completed) {
                int64_t mn = SP_LOAD(c->min_ns), mx = SP_LOAD(c->max_ns);
                if (!sum->completed || mn < sum->min_ns)
                    sum->min_ns = mn;
                if (mx > sum->max_ns)
                    sum->max_ns = mx;
            }
            sum->completed += completed;
            sum->total_ns += SP_LOAD(c->total_ns);
        }
        uint32_t depth = SP_ACQUIRE(lane->depth);
        for (uint32_t d = 0; d < depth; d++)
            open += SP_LOAD(lane->stack[d].region) == (uint32_t)region;
        pthread_mutex_unlock(&lane->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return sum->completed + sum->abandoned + open;
}

SP_EXPORT int sp_profiler_get_region_stats(sp_profiler *p, int region, sp_region_stats *stats)
{
    if (!p || !stats || (uint32_t)region >= SP_ACQUIRE(p->num_regions))
        return SP_ERR_INACTIVE;
    struct sp_counters c;
    stats->calls = sum_counters(p, region, &c);
    stats->total_ns = sp_timer_duration_ns(c.total_ns);
    stats->min_ns = c.completed ? sp_timer_duration_ns(c.min_ns) : 0;
    stats->max_ns = c.completed ? sp_timer_duration_ns(c.max_ns) : 0;
    return SP_OK;
}

SP_EXPORT int64_t sp_profiler_num_calls(sp_profiler *p, int region)
{
    if (!p || (uint32_t)region >= SP_ACQUIRE(p->num_regions))
        return 0;
    struct sp_counters c;
    return sum_counters(p, region, &c);
}

SP_EXPORT int sp_profiler_num_regions(sp_profiler *p)
{
    return p ? (int)SP_ACQUIRE(p->num_regions) : 0;
}

SP_EXPORT const char *sp_profiler_region_name(sp_profiler *p, int region)
{
    if (!p || (uint32_t)region >= SP_ACQUIRE(p->num_regions))
        return NULL;
    return sp_region_get(p, (uint32_t)region)->name;
}

SP_EXPORT int sp_profiler_is_active(sp_profiler *p)
{
    return p ? SP_LOAD(p->active) : 0;
}

SP_EXPORT sp_status sp_profiler_last_error(sp_profiler *p)
{
    if (!p)
        return SP_OK;
    struct sp_thread *t = sp_tls_thread;
    if (t && (uint32_t)p->slot < t->num_lanes && t->lanes[p->slot])
        return t->lanes[p->slot]->last_error;
    return SP_LOAD(p->last_error);
}

SP_EXPORT const char *sp_profiler_output_path(sp_profiler *p)
{
    return p ? sp_profiler_path(p) : NULL;
}

SP_EXPORT int sp_hdf5_available(void)
{
    return 1;
}

SP_EXPORT sp_output_format sp_default_output_format(void)
{
    return SP_OUTPUT_HDF5;
}

/* Only HDF5 is written: the .spt trace format is refused, so the caller
 * learns at once that it will get an .h5 file (documented in README). */
SP_EXPORT int sp_profiler_set_output_format(sp_profiler *p, sp_output_format format)
{
    if (!p || !SP_LOAD(p->active))
        return SP_ERR_INACTIVE;
    if (format != SP_OUTPUT_HDF5) {
        SP_STORE(p->last_error, SP_ERR_UNSUPPORTED);
        return SP_ERR_UNSUPPORTED;
    }
    return SP_OK;
}

SP_EXPORT sp_output_format sp_profiler_output_format(sp_profiler *p)
{
    (void)p;
    return SP_OUTPUT_HDF5;
}

/* ---- lifecycle ---------------------------------------------------------- */

SP_EXPORT int sp_profiler_reset(sp_profiler *p)
{
    if (!p)
        return SP_ERR_INACTIVE;
    /* Lock order as everywhere (fork.c): spill lock, then the profiler. */
    sp_spill_lock();
    pthread_mutex_lock(&p->lock);
    for (struct sp_lane *lane = p->lanes; lane; lane = lane->next_in_profiler)
        if (SP_ACQUIRE(lane->depth)) {
            pthread_mutex_unlock(&p->lock);
            sp_spill_unlock();
            return SP_ERR_OPEN_SCOPES;
        }
    sp_spill_discard(p);
    for (struct sp_lane *lane = p->lanes; lane; lane = lane->next_in_profiler) {
        pthread_mutex_lock(&lane->lock);
        /* Full chunks are never touched by their owner again: free them.
         * The tail is still being written: remember where the reset was. */
        struct sp_chunk *c = lane->head;
        while (c != lane->tail) {
            struct sp_chunk *next = c->next;
            free(c->await_ns);
            free(c);
            __atomic_sub_fetch(&sp_buffer_bytes, sizeof *c, __ATOMIC_RELAXED);
            c = next;
        }
        lane->head = lane->tail;
        lane->head_skip = SP_ACQUIRE(lane->used);
        for (uint32_t i = 0; i < lane->num_counters; i++) {
            struct sp_counters *k = &lane->counters[i];
            SP_STORE(k->abandoned, 0);
            SP_STORE(k->completed, 0);
            SP_STORE(k->total_ns, 0);
            SP_STORE(k->min_ns, 0);
            SP_STORE(k->max_ns, 0);
            SP_STORE(k->dropped, 0);
            SP_STORE(k->dropped_ns, 0);
        }
        pthread_mutex_unlock(&lane->lock);
    }
    pthread_mutex_unlock(&p->lock);
    sp_spill_unlock();
    return SP_OK;
}

SP_EXPORT int sp_profiler_flush(sp_profiler *p)
{
    if (!p || !SP_LOAD(p->active))
        return 0;
    return sp_profiler_write(p, 0, "flush") == 0 ? 0 : SP_ERR_IO;
}

SP_EXPORT int sp_profiler_finalize(sp_profiler *p)
{
    if (!p || !SP_LOAD(p->active))
        return 0;
    return sp_profiler_write(p, 1, "sp_finalize") == 0 ? 0 : SP_ERR_IO;
}

/* ---- the default profiler ------------------------------------------------ */

static struct sp_profiler *current(void)
{
    return __atomic_load_n(&sp_default, __ATOMIC_ACQUIRE);
}

SP_EXPORT sp_profiler *sp_default_profiler(void)
{
    return current();
}

/* The shim starts a default profiler at load, so a program's markers record
 * even before sp_init.  sp_init then names the output (unless
 * SCOPE_PROFILER_OUTPUT is set) and the rank (unless MPI says otherwise);
 * after sp_finalize it starts a new session. */
SP_EXPORT int sp_init(const char *prefix, int rank)
{
    if (sp_cfg.disable)
        return 0;
    struct sp_profiler *p = current();
    const char *chosen = sp_cfg.output ? sp_cfg.output : (prefix ? prefix : "scope_profile");
    if (sp_proc.rank_from_mpi && rank != sp_proc.rank) {
        sp_log("sp_init(\"%s\", %d): the MPI rank is %d; using rank %d for the file name",
               prefix ? prefix : "(null)", rank, sp_proc.rank, sp_proc.rank);
        rank = sp_proc.rank;
    }
    if (p && SP_LOAD(p->active)) {
        char *copy = strdup(chosen);
        if (!copy)
            return 1;
        pthread_mutex_lock(&p->lock);
        free(p->prefix);
        p->prefix = copy;
        p->rank = rank;
        p->rank_set = 1;
        p->explicit_init = 1;
        free(p->path);
        p->path = NULL;
        pthread_mutex_unlock(&p->lock);
        return 0;
    }
    struct sp_profiler *fresh = sp_profiler_new(chosen, rank, 1);
    if (!fresh)
        return 1;
    fresh->explicit_init = 1;
    fresh->rank_set = 1;
    __atomic_store_n(&sp_default, fresh, __ATOMIC_RELEASE);
    return 0;
}

SP_EXPORT int sp_region(const char *name)
{
    return region_register(current(), name, NULL, -1, CALLER);
}

SP_EXPORT int sp_region_at(const char *name, const char *file, int line)
{
    return region_register(current(), name, file, file ? line : -1, CALLER);
}

SP_EXPORT void sp_begin(int region)
{
    profiler_begin(current(), region);
}

SP_EXPORT void sp_end(int region)
{
    profiler_end(current(), region);
}

SP_EXPORT int64_t sp_num_calls(int region) { return sp_profiler_num_calls(current(), region); }
SP_EXPORT int sp_is_active(void) { return sp_profiler_is_active(current()); }
SP_EXPORT int sp_finalize(void) { return sp_profiler_finalize(current()); }
SP_EXPORT int sp_flush(void) { return sp_profiler_flush(current()); }
SP_EXPORT int sp_reset(void) { return sp_profiler_reset(current()); }
SP_EXPORT int sp_end_last(void) { return sp_profiler_end_last(current()); }
SP_EXPORT const char *sp_output_path(void) { return sp_profiler_output_path(current()); }
SP_EXPORT sp_status sp_last_error(void) { return sp_profiler_last_error(current()); }
SP_EXPORT sp_output_format sp_current_output_format(void) { return sp_profiler_output_format(current()); }

SP_EXPORT int sp_get_region_stats(int region, sp_region_stats *stats)
{
    return sp_profiler_get_region_stats(current(), region, stats);
}

SP_EXPORT int sp_set_output_format(sp_output_format format)
{
    return sp_profiler_set_output_format(current(), format);
}
