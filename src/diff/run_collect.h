/* run_collect.h - the per-key accumulators of one run's statistics while
 * its ranks are read (run_stats.c turns them into sp_key_stats), fed either
 * a whole rank at a time (the in-memory report's on_rank) or call by call
 * (the streamed report's call hook, run_collect_stream.c).  Both feed every
 * key its calls in the order of the in-memory reconstruction, so the
 * floating-point accumulators and the percentile samples come out the same
 * bit for bit. */
#ifndef SP_DIFF_RUN_COLLECT_H
#define SP_DIFF_RUN_COLLECT_H

#include <stddef.h>
#include <stdint.h>

#include "scopeprof/export.h"
#include "scopeprof/report.h"
#include "scopeprof/stream.h"

/* Accumulator of one key while the ranks are read. */
typedef struct key_acc {
    uint64_t calls;
    uint64_t own_calls;       /* exclusive times added so far (<= calls) */
    double total, own, mean_incl, m2_incl, mean_own, m2_own;
    double rank_total, rank_max;
    int64_t minimum, maximum;
    uint32_t rank_stamp;      /* last rank (1-based order) that touched it */
    int64_t *samples;
    size_t num_samples, cap;
    uint64_t rng;
} key_acc;

/* Calls of one key that entered but whose exclusive time cannot be added
 * yet, because an earlier call of the key is still open (the same path on
 * another lane, or a region inside itself by name). */
typedef struct pending_call {
    uint64_t call_index;      /* in its (rank, region) row: unique in the rank */
    int64_t exclusive;
    int done;
} pending_call;

typedef struct pending_queue {
    pending_call *v;
    size_t head, n, cap;
} pending_queue;

typedef struct run_collect {
    int by_name;
    sp_path_tree tree;        /* path mode: node id = slot */
    key_acc *acc;
    pending_queue *pending;   /* per slot, streamed ranks only */
    size_t num_acc;
    uint32_t rank_stamp;
    uint32_t *touched;        /* slots touched by the current rank */
    size_t num_touched, touched_cap;
    int64_t *node_of_call;    /* in-memory ranks */
    size_t node_cap;
    int64_t *slot_of_node;    /* streamed rank: its report tree node -> slot */
    size_t num_mapped, map_cap;
    size_t num_pending;       /* over every queue */
    int too_many_pending;     /* the stream gave up (run_collect_stream.c) */
} run_collect;

void run_collect_init(run_collect *c, int by_name);
void run_collect_free(run_collect *c);
/* Room for `slots` keys.  0 or -1. */
int run_collect_grow(run_collect *c, size_t slots);
void run_collect_begin_rank(run_collect *c);
void run_collect_end_rank(run_collect *c);
/* A call of key `slot`: its duration (everything but the own time). */
int run_collect_duration(run_collect *c, size_t slot, int64_t duration);
/* Its exclusive time, keys' calls in the same order as their durations. */
void run_collect_own(run_collect *c, size_t slot, int64_t exclusive);
/* sp_report_options.on_rank: a rank's calls, reconstructed in memory. */
int run_collect_on_rank(void *ctx, const sp_profile *profile, const sp_rank_data *data);
/* sp_report_options.call_hook feeding `c` from the streamed report
 * (run_collect_stream.c). */
sp_report_call_hook run_collect_hook(run_collect *c);

#endif
