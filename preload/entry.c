/* entry.c - the shim's composition root: at load, read the configuration,
 * start the default profiler and register the main thread, then plug each
 * layer in, bottom to top (docs/architecture.md):
 *   base/ -> record/ -> lifecycle/ (hooks the recorder calls) -> intercept/
 * Nothing else in the shim calls up across layers. */
#include "intercept/fork.h"
#include "intercept/mpi/mpi_launcher.h"
#include "lifecycle/lifecycle.h"

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
    sp_lifecycle_install();
    /* The main thread is thread 0. */
    sp_thread_register(0);
    sp_fork_install();
}
