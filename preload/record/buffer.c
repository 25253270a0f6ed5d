/* buffer.c - a lane's memory: its stack of open calls, its event chunks and
 * the per-region statistics derived from them.
 *
 * Stacks, chunks and live counters are mapped with mmap, not malloc'ed: a
 * marker call made by a signal handler may need one, and the allocator may
 * be what the handler interrupted.  The memory cap is enforced here, once
 * per chunk (SP_CHUNK_EVENTS calls), never on every call. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "recorder.h"

uint64_t sp_buffer_bytes;

static void *pages_alloc(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

/* Stacks hold cap entries after a sentinel: (cap + 1) * 16 bytes, whole
 * pages from 255 entries on. */
#define FIRST_STACK_CAP 255

int sp_lane_grow_stack(struct sp_lane *lane)
{
    uint32_t cap = lane->stack_cap ? lane->stack_cap * 2 + 1 : FIRST_STACK_CAP;
    struct sp_open *grown = pages_alloc(((size_t)cap + 1) * sizeof *grown);
    if (!grown)
        return -1;
    grown[0] = (struct sp_open){.start = 0, .region = UINT32_MAX, .task = SP_OPEN_SENTINEL};
    grown++;
    uint32_t depth = sp_lane_depth(lane);
    for (uint32_t i = 0; i < depth; i++) {
        grown[i].start = SP_LOAD(lane->stack[i].start);
        grown[i].region = SP_LOAD(lane->stack[i].region);
        grown[i].task = SP_LOAD(lane->stack[i].task);
    }
    /* Readers on other threads may still hold the old array (exit-time
     * reports): it is retired, not freed.  Geometric growth bounds the
     * waste to the size of the live stack. */
    pthread_mutex_lock(&lane->lock);
    lane->stack = grown;
    lane->top = grown + depth;
    lane->stack_cap = cap;
    pthread_mutex_unlock(&lane->lock);
    lane->limit = NULL; /* the next begin recomputes it */
    return 0;
}

int sp_lane_grow_counters(struct sp_lane *lane, uint32_t region)
{
    uint32_t n = lane->num_counters ? lane->num_counters : 64;
    while (n <= region)
        n *= 2;
    struct sp_counters *grown = pages_alloc((size_t)n * sizeof *grown);
    if (!grown)
        return -1;
    pthread_mutex_lock(&lane->lock);
    for (uint32_t i = 0; i < lane->num_counters; i++) {
        grown[i].abandoned = SP_LOAD(lane->counters[i].abandoned);
        grown[i].dropped = SP_LOAD(lane->counters[i].dropped);
        grown[i].dropped_ns = SP_LOAD(lane->counters[i].dropped_ns);
        grown[i].aggregated = SP_LOAD(lane->counters[i].aggregated);
        grown[i].dropped_min = SP_LOAD(lane->counters[i].dropped_min);
        grown[i].dropped_max = SP_LOAD(lane->counters[i].dropped_max);
    }
    lane->counters = grown; /* old array retired, as for the stack */
    SP_RELEASE(lane->num_counters, n);
    pthread_mutex_unlock(&lane->lock);
    return 0;
}

struct sp_chunk *sp_chunk_new(void)
{
    struct sp_chunk *chunk = sp_chunk_header_new();
    if (!chunk)
        return NULL;
    /* Fresh pages are zero and only touched as events are written: a
     * lane's first chunk (and a chunk mapped alone under the memory cap)
     * costs a page until it records more, so short threads stay cheap. */
    void *m = pages_alloc(SP_CHUNK_BYTES);
    if (!m) {
        sp_chunk_header_free(chunk);
        return NULL;
    }
    chunk->events = m;
    __atomic_add_fetch(&sp_buffer_bytes, SP_CHUNK_BYTES, __ATOMIC_RELAXED);
    return chunk;
}

static void free_await(struct sp_chunk *k)
{
    if (k->await_ns) {
        free(k->await_ns);
        k->await_ns = NULL;
        __atomic_sub_fetch(&sp_buffer_bytes, SP_CHUNK_EVENTS * sizeof(int64_t), __ATOMIC_RELAXED);
    }
}

void sp_chunk_free(struct sp_chunk *k)
{
    free_await(k);
    sp_chunk_free_wide(k);
    if (k->small)
        return; /* a retired lane's small chunk (see small_chunk): kept */
    munmap(k->events, SP_CHUNK_BYTES);
    __atomic_sub_fetch(&sp_buffer_bytes, SP_CHUNK_BYTES, __ATOMIC_RELAXED);
    sp_chunk_header_free(k);
}

int sp_lane_next_chunk(struct sp_lane *lane, int64_t now)
{
    /* At the memory cap the full chunk is spilled and reused, or the lane
     * stops keeping events (lifecycle/spill.c); periodic spilling is
     * checked there too. */
    int (*chunk_full)(struct sp_lane *, int64_t) = SP_LOAD(sp_record_hooks.chunk_full);
    if (chunk_full && chunk_full(lane, now))
        return 0;
    struct sp_chunk *chunk = sp_chunk_new_populated();
    if (!chunk) {
        /* No memory for more events: keep exact counts and totals only
         * (the hot path never writes past a full chunk). */
        if (!lane->stopped)
            sp_log("out of memory for more events on thread %lld; from now on its calls are "
                   "counted but not kept as events", (long long)lane->thread->index);
        lane->stopped = 1;
        return -1;
    }
    pthread_mutex_lock(&lane->lock);
    lane->tail->count = SP_CHUNK_EVENTS;
    lane->tail->next = chunk;
    lane->tail = chunk;
    SP_RELEASE(lane->next, chunk->events);
    pthread_mutex_unlock(&lane->lock);
    return 0;
}

void sp_lane_go_slow(struct sp_lane *lane)
{
    lane->limit = NULL;
    uint32_t depth = sp_lane_depth(lane);
    for (uint32_t i = 0; i < depth; i++)
        if (lane->stack[i].task == SP_OPEN_FAST)
            SP_STORE(lane->stack[i].task, SP_OPEN_SLOW);
}

/* ---- derived statistics --------------------------------------------------- */

static int grow_folded(struct sp_lane *lane, uint32_t region)
{
    uint32_t n = lane->num_folded ? lane->num_folded : 64;
    while (n <= region)
        n *= 2;
    struct sp_folded *grown = realloc(lane->folded, (size_t)n * sizeof *grown);
    if (!grown)
        return -1;
    memset(grown + lane->num_folded, 0, (size_t)(n - lane->num_folded) * sizeof *grown);
    lane->folded = grown;
    lane->num_folded = n;
    return 0;
}

static void fold_event(struct sp_lane *lane, const sp_event *e, int in_ns)
{
    uint32_t region = e->region;
    if (region >= lane->num_folded && grow_folded(lane, region) != 0)
        return;
    struct sp_folded *f = &lane->folded[region];
    int64_t d = e->end - e->start;
    int64_t ns = in_ns ? d : sp_timer_duration_ns(d);
    if (in_ns)
        f->total_ns += d;
    else
        f->total_ticks += d;
    if (!f->completed || ns < f->min_ns)
        f->min_ns = ns;
    if (ns > f->max_ns)
        f->max_ns = ns;
    f->completed++;
}

void sp_lane_fold(struct sp_lane *lane)
{
    struct sp_chunk *k = lane->fold_chunk;
    uint32_t i = lane->fold_index;
    uint32_t used = sp_lane_used(lane);
    for (;;) {
        uint32_t end = k == lane->tail ? used : k->count;
        struct sp_chunk_reader r;
        sp_chunk_reader_at(&r, k, i);
        for (; i < end; i++) {
            sp_event e;
            sp_chunk_reader_next(&r, &e);
            fold_event(lane, &e, i < k->converted);
        }
        if (k == lane->tail || !k->next)
            break;
        k = k->next;
        i = 0;
    }
    lane->fold_chunk = k;
    lane->fold_index = i;
}

int64_t sp_lane_kept_calls(struct sp_lane *lane, uint32_t region)
{
    void (*lock_events)(void) = SP_LOAD(sp_record_hooks.lock_events);
    void (*unlock_events)(void) = SP_LOAD(sp_record_hooks.unlock_events);
    struct sp_lane *was = sp_record_enter();
    if (lock_events)
        lock_events();
    pthread_mutex_lock(&lane->lock);
    sp_lane_fold(lane);
    int64_t n = region < lane->num_folded ? lane->folded[region].completed : 0;
    pthread_mutex_unlock(&lane->lock);
    if (unlock_events)
        unlock_events();
    sp_record_leave(was);
    return n;
}

void sp_lane_drop_spilled(struct sp_lane *lane, uint32_t used)
{
    pthread_mutex_lock(&lane->lock);
    sp_lane_fold(lane);
    struct sp_chunk *k = lane->head;
    while (k != lane->tail) {
        struct sp_chunk *next = k->next;
        sp_chunk_free(k);
        k = next;
    }
    lane->head = lane->tail;
    lane->head_skip = used;
    lane->fold_chunk = lane->tail;
    lane->fold_index = used;
    pthread_mutex_unlock(&lane->lock);
}

void sp_lane_restart_tail(struct sp_lane *lane)
{
    pthread_mutex_lock(&lane->lock);
    free_await(lane->tail);
    sp_chunk_free_wide(lane->tail);
    lane->tail->converted = 0;
    lane->head_skip = 0;
    lane->fold_chunk = lane->tail;
    lane->fold_index = 0;
    SP_RELEASE(lane->next, lane->tail->events);
    pthread_mutex_unlock(&lane->lock);
}

void sp_lane_reset_events(struct sp_lane *lane)
{
    pthread_mutex_lock(&lane->lock);
    /* Full chunks are never touched by their owner again: free them.
     * The tail is still being written: remember where the reset was. */
    struct sp_chunk *c = lane->head;
    while (c != lane->tail) {
        struct sp_chunk *next = c->next;
        sp_chunk_free(c);
        c = next;
    }
    lane->head = lane->tail;
    lane->head_skip = sp_lane_used(lane);
    lane->fold_chunk = lane->tail;
    lane->fold_index = lane->head_skip;
    if (lane->folded)
        memset(lane->folded, 0, (size_t)lane->num_folded * sizeof *lane->folded);
    for (uint32_t i = 0; i < lane->num_counters; i++) {
        struct sp_counters *k = &lane->counters[i];
        SP_STORE(k->abandoned, 0);
        SP_STORE(k->dropped, 0);
        SP_STORE(k->dropped_ns, 0);
        SP_STORE(k->dropped_min, 0);
        SP_STORE(k->dropped_max, 0);
        SP_STORE(k->aggregated, 0);
    }
    pthread_mutex_unlock(&lane->lock);
}

/* ---- a finished thread's lane ---------------------------------------------- */

/* Chunks of retired lanes, carved from shared slabs: a short-lived thread
 * then costs its events, not a page of stack and a page of chunk.  Never
 * freed (a retired lane's only chunk is its tail, which nothing frees);
 * their events follow the header (sp_chunk.small). */
#define SMALL_SLAB_BYTES (1u << 20)
#define SMALL_MAX_EVENTS 252 /* header + events within a page */
static pthread_mutex_t small_lock = PTHREAD_MUTEX_INITIALIZER;
static char *small_slab;
static size_t small_left;

static struct sp_chunk *small_chunk(uint32_t events)
{
    size_t bytes = sizeof(struct sp_chunk) + (size_t)events * sizeof(struct sp_slot);
    bytes = (bytes + 63) & ~(size_t)63;
    pthread_mutex_lock(&small_lock);
    if (small_left < bytes) {
        char *slab = pages_alloc(SMALL_SLAB_BYTES);
        if (!slab) {
            pthread_mutex_unlock(&small_lock);
            return NULL;
        }
        small_slab = slab;
        small_left = SMALL_SLAB_BYTES;
    }
    struct sp_chunk *k = (struct sp_chunk *)small_slab;
    k->events = (struct sp_slot *)(k + 1);
    k->small = 1;
    small_slab += bytes;
    small_left -= bytes;
    pthread_mutex_unlock(&small_lock);
    __atomic_add_fetch(&sp_buffer_bytes, bytes, __ATOMIC_RELAXED);
    return k;
}

/* Below the stack of a retired lane: the sentinel, and no room. */
static struct sp_open retired_stack[1] = {{.start = 0, .region = UINT32_MAX,
                                           .task = SP_OPEN_SENTINEL}};

void sp_lane_retire(struct sp_lane *lane)
{
    /* A write in progress holds pointers into the chunks it collected
     * (finalize): the chunk is replaced only under the same lock. */
    void (*lock_events)(void) = SP_LOAD(sp_record_hooks.lock_events);
    void (*unlock_events)(void) = SP_LOAD(sp_record_hooks.unlock_events);
    if (lock_events)
        lock_events();
    pthread_mutex_lock(&lane->lock);
    /* Readers dereference the stack only under this lock, and the thread
     * has no open call left (threads.c closed them). */
    struct sp_open *stack = lane->stack;
    uint32_t cap = lane->stack_cap;
    lane->stack = retired_stack + 1;
    lane->top = lane->stack;
    lane->stack_cap = 0;
    lane->limit = NULL;
    SP_STORE(lane->retired, 1);
    struct sp_chunk *big = lane->tail;
    uint32_t used = sp_lane_used(lane);
    struct sp_chunk *small = NULL;
    if (lane->head == big && used <= SMALL_MAX_EVENTS && !big->await_ns && !big->wide &&
        (small = small_chunk(used)) != NULL) {
        small->next = NULL;
        small->await_ns = NULL;
        small->wide = NULL;
        small->num_wide = small->wide_converted = 0;
        small->count = used;
        small->converted = big->converted;
        memcpy(small->events, big->events, (size_t)used * sizeof(struct sp_slot));
        lane->head = lane->tail = small;
        SP_RELEASE(lane->next, small->events + used);
        if (lane->fold_chunk == big)
            lane->fold_chunk = small;
    }
    pthread_mutex_unlock(&lane->lock);
    if (small)
        sp_chunk_free(big);
    if (unlock_events)
        unlock_events();
    if (stack)
        munmap(stack - 1, ((size_t)cap + 1) * sizeof *stack);
}
