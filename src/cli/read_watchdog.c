/* read_watchdog.c - HDF5 1.10 loops forever on some corrupt files (a damaged
 * global heap, found by fuzzing: tests/fuzz/hdf5_crashes).  A thread of the
 * command watches the file being read; past a time budget that grows with
 * the file's size it says which file and exits 1, like the crash guard. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "scopeprof/h5.h"

/* Reading runs at hundreds of MB/s; 4 MB/s leaves room for slow file
 * systems. */
#define BYTES_PER_SECOND (4 << 20)
#define DEFAULT_BASE_SECONDS 10

static double base_seconds = DEFAULT_BASE_SECONDS;

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *watch(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec tick = {0, 200000000};
        nanosleep(&tick, NULL);
        const char *path = __atomic_load_n(&sp_h5_current_path, __ATOMIC_ACQUIRE);
        if (!path)
            continue;
        int64_t since = __atomic_load_n(&sp_h5_current_since_ns, __ATOMIC_RELAXED);
        int64_t bytes = __atomic_load_n(&sp_h5_current_bytes, __ATOMIC_RELAXED);
        double budget = base_seconds + (double)bytes / BYTES_PER_SECOND;
        double spent = (double)(now_ns() - since) * 1e-9;
        /* The same file still (a new read would have moved `since`). */
        if (spent <= budget || __atomic_load_n(&sp_h5_current_path, __ATOMIC_ACQUIRE) != path)
            continue;
        char line[4600];
        int n = snprintf(line, sizeof line,
                         "scopeprof: %.4000s: damaged file: the HDF5 library did not finish "
                         "reading it in %.0f s (corrupt; on a slow file system raise "
                         "SCOPEPROF_READ_TIMEOUT)\n",
                         path, budget);
        ssize_t w = write(STDERR_FILENO, line, n > 0 && (size_t)n < sizeof line ? (size_t)n : 0);
        (void)w;
        _exit(1);
    }
    return NULL;
}

void sp_cli_start_read_watchdog(void)
{
    const char *v = getenv("SCOPEPROF_READ_TIMEOUT");
    if (v && *v) {
        char *end;
        double s = strtod(v, &end);
        if (end != v && !*end && s > 0)
            base_seconds = s;
        else
            fprintf(stderr, "scopeprof: SCOPEPROF_READ_TIMEOUT='%s' is not a number of seconds; "
                            "using %d\n", v, DEFAULT_BASE_SECONDS);
    }
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    if (pthread_create(&thread, &attr, watch, NULL) != 0)
        fprintf(stderr, "scopeprof: cannot start the read watchdog; a corrupt file may make "
                        "this command hang\n");
    pthread_attr_destroy(&attr);
}
