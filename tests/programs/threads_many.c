/* threads_many.c - 64 short-lived threads, created in batches of 8 and
 * joined, each named w<i> and recording one call. */
#include <pthread.h>
#include <stdio.h>

#include "scope_profiler.h"

static int tick;

static void *worker(void *arg)
{
    char name[16];
    snprintf(name, sizeof name, "w%d", (int)(long)arg);
    pthread_setname_np(pthread_self(), name);
    sp_begin(tick);
    sp_end(tick);
    return NULL;
}

int main(void)
{
    tick = sp_region("tick");
    for (long batch = 0; batch < 8; batch++) {
        pthread_t t[8];
        for (long i = 0; i < 8; i++)
            pthread_create(&t[i], NULL, worker, (void *)(batch * 8 + i));
        for (int i = 0; i < 8; i++)
            pthread_join(t[i], NULL);
    }
    return 0;
}
