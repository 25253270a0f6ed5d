/* fork_storm.c - N forked children (default 50) while a background thread
 * records without pause, so forks land in the middle of its calls, chunk
 * changes and lane creations.  Child k closes "spawn" (open at the fork),
 * records "child" k+1 times and exits.
 * The parent records "spawn" once per fork and prints the background
 * thread's call count: "background=<n> children=<N> failed=<f>". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scope_profiler.h"

static int stop;
static long background_calls;
static int busy, child_region;

static void *background(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
        sp_begin(busy);
        sp_end(busy);
        background_calls++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 50;
    sp_init("fork_storm", 0);
    busy = sp_region("busy");
    child_region = sp_region("child");
    int spawn = sp_region("spawn");
    pthread_t t;
    pthread_create(&t, NULL, background, NULL);

    pid_t *pids = calloc((size_t)n, sizeof *pids);
    fflush(stdout);
    for (int k = 0; k < n; k++) {
        sp_begin(spawn);
        pids[k] = fork();
        if (pids[k] == 0) {
            sp_end(spawn);
            for (int i = 0; i <= k; i++) {
                sp_begin(child_region);
                sp_end(child_region);
            }
            exit(0);
        }
        sp_end(spawn);
    }
    int failed = 0;
    for (int k = 0; k < n; k++) {
        int status = 0;
        if (pids[k] < 0 || waitpid(pids[k], &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            failed++;
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(t, NULL);
    free(pids);
    printf("background=%ld children=%d failed=%d\n", background_calls, n, failed);
    return 0;
}
