/* spill_calls.c - many short calls, for the memory cap and killed runs.
 *
 *   spill_calls count BATCHES          BATCHES x ("batch" around 1024 calls
 *                                      of r0..r6 in turn); prints the peak
 *                                      resident size and the time taken
 *   spill_calls kill N MARKER MS       N calls, sleep MS ms, 512 more calls,
 *                                      create MARKER, wait to be killed
 *   spill_calls loop N MARKER          calls until killed; MARKER after N
 *   spill_calls block N MARKER         N calls, MARKER, wait to be killed */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scope_profiler.h"

static int regions[7];

static void call(long i)
{
    int r = regions[i % 7];
    sp_begin(r);
    sp_end(r);
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
}

static long vm_hwm_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6))
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *mode = argv[1];
    long n = atol(argv[2]);
    sp_init("spill", 0);
    for (int i = 0; i < 7; i++) {
        char name[8];
        snprintf(name, sizeof name, "r%d", i);
        regions[i] = sp_region(name);
    }
    if (!strcmp(mode, "count")) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int batch = sp_region("batch");
        for (long b = 0; b < n; b++) {
            sp_begin(batch);
            for (long i = 0; i < 1024; i++)
                call(i);
            sp_end(batch);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        printf("calls=%ld vmhwm_kb=%ld record_ms=%.0f\n", n * 1025, vm_hwm_kb(),
               (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
        return 0;
    }
    if (argc < 4)
        return 2;
    const char *marker = argv[3];
    if (!strcmp(mode, "kill") && argc >= 5) {
        for (long i = 0; i < n; i++)
            call(i);
        struct timespec ts = {atol(argv[4]) / 1000, (atol(argv[4]) % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0)
            ;
        for (long i = 0; i < 512; i++)
            call(i);
        touch(marker);
        for (;;)
            pause();
    }
    if (!strcmp(mode, "loop")) {
        for (long i = 0;; i++) {
            call(i);
            if (i + 1 == n)
                touch(marker);
        }
    }
    if (!strcmp(mode, "block")) {
        for (long i = 0; i < n; i++)
            call(i);
        touch(marker);
        for (;;)
            pause();
    }
    return 2;
}
