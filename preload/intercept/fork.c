/* fork.c - a fork() child is a new profiled process of its own.
 *
 * Before fork, the prepare handler takes every lock of the shim, in the
 * order in which the other paths nest them:
 *     write lock -> spill lock -> metadata lock -> profiler table
 *     -> each profiler -> its lanes -> thread table
 * so the child never inherits a lock held by a thread that does not exist
 * there, nor a table half-way through a change, nor the writer's HDF5 in
 * the middle of a file.  The parent simply releases them.
 *
 * The child re-initialises them and starts over:
 *  - each profiler starts a new session: no lanes (the parent's calls are
 *    the parent's to write), the same region table (ids the program took
 *    before fork stay valid), a new start time, and a file name carrying
 *    the pid (lifecycle/output_path.c);
 *  - the forking thread is the child's only thread, index 0; the calls it
 *    had open at fork go on in the child from the moment of the fork, so
 *    its later sp_end() calls still match;
 *  - pid and start time are the child's, and "forked_from_pid" says whose
 *    child it is.
 * The parent's buffers are dropped, not freed: they are shared
 * copy-on-write with the parent, and freeing them would only copy pages in
 * a child that may be about to exec. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fork.h"
#include "lifecycle/spill.h"

static void before_fork(void)
{
    pthread_mutex_lock(sp_write_lock);
    sp_spill_lock();
    pthread_mutex_lock(sp_meta_lock);
    pthread_mutex_lock(&sp_profilers_lock);
    for (int i = 0; i < sp_num_profilers; i++) {
        struct sp_profiler *p = sp_profilers[i];
        pthread_mutex_lock(&p->lock);
        for (struct sp_lane *lane = p->lanes; lane; lane = lane->next_in_profiler)
            pthread_mutex_lock(&lane->lock);
    }
    pthread_mutex_lock(&sp_threads_lock);
    sp_timer_lock();
}

static void parent_after_fork(void)
{
    sp_timer_unlock();
    pthread_mutex_unlock(&sp_threads_lock);
    for (int i = sp_num_profilers; i-- > 0;) {
        struct sp_profiler *p = sp_profilers[i];
        for (struct sp_lane *lane = p->lanes; lane; lane = lane->next_in_profiler)
            pthread_mutex_unlock(&lane->lock);
        pthread_mutex_unlock(&p->lock);
    }
    pthread_mutex_unlock(&sp_profilers_lock);
    pthread_mutex_unlock(sp_meta_lock);
    sp_spill_unlock();
    pthread_mutex_unlock(sp_write_lock);
}

/* The calls the forking thread had open on `old` continue on a new lane,
 * started at the fork: the child's file covers the child's life only. */
static void carry_open_calls(const struct sp_lane *old, int64_t now)
{
    uint32_t depth = sp_lane_depth(old);
    struct sp_lane *lane = sp_lane_create(old->profiler);
    if (!lane)
        goto no_memory;
    while (lane->stack_cap < depth)
        if (sp_lane_grow_stack(lane) != 0)
            goto no_memory;
    for (uint32_t d = 0; d < depth; d++) {
        const struct sp_open *o = &old->stack[d];
        if (o->region >= lane->num_counters && sp_lane_grow_counters(lane, o->region) != 0)
            goto no_memory;
        lane->stack[d] = (struct sp_open){.start = now, .region = o->region, .task = o->task};
    }
    sp_lane_set_depth(lane, depth);
    return;
no_memory:
    sp_log("out of memory after fork(); the calls open at fork are dropped in child %d",
           sp_proc.pid);
}

static void child_after_fork(void)
{
    int64_t now = sp_clock_ns();
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);

    /* Our own thread took these in before_fork(); they are simply reset. */
    pthread_mutex_init(sp_write_lock, NULL);
    /* spill.c's lock is private to it: released, which a default mutex
     * allows the thread that took it. */
    sp_spill_unlock();
    pthread_mutex_init(sp_meta_lock, NULL);
    pthread_mutex_init(&sp_profilers_lock, NULL);
    pthread_mutex_init(&sp_threads_lock, NULL);
    sp_timer_reset_lock();

    sp_proc.forked_from_pid = sp_proc.pid;
    sp_proc.pid = (int)getpid();
    sp_proc.start_ns = now;
    sp_proc.start_realtime_ns = (int64_t)wall.tv_sec * 1000000000 + wall.tv_nsec;

    /* The parent's lanes are left as they are (and their locks with them):
     * nothing in the child reaches them any more. */
    for (int i = 0; i < sp_num_profilers; i++) {
        struct sp_profiler *p = sp_profilers[i];
        pthread_mutex_init(&p->lock, NULL);
        p->lanes = NULL;
        free(p->path);
        p->path = NULL;
        free(p->given_path);
        p->given_path = NULL;
        p->start_ns = now;
        p->last_error = SP_OK;
        /* A child writes a file only if it records calls itself. */
        p->explicit_init = 0;
    }
    sp_buffer_bytes = 0;

    struct sp_thread *self = sp_tls_thread;
    sp_tls_lane = &sp_no_lane;
    sp_num_threads = 0;
    if (self) {
        self->index = 0;
        self->ident = (uint64_t)pthread_self();
        self->tid = (pid_t)syscall(SYS_gettid);
        self->daemon = 0;
        self->alive = 1;
        self->start_ns = now;
        self->end_ns = -1;
        self->cpu_ns = sp_thread_cpu_ns();
        /* The child's only thread is its main thread. */
        if (!strncmp(self->name, "thread ", 7))
            snprintf(self->name, sizeof self->name, "MainThread");
        sp_threads[0] = self;
        sp_num_threads = 1;
        for (uint32_t slot = 0; slot < self->num_lanes; slot++) {
            struct sp_lane *old = self->lanes[slot];
            self->lanes[slot] = NULL;
            if (old && sp_lane_depth(old) && SP_LOAD(old->profiler->active))
                carry_open_calls(old, sp_ticks());
        }
    }
    sp_process_meta_int("forked_from_pid", sp_proc.forked_from_pid);
}

void sp_fork_install(void)
{
    if (pthread_atfork(before_fork, parent_after_fork, child_after_fork) != 0)
        sp_log("cannot watch fork() (pthread_atfork failed); a forked child "
               "may write its parent's calls again, under its parent's file name");
}
