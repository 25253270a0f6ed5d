/* ompt_worker.c - libomp's instances and worker calls, kept per thread
 * (ompt_worker.h). */
#include <stdlib.h>

#include "ompt_worker.h"

/* At most one worker call is open per thread: a thread joins no other team
 * while it is in one, and inside its implicit task it only encounters
 * nested regions, as their master (implicit task index 0, not a worker). */
static __thread struct sp_omp_instance *open_worker
    __attribute__((tls_model("initial-exec")));
/* Parallel regions this thread encountered and has not ended yet, and
 * their number when the open worker call began: a closing barrier or
 * implicit-task end seen with more open is a nested region's. */
static __thread int open_encounters __attribute__((tls_model("initial-exec")));
static __thread int encounters_at_worker_begin __attribute__((tls_model("initial-exec")));
/* The innermost recorded instance among them (sp_omp_instance.enclosing). */
static __thread struct sp_omp_instance *innermost_encountered
    __attribute__((tls_model("initial-exec")));

/* The encountering thread's reference and each worker call's: libomp may
 * end a worker's implicit task after the encountering thread left the
 * region, and the last of them frees the instance. */
static void hold(struct sp_omp_instance *inst)
{
    __atomic_add_fetch(&inst->refs, 1, __ATOMIC_RELAXED);
}

static void release(struct sp_omp_instance *inst)
{
    if (__atomic_sub_fetch(&inst->refs, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    sp_omp_instance_destroy(inst);
    free(inst);
}

struct sp_omp_instance *sp_ompt_fork_begin(int kind, uintptr_t site)
{
    int depth = ++open_encounters;
    struct sp_omp_instance *inst = malloc(sizeof *inst);
    if (!inst)
        return NULL;
    sp_omp_fork_begin(inst, kind, site);
    if (!inst->profiler) {
        free(inst);
        return NULL;
    }
    inst->refs = 1;
    inst->depth = depth;
    inst->enclosing = innermost_encountered;
    innermost_encountered = inst;
    return inst;
}

void sp_ompt_fork_end(void)
{
    struct sp_omp_instance *inst = innermost_encountered;
    /* not recorded when the innermost recorded one is an enclosing region */
    if (inst && inst->depth == open_encounters) {
        innermost_encountered = inst->enclosing;
        sp_omp_fork_end(inst);
        release(inst);
    }
    if (open_encounters > 0)
        open_encounters--;
}

static void close_worker(void)
{
    struct sp_omp_instance *inst = open_worker;
    open_worker = NULL;
    sp_omp_worker_end(inst);
    release(inst);
}

void sp_ompt_worker_done(void)
{
    if (open_worker && open_encounters == encounters_at_worker_begin)
        close_worker();
}

void sp_ompt_worker_begin(struct sp_omp_instance *inst, unsigned index)
{
    /* A worker call whose end libomp did not report before this begin. */
    sp_ompt_worker_done();
    if (!inst || index == 0 || open_worker || !sp_omp_worker_begin(inst))
        return;
    hold(inst); /* the encountering thread's reference is alive: it waits for us */
    open_worker = inst;
    encounters_at_worker_begin = open_encounters;
    sp_omp_mark_worker((int)index);
}

void sp_ompt_worker_leaving(void)
{
    sp_ompt_worker_done();
}
