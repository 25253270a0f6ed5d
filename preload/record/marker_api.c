/* marker_api.c - the marker API around the hot path: contexts, region
 * registration, the default profiler and sp_init, queries (stats, counts,
 * names, errors) and the output-format calls.  None of it is on the
 * per-call path (markers.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

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
    /* An existing name: no lock (registry.c). */
    int id = sp_region_find(p, name, file, want_frames);
    if (id >= 0)
        return id;
    /* A signal handler that interrupted the recorder on this thread would
     * wait for a lock its own thread holds: counted, refused. */
    if (sp_record_busy()) {
        sp_record_nested_drop();
        return SP_INVALID_REGION;
    }
    struct sp_lane *was = sp_record_enter();
    id = sp_region_lookup(p, name, file, line, NULL, 0, want_frames);
    if (id == SP_REGION_NEEDS_FRAMES) {
        /* A new region (or one without a call site yet): walk the stack
         * once, outside the profiler's lock. */
        uintptr_t frames[SP_CALLSITE_FRAMES];
        int n = sp_callsite_capture(callsite, frames);
        id = sp_region_lookup(p, name, file, line, frames, n, 0);
    }
    sp_record_leave(was);
    if (id < 0)
        SP_STORE(p->last_error, SP_ERR_NO_MEMORY);
    return id;
}

#define CALLER ((uintptr_t)__builtin_return_address(0))

/* A name by length that is new (or the profiler is off): registered from
 * a NUL-terminated copy, under the lock, which allocates anyway. */
static __attribute__((noinline)) int register_by_name(sp_profiler *p, const char *name,
                                                      size_t length, uintptr_t callsite)
{
    char small[160];
    char *copy = length < sizeof small ? small : malloc(length + 1);
    if (!copy) {
        SP_STORE(p->last_error, SP_ERR_NO_MEMORY);
        return SP_INVALID_REGION;
    }
    memcpy(copy, name, length);
    copy[length] = '\0';
    int id = region_register(p, copy, NULL, -1, callsite);
    if (copy != small)
        free(copy);
    return id;
}

/* The last names this thread looked up by length, by the address and
 * length Fortran passes (a literal's address is fixed per call site).  A
 * hit is checked against the region's own name, so an entry that is stale
 * (new contents at the address), torn (a signal handler's lookup
 * overwrote it halfway) or of another profiler is never believed. */
#define NAME_CACHE 8
static __thread struct {
    const char *name;
    size_t length;
    sp_profiler *profiler;
    uint32_t id;
} name_cache[NAME_CACHE] __attribute__((tls_model("initial-exec")));

static inline unsigned name_cache_slot(const char *name, size_t length)
{
    uintptr_t a = (uintptr_t)name;
    return (unsigned)((a >> 3 ^ a >> 11 ^ length) & (NAME_CACHE - 1));
}

int sp_region_by_name(sp_profiler *p, const char *name, size_t length, uintptr_t callsite)
{
    if (!p || !name)
        return region_register(p, NULL, NULL, -1, callsite);
    if (SP_LOAD(p->active)) {
        unsigned slot = name_cache_slot(name, length);
        if (name_cache[slot].name == name && name_cache[slot].length == length &&
            name_cache[slot].profiler == p) {
            uint32_t id = name_cache[slot].id;
            /* The region's name is exactly the first `length` bytes
             * (strncmp, not memcmp: a torn entry's region may be shorter). */
            if (id < SP_ACQUIRE(p->num_regions)) {
                const char *known = sp_region_get(p, id)->name;
                if (strncmp(known, name, length) == 0 && known[length] == '\0')
                    return (int)id;
            }
        }
        /* An existing name: no copy, no lock. */
        size_t given = length;
        int id = sp_region_find_n(p, name, &length, sp_cfg.callsites && callsite);
        if (id >= 0) {
            if (length == given) { /* (a name cut at a NUL is not cached) */
                name_cache[slot].name = name;
                name_cache[slot].length = length;
                name_cache[slot].profiler = p;
                name_cache[slot].id = (uint32_t)id;
            }
            return id;
        }
    } else {
        length = strnlen(name, length);
    }
    return register_by_name(p, name, length, callsite);
}

SP_EXPORT int sp_profiler_region(sp_profiler *p, const char *name)
{
    return region_register(p, name, NULL, -1, CALLER);
}

SP_EXPORT int sp_profiler_region_at(sp_profiler *p, const char *name, const char *file, int line)
{
    return region_register(p, name, file, file ? line : -1, CALLER);
}

/* ---- queries ------------------------------------------------------------ */

struct region_sum {
    int64_t entered;        /* completed, still open, or left open by an exiting thread */
    int64_t completed;
    int64_t total_ns;
    int64_t min_ns, max_ns;
};

/* Statistics of `region` over every lane of p: derived from the events
 * (folded on demand, under the lock that serialises their conversion and
 * spilling), plus the calls counted live because they left no event. */
static void sum_region(struct sp_profiler *p, int region, struct region_sum *sum)
{
    memset(sum, 0, sizeof *sum);
    void (*lock_events)(void) = SP_LOAD(sp_record_hooks.lock_events);
    void (*unlock_events)(void) = SP_LOAD(sp_record_hooks.unlock_events);
    /* This thread holds the locks below: its own marker calls from a signal
     * handler must not wait for them. */
    struct sp_lane *was = sp_record_enter();
    if (lock_events)
        lock_events();
    pthread_mutex_lock(&p->lock);
    int64_t open = 0;
    for (struct sp_lane *lane = p->lanes; lane; lane = lane->next_in_profiler) {
        pthread_mutex_lock(&lane->lock);
        sp_lane_fold(lane);
        int64_t n = 0, ns = 0, mn = 0, mx = 0;
        if ((uint32_t)region < lane->num_folded) {
            const struct sp_folded *f = &lane->folded[region];
            n = f->completed;
            ns = sp_timer_duration_ns(f->total_ticks) + f->total_ns;
            mn = f->min_ns;
            mx = f->max_ns;
        }
        if ((uint32_t)region < SP_ACQUIRE(lane->num_counters)) {
            const struct sp_counters *c = &lane->counters[region];
            int64_t dropped = SP_LOAD(c->dropped);
            sum->entered += SP_LOAD(c->abandoned);
            if (dropped) {
                int64_t dmn = sp_timer_duration_ns(SP_LOAD(c->dropped_min));
                int64_t dmx = sp_timer_duration_ns(SP_LOAD(c->dropped_max));
                if (!n || dmn < mn)
                    mn = dmn;
                if (!n || dmx > mx)
                    mx = dmx;
                n += dropped;
                ns += sp_timer_duration_ns(SP_LOAD(c->dropped_ns));
            }
        }
        if (n) {
            if (!sum->completed || mn < sum->min_ns)
                sum->min_ns = mn;
            if (mx > sum->max_ns)
                sum->max_ns = mx;
        }
        sum->completed += n;
        sum->total_ns += ns;
        uint32_t depth = sp_lane_depth(lane);
        for (uint32_t d = 0; d < depth; d++)
            open += SP_LOAD(lane->stack[d].region) == (uint32_t)region;
        pthread_mutex_unlock(&lane->lock);
    }
    pthread_mutex_unlock(&p->lock);
    if (unlock_events)
        unlock_events();
    sp_record_leave(was);
    sum->entered += sum->completed + open;
}

SP_EXPORT int sp_profiler_get_region_stats(sp_profiler *p, int region, sp_region_stats *stats)
{
    if (!p || !stats || (uint32_t)region >= SP_ACQUIRE(p->num_regions))
        return SP_ERR_INACTIVE;
    if (sp_record_busy())
        return SP_ERR_INACTIVE; /* a signal handler interrupted the recorder */
    struct region_sum c;
    sum_region(p, region, &c);
    stats->calls = c.entered;
    stats->total_ns = c.total_ns;
    stats->min_ns = c.completed ? c.min_ns : 0;
    stats->max_ns = c.completed ? c.max_ns : 0;
    return SP_OK;
}

SP_EXPORT int64_t sp_profiler_num_calls(sp_profiler *p, int region)
{
    if (!p || (uint32_t)region >= SP_ACQUIRE(p->num_regions) || sp_record_busy())
        return 0;
    struct region_sum c;
    sum_region(p, region, &c);
    return c.entered;
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

/* ---- the default profiler ------------------------------------------------ */

SP_EXPORT sp_profiler *sp_default_profiler(void)
{
    return sp_current_profiler();
}

/* The shim starts a default profiler at load, so a program's markers record
 * even before sp_init.  sp_init then names the output (unless
 * SCOPE_PROFILER_OUTPUT is set) and the rank (unless MPI says otherwise);
 * after sp_finalize it starts a new session. */
SP_EXPORT int sp_init(const char *prefix, int rank)
{
    if (sp_cfg.disable)
        return 0;
    struct sp_profiler *p = sp_current_profiler();
    const char *chosen = sp_cfg.output ? sp_cfg.output : (prefix ? prefix : "scope_profile");
    if (sp_proc.rank_from_mpi && rank != sp_proc.rank) {
        sp_log("sp_init(\"%s\", %d): the MPI rank is %d; using rank %d for the file name",
               prefix ? prefix : "(null)", rank, sp_proc.rank, sp_proc.rank);
        rank = sp_proc.rank;
    }
    if (p && SP_LOAD(p->active)) {
        char *copy = sp_output_prefix_absolute(chosen);
        const char *base = strrchr(chosen, '/');
        char *given = strdup(chosen);
        if (!copy || !given) {
            free(copy);
            free(given);
            return 1;
        }
        pthread_mutex_lock(&p->lock);
        if (SP_LOAD(p->num_regions) > 0) {
            /* Already recording: its directory is needed now. */
            char *ready = sp_output_prefix_ready(copy, rank);
            if (ready) {
                free(copy);
                copy = ready;
                free(given);
                given = strdup(base ? base + 1 : chosen);
            }
        }
        free(p->prefix);
        p->prefix = copy;
        free(p->given_prefix);
        p->given_prefix = given;
        p->rank = rank;
        p->rank_set = 1;
        p->explicit_init = 1;
        free(p->path);
        p->path = NULL;
        free(p->given_path);
        p->given_path = NULL;
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
    return region_register(sp_current_profiler(), name, NULL, -1, CALLER);
}

SP_EXPORT int sp_region_at(const char *name, const char *file, int line)
{
    return region_register(sp_current_profiler(), name, file, file ? line : -1, CALLER);
}

SP_EXPORT int64_t sp_num_calls(int region) { return sp_profiler_num_calls(sp_current_profiler(), region); }
SP_EXPORT int sp_is_active(void) { return sp_profiler_is_active(sp_current_profiler()); }
SP_EXPORT sp_status sp_last_error(void) { return sp_profiler_last_error(sp_current_profiler()); }
SP_EXPORT sp_output_format sp_current_output_format(void) { return sp_profiler_output_format(sp_current_profiler()); }

SP_EXPORT int sp_get_region_stats(int region, sp_region_stats *stats)
{
    return sp_profiler_get_region_stats(sp_current_profiler(), region, stats);
}

SP_EXPORT int sp_set_output_format(sp_output_format format)
{
    return sp_profiler_set_output_format(sp_current_profiler(), format);
}
