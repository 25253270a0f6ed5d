/* ompt_tool.c - LLVM libomp (clang -fopenmp) through its tool interface,
 * OMPT (OpenMP 5.x, chapter "OMPT Interface"): libomp calls ompt_start_tool
 * at start-up; ours registers the parallel-begin/end, implicit-task and
 * sync-region callbacks.  The few OMPT types used are declared here from
 * the specification, so the shim builds without omp-tools.h. */
#include <stdint.h>

#include "ompt_worker.h"

/* ---- the OMPT declarations we need (values from the specification) ---- */
typedef union sp_ompt_data {
    uint64_t value;
    void *ptr;
} sp_ompt_data;
typedef void (*sp_ompt_callback)(void);
typedef void (*sp_ompt_interface_fn)(void);
typedef sp_ompt_interface_fn (*sp_ompt_lookup)(const char *name);
typedef int (*sp_ompt_set_callback)(int event, sp_ompt_callback callback);
typedef int (*sp_ompt_initialize)(sp_ompt_lookup lookup, int initial_device_num,
                                  sp_ompt_data *tool_data);
typedef void (*sp_ompt_finalize)(sp_ompt_data *tool_data);
typedef struct sp_ompt_start_tool_result {
    sp_ompt_initialize initialize;
    sp_ompt_finalize finalize;
    sp_ompt_data tool_data;
} sp_ompt_start_tool_result;

enum {
    OMPT_CALLBACK_PARALLEL_BEGIN = 3,
    OMPT_CALLBACK_PARALLEL_END = 4,
    OMPT_CALLBACK_IMPLICIT_TASK = 7,
    OMPT_CALLBACK_SYNC_REGION = 23,
};
enum { OMPT_SCOPE_BEGIN = 1, OMPT_SCOPE_END = 2 };
enum { OMPT_TASK_INITIAL = 0x1 };
/* parallel-begin's flags: a league of host teams (`#pragma omp teams`),
 * whose teams' initial tasks are the league's "threads" */
enum { OMPT_PARALLEL_LEAGUE = 0x40000000 };
/* Barriers that end an implicit task: the implicit barrier of the parallel
 * region (5.1 name), and the 5.0 kinds an older runtime reports instead. */
enum {
    OMPT_SYNC_BARRIER = 1,
    OMPT_SYNC_BARRIER_IMPLICIT = 2,
    OMPT_SYNC_BARRIER_IMPLICIT_PARALLEL = 9,
};
enum { OMPT_SET_NEVER = 1 };

/* ---- the tool ----------------------------------------------------------- */

static int active;

int sp_ompt_active(void)
{
    return __atomic_load_n(&active, __ATOMIC_ACQUIRE);
}

static void on_parallel_begin(sp_ompt_data *encountering_task, const void *encountering_frame,
                              sp_ompt_data *parallel, unsigned requested, int flags,
                              const void *codeptr_ra)
{
    (void)encountering_task;
    (void)encountering_frame;
    (void)requested;
    /* codeptr_ra: the return address of the runtime call in the construct.
     * A league of host teams is region "omp teams", as with libgomp; the
     * one-thread parallel region libomp then reports inside each team
     * (flags as any parallel region's) is recorded as it is reported. */
    int kind = flags & OMPT_PARALLEL_LEAGUE ? SP_OMP_TEAMS : SP_OMP_PARALLEL;
    struct sp_omp_instance *inst = sp_ompt_fork_begin(kind, (uintptr_t)codeptr_ra);
    /* read by the team's threads (release/acquire, see omp_fork.h) */
    __atomic_store_n(&parallel->ptr, inst, __ATOMIC_RELEASE);
}

static void on_parallel_end(sp_ompt_data *parallel, sp_ompt_data *encountering_task, int flags,
                            const void *codeptr_ra)
{
    (void)encountering_task;
    (void)flags;
    (void)codeptr_ra;
    /* Neither read nor cleared: libomp may already have handed this team's
     * parallel data to another region (ompt_worker.h). */
    (void)parallel;
    sp_ompt_fork_end();
}

/* A worker's call covers its implicit task up to the region's closing
 * barrier: that wait is then the gap between the worker's end and the
 * encountering thread's (as with libgomp, where the wrapper returns before
 * the barrier).  The task data pointers are not used (ompt_worker.h). */
static void on_implicit_task(int endpoint, sp_ompt_data *parallel, sp_ompt_data *task,
                             unsigned actual_parallelism, unsigned index, int flags)
{
    (void)task;
    (void)actual_parallelism;
    if (endpoint == OMPT_SCOPE_BEGIN) {
        struct sp_omp_instance *inst =
            parallel ? __atomic_load_n(&parallel->ptr, __ATOMIC_ACQUIRE) : NULL;
        /* An initial task is a worker's only as the initial task of a team
         * of a league (host teams: `index` is the team's number); the
         * program's and a target region's are no one's. */
        if ((flags & OMPT_TASK_INITIAL) && (!inst || inst->kind != SP_OMP_TEAMS))
            return;
        if (index != 0)
            sp_ompt_worker_begin(inst, index);
    } else if (endpoint == OMPT_SCOPE_END) {
        sp_ompt_worker_done();
    }
}

static void on_sync_region(int kind, int endpoint, sp_ompt_data *parallel, sp_ompt_data *task,
                           const void *codeptr_ra)
{
    (void)parallel;
    (void)task;
    /* The closing barrier has no code address; a workshare's barrier has. */
    if (endpoint == OMPT_SCOPE_BEGIN && !codeptr_ra &&
        (kind == OMPT_SYNC_BARRIER_IMPLICIT_PARALLEL || kind == OMPT_SYNC_BARRIER_IMPLICIT ||
         kind == OMPT_SYNC_BARRIER))
        sp_ompt_worker_done();
}

static int tool_initialize(sp_ompt_lookup lookup, int initial_device_num, sp_ompt_data *data)
{
    (void)initial_device_num;
    (void)data;
    sp_ompt_set_callback set = (sp_ompt_set_callback)lookup("ompt_set_callback");
    if (!set)
        return 0;
    int ok = 1;
    ok &= set(OMPT_CALLBACK_PARALLEL_BEGIN, (sp_ompt_callback)on_parallel_begin) > OMPT_SET_NEVER;
    ok &= set(OMPT_CALLBACK_PARALLEL_END, (sp_ompt_callback)on_parallel_end) > OMPT_SET_NEVER;
    ok &= set(OMPT_CALLBACK_IMPLICIT_TASK, (sp_ompt_callback)on_implicit_task) > OMPT_SET_NEVER;
    set(OMPT_CALLBACK_SYNC_REGION, (sp_ompt_callback)on_sync_region);
    if (!ok) {
        sp_log("the OpenMP runtime refused the profiler's OMPT callbacks; parallel regions "
               "are not recorded");
        return 0;
    }
    /* A worker call still open when its thread exits ends there. */
    SP_STORE(sp_record_hooks.thread_leaving, sp_ompt_worker_leaving);
    __atomic_store_n(&active, 1, __ATOMIC_RELEASE);
    return 1; /* keep the tool */
}

/* libomp shuts down, on the thread that ends it. */
static void tool_finalize(sp_ompt_data *data)
{
    (void)data;
    sp_ompt_worker_leaving();
}

SP_EXPORT sp_ompt_start_tool_result *ompt_start_tool(unsigned omp_version,
                                                     const char *runtime_version)
{
    (void)omp_version;
    (void)runtime_version;
    static sp_ompt_start_tool_result result = {tool_initialize, tool_finalize, {0}};
    if (sp_cfg.disable || !sp_cfg.track_threads)
        return NULL;
    return &result;
}
