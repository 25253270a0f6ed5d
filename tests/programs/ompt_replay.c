/* ompt_replay.c - plays an OpenMP runtime to the shim's OMPT tool: starts
 * it through ompt_start_tool and calls its callbacks in orders LLVM libomp
 * may use but seldom does, with a real second thread as the worker
 * (tests/integration/test_openmp.c).  argv[1] picks the order:
 *   late_end     the worker's implicit task ends only after the
 *                encountering thread's parallel-end, with another task
 *                data pointer than its begin's (no closing barrier seen)
 *   stale_begin  two teams in a row with the same worker and the same task
 *                data pointer; the first implicit task's end is never
 *                reported, the second team's barrier carries another
 *                pointer
 *   thread_exit  the worker thread exits inside its implicit task
 *   team_reused  the parallel-end's parallel data no longer holds what the
 *                tool stored at parallel-begin (libomp may hand a finished
 *                team to another region before it reports the end)
 * Each team has the main thread (index 0) and the worker (index 1), whose
 * implicit task makes one "inner" call; the main thread's calls are inside
 * "outer".  Without the shim (no ompt_start_tool) it exits with 3. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "scope_profiler.h"

/* The OMPT types and values used, from the OpenMP 5.1 specification. */
typedef union ompt_data {
    uint64_t value;
    void *ptr;
} ompt_data;
typedef void (*any_fn)(void);
typedef any_fn (*lookup_fn)(const char *name);
typedef struct start_result {
    int (*initialize)(lookup_fn lookup, int device, ompt_data *tool_data);
    void (*finalize)(ompt_data *tool_data);
    ompt_data tool_data;
} start_result;
typedef start_result *(*start_tool_fn)(unsigned version, const char *runtime);
typedef void (*parallel_begin_fn)(ompt_data *task, const void *frame, ompt_data *parallel,
                                  unsigned requested, int flags, const void *codeptr);
typedef void (*parallel_end_fn)(ompt_data *parallel, ompt_data *task, int flags,
                                const void *codeptr);
typedef void (*implicit_task_fn)(int endpoint, ompt_data *parallel, ompt_data *task,
                                 unsigned team_size, unsigned index, int flags);
typedef void (*sync_region_fn)(int kind, int endpoint, ompt_data *parallel, ompt_data *task,
                               const void *codeptr);
enum { PARALLEL_BEGIN = 3, PARALLEL_END = 4, IMPLICIT_TASK = 7, SYNC_REGION = 23 };
enum { SCOPE_BEGIN = 1, SCOPE_END = 2 };
enum { TASK_IMPLICIT = 0x2, PARALLEL_INVOKER_RUNTIME = 0x2 };
enum { BARRIER_IMPLICIT_PARALLEL = 9, SET_ALWAYS = 5 };

static any_fn callbacks[64];

static int set_callback(int event, any_fn callback)
{
    if (event < 0 || event >= 64)
        return 0;
    callbacks[event] = callback;
    return SET_ALWAYS;
}

static any_fn lookup(const char *name)
{
    return strcmp(name, "ompt_set_callback") == 0 ? (any_fn)set_callback : NULL;
}

static int outer, inner;
static ompt_data encountering_task, parallel[2], main_task, worker_task, other_task;

/* The two threads take turns: each waits for the step the other sets. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t moved = PTHREAD_COND_INITIALIZER;
static int step;
static void wait_for(int s)
{
    pthread_mutex_lock(&lock);
    while (step < s)
        pthread_cond_wait(&moved, &lock);
    pthread_mutex_unlock(&lock);
}
static void go_to(int s)
{
    pthread_mutex_lock(&lock);
    step = s;
    pthread_cond_broadcast(&moved);
    pthread_mutex_unlock(&lock);
}

static void parallel_begin(int team)
{
    ((parallel_begin_fn)callbacks[PARALLEL_BEGIN])(&encountering_task, NULL, &parallel[team], 2,
                                                   PARALLEL_INVOKER_RUNTIME,
                                                   (const void *)(uintptr_t)parallel_begin);
    ((implicit_task_fn)callbacks[IMPLICIT_TASK])(SCOPE_BEGIN, &parallel[team], &main_task, 2, 0,
                                                 TASK_IMPLICIT);
}

static void parallel_end(int team)
{
    ((implicit_task_fn)callbacks[IMPLICIT_TASK])(SCOPE_END, NULL, &main_task, 2, 0,
                                                 TASK_IMPLICIT);
    ((parallel_end_fn)callbacks[PARALLEL_END])(&parallel[team], &encountering_task,
                                               PARALLEL_INVOKER_RUNTIME,
                                               (const void *)(uintptr_t)parallel_begin);
}

/* The worker's implicit task of team `team`, as far as its body. */
static void worker_body(int team)
{
    ((implicit_task_fn)callbacks[IMPLICIT_TASK])(SCOPE_BEGIN, &parallel[team], &worker_task, 2, 1,
                                                 TASK_IMPLICIT);
    sp_begin(inner);
    sp_end(inner);
}

static const char *mode;

static void *worker(void *arg)
{
    (void)arg;
    if (!strcmp(mode, "late_end")) {
        wait_for(1);
        worker_body(0);
        go_to(2);
        wait_for(3);
        ((implicit_task_fn)callbacks[IMPLICIT_TASK])(SCOPE_END, NULL, &other_task, 0, 1,
                                                     TASK_IMPLICIT);
    } else if (!strcmp(mode, "stale_begin")) {
        wait_for(1);
        worker_body(0);
        go_to(2);
        wait_for(3);
        worker_body(1);
        ((sync_region_fn)callbacks[SYNC_REGION])(BARRIER_IMPLICIT_PARALLEL, SCOPE_BEGIN,
                                                 &parallel[1], &other_task, NULL);
        go_to(4);
    } else if (!strcmp(mode, "team_reused")) {
        wait_for(1);
        worker_body(0);
        ((sync_region_fn)callbacks[SYNC_REGION])(BARRIER_IMPLICIT_PARALLEL, SCOPE_BEGIN,
                                                 &parallel[0], &worker_task, NULL);
    } else {
        wait_for(1);
        worker_body(0);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    mode = argc > 1 ? argv[1] : "late_end";
    if (strcmp(mode, "late_end") && strcmp(mode, "stale_begin") && strcmp(mode, "thread_exit") &&
        strcmp(mode, "team_reused")) {
        fprintf(stderr, "ompt_replay: unknown order %s\n", mode);
        return 2;
    }
    start_tool_fn start = (start_tool_fn)dlsym(RTLD_DEFAULT, "ompt_start_tool");
    start_result *tool = start ? start(201611, "ompt_replay") : NULL;
    if (!tool || !tool->initialize(lookup, 0, &tool->tool_data))
        return 3;
    outer = sp_region("outer");
    inner = sp_region("inner");
    /* created outside any call: no pthread fork edge */
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 2;
    sp_begin(outer);
    parallel_begin(0);
    go_to(1);
    if (!strcmp(mode, "late_end")) {
        wait_for(2);
        parallel_end(0);
        go_to(3);
    } else if (!strcmp(mode, "stale_begin")) {
        wait_for(2);
        parallel_end(0);
        parallel_begin(1);
        go_to(3);
        wait_for(4);
        parallel_end(1);
    }
    pthread_join(t, NULL);
    if (!strcmp(mode, "team_reused")) {
        /* another region began and ended in the team since */
        parallel[0].ptr = NULL;
        parallel_end(0);
    }
    if (!strcmp(mode, "thread_exit"))
        parallel_end(0);
    sp_end(outer);
    tool->finalize(&tool->tool_data);
    return 0;
}
