/* writer_isolation.c - calls on the main thread and on a worker, with
 * memory handed between threads (as any program whose allocator is
 * jemalloc or tcmalloc does), then the exit with a chosen status.
 *
 *   writer_isolation STATUS N            N calls of "work" and of "worker"
 *   writer_isolation STATUS N finalize   the same, then sp_finalize() and
 *                                        "mapped=..." naming HDF5 or libdw
 *                                        if either is in this process
 *   writer_isolation STATUS N reaper     the same, exiting with a SIGCHLD
 *                                        handler that reaps every child */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "scope_profiler.h"

static long calls;
static char *handed[64];

static void *worker(void *arg)
{
    (void)arg;
    int r = sp_region("worker");
    for (long i = 0; i < calls; i++) {
        sp_begin(r);
        if (i < 64)
            handed[i] = strdup("from the worker"); /* freed by main */
        sp_end(r);
    }
    return NULL;
}

static void reap_every_child(int sig)
{
    (void)sig;
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int status = atoi(argv[1]);
    calls = atol(argv[2]);
    sp_init("iso", 0);
    int work = sp_region("work");
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 3;
    for (long i = 0; i < calls; i++) {
        sp_begin(work);
        sp_end(work);
    }
    pthread_join(t, NULL);
    for (int i = 0; i < 64; i++)
        free(handed[i]);
    if (argc > 3 && !strcmp(argv[3], "finalize")) {
        if (sp_finalize() != 0)
            return 4;
        FILE *maps = fopen("/proc/self/maps", "r");
        char line[4096];
        int hdf5 = 0, dw = 0;
        while (maps && fgets(line, sizeof line, maps)) {
            hdf5 |= strstr(line, "libhdf5") != NULL;
            dw |= strstr(line, "libdw") != NULL;
        }
        if (maps)
            fclose(maps);
        printf("mapped=%s%s%s\n", hdf5 ? "hdf5 " : "", dw ? "libdw " : "",
               hdf5 || dw ? "" : "none");
    }
    if (argc > 3 && !strcmp(argv[3], "reaper")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = reap_every_child;
        sigaction(SIGCHLD, &sa, NULL);
    }
    printf("done\n");
    return status;
}
