/* threads_overlap.c - two threads whose calls of "span" partially overlap
 * in time, in a fixed order (barriers): t0 begins, t1 begins, t0 ends,
 * t1 ends.  Nested per thread, not nested on one timeline. */
#include <pthread.h>

#include "scope_profiler.h"

static int span;
static pthread_barrier_t b1, b2, b3;

static void *first(void *arg)
{
    (void)arg;
    sp_begin(span);
    pthread_barrier_wait(&b1);
    pthread_barrier_wait(&b2);
    sp_end(span);
    pthread_barrier_wait(&b3);
    return NULL;
}

static void *second(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&b1);
    sp_begin(span);
    pthread_barrier_wait(&b2);
    pthread_barrier_wait(&b3);
    sp_end(span);
    return NULL;
}

int main(void)
{
    span = sp_region("span");
    pthread_barrier_init(&b1, NULL, 2);
    pthread_barrier_init(&b2, NULL, 2);
    pthread_barrier_init(&b3, NULL, 2);
    pthread_t a, b;
    pthread_create(&a, NULL, first, NULL);
    pthread_create(&b, NULL, second, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
