/* threads_exit.c - threads that leave without returning: one calls
 * pthread_exit inside a region (after a completed call), one is cancelled
 * while blocked inside a region. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

#include "scope_profiler.h"

static int done_before, open_at_exit, nested_open, blocked;
static sem_t never;

static void *quits(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "quitter");
    sp_begin(done_before);
    sp_end(done_before);
    sp_begin(open_at_exit);
    sp_begin(nested_open);
    pthread_exit(NULL);
}

static void *cancelled(void *started)
{
    pthread_setname_np(pthread_self(), "cancelled");
    sp_begin(done_before);
    sp_end(done_before);
    sp_begin(blocked);
    sem_post(started);
    sem_wait(&never); /* a cancellation point that never returns */
    sp_end(blocked);
    return NULL;
}

int main(void)
{
    done_before = sp_region("done_before");
    open_at_exit = sp_region("open_at_exit");
    nested_open = sp_region("nested_open");
    blocked = sp_region("blocked");
    sem_init(&never, 0, 0);
    sem_t started;
    sem_init(&started, 0, 0);

    pthread_t a, b;
    pthread_create(&a, NULL, quits, NULL);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, cancelled, &started);
    sem_wait(&started);
    pthread_cancel(b);
    void *result;
    pthread_join(b, &result);
    printf("cancelled=%d\n", result == PTHREAD_CANCELED);
    sp_begin(done_before);
    sp_end(done_before);
    return 0;
}
