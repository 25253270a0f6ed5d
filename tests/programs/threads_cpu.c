/* threads_cpu.c - the thread table's CPU times without the every-256
 * sample (docs/hot-path.md, "The thread's CPU time"): three threads burn
 * CPU in fewer calls than a chunk (4096) holds, so no sample is taken
 * after registration; each prints the CPU time it measured itself.
 *   main     burns, stays alive to the end
 *   leaver   burns, exits (its time is read at its exit)
 *   sleeper  burns, then blocks until the process exits (alive at finalize) */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "scope_profiler.h"

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* 300 calls (more than 256, fewer than 4096) of 0.4 ms of CPU each. */
static int64_t burn(const char *who)
{
    int region = sp_region("burn");
    for (int i = 0; i < 300; i++) {
        sp_begin(region);
        int64_t until = thread_cpu_ns() + 400000;
        while (thread_cpu_ns() < until)
            ;
        sp_end(region);
    }
    int64_t cpu = thread_cpu_ns();
    printf("%s %lld\n", who, (long long)cpu);
    fflush(stdout);
    return cpu;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t burnt = PTHREAD_COND_INITIALIZER;
static int sleeper_done;

static void *leaver(void *arg)
{
    (void)arg;
    burn("leaver");
    return NULL;
}

static void *sleeper(void *arg)
{
    (void)arg;
    burn("sleeper");
    pthread_mutex_lock(&lock);
    sleeper_done = 1;
    pthread_cond_signal(&burnt);
    pthread_mutex_unlock(&lock);
    for (;;)
        pause(); /* alive when the process exits */
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, leaver, NULL);
    pthread_setname_np(a, "leaver");
    pthread_join(a, NULL);
    pthread_create(&b, NULL, sleeper, NULL);
    pthread_setname_np(b, "sleeper");
    pthread_mutex_lock(&lock);
    while (!sleeper_done)
        pthread_cond_wait(&burnt, &lock);
    pthread_mutex_unlock(&lock);
    burn("main");
    return 0;
}
