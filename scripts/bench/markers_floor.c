/* markers_floor.c - the physical floor of a region tracer, built as its
 * own small shared library (so it is called through the PLT exactly like
 * the shim): read the TSC at the begin, read it again at the end and store
 * the 16 bytes {start, end} in a thread-local buffer.  No region ids, no
 * nesting, no thread safety beyond thread-locality, nothing kept: what any
 * tracer must at least do (issue 20). */
#include <stdint.h>
#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t ticks(void) { return __rdtsc(); }
#else
#include <time.h>
static inline uint64_t ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

#define FLOOR_EVENTS 4096
struct floor_event {
    uint64_t start, end;
};
static __thread uint64_t open_start __attribute__((tls_model("initial-exec")));
static __thread unsigned used __attribute__((tls_model("initial-exec")));
static __thread struct floor_event buffer[FLOOR_EVENTS] __attribute__((tls_model("initial-exec")));

__attribute__((visibility("default"))) void floor_begin(int region)
{
    (void)region;
    open_start = ticks();
}

__attribute__((visibility("default"))) void floor_end(int region)
{
    (void)region;
    uint64_t end = ticks();
    struct floor_event *e = &buffer[used++ & (FLOOR_EVENTS - 1)];
    e->start = open_start;
    e->end = end;
}
