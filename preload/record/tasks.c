/* tasks.c - cooperative lanes: tasks (and fibers, see ucontext_wrap.c) that
 * run in steps on a thread's stack or on stacks of their own.
 *
 * The calling thread's current task is lane->thread->task: every call begun
 * while it is >= 0 is stored with that task id, so its reconstruction lane
 * is the task's, not the thread's (spec §5.2).  Step accounting follows
 * spec §6.2: entering a step adds the time since the previous step ended to
 * suspended_ns (not before the first step), leaving it adds the step's time
 * to running_ns.  A call's await_ns is the growth of its task's
 * suspended_ns between the call's begin and end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

struct sp_task **sp_task_blocks[SP_MAX_TASK_BLOCKS];
static pthread_mutex_t tasks_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t num_tasks; /* written under tasks_lock, read atomically */

int64_t sp_task_new(const char *kind, const char *name)
{
    struct sp_thread *self = sp_tls_thread ? sp_tls_thread : sp_thread_register(0);
    struct sp_task *task = calloc(1, sizeof *task);
    if (!task)
        return -1;
    snprintf(task->kind, sizeof task->kind, "%s", kind && *kind ? kind : "task");
    task->thread_index = self ? self->index : -1;
    task->created_ns = sp_clock_ns();
    task->done_ns = -1;

    pthread_mutex_lock(&tasks_lock);
    int64_t index = num_tasks;
    /* Task ids are stored in 32 bits per event. */
    if (index / SP_TASK_BLOCK >= SP_MAX_TASK_BLOCKS || index > INT32_MAX) {
        pthread_mutex_unlock(&tasks_lock);
        free(task);
        return -1;
    }
    struct sp_task **block = sp_task_blocks[index / SP_TASK_BLOCK];
    if (!block) {
        block = calloc(SP_TASK_BLOCK, sizeof *block);
        if (!block) {
            pthread_mutex_unlock(&tasks_lock);
            free(task);
            return -1;
        }
        SP_RELEASE(sp_task_blocks[index / SP_TASK_BLOCK], block);
    }
    task->index = index;
    if (name && *name)
        snprintf(task->name, sizeof task->name, "%s", name);
    else
        snprintf(task->name, sizeof task->name, "%s-%lld", task->kind, (long long)index);
    SP_RELEASE(block[index % SP_TASK_BLOCK], task);
    SP_RELEASE(num_tasks, index + 1);
    pthread_mutex_unlock(&tasks_lock);
    return index;
}

static int task_valid(int64_t task)
{
    return task >= 0 && task < SP_ACQUIRE(num_tasks);
}

void sp_task_run(struct sp_thread *t, int64_t next)
{
    int64_t now = sp_clock_ns();
    int64_t prev = t->task;
    if (prev == next)
        return;
    if (prev >= 0) {
        struct sp_task *k = sp_task_get(prev);
        SP_STORE(k->running_ns, k->running_ns + (now - k->step_started_ns));
        SP_STORE(k->last_step_end_ns, now);
    }
    if (next >= 0) {
        /* Calls made in a task are ended by the slow path (await
         * bookkeeping), and the thread's own calls must not be matched by
         * ends made in the task. */
        for (uint32_t i = 0; i < t->num_lanes; i++)
            if (t->lanes[i])
                sp_lane_go_slow(t->lanes[i]);
        struct sp_task *k = sp_task_get(next);
        if (k->steps > 0)
            SP_STORE(k->suspended_ns, k->suspended_ns + (now - k->last_step_end_ns));
        SP_STORE(k->steps, k->steps + 1);
        SP_STORE(k->step_started_ns, now);
        SP_STORE(k->thread_index, t->index);
    }
    t->task = (int32_t)next;
}

void sp_task_finish(int64_t task)
{
    if (!task_valid(task))
        return;
    struct sp_task *k = sp_task_get(task);
    int64_t unset = -1;
    /* The first finish wins. */
    __atomic_compare_exchange_n(&k->done_ns, &unset, sp_clock_ns(), 0, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
}

/* ---- public API ----------------------------------------------------------- */

SP_EXPORT int64_t sp_task_create(const char *kind, const char *name)
{
    if (sp_cfg.disable)
        return -1;
    return sp_task_new(kind, name);
}

SP_EXPORT void sp_task_switch(int64_t task)
{
    if (sp_cfg.disable || (task != -1 && !task_valid(task)))
        return;
    struct sp_thread *t = sp_tls_thread ? sp_tls_thread : sp_thread_register(0);
    if (t)
        sp_task_run(t, task);
}

SP_EXPORT void sp_task_done(int64_t task)
{
    if (!sp_cfg.disable)
        sp_task_finish(task);
}

/* ---- await bookkeeping (hot path, task calls only) ------------------------ */

void sp_task_call_begins(struct sp_lane *lane, uint32_t pos, int32_t task)
{
    if (pos >= lane->await_cap) {
        uint32_t cap = lane->stack_cap > pos ? lane->stack_cap : pos + 1;
        int64_t *grown = realloc(lane->await_base, (size_t)cap * sizeof *grown);
        if (!grown) {
            /* Without a slot the call keeps await 0 (see sp_task_call_await). */
            return;
        }
        lane->await_base = grown;
        lane->await_cap = cap;
    }
    lane->await_base[pos] = SP_LOAD(sp_task_get(task)->suspended_ns);
}

int64_t sp_task_call_await(const struct sp_lane *lane, uint32_t pos, int32_t task)
{
    if (pos >= lane->await_cap)
        return 0;
    return SP_LOAD(sp_task_get(task)->suspended_ns) - lane->await_base[pos];
}

void sp_task_store_await(struct sp_lane *lane, uint32_t used, int64_t await)
{
    struct sp_chunk *tail = lane->tail;
    if (!tail->await_ns) {
        int64_t *column = calloc(SP_CHUNK_EVENTS, sizeof *column);
        if (!column)
            return;
        __atomic_add_fetch(&sp_buffer_bytes, SP_CHUNK_EVENTS * sizeof *column, __ATOMIC_RELAXED);
        /* finalize reads the pointer under the lane lock. */
        pthread_mutex_lock(&lane->lock);
        tail->await_ns = column;
        pthread_mutex_unlock(&lane->lock);
    }
    tail->await_ns[used] = await;
}

/* ---- the task table ------------------------------------------------------- */

sp_task_row *sp_tasks_snapshot(int64_t origin_ns, size_t *count)
{
    int64_t n = SP_ACQUIRE(num_tasks);
    *count = 0;
    if (n == 0)
        return NULL;
    sp_task_row *rows = calloc((size_t)n, sizeof *rows);
    if (!rows)
        return NULL;
    for (int64_t i = 0; i < n; i++) {
        const struct sp_task *k = sp_task_get(i);
        sp_task_row *row = &rows[i];
        int64_t done = SP_LOAD(k->done_ns);
        row->index = k->index;
        row->thread_index = SP_LOAD(k->thread_index);
        row->created_ns = k->created_ns - origin_ns;
        row->done_ns = done < 0 ? -1 : done - origin_ns;
        row->steps = SP_LOAD(k->steps);
        row->running_ns = SP_LOAD(k->running_ns);
        row->suspended_ns = SP_LOAD(k->suspended_ns);
        row->kind = (char *)k->kind;
        row->name = (char *)k->name;
        row->coro_name = (char *)"";
    }
    *count = (size_t)n;
    return rows;
}

/* fork(): the child must not inherit tasks_lock held by a thread that does not
 * exist there. */
static void tasks_lock_prepare(void) { pthread_mutex_lock(&tasks_lock); }
static void tasks_lock_parent(void) { pthread_mutex_unlock(&tasks_lock); }
static void tasks_lock_child(void) { pthread_mutex_init(&tasks_lock, NULL); }

__attribute__((constructor)) static void tasks_lock_watch_fork(void)
{
    pthread_atfork(tasks_lock_prepare, tasks_lock_parent, tasks_lock_child);
}
