/* scopeprof/report.h - the numbers behind `scopeprof report`, as data.
 *
 * sp_report_build turns a profile (one run, any number of ranks) into:
 *   - a call tree aggregated by call path (identical paths merged across
 *     lanes and ranks), and optionally one tree per (rank, lane);
 *   - a flat table, one row per region;
 *   - cross-rank statistics per region (when more than one rank);
 *   - the thread and task tables.
 * Printing is the command's business (src/cli/cmd_report.c); keeping the
 * computation here lets tests check every number exactly.
 *
 * Definitions (all times in ns):
 *   tree node inclusive  sum of the durations of the calls on that path;
 *   tree node exclusive  sum of their exclusive times (duration minus the
 *                        durations of their kept children);
 *   flat inclusive       time spent with at least one call of the region
 *                        open: a call nested inside a call of the same
 *                        region (recursion) is not counted twice;
 *   flat total           plain sum of all call durations (mean = total/calls);
 *   wall                 span of the selected ranks' calls on the run's time
 *                        axis (clock offsets below applied);
 *   percent of the run   inclusive / (wall x ranks merged into the tree).
 *                        Paths merged from several threads can exceed 100 %.
 * A rank that is not properly nested (or whose stored call ids disagree with
 * its timestamps) contributes to the flat and cross-rank tables through its
 * rows' summary statistics (exclusive unknown, -1) and gets a warning; it is
 * absent from the trees.  Aggregate-layout profiles have no tree: their flat
 * and cross-rank tables come from the rows' agg_* fields. */
#ifndef SCOPEPROF_REPORT_H
#define SCOPEPROF_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "scopeprof/analysis.h"
#include "scopeprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SP_REPORT_ALL_RANKS UINT32_MAX
#define SP_REPORT_ALL_LANES INT64_MIN

typedef struct sp_report_node {
    uint32_t region;          /* index into profile->names */
    uint32_t depth;           /* 0 for a root */
    int64_t parent;           /* node index, -1 for a root */
    int64_t first_child;      /* children by inclusive time, descending; -1 none */
    int64_t next_sibling;
    int recursive;            /* the region also appears on an ancestor node */
    uint64_t calls;
    int64_t inclusive, exclusive, minimum, maximum;
    /* Forked regions (OpenMP "omp parallel" with its workers merged in):
     * the lanes that ran it (summed over ranks), their total and largest
     * per-lane time, and the workers' wait in the closing barrier (from a
     * worker's end to its encountering thread's end).  0 elsewhere. */
    uint64_t fork_lanes;
    int64_t fork_lane_total, fork_lane_max, fork_barrier;
} sp_report_node;

typedef struct sp_report_tree {
    uint32_t rank;            /* SP_REPORT_ALL_RANKS when ranks are merged */
    int64_t lane;             /* SP_REPORT_ALL_LANES when lanes are merged */
    size_t num_ranks;         /* ranks merged into it (percent denominator) */
    size_t num_nodes;
    sp_report_node *nodes;    /* parents before children */
    size_t node_capacity;
    int64_t first_root;       /* roots by inclusive time, descending; -1 none */
    /* lookup (parent, region) -> node, internal */
    int64_t *slots;
    size_t slot_mask;
} sp_report_tree;

typedef struct sp_report_flat_row {
    uint32_t region;
    uint64_t calls;
    int64_t inclusive;        /* recursion counted once (see above) */
    int64_t total;            /* sum of durations */
    int64_t exclusive;        /* -1: unknown */
    int64_t minimum, maximum;
    double mean;              /* total / calls */
} sp_report_flat_row;

/* Statistics of one region over the selected ranks; a rank without calls of
 * the region counts as 0 (that is an imbalance too). */
typedef struct sp_report_cross_row {
    uint32_t region;
    size_t ranks_with_calls;
    uint64_t calls_min, calls_max;
    double calls_mean;
    int64_t inclusive_min, inclusive_max;
    double inclusive_mean;
    int64_t exclusive_min, exclusive_max; /* -1 when some rank's is unknown */
    double exclusive_mean;                /* -1 when unknown */
    double imbalance;         /* inclusive max / mean; 0 when the mean is 0 */
    uint32_t slowest_rank;    /* largest inclusive, lowest rank on ties */
} sp_report_cross_row;

typedef struct sp_report_thread_row {
    uint32_t rank;
    int64_t index;
    const char *name;         /* points into the profile */
    int64_t wall_ns;          /* -1 unknown */
    int64_t cpu_ns;           /* -1 unknown */
    double cpu_percent;       /* cpu / wall * 100; -1 unknown */
    uint64_t calls;           /* calls recorded on the thread (its tasks' included) */
    const char *kind;         /* "" unknown; points into the profile */
    char label[64];           /* sp_lane_label: "omp N" for OpenMP workers */
    int64_t idle_ns;          /* OpenMP worker: wall time outside its implicit
                                 tasks (between parallel regions); -1 otherwise */
} sp_report_thread_row;

typedef struct sp_report_task_row {
    uint32_t rank;
    int64_t index, thread_index, steps, running_ns, suspended_ns;
    const char *kind, *name;  /* point into the profile */
} sp_report_task_row;

typedef struct sp_report_warning {
    uint32_t rank;
    char *message;            /* the reconstruction's one-line error */
} sp_report_warning;

typedef enum sp_report_sort {
    SP_SORT_EXCLUSIVE = 0,
    SP_SORT_INCLUSIVE,
    SP_SORT_CALLS,
    SP_SORT_MEAN,
    SP_SORT_MAX,
    SP_SORT_NAME
} sp_report_sort;

/* sp_report_build_stream shared with other processes that run the same
 * command on the same inputs (src/cli: the processes of an MPI launcher).
 * Selected rank k belongs to process k % count (or to the one `owner`
 * names); each process streams its own ranks, and process 0 adds every
 * rank's tree in rank order, fetching the others' from their owners, so
 * the report is the serial one.  The
 * transport is the caller's (the report knows no MPI):
 *   fetch    on process 0: the next result of process `from`; *buf
 *            malloc'd.  0, 1 that process has nothing more (its report
 *            stopped: the report falls back), or -1.
 *   deliver  on another process: send `buf` to process 0.  0 sent, 1 not
 *            wanted any more (process 0 stopped: the caller ends), -1.
 * A process other than 0 gets a report it must not print. */
typedef struct sp_report_remote {
    int self, count;
    int (*fetch)(void *ctx, int from, uint8_t **buf, size_t *len);
    int (*deliver)(void *ctx, const void *buf, size_t len);
    /* The process that streams selected rank `rank` (called in rank order
     * on every process); NULL: k % count for the k-th selected rank. */
    int (*owner)(void *ctx, uint32_t rank);
    void *ctx;
} sp_report_remote;

/* sp_report_build_stream: told of every call the report keeps as it
 * streams past, for a caller that collects more per call than the tree
 * (src/diff); the streamed counterpart of on_rank.  `call` comes with
 * `exit` 0 when it enters (in the order of the in-memory reconstruction)
 * and 1 when it exits (exclusive time set); `node` is its node in `tree`,
 * the rank's tree being built.  rank_begin / rank_end bracket a streamed
 * rank; a rank the streamed path reads in memory (fork edges) goes to
 * on_rank instead, with the skeleton as profile.  Nonzero = failure (the
 * build fails with -1).  Worker processes (jobs) are not used with a hook;
 * with remote it is refused (the in-memory path).
 * A rank with fork edges grafted on the stream: with rank_apart set, the
 * report builds its tree without the hook, then calls rank_apart (the
 * caller makes its own pass over the rank: the HTML page, which does not
 * graft); without it, the rank is streamed once more and the calls come
 * grafted: their entries (`exit` 0) in the order of the in-memory path's
 * grafted calls (on_rank's), each exit after its entry, their nodes
 * numbered in the order that path makes them, `tree` the rank's finished
 * tree. */
struct sp_stream_call;
typedef struct sp_report_call_hook {
    int (*rank_begin)(void *ctx, uint32_t rank);
    int (*call)(void *ctx, const struct sp_stream_call *call, const struct sp_report_tree *tree,
                int64_t node, int exit);
    int (*rank_end)(void *ctx, uint32_t rank);
    int (*rank_apart)(void *ctx, uint32_t rank); /* NULL: none (above) */
    void *ctx;
} sp_report_call_hook;

typedef struct sp_report_options {
    const sp_selection *selection; /* NULL: everything */
    int per_lane;             /* also build one tree per (rank, lane) */
    sp_report_sort sort;      /* flat table order */
    /* Called with every rank's kept calls once they are reconstructed, so a
     * caller can collect more per call (src/diff) without reconstructing
     * again; nonzero return = out of memory.  NULL: none. */
    int (*on_rank)(void *ctx, const sp_profile *profile, const sp_rank_data *data);
    void *on_rank_ctx;
    /* sp_report_build_stream: worker processes over the ranks (0, 1: none). */
    size_t jobs;
    /* sp_report_build_stream: ranks shared with other processes (above);
     * NULL: none.  Takes the place of jobs. */
    const sp_report_remote *remote;
    /* sp_report_build_stream: per-call hook (above); NULL: none.  With it,
     * on_rank is called for the ranks read in memory only. */
    const sp_report_call_hook *call_hook;
} sp_report_options;

typedef struct sp_report {
    const sp_profile *profile;
    size_t num_ranks;
    uint32_t *ranks;          /* selected ranks that have rows, ascending */
    uint64_t num_calls;       /* calls counted in the flat table */
    int64_t wall_ns;          /* -1 unknown */
    int has_tree;             /* 0 for aggregate profiles or no nested rank */
    sp_report_tree tree;      /* lanes and ranks merged */
    size_t num_lane_trees;
    sp_report_tree *lane_trees; /* per_lane: by rank; threads by index, then
                                   tasks by index, then the unknown lane */
    size_t num_flat;
    sp_report_flat_row *flat; /* sorted by options.sort */
    size_t num_cross;
    sp_report_cross_row *cross; /* num_ranks > 1 only; mean inclusive descending */
    size_t num_threads;
    sp_report_thread_row *threads;
    size_t num_tasks;
    sp_report_task_row *tasks;
    size_t num_warnings;
    sp_report_warning *warnings;
    /* per region (profile->num_names): first known source location */
    const char **source_file; /* NULL when unknown */
    int64_t *source_line;     /* -1 when unknown */
} sp_report;

/* Build the report.  Returns 0, or -1 with a one-line message in err (out of
 * memory).  Ranks that cannot be reconstructed are warnings, not errors.
 * `out` keeps pointers into `profile`: free the report first. */
int sp_report_build(const sp_profile *profile, const sp_report_options *options,
                    sp_report *out, char *err, size_t errlen);
void sp_report_free(sp_report *report);

/* The same report, byte for byte, from a run source (scopeprof/stream.h):
 * rank files read one rank at a time in windows, memory bounded by the
 * call paths (docs/stream.md).  Returns 0; 1 when this run or these options
 * need the in-memory path (sp_report_build on sp_load_run: what is not
 * streamed yet, and every file or rank with a problem, whose message that
 * path words) with the reason in why; -1 on failure (why set). */
struct sp_run_source;
int sp_report_build_stream(const struct sp_run_source *src, const sp_report_options *options,
                           sp_report *out, char *why, size_t whylen);

/* Re-sort the flat table. */
void sp_report_sort_flat(sp_report *report, sp_report_sort key);
/* "exclusive", "inclusive", "calls", "mean", "max", "name"; 0 or -1. */
int sp_report_parse_sort(const char *text, sp_report_sort *out);

/* Flat row of a region, or NULL. */
const sp_report_flat_row *sp_report_flat_find(const sp_report *report, uint32_t region);
/* Node reached from the roots by the region names of `path` ("a > b > c",
 * " > " separated), or -1. */
int64_t sp_report_tree_find(const sp_report_tree *tree, const sp_profile *profile,
                            const char *path);

/* ---- tree building blocks (also used by tests) --------------------------- */

int sp_report_tree_init(sp_report_tree *tree, uint32_t rank, int64_t lane);
void sp_report_tree_free(sp_report_tree *tree);
/* Add the calls of a reconstruction (those with lane == `lane` when lane is
 * not SP_REPORT_ALL_LANES and calls->lane is set).  0 or -1 (out of memory). */
/* As sp_report_tree_add_calls (all lanes), then the fork statistics of the
 * nodes of calls merged with their fork parent (sp_graft_info). */
int sp_report_tree_add_forks(sp_report_tree *tree, const sp_calls *calls,
                             const int64_t *fork_of, const int64_t *own_lane);
int sp_report_tree_add_calls(sp_report_tree *tree, const sp_calls *calls, int64_t lane);
/* Add every node of `from` under the same paths.  0 or -1. */
int sp_report_tree_merge(sp_report_tree *into, const sp_report_tree *from);
/* Compute first_root / first_child / next_sibling (inclusive descending,
 * first seen first on ties).  0 or -1. */
int sp_report_tree_order(sp_report_tree *tree);

/* ---- the run's time axis ------------------------------------------------ */

/* Nanoseconds to subtract from `rank`'s timestamps to put them on the run's
 * time axis: (rank's mpi_sync_init_ns - lowest such rank's mpi_sync_init_ns),
 * 0 when the rank or no other rank has a synchronisation point.  Every rank
 * reads CLOCK_MONOTONIC right after a barrier in MPI_Init, so the readings
 * mark one instant on every node's clock.
 *
 * Where the value of a rank is found, first match wins:
 *   metadata "mpi_sync_init_ns.rank<N>" (per-rank copy kept by a merge/load),
 *   metadata "mpi_sync_init_ns" when the profile is rank N's own file
 *   (metadata "mpi_rank" == N, or N is the profile's only rank).
 * Reusable by every exporter that puts several ranks on one time line. */
int64_t sp_rank_clock_offset(const sp_profile *profile, uint32_t rank);
/* The synchronisation reading of `rank` for `key` ("mpi_sync_init_ns" or
 * "mpi_sync_finalize_ns"); 0 and *out set when known, -1 otherwise. */
int sp_rank_sync_point(const sp_profile *profile, uint32_t rank, const char *key,
                       int64_t *out);

/* ---- MPI (report_mpi.c) -------------------------------------------------- *
 *
 * From the MPI calls the shim records as regions (docs/mpi.md), for the
 * selected ranks:
 *   mpi_ns        sum of the durations of the rank's MPI calls (polling
 *                 calls counted without events are not included);
 *   wall_ns       span of the rank's calls;
 *   wait_ns       late-arrival wait: for every blocking collective call,
 *                 its time minus the shortest time of the same call (the
 *                 k-th call of that function on that communicator) over
 *                 the ranks that made it, summed;
 *   last arrivals calls of which the rank had that shortest time: it
 *                 arrived last, everybody else waited for it. */
#define SP_REPORT_MPI_BINS 8

typedef struct sp_report_mpi_rank {
    uint32_t rank;
    uint64_t calls;
    int64_t mpi_ns, wall_ns, wait_ns;
    int64_t sent_bytes, recv_bytes;
} sp_report_mpi_rank;

typedef struct sp_report_mpi_call {
    uint32_t region;
    uint64_t calls;
    int64_t total_ns, wait_ns;
    int64_t sent_bytes, recv_bytes;
    int collective;           /* a blocking collective: wait is computed */
    uint32_t most_waiting_rank;   /* largest wait (collectives) */
    uint32_t last_arrival_rank;   /* most often the last to arrive */
} sp_report_mpi_call;

typedef struct sp_report_mpi {
    size_t num_ranks;
    sp_report_mpi_rank *ranks;     /* by rank, ascending */
    size_t num_calls;
    sp_report_mpi_call *calls;     /* by total time, descending */
    /* Point-to-point messages by size: bin b holds sizes up to
     * sp_report_mpi_bin_limit(b) (the last one: everything larger). */
    uint64_t p2p_messages[SP_REPORT_MPI_BINS];
    int64_t p2p_bytes[SP_REPORT_MPI_BINS];
    uint64_t collective_calls[SP_REPORT_MPI_BINS];
    /* Bytes sent from rank block i to rank block j (point-to-point), blocks
     * of block_size consecutive ranks so that at most 16 x 16 cells. */
    size_t matrix_blocks;
    uint32_t block_size;
    int64_t *matrix;               /* matrix_blocks * matrix_blocks */
} sp_report_mpi;

/* 0 (nothing filled: the profile has no MPI columns, *out zeroed), 1 (out
 * filled), -1 (out of memory). */
int sp_report_mpi_build(const sp_report *report, sp_report_mpi *out);
void sp_report_mpi_free(sp_report_mpi *mpi);
int64_t sp_report_mpi_bin_limit(int bin);
/* sp_report_mpi_build for a report sp_report_build_stream built on `src`
 * (its profile has no event columns): the rows' MPI columns read in windows
 * from the files.  0, 1 or -1 as sp_report_mpi_build; 2 when a file could
 * not be read that way or a collective row out of time order is too large
 * to sort (then build from the run in memory, which words any problem). */
struct sp_run_source;
int sp_report_mpi_build_stream(const sp_report *report, const struct sp_run_source *src,
                               sp_report_mpi *out);
/* The MPI row of a region, or NULL. */
const sp_report_mpi_call *sp_report_mpi_find(const sp_report_mpi *mpi, uint32_t region);

/* ---- units --------------------------------------------------------------- */

/* A duration with the unit chosen for its size: "999 ns", "1.23 µs",
 * "12.3 ms", "123 ms", "1.50 s", "4211 s"; "-" for a negative value.
 * Returns snprintf's length (bytes; "µ" is two bytes, one column). */
int sp_format_duration(int64_t ns, char *buf, size_t buflen);

#ifdef __cplusplus
}
#endif

#endif /* SCOPEPROF_REPORT_H */
