/* recorder.h - the shim's recording state: profilers, regions, threads and
 * their per-thread lanes (one lane per thread and profiler).
 *
 * The hot path (markers.c) is sp_begin/sp_end on the calling thread's cached
 * lane: a push of {region, task, start} and, at the end, one 16-byte event
 * appended to the tail chunk (struct sp_slot).  Everything else is on slow paths that the
 * fast one falls into through checks it makes anyway: lane->limit is NULL
 * whenever a begin needs more than a push (clock timer, a task running, an
 * error to clear, ON_FULL=stop reached, include/exclude filters), and an
 * open call tagged SP_OPEN_SLOW (or with a task) is never ended by
 * the fast path.  Per-region statistics are not kept per call: they are
 * derived from the events on demand (sp_lane_fold), and kept live only for
 * calls whose events are dropped.
 *
 * Signals: while a thread is inside the recorder, sp_tls_lane points at an
 * object whose first word is SP_LANE_BUSY, so a marker call made by a
 * signal handler that interrupted it fails the fast path's lane check, sees
 * the tag and is counted and dropped (sp_nested_dropped); at any other
 * moment a handler's calls nest on the interrupted lane like any others.
 * Memory the markers may need is mapped with mmap, never malloc'ed, so a
 * handler's call does not re-enter the allocator (docs/robustness.md).
 *
 * Ownership rules, which keep the hot path free of locks:
 *  - a lane is written only by its own thread;
 *  - other threads (finalize, stats) read a lane with atomic loads of the
 *    published counters, and take lane->lock only to walk or change the
 *    chunk list, which the owner also changes only under that lock (once
 *    per chunk, i.e. every SP_CHUNK_EVENTS calls);
 *  - profiler, region and thread records are never freed while the process
 *    may still use them. */
#ifndef SCOPEPROF_RECORDER_H
#define SCOPEPROF_RECORDER_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "callsite.h"
#include "model/capture.h"
#include "scope_profiler.h"
#include "base/shim.h"
#include "timer.h"

/* A chunk's events are 4096 of 16 bytes (struct sp_slot): 16 pages, page
 * aligned, so the next event's address is a multiple of 4096 exactly every
 * 256 events, which is the every-256 test of the fast path
 * (SP_SAMPLE_ADDRESS_MASK) and catches a full chunk too.  Its header is
 * elsewhere (struct sp_chunk). */
#define SP_CHUNK_EVENTS 4096
#define SP_REGION_BLOCK 1024
#define SP_MAX_REGION_BLOCKS 4096 /* 4 M regions */
/* The lane's periodic work (markers.c every_256_exits) runs every 256
 * exits; the thread's CPU time is sampled there every 4096 exits (once per
 * chunk), since every collection reads each live thread's CPU clock
 * exactly (threads.c sp_threads_refresh, docs/hot-path.md). */
#define SP_PERIODIC_MASK 0xFF
#define SP_CPU_SAMPLE_MASK (SP_CHUNK_EVENTS - 1)

/* Relaxed atomics: plain loads/stores on x86, but race-free for readers on
 * other threads (and for ThreadSanitizer). */
#define SP_LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define SP_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define SP_ACQUIRE(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define SP_RELEASE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

/* No task (events' and threads' task value). */
#define SP_TASK_NONE (-1)
/* Open-call tags (sp_open.task): the thread's own stack, ended by the fast
 * path (0, so that the fast path compares region and tag as one 64-bit
 * key); the same but to be ended by the slow path; the sentinel below
 * stack[0], which matches no end; task t is stored as t + 1. */
#define SP_OPEN_FAST 0
#define SP_OPEN_SLOW (-1)
#define SP_OPEN_SENTINEL (-2)
static inline int32_t sp_open_tag_of_task(int32_t task) { return task + 1; }
static inline int32_t sp_open_task(int32_t tag)
{
    return tag > 0 ? tag - 1 : SP_TASK_NONE;
}

/* First word of the objects sp_tls_lane points at while its thread is
 * inside the recorder (the profiler in use, or a static tag). */
#define SP_LANE_BUSY ((struct sp_profiler *)1)

struct sp_region {
    char *name;
    char *source_file;      /* NULL: unknown */
    int64_t source_line;    /* -1: unknown */
    uintptr_t callsite;     /* return address of the registering call */
    /* callsite and the return addresses outside it (callsite.h); 0 frames
     * when SCOPE_PROFILER_CALLSITES=0 or registered before it was known */
    uintptr_t frames[SP_CALLSITE_FRAMES];
    int num_frames;
    int wanted;             /* passes SCOPE_PROFILER_INCLUDE/EXCLUDE */
};

/* Live counters of one region on one lane, for calls that leave no event
 * (durations in ticks, timer.h).  Written by the owner thread only. */
struct sp_counters {
    int64_t abandoned;      /* entered, then left open by an exiting thread */
    int64_t dropped;        /* completed but not kept as events (ON_FULL=stop) */
    int64_t dropped_ns;
    int64_t aggregated;     /* of `dropped`: counted without events by design
                               (MPI polling calls, mpi_side.h), not by the cap */
    int64_t dropped_min;
    int64_t dropped_max;
};

/* One call counted live, without an event (the memory cap, no memory for
 * its entry, an MPI polling call): slow paths only. */
static inline void sp_counters_add_dropped(struct sp_counters *c, int64_t d)
{
    if (!c->dropped || d < c->dropped_min)
        SP_STORE(c->dropped_min, d);
    if (d > c->dropped_max)
        SP_STORE(c->dropped_max, d);
    SP_STORE(c->dropped, c->dropped + 1);
    SP_STORE(c->dropped_ns, c->dropped_ns + d);
}

/* Statistics of one region on one lane derived from its events so far
 * (sp_lane_fold; the spill lock serialises every fold). */
struct sp_folded {
    int64_t completed;
    int64_t total_ticks;    /* events still in ticks when folded */
    int64_t total_ns;       /* events already converted when folded */
    int64_t min_ns, max_ns;
};

/* One open call on a lane's stack. */
struct sp_open {
    union {
        int64_t start;      /* ticks (timer.h) */
        struct {
            uint32_t start_low;
            uint32_t start_high; /* its 2^32-tick epoch (struct sp_slot) */
        };
    };
    union {
        struct {
            uint32_t region;
            int32_t task;   /* tag, see SP_OPEN_FAST */
        };
        uint64_t key;       /* region | tag << 32: what the fast path writes
                               and compares (x86-64 is little-endian) */
    };
};

/* One completed call in a chunk: 16 bytes (docs/hot-path.md, "Events").
 * A call that ends in the 2^32-tick epoch it began in (all but the rare
 * call that is long or crosses an epoch boundary) keeps the low half of its
 * end; the end is then start + (uint32_t)(end_low - (uint32_t)start), which
 * holds for any duration below 2^32, in ticks or once converted to ns.  The
 * others, and every call made in a task, are "wide": region SP_SLOT_WIDE,
 * and their end, region and task are the chunk's next wide entry. */
struct sp_slot {
    int64_t start;
    uint32_t end_low;
    uint32_t region;        /* or SP_SLOT_WIDE */
};
#define SP_SLOT_WIDE UINT32_MAX
struct sp_wide {
    int64_t end;
    uint32_t region;
    int32_t task;           /* -1: outside any task */
};

/* A chunk: its header, and SP_CHUNK_EVENTS events in a page-aligned block
 * of their own (chunk_pages.c: headers are packed 64 to a page, so a
 * chunk's memory is its events). */
struct sp_chunk {
    struct sp_chunk *next;
    struct sp_slot *events; /* SP_CHUNK_BYTES, page aligned; or a small chunk's tail */
    int64_t *await_ns;      /* allocated on the first task call in the chunk */
    /* wide entries in event order, SP_CHUNK_EVENTS of room mapped on the
     * first (untouched pages cost nothing); the owner appends under no lock
     * and publishes the event after its entry */
    struct sp_wide *wide;
    uint32_t num_wide;
    uint32_t count;         /* events in this chunk once it is full */
    /* events[0, converted) hold ns, the rest ticks (timer.h), wide entries
     * too; changed under the spill lock only */
    uint32_t converted;
    uint32_t wide_converted; /* wide entries of events[0, converted) */
    uint32_t small;         /* a retired lane's small chunk: events follow the header */
} __attribute__((aligned(64)));
#define SP_CHUNK_BYTES ((size_t)SP_CHUNK_EVENTS * sizeof(struct sp_slot))
_Static_assert(sizeof(struct sp_slot) == 16 && sizeof(struct sp_wide) == 16, "16-byte events");
_Static_assert(sizeof(struct sp_chunk) == 64 && SP_CHUNK_BYTES == 16 * 4096,
               "a 64-byte header and 16 pages of events");
/* After the tail's n-th event (from 1) the next is at events + 16 n, and
 * events is page aligned: a multiple of 4096 exactly when n is a multiple
 * of 256. */
_Static_assert(SP_PERIODIC_MASK == 0xFF && SP_CHUNK_EVENTS % 256 == 0,
               "the every-256 test on the next event's address");
#define SP_SAMPLE_ADDRESS_MASK 4095

/* A chunk's events read in order as the 24-byte events the writer takes
 * (chunk_events.c): wide entries are followed with a cursor. */
struct sp_chunk_reader {
    const struct sp_chunk *chunk;
    uint32_t index, wide;
};
/* Start at event `index` (counts the wide events before it). */
void sp_chunk_reader_at(struct sp_chunk_reader *r, const struct sp_chunk *k, uint32_t index);
void sp_chunk_reader_next(struct sp_chunk_reader *r, sp_event *out);
/* Events [from, to) of k as sp_event into out. */
void sp_chunk_expand(const struct sp_chunk *k, uint32_t from, uint32_t to, sp_event *out);
/* The owner appends a wide event (its slot written by the caller after):
 * 0, or -1 when no memory for the entry (the call is then lost). */
int sp_chunk_add_wide(struct sp_chunk *k, int64_t end, uint32_t region, int32_t task);
/* Unmap the wide entries (chunk freed or restarted). */
void sp_chunk_free_wide(struct sp_chunk *k);
/* Events [from, to) of a chunk, as the capture hands them over
 * (lifecycle/finalize.c, handover.c). */
struct sp_chunk_span {
    const struct sp_chunk *chunk;
    uint32_t from, to;
};

struct sp_thread;

struct sp_lane {
    struct sp_profiler *profiler;   /* first: see SP_LANE_BUSY */
    struct sp_thread *thread;
    struct sp_lane *next_in_profiler;

    /* open calls; stack[-1] is a sentinel (SP_OPEN_SENTINEL) */
    struct sp_open *stack;
    struct sp_open *top;    /* stack + depth: the next begin's slot, published
                               (release); sp_lane_depth for the depth */
    struct sp_open *limit;  /* stack + stack_cap, or NULL when begins take the
                               slow path */
    uint32_t stack_cap;

    /* completed calls */
    pthread_mutex_t lock;   /* chunk list changes */
    struct sp_chunk *head, *tail;
    struct sp_slot *next;   /* where the tail's next event goes, published
                               (release); sp_lane_used counts the tail's events */
    uint32_t head_skip;     /* events of the head chunk dropped by sp_reset */
    uint32_t exits;         /* region exits, for CPU sampling */

    struct sp_counters *counters;
    uint32_t num_counters;
    /* derived statistics: events before (fold_chunk, fold_index) are in
     * `folded` (spill lock and lane lock held) */
    struct sp_folded *folded;
    uint32_t num_folded;
    uint32_t fold_index;
    struct sp_chunk *fold_chunk;

    sp_status last_error;   /* of the most recent call on this thread */
    int stopped;            /* memory cap reached with ON_FULL=stop */
    int retired;            /* its thread exited (sp_lane_retire); atomic */

    /* Per stack position: the task's suspended_ns when the call began
     * (await bookkeeping, tasks.c).  Owner thread only; allocated on the
     * first call made inside a task. */
    int64_t *await_base;
    uint32_t await_cap;

    /* MPI side data of this lane's calls (mpi_side.h); NULL until the
     * first one.  Set under lock. */
    struct sp_mpi_side *mpi_side;
};

/* Open calls on the lane.  Owner thread, or under lane->lock (the stack
 * moves only under it). */
static inline uint32_t sp_lane_depth(const struct sp_lane *lane)
{
    return lane->stack ? (uint32_t)(SP_ACQUIRE(lane->top) - lane->stack) : 0;
}

static inline void sp_lane_set_depth(struct sp_lane *lane, uint32_t depth)
{
    SP_RELEASE(lane->top, lane->stack + depth);
}

/* Events in the lane's tail chunk.  Owner thread, or under lane->lock. */
static inline uint32_t sp_lane_used(const struct sp_lane *lane)
{
    return (uint32_t)(SP_ACQUIRE(lane->next) - lane->tail->events);
}

struct sp_thread {
    int64_t index;          /* dense, registration order */
    uint64_t ident;         /* pthread_t */
    pid_t tid;
    int daemon;
    int alive;
    int64_t start_ns, end_ns, cpu_ns;
    char name[64];
    int32_t task;           /* current task, -1: the thread's own stack */
    struct sp_lane **lanes; /* indexed by profiler slot */
    uint32_t num_lanes;
    /* "main", "pthread", "openmp", "mpi" or "other" (a string literal)
     * and the OpenMP thread number of a worker (-1 none), for the thread
     * table (docs/tasks.md); changed under sp_threads_lock. */
    const char *kind;
    int32_t omp_thread_num;
};

struct sp_profiler {
    struct sp_profiler *busy_tag; /* SP_LANE_BUSY: the hot path parks it in sp_tls_lane */
    int slot;               /* index in the profiler table, for lane lookup */
    int active;             /* atomic */
    int explicit_init;      /* the program called sp_init/sp_create */
    int is_default;
    char *prefix;           /* absolute (base/output_prefix.c) */
    char *given_prefix;     /* as given, for sp_output_path */
    int rank;
    int rank_set;           /* rank given by the program */
    sp_status last_error;   /* atomic */
    char *path;
    char *given_path;       /* path as sp_output_path shows it */
    int64_t start_ns;

    pthread_mutex_t lock;   /* regions, lanes list, path */
    struct sp_region **blocks[SP_MAX_REGION_BLOCKS];
    uint32_t num_regions;   /* published (release) */
    /* name -> id hash (open addressing; hash[0] = capacity, then slots of
     * ids + 1, 0 = empty; read without the lock, registry.c) */
    uint32_t *hash;
    uint32_t hash_cap;

    struct sp_lane *lanes;
    int finalized;
};

/* markers.c: the filters of SCOPE_PROFILER_INCLUDE/EXCLUDE, once at load. */
void sp_markers_init(void);

/* registry.c */
struct sp_profiler *sp_profiler_new(const char *prefix, int rank, int is_default);
static inline struct sp_region *sp_region_get(struct sp_profiler *p, uint32_t id)
{
    return p->blocks[id / SP_REGION_BLOCK][id % SP_REGION_BLOCK];
}
/* Id of region `name`, registered on first use.  With want_frames set and
 * no frames given, returns SP_REGION_NEEDS_FRAMES instead of registering a
 * region that has no call site yet, so the caller walks the stack (slow)
 * only then, and outside the profiler's lock. */
#define SP_REGION_NEEDS_FRAMES (-2)
/* Id of an existing region without taking the lock, or -1 (unknown, or a
 * location or call site still to be filled in: use sp_region_lookup). */
int sp_region_find(struct sp_profiler *p, const char *name, const char *file, int want_frames);
/* The same for a name of *length bytes not NUL-terminated (Fortran's);
 * *length becomes the name's length up to a NUL within it. */
int sp_region_find_n(struct sp_profiler *p, const char *name, size_t *length, int want_frames);
/* The id of a name given by length, registered if new (marker_api.c), or
 * SP_INVALID_REGION with the profiler's last error set. */
int sp_region_by_name(struct sp_profiler *p, const char *name, size_t length, uintptr_t callsite);
int sp_region_lookup(struct sp_profiler *p, const char *name, const char *file,
                     int line, const uintptr_t *frames, int num_frames, int want_frames);
extern struct sp_profiler *sp_default __attribute__((visibility("hidden"))); /* atomic pointer */
/* Every profiler ever created (never freed), for the exit path. */
extern pthread_mutex_t sp_profilers_lock;
extern struct sp_profiler **sp_profilers;
extern int sp_num_profilers;
static inline struct sp_profiler *sp_current_profiler(void)
{
    return __atomic_load_n(&sp_default, __ATOMIC_ACQUIRE);
}

/* threads.c */
extern __thread struct sp_thread *sp_tls_thread __attribute__((tls_model("initial-exec")));
struct sp_thread *sp_thread_register(int daemon);
/* For the pthread_create wrapper: a row made by the creating thread
 * (NULL when thread tracking is off or out of memory), attached by the new
 * thread as it starts, or abandoned when pthread_create failed. */
struct sp_thread *sp_thread_new(int daemon);
void sp_thread_attach(struct sp_thread *t);
void sp_thread_abandon(struct sp_thread *t);
struct sp_lane *sp_lane_create(struct sp_profiler *p);
/* The calling thread's lane for p (created on first use), or NULL. */
struct sp_lane *sp_lane_of(struct sp_profiler *p);
extern pthread_mutex_t sp_threads_lock;
extern struct sp_thread **sp_threads;
extern int64_t sp_num_threads;
/* Refresh cpu_ns/name of live threads (finalize). */
void sp_threads_refresh(void);

/* buffer.c: slow paths of the hot path, and the lane's memory. */
int sp_lane_grow_stack(struct sp_lane *lane);
int sp_lane_grow_counters(struct sp_lane *lane, uint32_t region);
/* The tail chunk is full (its last call ended at tick `now`): publish it
 * and start a new one.  -1 if no memory. */
int sp_lane_next_chunk(struct sp_lane *lane, int64_t now);
/* A new chunk (mmap'ed: safe in a signal handler), or NULL; and its end. */
/* A lane's first chunk: its events mapped on their own (buffer.c). */
struct sp_chunk *sp_chunk_new(void);
/* A chunk header, zeroed, or NULL; and its return (chunk_pages.c). */
struct sp_chunk *sp_chunk_header_new(void);
void sp_chunk_header_free(struct sp_chunk *k);
/* Its later chunks: faulted in ahead, from huge-page arenas where that is
 * cheaper (chunk_pages.c). */
struct sp_chunk *sp_chunk_new_populated(void);
/* The calling thread is leaving: the untaken part of its own arena goes. */
void sp_chunk_pages_thread_exit(void);
void sp_chunk_free(struct sp_chunk *k);
/* Begins of this lane take the slow path from now on, and so do the ends
 * of the calls open now (owner thread). */
void sp_lane_go_slow(struct sp_lane *lane);
/* Fold the lane's events not yet counted into lane->folded (spill lock
 * and lane->lock held). */
void sp_lane_fold(struct sp_lane *lane);
/* Calls of `region` the lane kept as events so far: the ordinal a fork edge
 * names (record/forks.c).  Folds under the event lock, like the region
 * statistics: for the rarer paths only, never sp_begin/sp_end. */
int64_t sp_lane_kept_calls(struct sp_lane *lane, uint32_t region);
/* For the spill (spill lock held, owner thread): the events up to the
 * tail's `used` were written out; they are counted, every chunk but the
 * tail is freed, and the lane's memory starts at (tail, used). */
void sp_lane_drop_spilled(struct sp_lane *lane, uint32_t used);
/* The tail was spilled whole: start writing it over (spill lock held). */
void sp_lane_restart_tail(struct sp_lane *lane);
/* sp_reset: forget the lane's events and statistics (spill lock held, no
 * open call). */
void sp_lane_reset_events(struct sp_lane *lane);
/* The lane's thread exited (its open calls already closed): free its
 * stack and, when its events are few, move them into a small chunk, so
 * that a finished thread keeps its row and its events but not its pages.
 * Calls the thread makes after this (later TLS destructors) are ignored. */
void sp_lane_retire(struct sp_lane *lane);
/* Events [converted, end) of chunk k as ns (spill lock held;
 * chunk_events.c). */
void sp_chunk_convert(struct sp_chunk *k, size_t end);
extern uint64_t sp_buffer_bytes; /* atomic */

/* The calling thread's most recent lane (a sentinel whose profiler matches
 * nothing before its first call), or a SP_LANE_BUSY object while the thread
 * is inside the recorder. */
extern __thread struct sp_lane *sp_tls_lane __attribute__((tls_model("initial-exec")));
extern struct sp_lane sp_no_lane;
/* Mark the calling thread as inside the recorder; returns the value to give
 * back to sp_record_leave.  Around every lock a marker call could need. */
static inline struct sp_lane *sp_record_enter(void)
{
    static struct sp_profiler *const busy = SP_LANE_BUSY;
    struct sp_lane *was = sp_tls_lane;
    sp_tls_lane = (struct sp_lane *)&busy;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return was;
}
static inline void sp_record_leave(struct sp_lane *was)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    sp_tls_lane = was;
}
static inline int sp_record_busy(void)
{
    return sp_tls_lane->profiler == SP_LANE_BUSY;
}
/* Marker calls dropped because they interrupted the recorder on their own
 * thread (signal handlers); atomic. */
extern int64_t sp_nested_dropped;
static inline void sp_record_nested_drop(void)
{
    __atomic_add_fetch(&sp_nested_dropped, 1, __ATOMIC_RELAXED);
}

/* tasks.c: cooperative lanes (fibers, explicit tasks).  A task runs in
 * steps on one thread at a time; its counters are written by the thread
 * running it and read by finalize with relaxed atomics. */
#define SP_TASK_BLOCK 1024
#define SP_MAX_TASK_BLOCKS 16384 /* 16 M tasks */
struct sp_task {
    int64_t index;          /* dense, creation order; what task_ids stores */
    int64_t thread_index;   /* thread of the latest step (creator before) */
    int64_t created_ns, done_ns;   /* done_ns -1 until done */
    int64_t steps, running_ns, suspended_ns;
    int64_t last_step_end_ns, step_started_ns;
    char kind[16];
    char name[64];
};
extern struct sp_task **sp_task_blocks[SP_MAX_TASK_BLOCKS]; /* atomic pointers */
static inline struct sp_task *sp_task_get(int64_t index)
{
    struct sp_task **block = SP_ACQUIRE(sp_task_blocks[index / SP_TASK_BLOCK]);
    return SP_ACQUIRE(block[index % SP_TASK_BLOCK]);
}
int64_t sp_task_new(const char *kind, const char *name);
/* Make `task` (-1: the thread's own stack) the running one on the calling
 * thread, closing the step of the previous one. */
void sp_task_run(struct sp_thread *t, int64_t task);
void sp_task_finish(int64_t task);
/* Hot-path helpers, called only for calls made inside a task. */
void sp_task_call_begins(struct sp_lane *lane, uint32_t pos, int32_t task);
int64_t sp_task_call_await(const struct sp_lane *lane, uint32_t pos, int32_t task);
void sp_task_store_await(struct sp_lane *lane, uint32_t used, int64_t await);
/* Task table rows, times relative to origin_ns; *count rows (0 if none).
 * Names point into the task records (never freed). */
sp_task_row *sp_tasks_snapshot(int64_t origin_ns, size_t *count);

/* ---- what the layers above plug in (record_hooks.c) --------------------
 *
 * The recorder calls nothing above it: the life cycle (spill, signals, the
 * exit hook, the writer) registers these at start-up (entry.c).  Each may be
 * NULL before then; every caller checks. */
struct sp_record_hooks {
    /* The tail chunk of `lane` is full (its last call ended at tick `now`).
     * 1 when the lane can go on without a new chunk (the tail was spilled
     * and is reused, or the lane stopped keeping events), 0 otherwise. */
    int (*chunk_full)(struct sp_lane *lane, int64_t now);
    /* The recording thread passed sp_tls_tick_deadline, or sp_tick_pending
     * is set: periodic spilling, a deferred signal. */
    void (*tick)(struct sp_lane *lane, int64_t now);
    /* The first region of the process was registered. */
    void (*first_region)(void);
    /* "file:line in function" of captured frames (misuse messages). */
    void (*describe_callsite)(const uintptr_t *frames, int n, char *buf, size_t len);
    /* The lock that serialises conversion and spilling of events (taken
     * to derive statistics from them). */
    void (*lock_events)(void);
    void (*unlock_events)(void);
    /* The calling thread exits, or the process does (on the thread that
     * writes at exit): the layer above ends the calls it keeps open for the
     * thread (an OpenMP worker's implicit task), before open calls are
     * dropped. */
    void (*thread_leaving)(void);
};
extern struct sp_record_hooks sp_record_hooks;

/* The recording thread's next call into sp_record_hooks.tick, in ticks
 * (INT64_MAX: never; 0: not yet computed), and a flag that asks every
 * recording thread to call it at once.  Both belong to the layer that set
 * the hook (lifecycle/spill.c, lifecycle/signals.c). */
extern __thread int64_t sp_tls_tick_deadline __attribute__((tls_model("initial-exec")));
extern volatile sig_atomic_t sp_tick_pending;

void sp_record_tick_slow(struct sp_lane *lane, int64_t now);
/* Called by the recording thread on its slow paths (every CPU sample in
 * end_call, every new chunk) with the time of its latest event (ticks). */
static inline void sp_record_tick(struct sp_lane *lane, int64_t now)
{
    if (SP_UNLIKELY(now >= sp_tls_tick_deadline ||
                    __atomic_load_n(&sp_tick_pending, __ATOMIC_RELAXED)))
        sp_record_tick_slow(lane, now);
}

#endif
