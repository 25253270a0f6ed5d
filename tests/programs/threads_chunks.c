/* threads_chunks.c - THREADS threads at once, each N x (outer > inner): many
 * event chunks per lane, taken concurrently from the shared chunk arena and
 * then (after 32 chunks) from each thread's own (preload/record/chunk_pages.c).
 *
 *   threads_chunks THREADS N */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

static int outer, inner;
static long iterations;

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < iterations; i++) {
        sp_begin(outer);
        sp_begin(inner);
        sp_end(inner);
        sp_end(outer);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int threads = atoi(argv[1]);
    iterations = atol(argv[2]);
    outer = sp_region("outer");
    inner = sp_region("inner");
    pthread_t t[64];
    if (threads < 1 || threads > 64)
        return 2;
    for (int k = 0; k < threads; k++)
        pthread_create(&t[k], NULL, worker, NULL);
    for (int k = 0; k < threads; k++)
        pthread_join(t[k], NULL);
    printf("done\n");
    return 0;
}
