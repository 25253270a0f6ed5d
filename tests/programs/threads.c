/* threads.c - 4 worker threads x 3 (outer > inner), the main thread owns a
 * session region; threads named with pthread_setname_np. */
#include <pthread.h>
#include <stdio.h>

#include "scope_profiler.h"

static int outer, inner;
/* one per thread: the workers run at once (a shared sink was a data race
 * TSan reported when two workers overlapped) */
static _Thread_local volatile double sink;

static void *worker(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "solver%d", (int)(long)arg);
    pthread_setname_np(pthread_self(), name);
    for (int i = 0; i < 3; i++) {
        sp_begin(outer);
        double x = 0;
        for (int k = 0; k < 20000; k++)
            x += k;
        sp_begin(inner);
        for (int k = 0; k < 20000; k++)
            x += k;
        sp_end(inner);
        sink = x;
        sp_end(outer);
    }
    return NULL;
}

int main(void)
{
    sp_init("threads", 0);
    int session = sp_region("session");
    outer = sp_region("outer");
    inner = sp_region("inner");
    sp_begin(session);
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    sp_end(session);
    return 0;
}
