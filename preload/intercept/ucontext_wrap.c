/* ucontext_wrap.c - fibers built on makecontext/swapcontext/setcontext are
 * task lanes of kind "fiber".
 *
 * Every ucontext_t the program switches with is remembered by address with
 * the task whose stack it holds: swapcontext(save, target) stores the
 * running task into `save`; the target's task then runs.  A context made by
 * makecontext gets a task id on the first switch into it; a context never
 * seen before (e.g. only filled by getcontext) is taken to be a thread's
 * own stack (task -1).  makecontext starts the fiber through fiber_main so
 * that a fiber function which returns marks its task done and hands the
 * thread to uc_link's task, a switch glibc makes internally.
 *
 * getcontext is deliberately not wrapped: a wrapper's frame would be the
 * one saved, and it is gone when the context is resumed. */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <ucontext.h>

#include "record/recorder.h"

#define FRESH (-2)              /* made by makecontext, never entered */
#define MAX_FIBER_ARGS 16
#define BUCKETS 4096

struct context {
    const ucontext_t *uc;
    struct context *next;       /* hash chain */
    int64_t task;               /* task running on that stack, or FRESH */
    const ucontext_t *link;     /* uc_link when made */
    void (*fn)(void);
    long args[MAX_FIBER_ARGS];
};

/* Entries are never freed: a ucontext_t address is reused by the program
 * for the next fiber, and its entry with it. */
static struct context *buckets[BUCKETS];
static pthread_mutex_t contexts_lock = PTHREAD_MUTEX_INITIALIZER;

static struct context *find_locked(const ucontext_t *uc, int add)
{
    size_t h = ((uintptr_t)uc >> 4) % BUCKETS;
    for (struct context *c = buckets[h]; c; c = c->next)
        if (c->uc == uc)
            return c;
    if (!add)
        return NULL;
    struct context *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->uc = uc;
    c->task = -1;
    c->next = buckets[h];
    buckets[h] = c;
    return c;
}

/* The thread leaves its running task for the one on target's stack, having
 * saved the running one into `save` (NULL for setcontext). */
static void switch_accounting(struct sp_thread *t, ucontext_t *save, const ucontext_t *target)
{
    pthread_mutex_lock(&contexts_lock);
    if (save) {
        struct context *s = find_locked(save, 1);
        if (s)
            s->task = t->task;
    }
    struct context *c = find_locked(target, 0);
    int64_t next = c ? c->task : -1;
    if (c && next == FRESH)
        next = c->task = sp_task_new("fiber", NULL);
    pthread_mutex_unlock(&contexts_lock);
    sp_task_run(t, next);
}

static struct sp_thread *current_thread(void)
{
    if (sp_cfg.disable)
        return NULL;
    return sp_tls_thread ? sp_tls_thread : sp_thread_register(0);
}

/* ---- the wrapped functions ----------------------------------------------- */

typedef int (*swapcontext_fn)(ucontext_t *, const ucontext_t *);
typedef int (*setcontext_fn)(const ucontext_t *);
typedef void (*makecontext_fn)(ucontext_t *, void (*)(void), int, ...);

static void *real(void **slot, const char *name)
{
    void *fn = SP_LOAD(*slot);
    if (!fn) {
        fn = dlsym(RTLD_NEXT, name);
        SP_STORE(*slot, fn);
    }
    return fn;
}

SP_EXPORT int swapcontext(ucontext_t *save, const ucontext_t *target)
{
    static void *next;
    swapcontext_fn swap = (swapcontext_fn)real(&next, "swapcontext");
    if (!swap)
        return -1;
    struct sp_thread *t = save && target ? current_thread() : NULL;
    if (!t)
        return swap(save, target);
    int64_t before = t->task;
    switch_accounting(t, save, target);
    int rc = swap(save, target);
    /* Returning 0 means this context was resumed later, possibly on
     * another thread, by a switch that did its own accounting.  Only an
     * immediate failure is undone, still on the same thread. */
    if (rc != 0)
        sp_task_run(t, before);
    return rc;
}

SP_EXPORT int setcontext(const ucontext_t *target)
{
    static void *next;
    setcontext_fn set = (setcontext_fn)real(&next, "setcontext");
    if (!set)
        return -1;
    struct sp_thread *t = target ? current_thread() : NULL;
    if (!t)
        return set(target);
    int64_t before = t->task;
    switch_accounting(t, NULL, target);
    int rc = set(target); /* returns only on failure */
    sp_task_run(t, before);
    return rc;
}

/* The fiber function returned: its task is done, and glibc now resumes
 * uc_link (or ends the thread when there is none). */
static void fiber_returned(const struct context *c)
{
    struct sp_thread *t = sp_tls_thread;
    if (!t)
        return;
    if (t->task >= 0)
        sp_task_finish(t->task);
    int64_t next = -1;
    pthread_mutex_lock(&contexts_lock);
    struct context *link = c->link ? find_locked(c->link, 0) : NULL;
    if (link && link->task != FRESH)
        next = link->task;
    pthread_mutex_unlock(&contexts_lock);
    sp_task_run(t, next);
}

/* makecontext passes ints; a pointer travels as two halves. */
static void fiber_main(unsigned hi, unsigned lo)
{
    const struct context *c = (const struct context *)(((uintptr_t)hi << 16 << 16) | lo);
    /* The callee takes what makecontext gave it; extra arguments are
     * harmless in the C calling conventions of the supported platforms. */
    typedef void (*fiber_fn)(long, long, long, long, long, long, long, long,
                             long, long, long, long, long, long, long, long);
    const long *a = c->args;
    ((fiber_fn)c->fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                      a[8], a[9], a[10], a[11], a[12], a[13], a[14], a[15]);
    fiber_returned(c);
}

SP_EXPORT void makecontext(ucontext_t *uc, void (*fn)(void), int argc, ...)
{
    static void *next;
    makecontext_fn make = (makecontext_fn)real(&next, "makecontext");
    if (!make)
        return;
    struct context *c = NULL;
    if (!sp_cfg.disable && argc >= 0 && argc <= MAX_FIBER_ARGS) {
        pthread_mutex_lock(&contexts_lock);
        c = find_locked(uc, 1);
        pthread_mutex_unlock(&contexts_lock);
    }
    va_list ap;
    va_start(ap, argc);
    if (!c) {
        if (argc > MAX_FIBER_ARGS && !sp_cfg.disable)
            sp_log("makecontext with %d arguments: scopeprof follows fibers of at most %d; "
                   "this one runs untracked", argc, MAX_FIBER_ARGS);
        /* Forward what we can name: the common counts, as glibc reads them. */
        long a[MAX_FIBER_ARGS] = {0};
        int n = argc < 0 ? 0 : argc > MAX_FIBER_ARGS ? MAX_FIBER_ARGS : argc;
        for (int i = 0; i < n; i++)
            a[i] = va_arg(ap, long);
        va_end(ap);
        make(uc, fn, n, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10],
             a[11], a[12], a[13], a[14], a[15]);
        return;
    }
    pthread_mutex_lock(&contexts_lock);
    c->task = FRESH;
    c->link = uc->uc_link;
    c->fn = fn;
    for (int i = 0; i < MAX_FIBER_ARGS; i++)
        c->args[i] = i < argc ? va_arg(ap, long) : 0;
    pthread_mutex_unlock(&contexts_lock);
    va_end(ap);
    uintptr_t p = (uintptr_t)c;
    make(uc, (void (*)(void))fiber_main, 2, (unsigned)(p >> 16 >> 16), (unsigned)(p & 0xffffffffu));
}

/* fork(): the child must not inherit contexts_lock held by a thread that does not
 * exist there. */
static void contexts_lock_prepare(void) { pthread_mutex_lock(&contexts_lock); }
static void contexts_lock_parent(void) { pthread_mutex_unlock(&contexts_lock); }
static void contexts_lock_child(void) { pthread_mutex_init(&contexts_lock, NULL); }

__attribute__((constructor)) static void contexts_lock_watch_fork(void)
{
    pthread_atfork(contexts_lock_prepare, contexts_lock_parent, contexts_lock_child);
}
