/* pthread_wrap.c - pthread_create and pthread_detach, chained to the next
 * definition (dlsym RTLD_NEXT).  A thread started through pthread_create
 * gets its row in the creating thread, before it runs (record/threads.c). */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "openmp/omp_fork.h"
#include "record/forks.h"
#include "record/recorder.h"

struct start_args {
    void *(*fn)(void *);
    void *arg;
    struct sp_thread *record;   /* NULL: register on the first recorded call */
};

static void *thread_start(void *raw)
{
    struct start_args a = *(struct start_args *)raw;
    free(raw);
    if (a.record)
        sp_thread_attach(a.record);
    return a.fn(a.arg);
}

/* Threads an MPI library (or its runtime layers: PMIx, UCX, libfabric...)
 * starts for itself, recognised by the library that called
 * pthread_create: kind "mpi" in the thread table. */
static const char *kind_of_creator(const void *caller)
{
    static const char *const mpi_libraries[] = {
        "libmpi", "libopen-pal", "libopen-rte", "libpmix", "libprrte", "libmpich",
        "libucs", "libucp", "libuct", "libfabric", "libpsm", "libhcoll", "libevent_core-",
        "libevent_pthreads-", "libhwloc",
    };
    Dl_info info;
    if (!caller || !dladdr(caller, &info) || !info.dli_fname)
        return "pthread";
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    for (size_t i = 0; i < sizeof mpi_libraries / sizeof *mpi_libraries; i++)
        if (!strncmp(base, mpi_libraries[i], strlen(mpi_libraries[i])))
            return "mpi";
    return "pthread";
}

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *,
                                 void *(*)(void *), void *);

SP_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
                             void *(*fn)(void *), void *arg)
{
    static pthread_create_fn next;
    if (!SP_LOAD(next)) {
        SP_STORE(next, (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create"));
        if (!SP_LOAD(next))
            return EAGAIN;
    }
    pthread_create_fn real = SP_LOAD(next);
    if (sp_cfg.disable)
        return real(thread, attr, fn, arg);
    struct start_args *a = malloc(sizeof *a);
    if (!a)
        return real(thread, attr, fn, arg);
    a->fn = fn;
    a->arg = arg;
    int state = PTHREAD_CREATE_JOINABLE;
    if (attr)
        pthread_attr_getdetachstate(attr, &state);
    a->record = sp_thread_new(state == PTHREAD_CREATE_DETACHED);
    struct sp_thread *record = a->record;
    if (record) {
        const char *kind = kind_of_creator(__builtin_return_address(0));
        pthread_mutex_lock(&sp_threads_lock); /* finalize may read the row */
        record->kind = kind;
        pthread_mutex_unlock(&sp_threads_lock);
    }
    /* The creating thread's innermost open call: the new thread's root
     * calls hang under it in merged views (record/forks.h). */
    struct sp_profiler *profiler = sp_current_profiler();
    sp_fork_edge edge;
    /* A runtime's worker started inside "omp parallel" is linked by the
     * region's own edges, per implicit task. */
    int forked = record && sp_fork_open_parent(profiler, &edge) == 0 &&
                 !sp_omp_is_fork_region(profiler, edge.parent_region);
    int rc = real(thread, attr, thread_start, a);
    if (rc != 0) {
        free(a);
        if (record)
            sp_thread_abandon(record);
    } else if (record) {
        /* The same value the thread stores itself; set here too so that a
         * pthread_detach() right after creation finds the row. */
        pthread_mutex_lock(&sp_threads_lock);
        record->ident = (uint64_t)*thread;
        pthread_mutex_unlock(&sp_threads_lock);
        if (forked) {
            edge.child_thread = record->index;
            edge.child_ordinal = -1;
            edge.child_region = 0;
            sp_fork_add(profiler, &edge);
        }
    }
    return rc;
}

/* A thread detached after creation is a daemon too. */
typedef int (*pthread_detach_fn)(pthread_t);
SP_EXPORT int pthread_detach(pthread_t thread)
{
    static pthread_detach_fn next;
    if (!SP_LOAD(next))
        SP_STORE(next, (pthread_detach_fn)dlsym(RTLD_NEXT, "pthread_detach"));
    pthread_detach_fn real = SP_LOAD(next);
    if (!real)
        return ESRCH;
    int rc = real(thread);
    if (rc == 0 && !sp_cfg.disable) {
        /* Newest row first: a pthread_t value is reused once its thread
         * is gone.  A live row wins; else the thread already exited (it
         * may be detached before being joined). */
        pthread_mutex_lock(&sp_threads_lock);
        struct sp_thread *found = NULL;
        for (int64_t i = sp_num_threads; i-- > 0 && !found;)
            if (sp_threads[i]->alive && sp_threads[i]->ident == (uint64_t)thread)
                found = sp_threads[i];
        for (int64_t i = sp_num_threads; i-- > 0 && !found;)
            if (sp_threads[i]->ident == (uint64_t)thread)
                found = sp_threads[i];
        if (found)
            found->daemon = 1;
        pthread_mutex_unlock(&sp_threads_lock);
    }
    return rc;
}
