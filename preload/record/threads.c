/* threads.c - thread identity: a dense index per process, the thread table
 * (ident, kernel tid, name, detached, start/end, CPU time), each thread's
 * lanes, and thread exit on return, pthread_exit and cancellation (a TLS
 * key destructor runs in all three cases).  The pthread_create and
 * pthread_detach wrappers are in intercept/pthread_wrap.c.
 *
 * A thread started through pthread_create gets its record (and index) in
 * the creating thread, before it runs: indexes then follow creation order,
 * which a program controls, and pthread_detach() right after creation
 * always finds the record.  Other threads register on their first recorded
 * call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "recorder.h"

__thread struct sp_thread *sp_tls_thread __attribute__((tls_model("initial-exec")));
/* Matches no profiler (not even NULL): a thread's first call takes the
 * slow path, which finds or makes its lane. */
struct sp_lane sp_no_lane = {.profiler = (struct sp_profiler *)&sp_no_lane};
__thread struct sp_lane *sp_tls_lane __attribute__((tls_model("initial-exec"))) = &sp_no_lane;

pthread_mutex_t sp_threads_lock = PTHREAD_MUTEX_INITIALIZER;
struct sp_thread **sp_threads;
int64_t sp_num_threads;
static int64_t threads_cap;

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void thread_exited(void *arg);
static void make_exit_key(void)
{
    if (pthread_key_create(&exit_key, thread_exited) != 0)
        sp_log("cannot watch thread exits (pthread_key_create failed); "
               "threads' end times will be missing");
}

/* ---- names --------------------------------------------------------------- */

/* The process name, which every thread inherits until it is renamed. */
static char process_comm[64];
static pthread_once_t process_comm_once = PTHREAD_ONCE_INIT;
static void read_process_comm(void)
{
    FILE *f = fopen("/proc/self/comm", "r");
    if (!f)
        return;
    if (!fgets(process_comm, sizeof process_comm, f))
        process_comm[0] = '\0';
    fclose(f);
    process_comm[strcspn(process_comm, "\n")] = '\0';
}

/* The name last set with pthread_setname_np (read from the kernel by tid,
 * so it works for any live thread and fails harmlessly for a gone one).
 * The caller holds sp_threads_lock. */
static void read_name_locked(struct sp_thread *t)
{
    if (t->tid <= 0)
        return;
    char path[64], name[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(name, sizeof name, f))
        name[0] = '\0';
    fclose(f);
    name[strcspn(name, "\n")] = '\0';
    pthread_once(&process_comm_once, read_process_comm);
    /* A name never set is the inherited process name: keep the default. */
    if (name[0] && strcmp(name, process_comm) != 0)
        snprintf(t->name, sizeof t->name, "%s", name);
}

/* ---- the table ----------------------------------------------------------- */

/* A new row (the next dense index), not yet bound to a running thread. */
struct sp_thread *sp_thread_new(int daemon)
{
    struct sp_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->daemon = daemon;
    t->alive = 1;
    t->task = -1;
    t->start_ns = sp_clock_ns();
    t->end_ns = -1;
    t->cpu_ns = -1;
    t->kind = "other";
    t->omp_thread_num = -1;

    /* A signal handler's marker call must not wait for this lock here. */
    struct sp_lane *was = sp_record_enter();
    pthread_mutex_lock(&sp_threads_lock);
    if (sp_num_threads == threads_cap) {
        int64_t cap = threads_cap ? threads_cap * 2 : 64;
        struct sp_thread **grown = realloc(sp_threads, (size_t)cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&sp_threads_lock);
            sp_record_leave(was);
            free(t);
            return NULL;
        }
        sp_threads = grown;
        threads_cap = cap;
    }
    t->index = sp_num_threads;
    sp_threads[sp_num_threads++] = t;
    snprintf(t->name, sizeof t->name, "thread %lld", (long long)t->index);
    pthread_mutex_unlock(&sp_threads_lock);
    sp_record_leave(was);
    return t;
}

/* Bind row t to the calling thread (runs on that thread). */
void sp_thread_attach(struct sp_thread *t)
{
    pid_t tid = (pid_t)syscall(SYS_gettid);
    int64_t cpu = sp_thread_cpu_ns();
    pthread_mutex_lock(&sp_threads_lock);
    t->ident = (uint64_t)pthread_self();
    t->tid = tid;
    /* start_ns stays the creation time taken by the creating thread: the
     * CPU the new thread spends before it gets here (stack, TLS set-up) is
     * in its CPU clock, so its wall time must include it too. */
    SP_STORE(t->cpu_ns, cpu);
    if (tid == getpid()) {
        snprintf(t->name, sizeof t->name, "MainThread");
        t->kind = "main";
    }
    pthread_mutex_unlock(&sp_threads_lock);

    sp_tls_thread = t;
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, t);
}

/* pthread_create failed after row t was made: take it back if nobody took
 * a later index meanwhile, else keep the index dense with an empty row. */
void sp_thread_abandon(struct sp_thread *t)
{
    pthread_mutex_lock(&sp_threads_lock);
    int last = sp_num_threads > 0 && sp_threads[sp_num_threads - 1] == t;
    if (last) {
        sp_num_threads--;
    } else {
        t->alive = 0;
        t->end_ns = t->start_ns;
        snprintf(t->name, sizeof t->name, "thread %lld (never started)", (long long)t->index);
    }
    pthread_mutex_unlock(&sp_threads_lock);
    if (last)
        free(t);
}

struct sp_thread *sp_thread_register(int daemon)
{
    if (sp_tls_thread)
        return sp_tls_thread;
    struct sp_thread *t = sp_thread_new(daemon);
    if (t)
        sp_thread_attach(t);
    return t;
}

/* The thread is leaving (return, pthread_exit or cancellation). */
static void thread_exited(void *arg)
{
    struct sp_thread *t = arg;
    void (*leaving)(void) = SP_LOAD(sp_record_hooks.thread_leaving);
    if (leaving)
        leaving();
    int64_t cpu = sp_thread_cpu_ns();
    int64_t now = sp_clock_ns();
    char name[64];
    pthread_mutex_lock(&sp_threads_lock);
    read_name_locked(t);
    snprintf(name, sizeof name, "%s", t->name);
    pthread_mutex_unlock(&sp_threads_lock);
    for (uint32_t i = 0; i < t->num_lanes; i++) {
        struct sp_lane *lane = t->lanes[i];
        if (!lane || !sp_lane_depth(lane) || !SP_LOAD(lane->profiler->active))
            continue;
        /* Calls left open by an exiting thread can never be closed. */
        uint32_t depth = sp_lane_depth(lane);
        struct sp_region *r = sp_region_get(lane->profiler, lane->stack[depth - 1].region);
        /* One line per thread, however deep it was (recursion). */
        if (depth == 1)
            sp_log("thread %lld (%s) exited inside region '%s'; that call is dropped",
                   (long long)t->index, name, r->name);
        else
            sp_log("thread %lld (%s) exited inside region '%s' and %u enclosing calls; "
                   "those %u calls are dropped",
                   (long long)t->index, name, r->name, depth - 1, depth);
        /* They were entered: sp_num_calls still counts them. */
        for (uint32_t d = 0; d < depth; d++) {
            uint32_t region = lane->stack[d].region;
            if (region < lane->num_counters || sp_lane_grow_counters(lane, region) == 0)
                SP_STORE(lane->counters[region].abandoned, lane->counters[region].abandoned + 1);
        }
        sp_lane_set_depth(lane, 0);
    }
    /* A task still running on the dying thread ends its step here. */
    if (t->task >= 0)
        sp_task_run(t, -1);
    /* Its memory, but for its events, goes (issue 13 item 11). */
    sp_tls_lane = &sp_no_lane;
    for (uint32_t i = 0; i < t->num_lanes; i++)
        if (t->lanes[i])
            sp_lane_retire(t->lanes[i]);
    sp_chunk_pages_thread_exit();
    pthread_mutex_lock(&sp_threads_lock);
    SP_STORE(t->cpu_ns, cpu);
    t->end_ns = now;
    t->alive = 0;
    pthread_mutex_unlock(&sp_threads_lock);
}

void sp_threads_refresh(void)
{
    struct sp_thread *self = sp_tls_thread;
    if (self)
        SP_STORE(self->cpu_ns, sp_thread_cpu_ns());
    pthread_mutex_lock(&sp_threads_lock);
    for (int64_t i = 0; i < sp_num_threads; i++) {
        struct sp_thread *t = sp_threads[i];
        if (!t->alive || t->tid <= 0)
            continue;
        read_name_locked(t);
        if (t == self)
            continue;
        /* The kernel's per-thread CPU clock, addressed by tid: safe even if
         * the thread is gone (then the call simply fails). */
        clockid_t clock = (clockid_t)((~(unsigned)t->tid << 3) | 6);
        struct timespec ts;
        if (clock_gettime(clock, &ts) == 0)
            SP_STORE(t->cpu_ns, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
    }
    pthread_mutex_unlock(&sp_threads_lock);
}

/* ---- lanes ---------------------------------------------------------------- */

struct sp_lane *sp_lane_create(struct sp_profiler *p)
{
    struct sp_thread *t = sp_tls_thread ? sp_tls_thread : sp_thread_register(0);
    if (!t)
        return NULL;
    if ((uint32_t)p->slot >= t->num_lanes) {
        uint32_t n = (uint32_t)p->slot + 4;
        struct sp_lane **grown = calloc(n, sizeof *grown);
        if (!grown)
            return NULL;
        if (t->lanes)
            memcpy(grown, t->lanes, t->num_lanes * sizeof *grown);
        /* The old array may be read by finalize on another thread: retire
         * it rather than free it (tiny, once per profiler). */
        t->lanes = grown;
        t->num_lanes = n;
    }
    if (t->lanes[p->slot])
        return t->lanes[p->slot];
    struct sp_lane *lane = calloc(1, sizeof *lane);
    if (!lane)
        return NULL;
    lane->profiler = p;
    lane->thread = t;
    pthread_mutex_init(&lane->lock, NULL);
    lane->head = lane->tail = sp_chunk_new();
    if (!lane->head || sp_lane_grow_stack(lane) != 0) {
        if (lane->head)
            sp_chunk_free(lane->head);
        free(lane);
        return NULL;
    }
    lane->next = lane->head->events;
    lane->fold_chunk = lane->head;
    t->lanes[p->slot] = lane;
    pthread_mutex_lock(&p->lock);
    lane->next_in_profiler = p->lanes;
    p->lanes = lane;
    pthread_mutex_unlock(&p->lock);
    return lane;
}

struct sp_lane *sp_lane_of(struct sp_profiler *p)
{
    struct sp_thread *t = sp_tls_thread;
    struct sp_lane *lane = NULL;
    if (t && (uint32_t)p->slot < t->num_lanes)
        lane = t->lanes[p->slot];
    return lane ? lane : sp_lane_create(p);
}
