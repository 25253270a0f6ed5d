/* report_internal.h - pieces of sp_report_build shared between report_*.c. */
#ifndef SCOPEPROF_REPORT_INTERNAL_H
#define SCOPEPROF_REPORT_INTERNAL_H

#include "scopeprof/report.h"

/* One rank's numbers per region (exclusive -1 = unknown); only the regions
 * the rank touched are listed, so resetting costs what the rank used. */
typedef struct sp_rank_values {
    sp_report_flat_row *row;  /* num_names, indexed by region */
    unsigned char *seen;      /* num_names */
    uint32_t *touched;        /* regions with a row, in first-touch order */
    size_t num_touched;
} sp_rank_values;

/* Cross-rank accumulation, ranks fed in ascending order. */
typedef struct sp_cross_acc {
    sp_report_cross_row *row; /* num_names, indexed by region */
    double *calls_sum, *inclusive_sum, *exclusive_sum;
    unsigned char *exclusive_unknown;
    size_t num_names;
} sp_cross_acc;

int sp_cross_acc_init(sp_cross_acc *acc, size_t num_names);
void sp_cross_acc_free(sp_cross_acc *acc);
void sp_cross_acc_add_rank(sp_cross_acc *acc, uint32_t rank, const sp_rank_values *values);
/* The rows of regions seen on some rank, statistics over num_ranks ranks
 * (absent = 0), sorted by mean inclusive time descending.  0 or -1. */
int sp_cross_acc_finish(sp_cross_acc *acc, const sp_profile *profile, size_t num_ranks,
                        sp_report_cross_row **rows, size_t *count);

/* The rows of every rank: row indices sorted by rank, profile order within. */
typedef struct rank_index {
    size_t *rows;
    size_t num_rows;
} rank_index;

/* ---- the two steps of a report, and where a rank's tree comes from --------
 *
 * Per rank: "rank -> its path tree" (a source's rank_tree: in memory in
 * report.c, streamed in report_stream.c), then "add a rank's tree to the
 * run's report" (sp_report_add_rank).  Ranks are added in ascending order;
 * whoever computes the trees (threads, other processes) hands them over
 * through that seam. */
typedef struct sp_rank_result {
    uint32_t rank;
    int has_tree;
    sp_report_tree tree;      /* has_tree: the rank's calls by path, lanes merged */
    char *warning;            /* no tree: why (then the rows give its numbers) */
    /* No tree, from a stream: {total, minimum, maximum} of the durations of
     * each of the rank's rows (profile order) as its events give them, for
     * a skeleton without statistics; NULL: the profile's rows. */
    int64_t (*row_durations)[3];
    size_t num_rows;
} sp_rank_result;
void sp_rank_result_free(sp_rank_result *result);

typedef struct sp_report_source {
    /* 0 (out filled), or -1 with a message in err (the build fails). */
    int (*rank_tree)(void *ctx, sp_report *report, const sp_report_options *opt,
                     uint32_t rank, sp_rank_result *out, char *err, size_t errlen);
    /* Span of the selected ranks' calls (see run_wall in report.c), -1 unknown. */
    int64_t (*wall)(void *ctx, const sp_report *report, const sp_report_options *opt,
                    const rank_index *ix);
    /* Calls per thread index of a rank and its OpenMP busy time, as
     * report_lanes.c counts them from the columns; NULL: from the profile. */
    void (*thread_calls)(void *ctx, uint32_t rank, uint64_t *counts, int64_t *busy,
                         size_t num_counts);
    void *ctx;
} sp_report_source;

int sp_report_build_from(const sp_profile *profile, const sp_report_options *options,
                         const sp_report_source *source, sp_report *out, char *err,
                         size_t errlen);
/* Adds the rank's tree (or its rows, with the warning) to the report's
 * tree; *values receives the rank's numbers per region.  0 or -1 (memory). */
int sp_report_add_rank(sp_report *report, const sp_report_options *opt, const rank_index *ix,
                       sp_rank_result *result, sp_rank_values *values);

/* Tree node (parent, region), created if missing; -1 out of memory
 * (report_tree.c), and a call's numbers added to a node. */
int64_t sp_report_tree_node(sp_report_tree *tree, int64_t parent, uint32_t region);
void sp_report_node_add_call(sp_report_node *node, int64_t duration, int64_t exclusive);

/* ---- where the MPI tables read a row's events (report_mpi.c) -------------- */

/* A window of one row's events; comm NULL: no communicator column (0). */
typedef struct sp_mpi_window {
    size_t n;
    const int64_t *start, *end;               /* on the file's clock */
    const int64_t *sent, *recv, *peer, *comm; /* unsorted windows: all four; sorted: comm */
} sp_mpi_window;

typedef struct sp_mpi_rows {
    /* Start reading profile row r: in file order, or (sorted) in start
     * order as a stable sort gives it.  0 or -1. */
    int (*begin)(void *ctx, size_t row, int sorted);
    /* The next window of that row: 1, 0 at its end, -1 failure. */
    int (*next)(void *ctx, sp_mpi_window *w);
    /* Earliest start and latest end of row r's events (count > 0).  0 or -1. */
    int (*span)(void *ctx, size_t row, int64_t *lo, int64_t *hi);
    void *ctx;
} sp_mpi_rows;

/* sp_report_mpi_build on any source of rows (report->profile gives the
 * rows, names and ranks; its event columns are not read).  1, or -1 (out
 * of memory or the source failed). */
int sp_report_mpi_build_from(const sp_report *report, const sp_mpi_rows *src,
                             sp_report_mpi *out);

/* --lanes (bare): one tree per lane of a rank.  From a rank's kept calls
 * (in memory), or from trees built elsewhere (the stream: trees[k] holds
 * lane trees[k].lane's calls, nodes in the order add_calls creates them),
 * which the report takes over (sorted in reading order, ordered, appended;
 * freed on failure).  0 or -1 (out of memory). */
int sp_report_add_lane_trees(sp_report *report, uint32_t rank, const sp_calls *calls);
int sp_report_take_lane_trees(sp_report *report, sp_report_tree *trees, size_t n);

/* Thread and task tables of the selected ranks.  0 or -1 (out of memory). */
int sp_report_lane_tables(sp_report *report, const sp_profile *profile,
                          const sp_selection *selection, const sp_report_source *source);

#endif
