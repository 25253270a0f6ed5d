/* omp_fork.c - OpenMP parallel regions for the fork-edge tests
 * (tests/integration/test_openmp.c), built with gcc (libgomp) and clang
 * (libomp).  argv[1] picks the scenario:
 *   region   3 parallel regions of 4 threads inside "outer", 5 "work" calls
 *            per thread and region
 *   dynamic  parallel for schedule(dynamic) of 100 "iter" calls, 4 threads
 *   nested   2 outer threads, each opening an inner team of 2 ("inner")
 *   reuse [N] N (default 20) times: an outer team of 2, each thread opening
 *            an inner team of 2 ("inner"), the second one a little later,
 *            so that the runtime may hand the first inner team's worker to
 *            the second team once the first one is done (worker reuse)
 *   pool [N] N (default 1000) parallel regions of 4 threads, one "tick" per
 *            thread; pool_kill [N]: the same, then SIGKILL (spill files)
 *   task     one thread creates 8 tasks, each a "job" call, in "outer"
 *   pthread  a pthread created inside "outer" records one "child" call
 *   teams    host teams (`#pragma omp teams num_teams(2)`), one "work" call
 *            per team
 * Region ids are set before any team exists (no shared writes in teams). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scope_profiler.h"

static int outer, work, inner, tick, job, child;

static volatile double sinks[64];

/* n steps of work, on the calling thread's own slot */
static void spin(int n)
{
    int slot = omp_get_thread_num() & 63;
    for (int k = 0; k < n; k++)
        sinks[slot] += k;
}

static void nap_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

static void *pthread_body(void *arg)
{
    (void)arg;
    sp_begin(child);
    spin(1000);
    sp_end(child);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "region";
    outer = sp_region("outer");
    work = sp_region("work");
    inner = sp_region("inner");
    tick = sp_region("tick");
    job = sp_region("job");
    child = sp_region("child");
    sp_begin(outer);
    if (!strcmp(mode, "region")) {
        for (int r = 0; r < 3; r++) {
#pragma omp parallel num_threads(4)
            for (int i = 0; i < 5; i++) {
                sp_begin(work);
                spin(2000);
                sp_end(work);
            }
        }
    } else if (!strcmp(mode, "dynamic")) {
#pragma omp parallel for schedule(dynamic) num_threads(4)
        for (int i = 0; i < 100; i++) {
            sp_begin(work);
            spin(1000 + 100 * (i % 7));
            sp_end(work);
        }
    } else if (!strcmp(mode, "nested")) {
#pragma omp parallel num_threads(2)
        {
#pragma omp parallel num_threads(2)
            {
                sp_begin(inner);
                spin(5000);
                sp_end(inner);
            }
        }
    } else if (!strcmp(mode, "reuse")) {
        int rounds = argc > 2 ? atoi(argv[2]) : 20;
        for (int r = 0; r < rounds; r++) {
#pragma omp parallel num_threads(2)
            {
                /* teams end at different times: the one of outer thread 1
                 * starts after the other may be done, varying per round */
                if (omp_get_thread_num() == 1)
                    nap_us(50 + 50 * (r % 4));
#pragma omp parallel num_threads(2)
                {
                    sp_begin(inner);
                    spin(2000);
                    nap_us(20 * (r % 3));
                    sp_end(inner);
                }
            }
        }
    } else if (!strcmp(mode, "pool") || !strcmp(mode, "pool_kill")) {
        int regions = argc > 2 ? atoi(argv[2]) : 1000;
        for (int r = 0; r < regions; r++) {
#pragma omp parallel num_threads(4)
            {
                sp_begin(tick);
                sp_end(tick);
            }
        }
        if (!strcmp(mode, "pool_kill"))
            raise(SIGKILL);
    } else if (!strcmp(mode, "task")) {
#pragma omp parallel num_threads(4)
#pragma omp single
        for (int t = 0; t < 8; t++) {
#pragma omp task
            {
                sp_begin(job);
                spin(20000);
                sp_end(job);
            }
        }
    } else if (!strcmp(mode, "teams")) {
#pragma omp teams num_teams(2)
        {
            sp_begin(work);
            spin(20000);
            sp_end(work);
        }
    } else if (!strcmp(mode, "pthread")) {
        pthread_t t;
        if (pthread_create(&t, NULL, pthread_body, NULL) != 0 || pthread_join(t, NULL) != 0)
            return 2;
    } else {
        fprintf(stderr, "omp_fork: unknown scenario %s\n", mode);
        return 2;
    }
    sp_end(outer);
    return 0;
}
