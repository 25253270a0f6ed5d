/* omp_fork.h - one OpenMP parallel region instance as calls and fork edges,
 * shared by the libgomp wrappers (gomp_wrap.c) and the OMPT tool for LLVM
 * libomp (ompt_tool.c).
 *
 * The encountering thread records a call of region "omp parallel" for the
 * whole construct; every other thread of the team records the same region
 * on its own lane for its implicit task, with a fork edge to the
 * encountering thread's call. */
#ifndef SCOPEPROF_OMP_FORK_H
#define SCOPEPROF_OMP_FORK_H

#include <stdint.h>

#include "record/recorder.h"

struct sp_omp_instance {
    struct sp_profiler *profiler;  /* NULL: not recording this instance */
    int kind;                      /* SP_OMP_PARALLEL or SP_OMP_TEAMS */
    int region;
    struct sp_thread *encountering;
    /* Workers' calls, known when they end; their edges are kept when the
     * encountering thread's call ends (its ordinal is known only then). */
    pthread_mutex_t lock;
    struct sp_omp_child *children;
    size_t num_children, children_cap;
    /* Set (release) once the fields above are: the runtime hands the
     * instance to its threads through its own synchronisation, which a
     * race detector cannot see; workers read it (acquire) first. */
    int published;
    /* Set under lock when the encountering thread's call ended, with its
     * ordinal (-1: not kept): a worker call that ends after it (libomp may
     * end an implicit task only when its thread joins another team) adds
     * its own edge. */
    int ended;
    int64_t parent_ordinal;
    /* OMPT instances only (heap, ompt_worker.c): one reference for the
     * encountering thread and one per worker call begun; the last frees.
     * The encountering thread's open instances, innermost first, through
     * `enclosing`; depth: its number of open encountered regions. */
    int refs;
    int depth;
    struct sp_omp_instance *enclosing;
};

/* What forks: region "omp parallel" or "omp teams" (host teams). */
enum { SP_OMP_PARALLEL, SP_OMP_TEAMS, SP_OMP_NUM_KINDS };
/* On the encountering thread, before the team starts.  `site` is a return
 * address or code address inside the construct (its call site). */
void sp_omp_fork_begin(struct sp_omp_instance *inst, int kind, uintptr_t site);
/* On the encountering thread, after the team joined: its call ends and
 * the edges of the worker calls ended so far are kept.  The instance stays
 * usable by workers until sp_omp_instance_destroy. */
void sp_omp_fork_end(struct sp_omp_instance *inst);
/* Once no thread uses the instance any more (after sp_omp_fork_end). */
void sp_omp_instance_destroy(struct sp_omp_instance *inst);
/* On a thread of the team as its implicit task starts; 1 when it began a
 * call (a thread other than the encountering one), 0 otherwise. */
int sp_omp_worker_begin(struct sp_omp_instance *inst);
/* The calling thread is an OpenMP worker with this thread number in its
 * first team (thread table: kind "openmp", omp_thread_num). */
void sp_omp_mark_worker(int thread_num);
/* On that thread as its implicit task ends (only after a 1 above), before
 * or after the encountering thread's sp_omp_fork_end. */
void sp_omp_worker_end(struct sp_omp_instance *inst);

/* Is `region` of p the "omp parallel" region?  (A pthread created inside
 * it is a runtime's worker, linked by the region's own edges.) */
int sp_omp_is_fork_region(struct sp_profiler *p, uint32_t region);

/* ompt_tool.c: 1 once LLVM libomp started our OMPT tool (the libgomp
 * wrappers then pass through: libomp also exports GOMP_* entry points). */
int sp_ompt_active(void);

#endif
