/* mpi_calls.c - see mpi_calls.h. */
#include "mpi_calls.h"

#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_lifecycle.h"
#include "record/recorder.h"

#define SP_MPI_NAME(name) #name,
static const char *const names[SP_MPI_NUM_FUNCTIONS] = {
    SP_MPI_FUNCTIONS(SP_MPI_NAME, SP_MPI_NAME)
};
#undef SP_MPI_NAME
#define SP_MPI_POLL_NO(name) 0,
#define SP_MPI_POLL_YES(name) 1,
static const unsigned char polling[SP_MPI_NUM_FUNCTIONS] = {
    SP_MPI_FUNCTIONS(SP_MPI_POLL_NO, SP_MPI_POLL_YES)
};

int sp_mpi_modes[SP_MPI_NUM_FUNCTIONS];
int sp_mpi_modes_ready;
static int any_recorded;
static pthread_once_t modes_once = PTHREAD_ONCE_INIT;

/* A comma list of globs: listed functions are recorded as events (polling
 * ones too: asked for by name), the others not at all. */
static void parse_list(const char *value)
{
    char *copy = strdup(value);
    if (!copy)
        return;
    char *save = NULL;
    for (char *glob = strtok_r(copy, ",", &save); glob; glob = strtok_r(NULL, ",", &save)) {
        while (*glob == ' ')
            glob++;
        size_t len = strlen(glob);
        while (len && glob[len - 1] == ' ')
            glob[--len] = '\0';
        if (!len)
            continue;
        int matched = 0;
        for (int f = 0; f < SP_MPI_NUM_FUNCTIONS; f++)
            if (fnmatch(glob, names[f], 0) == 0) {
                sp_mpi_modes[f] = SP_MPI_MODE_EVENTS;
                matched = 1;
            }
        if (!matched)
            sp_log("SCOPE_PROFILER_MPI_CALLS: '%s' matches none of the MPI functions the "
                   "profiler records (see docs/mpi.md); it is ignored", glob);
    }
    free(copy);
}

static void read_modes(void)
{
    const char *v = getenv("SCOPE_PROFILER_MPI_CALLS");
    int mode_all = SP_MPI_MODE_EVENTS, mode_polling = SP_MPI_MODE_AGGREGATE;
    if (sp_cfg.mpi == 0 || sp_cfg.disable) {
        mode_all = mode_polling = SP_MPI_MODE_OFF;
    } else if (!v || !*v || strcmp(v, "default") == 0) {
        /* defaults above */
    } else if (strcmp(v, "all") == 0) {
        mode_polling = SP_MPI_MODE_EVENTS;
    } else if (strcmp(v, "none") == 0) {
        mode_all = mode_polling = SP_MPI_MODE_OFF;
    } else {
        parse_list(v);
        goto done;
    }
    for (int f = 0; f < SP_MPI_NUM_FUNCTIONS; f++)
        sp_mpi_modes[f] = polling[f] ? mode_polling : mode_all;
done:
    for (int f = 0; f < SP_MPI_NUM_FUNCTIONS; f++)
        any_recorded |= sp_mpi_modes[f] != SP_MPI_MODE_OFF;
    __atomic_store_n(&sp_mpi_modes_ready, 1, __ATOMIC_RELEASE);
}

void sp_mpi_modes_init(void) { pthread_once(&modes_once, read_modes); }

int sp_mpi_tracking(void)
{
    if (!__atomic_load_n(&sp_mpi_modes_ready, __ATOMIC_ACQUIRE))
        sp_mpi_modes_init();
    return any_recorded;
}

/* Region id of each function in the current profiler: (slot + 1) << 32 | id,
 * so a new profiler (sp_init after sp_finalize) never sees a stale id. */
static uint64_t region_ids[SP_MPI_NUM_FUNCTIONS];

static int region_of(struct sp_profiler *p, enum sp_mpi_fn fn, uintptr_t caller)
{
    uint64_t cached = __atomic_load_n(&region_ids[fn], __ATOMIC_ACQUIRE);
    if (cached >> 32 == (uint64_t)p->slot + 1)
        return (int)(uint32_t)cached;
    int want_frames = sp_cfg.callsites && caller;
    int id = sp_region_lookup(p, names[fn], NULL, -1, NULL, 0, want_frames);
    if (id == SP_REGION_NEEDS_FRAMES) {
        uintptr_t frames[SP_CALLSITE_FRAMES];
        int n = sp_callsite_capture(caller, frames);
        id = sp_region_lookup(p, names[fn], NULL, -1, frames, n, 0);
    }
    if (id < 0)
        return -1;
    __atomic_store_n(&region_ids[fn], ((uint64_t)p->slot + 1) << 32 | (uint32_t)id,
                     __ATOMIC_RELEASE);
    return id;
}

/* MPI implementations may call MPI_ functions from inside others (or a
 * Fortran binding its C twin): only the outermost is the program's call. */
static __thread int in_mpi_call __attribute__((tls_model("initial-exec")));

int sp_mpi_call_begin_slow(enum sp_mpi_fn fn, struct sp_mpi_call *call, uintptr_t caller)
{
    struct sp_profiler *p = sp_current_profiler();
    if (in_mpi_call || !p || !SP_LOAD(p->active))
        return SP_MPI_MODE_OFF;
    int region = region_of(p, fn, caller);
    if (region < 0)
        return SP_MPI_MODE_OFF;
    in_mpi_call = 1;
    call->p = p;
    call->region = region;
    call->mode = sp_mpi_modes[fn];
    return call->mode;
}

void sp_mpi_call_end(struct sp_mpi_call *call, const sp_capture_mpi *side)
{
    if (call->mode == SP_MPI_MODE_OFF)
        return;
    if (call->mode == SP_MPI_MODE_EVENTS)
        sp_record_end_with_side(call->p, call->region, side);
    else
        sp_record_aggregated(call->p, call->region, call->start, sp_ticks());
    in_mpi_call = 0;
}

void *sp_mpi_real(void **slot, const char *name, const void *self, const void *caller)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!fn) {
        fn = sp_mpi_next(name, self, caller);
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}
