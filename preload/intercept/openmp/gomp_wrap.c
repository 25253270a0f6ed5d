/* gomp_wrap.c - GNU libgomp's parallel entry points (what gcc -fopenmp
 * emits for #pragma omp parallel, parallel for/loop, sections), chained to
 * the next definition (dlsym RTLD_NEXT).  The outlined function is wrapped
 * so that each thread of the team knows which region instance it runs. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>

#include "omp_fork.h"

typedef void (*outlined_fn)(void *);

/* What each thread of the team runs instead of the outlined function.
 * fn and data are set before the instance is published (omp_fork.h). */
struct trampoline {
    outlined_fn fn;
    void *data;
    struct sp_omp_instance inst;
};

/* omp_get_thread_num of the runtime, for the thread table. */
static int thread_num(void)
{
    static int (*get)(void);
    if (!SP_LOAD(get))
        SP_STORE(get, (int (*)(void))dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
    int (*fn)(void) = SP_LOAD(get);
    return fn ? fn() : -1;
}

static void run_outlined(void *raw)
{
    struct trampoline *t = raw;
    int started = sp_omp_worker_begin(&t->inst); /* acquires t's fields */
    if (started && sp_tls_thread && sp_tls_thread->omp_thread_num < 0)
        sp_omp_mark_worker(thread_num());
    t->fn(t->data);
    if (started)
        sp_omp_worker_end(&t->inst);
}

static void *next_symbol(const char *name)
{
    void *sym = dlsym(RTLD_NEXT, name);
    if (!sym)
        sp_log("%s is called but no library after the profiler defines it; "
               "the program cannot go on", name);
    return sym;
}

/* The real entry point, looked up once; on a missing symbol the program
 * could only crash, so it exits with the message above. */
#define REAL(type, name)                                        \
    static type real_;                                          \
    if (!SP_LOAD(real_)) {                                      \
        SP_STORE(real_, (type)next_symbol(name));               \
        if (!SP_LOAD(real_))                                    \
            abort();                                            \
    }                                                           \
    type real = SP_LOAD(real_)

/* Tracking this construct: not with LLVM libomp (its OMPT tool sees it). */
static int tracking(void)
{
    return !sp_cfg.disable && sp_cfg.track_threads && !sp_ompt_active();
}

#define FORK_BEGIN_KIND(fn, data, kind)                         \
    struct trampoline t = {fn, data, {0}};                      \
    int on = tracking();                                        \
    if (on)                                                     \
        sp_omp_fork_begin(&t.inst, kind, (uintptr_t)(fn) + 1);  \
    if (on && t.inst.profiler) {                                \
        fn = run_outlined;                                      \
        data = &t;                                              \
    }
#define FORK_BEGIN(fn, data) FORK_BEGIN_KIND(fn, data, SP_OMP_PARALLEL)
#define FORK_END()                                              \
    if (on) {                                                   \
        sp_omp_fork_end(&t.inst);                               \
        sp_omp_instance_destroy(&t.inst);                       \
    }

typedef void (*parallel_fn)(outlined_fn, void *, unsigned, unsigned);
SP_EXPORT void GOMP_parallel(outlined_fn fn, void *data, unsigned num_threads, unsigned flags)
{
    REAL(parallel_fn, "GOMP_parallel");
    FORK_BEGIN(fn, data);
    real(fn, data, num_threads, flags);
    FORK_END();
}

typedef unsigned (*reductions_fn)(outlined_fn, void *, unsigned, unsigned);
SP_EXPORT unsigned GOMP_parallel_reductions(outlined_fn fn, void *data, unsigned num_threads,
                                            unsigned flags)
{
    REAL(reductions_fn, "GOMP_parallel_reductions");
    FORK_BEGIN(fn, data);
    unsigned rc = real(fn, data, num_threads, flags);
    FORK_END();
    return rc;
}

typedef void (*sections_fn)(outlined_fn, void *, unsigned, unsigned, unsigned);
SP_EXPORT void GOMP_parallel_sections(outlined_fn fn, void *data, unsigned num_threads,
                                      unsigned count, unsigned flags)
{
    REAL(sections_fn, "GOMP_parallel_sections");
    FORK_BEGIN(fn, data);
    real(fn, data, num_threads, count, flags);
    FORK_END();
}

/* parallel for with a schedule: start, end, increment, chunk size. */
typedef void (*loop_fn)(outlined_fn, void *, unsigned, long, long, long, long, unsigned);
#define LOOP_WRAPPER(name)                                                              \
    SP_EXPORT void name(outlined_fn fn, void *data, unsigned num_threads, long start,   \
                        long end, long incr, long chunk, unsigned flags)                \
    {                                                                                   \
        REAL(loop_fn, #name);                                                           \
        FORK_BEGIN(fn, data);                                                           \
        real(fn, data, num_threads, start, end, incr, chunk, flags);                    \
        FORK_END();                                                                     \
    }
LOOP_WRAPPER(GOMP_parallel_loop_static)
LOOP_WRAPPER(GOMP_parallel_loop_dynamic)
LOOP_WRAPPER(GOMP_parallel_loop_guided)
LOOP_WRAPPER(GOMP_parallel_loop_nonmonotonic_dynamic)
LOOP_WRAPPER(GOMP_parallel_loop_nonmonotonic_guided)

/* schedule(runtime): no chunk size. */
typedef void (*runtime_loop_fn)(outlined_fn, void *, unsigned, long, long, long, unsigned);
#define RUNTIME_LOOP_WRAPPER(name)                                                      \
    SP_EXPORT void name(outlined_fn fn, void *data, unsigned num_threads, long start,   \
                        long end, long incr, unsigned flags)                            \
    {                                                                                   \
        REAL(runtime_loop_fn, #name);                                                   \
        FORK_BEGIN(fn, data);                                                           \
        real(fn, data, num_threads, start, end, incr, flags);                           \
        FORK_END();                                                                     \
    }
RUNTIME_LOOP_WRAPPER(GOMP_parallel_loop_runtime)
RUNTIME_LOOP_WRAPPER(GOMP_parallel_loop_nonmonotonic_runtime)
RUNTIME_LOOP_WRAPPER(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* The older split form: the encountering thread runs fn itself between
 * start and end, so the instance waits on a per-thread stack. */
#define MAX_OPEN_STARTS 64
static __thread struct trampoline *open_starts[MAX_OPEN_STARTS];
static __thread int num_open_starts;

typedef void (*parallel_start_fn)(outlined_fn, void *, unsigned);
SP_EXPORT void GOMP_parallel_start(outlined_fn fn, void *data, unsigned num_threads)
{
    REAL(parallel_start_fn, "GOMP_parallel_start");
    struct trampoline *t = NULL;
    if (tracking() && num_open_starts < MAX_OPEN_STARTS && (t = calloc(1, sizeof *t))) {
        sp_omp_fork_begin(&t->inst, SP_OMP_PARALLEL, (uintptr_t)fn + 1);
        t->fn = fn;
        t->data = data;
        if (t->inst.profiler) {
            fn = run_outlined;
            data = t;
        }
    }
    if (num_open_starts < MAX_OPEN_STARTS)
        open_starts[num_open_starts] = t;
    num_open_starts++;
    real(fn, data, num_threads);
}

typedef void (*parallel_end_fn)(void);
SP_EXPORT void GOMP_parallel_end(void)
{
    REAL(parallel_end_fn, "GOMP_parallel_end");
    real();
    if (num_open_starts <= 0)
        return;
    struct trampoline *t = --num_open_starts < MAX_OPEN_STARTS ? open_starts[num_open_starts]
                                                                : NULL;
    if (t) {
        sp_omp_fork_end(&t->inst);
        sp_omp_instance_destroy(&t->inst);
        free(t);
    }
}

/* Host teams (OpenMP 5.0): each team's initial thread runs fn. */
typedef void (*teams_fn)(outlined_fn, void *, unsigned, unsigned, unsigned);
SP_EXPORT void GOMP_teams_reg(outlined_fn fn, void *data, unsigned num_teams,
                              unsigned thread_limit, unsigned flags)
{
    REAL(teams_fn, "GOMP_teams_reg");
    FORK_BEGIN_KIND(fn, data, SP_OMP_TEAMS);
    real(fn, data, num_teams, thread_limit, flags);
    FORK_END();
}
