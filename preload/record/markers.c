/* markers.c - the scope-profiler C marker API, recording into per-thread
 * lanes.  sp_begin/sp_end take no lock and make no syscall after a thread's
 * first call; their fast path is a push and an event append on the cached
 * lane, and everything else (the clock timer, tasks, errors, filters,
 * ON_FULL=stop, growth, the every-256-exits work) is reached through the
 * checks it makes anyway (recorder.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

static int filtering; /* include/exclude globs configured */
static int unmatched_reports;
int64_t sp_nested_dropped;

void sp_markers_init(void)
{
    filtering = sp_cfg.num_include || sp_cfg.num_exclude;
}

/* Can this lane's begins take the fast path (and its calls be ended by
 * it)?  Owner thread. */
static int lane_fast_ok(const struct sp_lane *lane)
{
    return sp_timer_tsc && !filtering && !lane->stopped && lane->last_error == SP_OK &&
           lane->thread->task < 0 && SP_LOAD(lane->profiler->active);
}

static void set_error(struct sp_profiler *p, struct sp_lane *lane, sp_status s)
{
    if (lane) {
        if (lane->last_error != s) {
            lane->last_error = s;
            /* The next successful call, fast or not, must clear it. */
            sp_lane_go_slow(lane);
        }
    } else if (p) {
        SP_STORE(p->last_error, s);
    }
}

static inline void clear_error(struct sp_lane *lane)
{
    if (SP_UNLIKELY(lane->last_error != SP_OK))
        lane->last_error = SP_OK;
}

/* ---- slow paths ----------------------------------------------------------- */

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

/* Enter the recorder for p: the calling thread's lane, with the thread
 * marked busy (*was: what sp_record_leave restores).  NULL when the call
 * is to be ignored: no profiler, inactive, no memory, or this call
 * interrupted the recorder on its own thread (then counted). */
static inline __attribute__((always_inline)) struct sp_lane *enter_counted(struct sp_profiler *p, struct sp_lane **was, int count)
{
    if (!p)
        return NULL;
    if (SP_UNLIKELY(sp_record_busy())) {
        if (count)
            sp_record_nested_drop();
        return NULL;
    }
    if (!SP_LOAD(p->active))
        return NULL;
    *was = sp_record_enter();
    struct sp_lane *lane = (*was)->profiler == p ? *was : sp_lane_of(p);
    if (!lane || SP_UNLIKELY(lane->retired)) {
        /* no memory, or the thread has exited (a later TLS destructor) */
        if (!lane)
            set_error(p, NULL, SP_ERR_NO_MEMORY);
        sp_record_leave(*was);
        return NULL;
    }
    return lane;
}

/* Begins count what they drop; the ends of calls so dropped (made while
 * the recorder is still busy) do not count again. */
static struct sp_lane *enter(struct sp_profiler *p, struct sp_lane **was)
{
    return enter_counted(p, was, 0);
}

/* Leave the recorder; the lane becomes the thread's cached one. */
static inline void leave(struct sp_lane *lane)
{
    sp_record_leave(lane);
}

/* Push an open call; returns its stack position or -1. */
static int64_t begin_call(struct sp_lane *lane, int region)
{
    uint32_t depth = sp_lane_depth(lane);
    if (depth == lane->stack_cap && sp_lane_grow_stack(lane) != 0) {
        set_error(lane->profiler, lane, SP_ERR_NO_MEMORY);
        return -1;
    }
    clear_error(lane);
    int fast = lane_fast_ok(lane);
    struct sp_open *o = &lane->stack[depth];
    int32_t task = lane->thread->task;
    SP_STORE(o->region, (uint32_t)region);
    SP_STORE(o->task, task >= 0 ? sp_open_tag_of_task(task) : fast ? SP_OPEN_FAST : SP_OPEN_SLOW);
    if (task >= 0)
        sp_task_call_begins(lane, depth, task);
    sp_lane_set_depth(lane, depth + 1);
    lane->limit = fast ? lane->stack + lane->stack_cap : NULL;
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

/* Every 256th exit of a lane (and at a full chunk): a calibration point
 * when due, periodic spilling and a deferred signal exit (sp_record_tick);
 * at a full chunk (every 4096 exits) also a sample of the thread's CPU
 * time and the move to a new chunk.  The sample is a system call (0.6-1.4
 * us here: no vDSO path for a thread's CPU clock), which every 256 exits
 * cost 2.5-5.5 ns per pair; no file shows it, as every collection reads
 * each live thread's clock exactly (sp_threads_refresh) and a thread's exit
 * reads its own, so it remains only for a thread that vanishes unseen. */
static __attribute__((noinline)) void every_256_exits(struct sp_lane *lane, int64_t now,
                                                      int chunk_full)
{
    if (chunk_full)
        SP_STORE(lane->thread->cpu_ns, sp_thread_cpu_ns());
    sp_timer_check(now);
    if (!SP_LOAD(lane->profiler->active))
        sp_lane_go_slow(lane); /* finalized: the slow path ignores its calls */
    if (chunk_full) {
        sp_lane_next_chunk(lane, now);
        if (lane->stopped)
            sp_lane_go_slow(lane);
    } else {
        sp_record_tick(lane, now);
    }
}

/* A completed call that leaves no event (ON_FULL=stop reached, or no
 * memory for it): what the statistics need is counted live. */
static void count_live(struct sp_lane *lane, uint32_t region, int64_t d, int64_t now)
{
    if (region >= lane->num_counters && sp_lane_grow_counters(lane, region) != 0)
        return; /* out of memory: this call is lost, the others are not */
    sp_counters_add_dropped(&lane->counters[region], d);
    uint32_t exits = ++lane->exits;
    if ((exits & SP_CPU_SAMPLE_MASK) == SP_CPU_SAMPLE_MASK)
        SP_STORE(lane->thread->cpu_ns, sp_thread_cpu_ns());
    if ((exits & SP_PERIODIC_MASK) == SP_PERIODIC_MASK)
        every_256_exits(lane, now, 0);
}

/* Close the open call at stack position pos with end time `now` (any
 * call: the fast path in sp_end inlines the plain case). */
static void end_call(struct sp_lane *lane, uint32_t pos, int64_t now)
{
    struct sp_open *o = &lane->stack[pos];
    int64_t start = o->start;
    uint32_t region = o->region;
    int32_t task = sp_open_task(o->task);
    int64_t await = 0;
    if (SP_UNLIKELY(task >= 0))
        await = sp_task_call_await(lane, pos, task);
    uint32_t depth = sp_lane_depth(lane);
    if (SP_UNLIKELY(pos + 1 != depth))
        remove_from_stack(lane, pos, depth);
    sp_lane_set_depth(lane, depth - 1);

    if (SP_UNLIKELY(lane->stopped)) {
        count_live(lane, region, now - start, now);
        return;
    }
    struct sp_slot *e = lane->next;
    uint32_t used = (uint32_t)(e - lane->tail->events);
    /* Narrow when the end is in the start's 2^32-tick epoch (recorder.h,
     * struct sp_slot); a task's call is always wide. */
    if (task < 0 && (uint64_t)now >> 32 == (uint64_t)start >> 32) {
        SP_STORE(e->region, region);
    } else if (sp_chunk_add_wide(lane->tail, now, region, task) == 0) {
        SP_STORE(e->region, SP_SLOT_WIDE);
    } else {
        /* no memory for its wide entry: counted, as ON_FULL=stop counts */
        count_live(lane, region, now - start, now);
        return;
    }
    SP_STORE(e->start, start);
    SP_STORE(e->end_low, (uint32_t)now);
    if (SP_UNLIKELY(task >= 0))
        sp_task_store_await(lane, used, await);
    SP_RELEASE(lane->next, e + 1);
    if (((used + 1) & SP_PERIODIC_MASK) == 0)
        every_256_exits(lane, now, used + 1 == SP_CHUNK_EVENTS);
}

/* Innermost open call of `region` in the current task, or -1. */
static inline int64_t find_open(const struct sp_lane *lane, int region)
{
    int32_t task = lane->thread->task;
    for (uint32_t i = sp_lane_depth(lane); i-- > 0;)
        if (lane->stack[i].region == (uint32_t)region && sp_open_task(lane->stack[i].task) == task)
            return i;
    return -1;
}

static __attribute__((noinline)) void begin_slow(int region, struct sp_profiler *p)
{
    if (!p)
        return; /* disabled: before a single register is saved */
    struct sp_lane *was;
    struct sp_lane *lane = enter_counted(p, &was, 1);
    if (!lane)
        return;
    if (region_valid(p, region))
        begin_call(lane, region);
    leave(lane);
}

static __attribute__((noinline)) void end_slow(int region, struct sp_profiler *p, int64_t now,
                                               uintptr_t caller)
{
    if (!p)
        return;
    if (!sp_timer_tsc || !now)
        now = sp_ticks(); /* the clock timer, or not read yet */
    struct sp_lane *was;
    struct sp_lane *lane = enter(p, &was);
    if (!lane)
        return;
    uint32_t depth = sp_lane_depth(lane);
    int64_t pos;
    /* Only valid, wanted regions are ever pushed, so a match needs no
     * further check of the id. */
    if (depth && lane->stack[depth - 1].region == (uint32_t)region &&
        sp_open_task(lane->stack[depth - 1].task) == lane->thread->task) {
        pos = depth - 1;
    } else {
        if (!region_valid(p, region)) {
            leave(lane);
            return;
        }
        pos = find_open(lane, region);
    }
    if (SP_UNLIKELY(pos < 0)) {
        report_unmatched(p, region, caller);
        set_error(p, lane, SP_ERR_UNMATCHED_END);
    } else {
        end_call(lane, (uint32_t)pos, now);
        clear_error(lane);
    }
    leave(lane);
}

/* ---- the fast path -------------------------------------------------------- */

/* The TSC as two halves, stored as they come (saves the shift and or that
 * joining them costs: the fast path's instructions are counted). */
#if defined(__x86_64__)
#define READ_TSC(lo, hi) __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi))
/* The halves as two memory operands: "4+%0" on one operand is what gas
 * accepts but clang's assembler does not. */
typedef uint32_t sp_tsc_half __attribute__((may_alias));
#define STORE_TSC(field, lo, hi) \
    __asm__("movl %k2, %0\n\tmovl %k3, %1"                                         \
            : "=m"(((sp_tsc_half *)&(field))[0]), "=m"(((sp_tsc_half *)&(field))[1])  \
            : "r"(lo), "r"(hi))
#define JOIN_TSC(lo, hi) ((int64_t)((uint64_t)(hi) << 32 | (lo)))
#else
#define JOIN_TSC(lo, hi) ((int64_t)((uint64_t)(hi) << 32 | (lo)))
#define READ_TSC(lo, hi) \
    do { uint64_t t_ = (uint64_t)sp_raw_ticks(); lo = (uint32_t)t_; hi = (uint32_t)(t_ >> 32); } while (0)
#define STORE_TSC(field, lo, hi) SP_STORE(field, (int64_t)((uint64_t)(hi) << 32 | (lo)))
#endif

/* The fast path's every-256 call: the same, then leave the recorder (a
 * tail call, so sp_end needs no stack frame). */
static __attribute__((noinline)) void every_256_then_leave(struct sp_lane *lane, int64_t now,
                                                           const struct sp_slot *next)
{
    every_256_exits(lane, now, next == lane->tail->events + SP_CHUNK_EVENTS);
    sp_record_leave(lane);
}


static inline __attribute__((always_inline)) void fast_begin(struct sp_profiler *p, int region)
{
    struct sp_lane *lane = sp_tls_lane;
    if (SP_UNLIKELY(lane->profiler != p)) {
        begin_slow(region, p);
        return;
    }
    /* Busy (recorder.h): a signal handler's call from here on is dropped. */
    sp_tls_lane = (struct sp_lane *)p;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    struct sp_open *o = lane->top;
    /* A profiler finalized or destroyed since is noticed every 256 exits
     * (every_256_exits): until then its calls go on filling memory that is
     * never written.  (A NULL limit sends every begin here.) */
    if (SP_UNLIKELY((uintptr_t)o >= (uintptr_t)lane->limit ||
                    (uint32_t)region >= SP_ACQUIRE(p->num_regions))) {
        sp_record_leave(lane);
        begin_slow(region, p);
        return;
    }
    /* Region and tag "fast" in one store (sp_open.key). */
    SP_STORE(o->key, (uint64_t)(uint32_t)region);
    SP_RELEASE(lane->top, o + 1);
    /* The clock is read last, so the bookkeeping above is not timed. */
    uint32_t lo, hi;
    READ_TSC(lo, hi);
    STORE_TSC(o->start, lo, hi);
    sp_record_leave(lane);
}

static inline __attribute__((always_inline)) void fast_end(struct sp_profiler *p, int region)
{
    struct sp_lane *lane = sp_tls_lane;
    if (SP_UNLIKELY(lane->profiler != p)) {
        /* Disabled (no profiler): returns at once, without a clock read. */
        end_slow(region, p, 0, (uintptr_t)__builtin_return_address(0));
        return;
    }
    uint64_t key = (uint32_t)region; /* sp_open.key of a fast call */
    uint32_t lo, hi;
    READ_TSC(lo, hi);
    sp_tls_lane = (struct sp_lane *)p;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    /* depth 0 reads the sentinel at stack[-1], which matches nothing. */
    struct sp_open *o = lane->top - 1;
    /* Plain loads: only this thread writes its stack.  A call whose end is
     * not in its start's 2^32-tick epoch is wide (recorder.h, struct
     * sp_slot): the slow path writes it, and the fast one keeps the end's
     * low half as the clock gave it. */
    if (SP_UNLIKELY(o->key != key || hi != o->start_high)) {
        sp_record_leave(lane);
        end_slow(region, p, JOIN_TSC(lo, hi), (uintptr_t)__builtin_return_address(0));
        return;
    }
    int64_t start = o->start;
    SP_RELEASE(lane->top, o);
    struct sp_slot *e = lane->next;
    /* One store per field (the compiler's vector merge costs more). */
    SP_STORE(e->start, start);
    SP_STORE(e->end_low, lo);
    SP_STORE(e->region, (uint32_t)key);
    e++;
    SP_RELEASE(lane->next, e);
    /* Every 256 exits, and at a full chunk (SP_CHUNK_EVENTS). */
    if (SP_UNLIKELY(((uintptr_t)e & SP_SAMPLE_ADDRESS_MASK) == 0)) {
        every_256_then_leave(lane, JOIN_TSC(lo, hi), e);
        return;
    }
    sp_record_leave(lane);
}

SP_EXPORT void sp_profiler_begin(sp_profiler *p, int region)
{
    fast_begin(p, region);
}

SP_EXPORT void sp_profiler_end(sp_profiler *p, int region)
{
    fast_end(p, region);
}

SP_EXPORT void sp_begin(int region)
{
    fast_begin(sp_current_profiler(), region);
}

SP_EXPORT void sp_end(int region)
{
    fast_end(sp_current_profiler(), region);
}

/* The name path (the Fortran module's sp_begin_name/sp_end_name): one
 * lookup, lock-free for an existing name, then the fast path inlined, and
 * the status sp_last_error would give after the call (what the module
 * returns as stat).  Before, the module copied the name, called sp_region,
 * sp_begin and sp_last_error: three calls and a copy per marker. */
/* No region for the name: why, not the thread's last error (which may be
 * older: the module used to return that). */
static sp_status name_failed(struct sp_profiler *p)
{
    if (!p || !SP_LOAD(p->active) || sp_record_busy())
        return SP_ERR_INACTIVE; /* off, or a signal handler's call: dropped */
    return SP_ERR_NO_MEMORY;
}

SP_EXPORT sp_status sp_begin_by_name(const char *name, size_t length)
{
    struct sp_profiler *p = sp_current_profiler();
    int id = sp_region_by_name(p, name, length, (uintptr_t)__builtin_return_address(0));
    if (id < 0)
        return name ? name_failed(p) : SP_ERR_INACTIVE; /* as sp_region(NULL) says */
    fast_begin(p, id);
    return sp_profiler_last_error(p);
}

SP_EXPORT sp_status sp_end_by_name(const char *name, size_t length)
{
    struct sp_profiler *p = sp_current_profiler();
    int id = sp_region_by_name(p, name, length, (uintptr_t)__builtin_return_address(0));
    if (id < 0)
        return name ? name_failed(p) : SP_ERR_INACTIVE;
    fast_end(p, id);
    return sp_profiler_last_error(p);
}

/* ---- the other entry points (never on the per-call path) ------------------ */

SP_EXPORT int sp_profiler_end_last(sp_profiler *p)
{
    int64_t now = sp_ticks();
    struct sp_lane *was;
    struct sp_lane *lane = enter(p, &was);
    if (!lane)
        return SP_ERR_UNMATCHED_END;
    if (sp_lane_depth(lane) == 0) {
        set_error(p, lane, SP_ERR_UNMATCHED_END);
        leave(lane);
        return SP_ERR_UNMATCHED_END;
    }
    end_call(lane, sp_lane_depth(lane) - 1, now);
    clear_error(lane);
    leave(lane);
    return SP_OK;
}

SP_EXPORT sp_scope sp_profiler_scope_begin(sp_profiler *p, int region)
{
    sp_scope s = {p, region, -1};
    if (!p || !SP_LOAD(p->active) || !region_valid(p, region))
        return s;
    struct sp_lane *was;
    struct sp_lane *lane = enter_counted(p, &was, 1);
    if (!lane)
        return s;
    s.slot = begin_call(lane, region);
    leave(lane);
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
    struct sp_lane *was;
    struct sp_lane *lane = enter(p, &was);
    if (!lane)
        return SP_ERR_UNMATCHED_END;
    /* Only the innermost open call may end: a token of an outer call is
     * refused (and stays valid) while calls opened after it are open. */
    if ((uint64_t)s->slot + 1 != sp_lane_depth(lane) ||
        lane->stack[s->slot].region != (uint32_t)s->region) {
        set_error(p, lane, SP_ERR_UNMATCHED_END);
        leave(lane);
        return SP_ERR_UNMATCHED_END;
    }
    end_call(lane, (uint32_t)s->slot, now);
    s->slot = -1;
    clear_error(lane);
    leave(lane);
    return SP_OK;
}

SP_EXPORT int sp_end_last(void) { return sp_profiler_end_last(sp_current_profiler()); }

/* Calls dropped because they interrupted the recorder (signal handlers):
 * said once, at the end of the process. */
__attribute__((destructor)) static void report_nested_drops(void)
{
    int64_t n = __atomic_load_n(&sp_nested_dropped, __ATOMIC_RELAXED);
    if (n > 0)
        sp_log("%lld marker calls made by signal handlers that interrupted the profiler "
               "on their own thread were dropped (counted as sp_begin calls and sp_region "
               "registrations refused; docs/robustness.md)", (long long)n);
}
