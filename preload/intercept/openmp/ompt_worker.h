/* ompt_worker.h - LLVM libomp's parallel region instances and worker calls
 * as the OMPT callbacks (ompt_tool.c) see them (ompt_worker.c).
 *
 * A worker's call is kept per thread, not in the implicit task's
 * ompt_data_t: libomp reuses a worker of a finished team for the next one,
 * reports the end of its first implicit task only then, with another task
 * data pointer than the begin's, and the next team's begin with the first
 * one's.  So is the encountering thread's instance (sp_ompt_fork_end).
 * docs/tasks.md, "libomp: calls kept per thread". */
#ifndef SCOPEPROF_OMPT_WORKER_H
#define SCOPEPROF_OMPT_WORKER_H

#include <stdint.h>

#include "omp_fork.h"

/* Parallel-begin on the encountering thread: a new instance of region
 * `kind` (SP_OMP_PARALLEL, or SP_OMP_TEAMS for a league of host teams;
 * NULL when not recorded), which the encountering thread holds until
 * sp_ompt_fork_end. */
struct sp_omp_instance *sp_ompt_fork_begin(int kind, uintptr_t site);
/* Parallel-end on the encountering thread: ends the innermost region it
 * began.  Found per thread, not in the parallel-end's ompt_data_t: libomp
 * may hand the team (and its parallel data) to another region first. */
void sp_ompt_fork_end(void);

/* Implicit-task begin of thread `index` (> 0) of inst's team (inst may be
 * NULL): ends a worker call still open on this thread, then begins one. */
void sp_ompt_worker_begin(struct sp_omp_instance *inst, unsigned index);
/* The closing barrier begins, or the implicit task ends: the thread's
 * worker call ends, unless the thread is the encountering thread of a
 * nested parallel region still open (its own implicit task there ends). */
void sp_ompt_worker_done(void);
/* The thread leaves (thread exit, process exit, runtime shutdown). */
void sp_ompt_worker_leaving(void);

#endif
