/* markers_floor.c - the physical floor of a region tracer, built as its
 * own small shared library (so it is called through the PLT exactly like
 * the shim): read the TSC at the begin, read it again at the end and store
 * the 16 bytes {start, end} in a thread-local buffer.  No region ids, no
 * nesting, no thread safety beyond thread-locality (issue 20).
 *
 * floor_keep_begin/floor_keep_end: the floor the pair is judged against
 * (docs/hot-path.md, "The floor"): 16 bytes per call into fresh memory,
 * 2 MiB blocks faulted in ahead (MAP_POPULATE), never reused, as any tracer
 * that keeps its events must until it writes them out.
 *
 * floor_begin/floor_end: the same into a 64 KiB ring that is overwritten,
 * so its stores always hit the cache and it keeps nothing.  The difference
 * between the two is what fresh memory costs on this machine. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
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

/* The ring escapes through an exported function, so the compiler must keep
 * its stores: with the buffer static and never read, gcc -O2 removed them
 * and floor_end was a TSC read and a counter increment (the figures before
 * 2026-12-01 were measured so: 20 instructions per pair instead of 32; the
 * time was the same, 19 ns). */
__attribute__((visibility("default"))) const void *floor_events(void) { return buffer; }

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

static __thread struct floor_event *keep_next __attribute__((tls_model("initial-exec")));
static __thread struct floor_event *keep_end __attribute__((tls_model("initial-exec")));

#define KEEP_BLOCK ((size_t)2 << 20)

static __attribute__((noinline, cold)) void keep_refill(void)
{
    void *m = mmap(NULL, KEEP_BLOCK, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (m == MAP_FAILED) {
        keep_next = buffer; /* out of memory: the ring, so the bench goes on */
        keep_end = buffer + FLOOR_EVENTS;
        return;
    }
    keep_next = m;
    keep_end = keep_next + KEEP_BLOCK / sizeof *keep_next;
}

__attribute__((visibility("default"))) void floor_keep_begin(int region)
{
    (void)region;
    open_start = ticks();
}

__attribute__((visibility("default"))) void floor_keep_end(int region)
{
    (void)region;
    uint64_t end = ticks();
    if (keep_next == keep_end)
        keep_refill();
    struct floor_event *e = keep_next++;
    e->start = open_start;
    e->end = end;
}
