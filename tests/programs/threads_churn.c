/* threads_churn.c - many short-lived threads, one call each.
 *
 *   threads_churn N
 * Creates N threads, 8 at a time, each recording one call of "tick", and
 * prints "threads=N rss_growth_kib=K": how much the resident set grew
 * from before the first thread to after the last join. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scope_profiler.h"

static int tick;

static void *worker(void *arg)
{
    (void)arg;
    sp_begin(tick);
    sp_end(tick);
    return NULL;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    tick = sp_region("tick");
    sp_begin(tick); /* the main thread's own lane and row, before measuring */
    sp_end(tick);
    /* glibc keeps a few thread stacks for reuse: warm that cache first. */
    pthread_t warm[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&warm[i], NULL, worker, NULL);
    for (int i = 0; i < 8; i++)
        pthread_join(warm[i], NULL);
    long before = rss_kib();
    for (long done = 0; done < n; done += 8) {
        pthread_t t[8];
        for (int i = 0; i < 8; i++)
            pthread_create(&t[i], NULL, worker, NULL);
        for (int i = 0; i < 8; i++)
            pthread_join(t[i], NULL);
    }
    printf("threads=%ld rss_growth_kib=%ld\n", n, rss_kib() - before);
    return 0;
}
