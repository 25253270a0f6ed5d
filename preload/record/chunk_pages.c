/* chunk_pages.c - where a lane's second and later event chunks come from.
 *
 * A fresh anonymous page costs a fault on its first write; on this kind of
 * VM that is about a microsecond per 4 KiB page, i.e. 4 ns per 16-byte event
 * paid on the recording thread, a fifth of the marker pair (docs/hot-path.md).
 * So chunks after a lane's first are carved from 2 MiB arenas that are
 * faulted in at once (MADV_POPULATE_WRITE), and, where the kernel gives
 * transparent huge pages, backed by one huge page: one fault per 131,000
 * events instead of 512.
 *
 * Asking for huge pages (MADV_HUGEPAGE) is not always cheaper: with the
 * kernel's defrag policy "madvise" a fault on a fragmented machine compacts
 * memory first, which was measured here at several milliseconds per arena,
 * three times the cost it saves.  SCOPE_PROFILER_HUGE_PAGES=auto (default)
 * therefore measures: arenas start on small pages, huge pages are tried
 * after FIRST_PROBE_WAIT of them (64 MiB of events), and later arenas use
 * whichever kind cost less (next_kind).  Small pages first because a huge
 * page can cost several times 512 small ones here (measured 4-7 ms against
 * 1.1-1.6 ms per arena: the host backs a fresh 2 MiB block page by page),
 * and a run that records less than 64 MiB should not pay for the gamble;
 * one lost probe then costs at most about an eighth of what the run has
 * already spent on memory.  "on" always asks for huge pages, "off" never.
 *
 * A lane's first chunk is mapped on its own (sp_chunk_new).  A thread's
 * first 32 chunks after it come from an arena shared by all threads under
 * a spin lock taken once per 4096 events (the kernel's time is spent
 * outside it); later ones from arenas of the thread's own (carve).  An arena holds 32 chunks' events
 * exactly; a chunk's events carved from one are freed alone (munmap of
 * their 16 pages), like any other.
 *
 * Chunk headers (64 bytes) are packed 64 to a page, apart from the events:
 * a header at the head of its events took a page of its own, one fault in
 * 17 for 48 bytes. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define ARENA_BYTES ((size_t)2 << 20)
#define CHUNKS_PER_ARENA (ARENA_BYTES / SP_CHUNK_BYTES)
#define HEADERS_PER_PAGE (4096 / sizeof(struct sp_chunk))
#define FIRST_PROBE_WAIT 32
#define MAX_PROBE_WAIT 4096

enum { KIND_PLAIN = 0, KIND_HUGE = 1 };

static struct {
    int lock;                 /* spin lock (fork: released in the child) */
    char *base;               /* current arena, NULL none */
    size_t taken;             /* chunks carved from it */
    /* auto mode: mean ns an arena of each kind took, 0 = not measured */
    int64_t cost[2];
    int best;                 /* the kind in use */
    unsigned since_probe, probe_wait; /* arenas since the other kind was tried */
    int thp_possible;         /* -1 unknown, else 0/1 (sysfs) */
    struct sp_chunk *free_headers; /* linked by next */
} pool = {.thp_possible = -1, .probe_wait = FIRST_PROBE_WAIT};

static void pool_lock(void)
{
    while (__atomic_test_and_set(&pool.lock, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void pool_unlock(void) { __atomic_clear(&pool.lock, __ATOMIC_RELEASE); }

/* A thread of the parent may have held the lock at fork(). */
static void pool_child_after_fork(void) { __atomic_clear(&pool.lock, __ATOMIC_RELAXED); }

__attribute__((constructor)) static void pool_watch_fork(void)
{
    pthread_atfork(NULL, NULL, pool_child_after_fork);
}

static int64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Transparent huge pages not "never" (read once; open/read are
 * async-signal-safe, a marker call in a handler may get here). */
static int thp_possible(void)
{
    int known = __atomic_load_n(&pool.thp_possible, __ATOMIC_RELAXED);
    if (known >= 0)
        return known;
    int possible = 0;
    int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char text[128];
        ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        if (n > 0) {
            text[n] = 0;
            possible = strstr(text, "[never]") == NULL;
        }
    }
    __atomic_store_n(&pool.thp_possible, possible, __ATOMIC_RELAXED);
    return possible;
}

/* Which kind the next arena is.  Auto: small pages are measured first,
 * huge pages once probe_wait arenas have been made; then the cheaper (by
 * its running mean) is used, and the other is tried again after
 * probe_wait arenas, the wait doubling after each try that did not change
 * the choice: a costly try (a compacting kernel, milliseconds) is paid
 * ever more rarely, and a cheaper time (memory freed) is noticed. */
static int next_kind(void)
{
    if (sp_cfg.huge_pages == SP_HUGE_OFF || !thp_possible())
        return KIND_PLAIN;
    if (sp_cfg.huge_pages == SP_HUGE_ON)
        return KIND_HUGE;
    pool_lock();
    int kind;
    if (!pool.cost[KIND_PLAIN]) {
        kind = KIND_PLAIN;
    } else {
        /* Huge pages not measured yet count as the dearer kind. */
        int best = pool.cost[KIND_HUGE] && pool.cost[KIND_HUGE] <= pool.cost[KIND_PLAIN]
                       ? KIND_HUGE
                       : KIND_PLAIN;
        if (best != pool.best) {
            pool.best = best;
            pool.probe_wait = FIRST_PROBE_WAIT;
            pool.since_probe = 0;
        }
        kind = best;
        if (++pool.since_probe >= pool.probe_wait) {
            pool.since_probe = 0;
            if (pool.probe_wait < MAX_PROBE_WAIT)
                pool.probe_wait *= 2;
            kind = !best;
        }
    }
    pool_unlock();
    return kind;
}

static void record_cost(int kind, int64_t cost)
{
    if (cost <= 0)
        cost = 1;
    pool_lock();
    /* A running mean (weight 1/4): huge pages that are cheap most of the
     * time but sometimes compact for milliseconds are judged by their mean. */
    int64_t *mean = &pool.cost[kind];
    *mean = *mean ? *mean + (cost - *mean) / 4 : cost;
    pool_unlock();
}

/* Write-fault every page now, in one system call where the kernel has it. */
static void populate(char *arena)
{
    if (madvise(arena, ARENA_BYTES, MADV_POPULATE_WRITE) == 0)
        return;
    for (size_t off = 0; off < ARENA_BYTES; off += 4096)
        ((volatile char *)arena)[off] = 0;
}

/* A new arena, 2 MiB aligned (so a huge page can back it), faulted in. */
static char *arena_new(void)
{
    int kind = next_kind();
    char *m = mmap(NULL, 2 * ARENA_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *a = (char *)(((uintptr_t)m + ARENA_BYTES - 1) & ~(uintptr_t)(ARENA_BYTES - 1));
    if (a > m)
        munmap(m, (size_t)(a - m));
    munmap(a + ARENA_BYTES, (size_t)(m + 2 * ARENA_BYTES - (a + ARENA_BYTES)));
    if (kind == KIND_HUGE)
        madvise(a, ARENA_BYTES, MADV_HUGEPAGE);
    int64_t t0 = thread_cpu_ns();
    populate(a);
    int64_t cost = thread_cpu_ns() - t0;
    record_cost(kind, cost);
    _Static_assert(CHUNKS_PER_ARENA * SP_CHUNK_BYTES == ARENA_BYTES, "whole chunks per arena");
    /* Resident from now on: counted against the memory cap at once, not as
     * lanes take its chunks. */
    __atomic_add_fetch(&sp_buffer_bytes, ARENA_BYTES, __ATOMIC_RELAXED);
    return a;
}

/* A thread that records much carves arenas of its own: two threads
 * carving one shared arena cost the floor tracer 2-4 ns more per pair than
 * arenas of its own in the same runs (quiet machine, 2 threads,
 * docs/hot-path.md), and the shim the same.  Only after OWN_AFTER chunks
 * from the shared arena, so that a thread which records little never makes
 * a 2 MiB arena of its own: the part of its arena a thread leaves untaken
 * (returned at its exit) is at most what it has already recorded. */
#define OWN_AFTER CHUNKS_PER_ARENA
static __thread struct {
    char *base;               /* the thread's own arena, NULL none yet */
    size_t taken;             /* chunks carved from it */
    unsigned shared_taken;    /* chunks taken from the shared arena */
} own __attribute__((tls_model("initial-exec")));

/* A new arena only while the cap has room for all of it: under a cap a
 * few arenas wide, chunks are mapped one by one (and lazily). */
static int arena_fits(void)
{
    return __atomic_load_n(&sp_buffer_bytes, __ATOMIC_RELAXED) + 4 * ARENA_BYTES <=
           sp_cfg.max_memory;
}

/* The events of a new chunk: from the thread's own arena once it has one,
 * else from the shared arena or a new one. */
static struct sp_slot *carve(void)
{
    if (own.base && own.taken < CHUNKS_PER_ARENA)
        return (struct sp_slot *)(own.base + own.taken++ * SP_CHUNK_BYTES);
    if (own.shared_taken >= OWN_AFTER) {
        char *fresh = arena_fits() ? arena_new() : NULL;
        if (!fresh)
            return NULL;
        own.base = fresh; /* the previous one, if any, is taken whole */
        own.taken = 1;
        return (struct sp_slot *)fresh;
    }
    own.shared_taken++;
    pool_lock();
    if (pool.base && pool.taken < CHUNKS_PER_ARENA) {
        struct sp_slot *c = (struct sp_slot *)(pool.base + pool.taken++ * SP_CHUNK_BYTES);
        pool_unlock();
        return c;
    }
    pool_unlock();
    if (!arena_fits())
        return NULL;
    /* The kernel's work (page faults, perhaps compaction) outside the lock. */
    char *fresh = arena_new();
    if (!fresh)
        return NULL;
    pool_lock();
    char *old = pool.base;
    size_t old_taken = pool.taken;
    pool.base = fresh;
    pool.taken = 1;
    pool_unlock();
    /* Another thread installed an arena meanwhile: what it left untaken
     * is returned (it is never handed out again). */
    if (old && old_taken < CHUNKS_PER_ARENA) {
        size_t left = (CHUNKS_PER_ARENA - old_taken) * SP_CHUNK_BYTES;
        munmap(old + old_taken * SP_CHUNK_BYTES, left);
        __atomic_sub_fetch(&sp_buffer_bytes, left, __ATOMIC_RELAXED);
    }
    return (struct sp_slot *)fresh;
}

struct sp_chunk *sp_chunk_header_new(void)
{
    pool_lock();
    struct sp_chunk *k = pool.free_headers;
    if (k)
        pool.free_headers = k->next;
    pool_unlock();
    if (k) {
        memset(k, 0, sizeof *k);
        return k;
    }
    char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return NULL;
    __atomic_add_fetch(&sp_buffer_bytes, 4096, __ATOMIC_RELAXED);
    /* The first is returned, the others wait on the free list. */
    pool_lock();
    for (size_t i = HEADERS_PER_PAGE; i-- > 1;) {
        struct sp_chunk *h = (struct sp_chunk *)page + i;
        h->next = pool.free_headers;
        pool.free_headers = h;
    }
    pool_unlock();
    return (struct sp_chunk *)page;
}

void sp_chunk_header_free(struct sp_chunk *k)
{
    pool_lock();
    k->next = pool.free_headers;
    pool.free_headers = k;
    pool_unlock();
}

void sp_chunk_pages_thread_exit(void)
{
    if (own.base && own.taken < CHUNKS_PER_ARENA) {
        size_t left = (CHUNKS_PER_ARENA - own.taken) * SP_CHUNK_BYTES;
        munmap(own.base + own.taken * SP_CHUNK_BYTES, left);
        __atomic_sub_fetch(&sp_buffer_bytes, left, __ATOMIC_RELAXED);
    }
    own.base = NULL;
    own.taken = 0;
}

struct sp_chunk *sp_chunk_new_populated(void)
{
    struct sp_slot *events = carve();
    if (!events)
        return sp_chunk_new(); /* no arena: a chunk mapped on its own */
    struct sp_chunk *c = sp_chunk_header_new();
    if (!c) {
        munmap(events, SP_CHUNK_BYTES);
        __atomic_sub_fetch(&sp_buffer_bytes, SP_CHUNK_BYTES, __ATOMIC_RELAXED);
        return NULL;
    }
    c->events = events; /* its bytes were counted with its arena */
    return c;
}
