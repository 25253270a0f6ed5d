/* entry.c - the shim's life cycle: configuration and the default profiler
 * at load, the file written at process exit (after the program's own atexit
 * handlers, so regions closed after MPI_Finalize are kept). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fork.h"
#include "recorder.h"
#include "spill.h"

struct sp_process sp_proc = {.rank_guess = -1, .size = 1};

void sp_markers_init(void);

static void write_at_exit(void)
{
    if (sp_proc.finalized)
        return;
    sp_proc.finalized = 1;
    sp_finalize_all("exit");
    sp_signals_after_exit_write();
}

/* atexit handlers run last-in first-out, and the dynamic loader registers
 * its own finalizer (which tears down every library, the writer's HDF5
 * included) only after our constructor ran.  So the hook is registered on
 * the first region registration instead, normally from main(): it then runs
 * before the loader's, while everything is still alive. */
static void register_exit_hook(void)
{
    if (atexit(write_at_exit) != 0)
        sp_log("cannot register the exit hook; call sp_finalize() to write the profile");
}

void sp_process_arm_exit_hook(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, register_exit_hook);
}

/* Last resort when the hook could not run first (regions recorded only in
 * constructors): the destructor. */
__attribute__((destructor)) static void scopeprof_unload(void)
{
    write_at_exit();
}

void sp_process_set_rank(int rank, int size)
{
    sp_proc.rank = rank;
    sp_proc.size = size > 0 ? size : 1;
    sp_proc.rank_from_mpi = 1;
    /* The default profiler follows MPI: a prefix fixed by sp_init keeps its
     * name, but the rank in the file name is the one MPI gives. */
    struct sp_profiler *p = __atomic_load_n(&sp_default, __ATOMIC_ACQUIRE);
    if (p && p->rank != rank) {
        if (p->rank_set)
            sp_log("sp_init() was given rank %d but MPI says %d; using %d", p->rank, rank, rank);
        pthread_mutex_lock(&p->lock);
        p->rank = rank;
        free(p->path);
        p->path = NULL;
        pthread_mutex_unlock(&p->lock);
    }
}

__attribute__((constructor)) static void scopeprof_load(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    sp_proc.start_realtime_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    sp_proc.start_ns = sp_clock_ns();
    sp_proc.pid = (int)getpid();
    sp_config_load();
    if (sp_cfg.disable)
        return;
    sp_markers_init();
    sp_proc.rank_guess = sp_mpi_rank_guess();
    sp_proc.rank = sp_proc.rank_guess >= 0 ? sp_proc.rank_guess : 0;

    struct sp_profiler *p = sp_profiler_new(sp_cfg.output ? sp_cfg.output : "scope_profile",
                                            sp_proc.rank, 1);
    if (!p) {
        sp_log("out of memory at start-up; this process is not profiled");
        return;
    }
    p->start_ns = sp_proc.start_ns;
    __atomic_store_n(&sp_default, p, __ATOMIC_RELEASE);
    /* The main thread is thread 0. */
    sp_thread_register(0);
    sp_fork_install();
    /* SIGTERM & co. write the profile before the process ends (signals.c). */
    sp_spill_install();
}
