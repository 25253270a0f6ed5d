/* mpi.c - the MPI life cycle as the shim sees it: confirm the rank after
 * init, record the library and two clock synchronisation points, and note
 * when MPI is finalized.  The wrappers themselves are in mpi_wrap_c.c and
 * mpi_wrap_fortran.c; the library calls in mpi_library.c.
 *
 * Metadata names are documented in docs/mpi.md. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "mpi_abi.h"
#include "mpi_launcher.h"
#include "mpi_library.h"
#include "mpi_lifecycle.h"
#include "lifecycle/lifecycle.h"

/* C and Fortran entry points may nest (MPICH's mpi_init_ may call
 * MPI_Init), and MPI may be initialised from any thread: each step runs
 * once, claimed atomically. */
static atomic_int init_claimed;
static atomic_int finalize_claimed;
static atomic_int finalized_noted;
/* Set once the library is bound and the rank confirmed. */
static atomic_int library_ready;

/* SCOPE_PROFILER_MPI=0, or the whole profiler disabled: chain only. */
static int mpi_support_off(void)
{
    return sp_cfg.mpi == 0 || sp_cfg.disable;
}

void *sp_mpi_next(const char *name, const void *self, const void *caller)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (!fn || fn == self) {
        /* MPI dlopen()ed locally (e.g. by a Python extension) is not after
         * us in the global scope: ask the caller's own dependencies. */
        Dl_info info;
        fn = NULL;
        if (caller && dladdr(caller, &info) && info.dli_fname && info.dli_fname[0]) {
            void *object = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
            fn = object ? dlsym(object, name) : NULL;
            if (fn == self)
                fn = NULL;
        }
    }
    if (!fn)
        sp_log("%s: no MPI library defines it after the profiler; returning an error", name);
    return fn;
}

/* Rank and size from MPI replace the launcher guess; a disagreement means
 * the environment lied (nested launchers, a copied environment). */
static int confirm_rank(void)
{
    int rank = -1, size = 0;
    if (sp_mpi_world_rank(&rank) != 0 || sp_mpi_world_size(&size) != 0 || rank < 0 || size < 1) {
        sp_log("could not read the rank from MPI; keeping rank %d", sp_proc.rank);
        return -1;
    }
    if (sp_proc.rank_guess >= 0 && sp_proc.rank_guess != rank)
        sp_log("%s said rank %d but MPI says %d; using %d",
               sp_mpi_rank_guess_source(), sp_proc.rank_guess, rank, rank);
    sp_process_set_rank(rank, size);
    return 0;
}

static void record_library(enum sp_mpi_family family)
{
    sp_process_meta_string("mpi_implementation", sp_mpi_family_name(family));
    static char version[8192];
    if (sp_mpi_library_version(version, (int)sizeof version) == 0)
        sp_process_meta_string("mpi_library_version", version);
    int provided = -1;
    if (sp_mpi_query_thread(&provided) == 0)
        sp_process_meta_int("mpi_thread_level", provided);
}

/* Bind the library and confirm the rank; 0 when MPI calls can be made.
 * With `check_initialized`, only if MPI is initialised (someone else did). */
static int bind_library(const void *anchor, int check_initialized)
{
    enum sp_mpi_family family = sp_mpi_library_bind(anchor);
    if (family == SP_MPI_FAMILY_UNKNOWN) {
        sp_log("unrecognised MPI library (neither Open MPI nor MPICH ABI); "
               "keeping rank %d from the environment", sp_proc.rank);
        return -1;
    }
    if (check_initialized && !sp_mpi_is_initialized())
        return -1;
    if (confirm_rank() != 0)
        return -1;
    record_library(family);
    sp_mpi_abi_bind();
    atomic_store(&library_ready, 1);
    return 0;
}

/* Every rank of one job gets rank 0's run id, so the rank files are known
 * to belong together (`scopeprof merge` refuses files of different runs).
 * Same "host-pid-start" form as a run without MPI. */
static void share_run_id(void)
{
    char id[400] = "";
    if (sp_proc.rank == 0) {
        char host[256] = "unknown";
        if (gethostname(host, sizeof host - 1) != 0)
            snprintf(host, sizeof host, "unknown");
        host[sizeof host - 1] = '\0';
        snprintf(id, sizeof id, "%s-%d-%lld", host, sp_proc.pid,
                 (long long)sp_proc.start_realtime_ns);
    }
    if (sp_mpi_world_bcast_bytes(id, (int)sizeof id, 0) == 0 && id[0]) {
        id[sizeof id - 1] = '\0';
        sp_process_meta_string("run_id", id);
    } else {
        sp_log("MPI_Bcast failed; each rank file keeps its own run_id");
    }
}

/* A barrier, then this rank's clock: every rank's value names the same
 * moment, which lines the rank files up on one timeline. */
static void sync_point(const char *key)
{
    if (sp_mpi_world_barrier() == 0)
        sp_process_meta_int(key, sp_clock_ns());
    else
        sp_log("MPI_Barrier failed; no %s in the output", key);
}

void sp_mpi_after_init(const void *real_init)
{
    if (mpi_support_off() || atomic_exchange(&init_claimed, 1))
        return;
    if (bind_library(real_init, 0) != 0)
        return;
    share_run_id();
    sync_point("mpi_sync_init_ns");
    sp_proc.mpi_initialized = 1;
    sp_debug("MPI initialised: rank %d of %d", sp_proc.rank, sp_proc.size);
}

void sp_mpi_before_finalize(const void *real_finalize)
{
    if (mpi_support_off() || atomic_exchange(&finalize_claimed, 1))
        return;
    if (!atomic_load(&library_ready) && !atomic_exchange(&init_claimed, 1)) {
        /* Init went through an entry point we do not wrap (e.g. Open MPI's
         * mpi_f08 bindings): confirm the rank now, without an init sync. */
        if (bind_library(real_finalize, 1) != 0)
            return;
        sp_proc.mpi_initialized = 1;
    }
    if (atomic_load(&library_ready))
        sync_point("mpi_sync_finalize_ns");
    /* From here on the call wrappers no longer ask MPI about arguments. */
    sp_mpi_abi_finalized();
}

void sp_mpi_after_finalize(int rc)
{
    if (mpi_support_off() || rc != 0 || atomic_exchange(&finalized_noted, 1))
        return;
    sp_proc.mpi_finalized = 1;
    sp_debug("MPI finalized; the profile is written at exit");
}
