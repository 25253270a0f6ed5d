/* threads_direct.c - a thread started through libc's own pthread_create
 * (looked up in libc.so.6, past any preloaded wrapper), as some runtimes
 * do: it must still be registered, at its first recorded call. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "scope_profiler.h"

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static int work;

static void *worker(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "direct");
    sp_begin(work);
    sp_end(work);
    return NULL;
}

int main(void)
{
    work = sp_region("work");
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    create_fn create = libc ? (create_fn)dlsym(libc, "pthread_create") : NULL;
    if (!create) {
        fprintf(stderr, "libc's pthread_create not found\n");
        return 1;
    }
    pthread_t t;
    create(&t, NULL, worker, NULL);
    pthread_join(t, NULL);
    sp_begin(work);
    sp_end(work);
    return 0;
}
