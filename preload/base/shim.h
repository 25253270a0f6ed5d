/* shim.h - what every layer of libscopeprof.so shares (never installed):
 * export and branch macros, configuration, logging, the clock and the
 * process state.  The bottom of the shim: it calls nothing above it
 * (docs/architecture.md).
 *
 * Everything declared here is hidden (-fvisibility=hidden); only functions
 * marked SP_EXPORT (the marker API and the wrapped symbols) leave the shim. */
#ifndef SCOPEPROF_SHIM_H
#define SCOPEPROF_SHIM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define SP_EXPORT __attribute__((visibility("default")))
#define SP_LIKELY(x) __builtin_expect(!!(x), 1)
#define SP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- configuration (config.c) ---------------------------------------- */

enum sp_on_full { SP_ON_FULL_SPILL = 0, SP_ON_FULL_STOP = 1 };
enum sp_timer_choice { SP_TIMER_AUTO = 0, SP_TIMER_TSC = 1, SP_TIMER_CLOCK = 2 };
enum sp_huge_pages { SP_HUGE_AUTO = 0, SP_HUGE_ON = 1, SP_HUGE_OFF = 2 };

struct sp_config {
    const char *output;       /* SCOPE_PROFILER_OUTPUT: prefix, NULL = unset */
    int disable;              /* SCOPE_PROFILER_DISABLE */
    const char *label;        /* SCOPE_PROFILER_LABEL, NULL = unset */
    char **include;           /* SCOPE_PROFILER_INCLUDE globs (comma separated) */
    size_t num_include;
    char **exclude;           /* SCOPE_PROFILER_EXCLUDE globs */
    size_t num_exclude;
    int verbose;              /* SCOPE_PROFILER_VERBOSE */
    int track_threads;        /* SCOPE_PROFILER_TRACK_THREADS, default 1 */
    int mpi;                  /* SCOPE_PROFILER_MPI: -1 auto, 0 off, 1 on */
    uint64_t max_memory;      /* SCOPE_PROFILER_MAX_MEMORY bytes */
    int on_full;              /* SCOPE_PROFILER_ON_FULL */
    double flush_interval;    /* SCOPE_PROFILER_FLUSH_INTERVAL seconds, 0 = off */
    int callsites;            /* SCOPE_PROFILER_CALLSITES, default 1 */
    int writer_isolated;      /* SCOPE_PROFILER_WRITER_NAMESPACE=isolated|shared */
    int timer;                /* SCOPE_PROFILER_TIMER=auto|tsc|clock */
    int huge_pages;           /* SCOPE_PROFILER_HUGE_PAGES=auto|on|off */
};
extern struct sp_config sp_cfg;

void sp_config_load(void);
/* 1 if the region name passes SCOPE_PROFILER_INCLUDE/EXCLUDE. */
int sp_config_region_wanted(const char *name);

/* One line on stderr, prefixed "scopeprof: ".  Never allocates. */
void sp_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sp_vlog(const char *fmt, va_list ap);
/* Only with SCOPE_PROFILER_VERBOSE=1. */
void sp_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- clock ------------------------------------------------------------ */

/* CLOCK_MONOTONIC ns: the clock of Python's time.perf_counter_ns(). */
static inline int64_t sp_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
static inline int64_t sp_thread_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- process state (process.c; changed by lifecycle/ and intercept/) ---- */

struct sp_process {
    int pid;
    int64_t start_ns;         /* CLOCK_MONOTONIC at load */
    int64_t start_realtime_ns;
    int rank;                 /* best known rank (0 when unknown) */
    int rank_from_mpi;        /* confirmed by MPI_Comm_rank */
    int rank_guess;           /* from launcher variables, -1 = none */
    int size;                 /* MPI size, 1 when unknown */
    int mpi_initialized;
    int mpi_finalized;
    int finalized;            /* process-wide exit path ran */
    int forked_from_pid;      /* parent's pid in a fork() child, else 0 */
};
extern struct sp_process sp_proc;

/* ---- the output prefix (output_prefix.c) ---------------------------------- */

/* prefix with %p, %h, %r and %% expanded into buf; -1 if it does not fit. */
int sp_output_expand(char *buf, size_t len, const char *prefix, int rank, int pid);
/* prefix joined to the working directory unless absolute (malloc'd). */
char *sp_output_prefix_absolute(const char *prefix);
/* Create the directories of dir, like mkdir -p with the umask; 0 or -1 (errno). */
int sp_output_make_dirs(const char *dir);
/* Create the directory of the (absolute) prefix; NULL when it is usable as
 * it is, else a malloc'd prefix in the working directory, said in one line. */
char *sp_output_prefix_ready(const char *prefix, int rank);

#endif /* SCOPEPROF_SHIM_H */
