/* scopeprof/diff.h - comparing runs (`scopeprof diff`, `check`,
 * `flame --diff`).
 *
 * One run (its rank files, a directory of them, or a merged file) becomes an
 * sp_run_stats: per call path ("main > solve > assemble", ranks and threads
 * merged) or, by name, per region: calls, total and own time, the spread of
 * the per-call durations and a bounded sample of them (percentiles), and the
 * largest per-rank total (imbalance).  Two sides of one or more runs each
 * are matched key by key into an sp_diff: the metric on each side (mean over
 * the side's runs), the change, and a 90 % confidence interval of the change
 * estimated from what the runs contain (docs/compare.md):
 *   - per-call spread: the calls of a region are samples, so the standard
 *     error of its total is sqrt(calls) x sd(duration) (of its mean:
 *     sd / sqrt(calls); of a percentile: from the order statistics);
 *   - run-to-run spread: with two or more runs on a side, the sample
 *     variance of the per-run values (Student's t with their degrees of
 *     freedom);
 *   - delay noise: a time of T ns in a run varies by at least
 *     sqrt(noise_rate x T) and by delay_share x T (see sp_run_stats), which
 *     gives a path of one call per run a spread, and a floor to every time;
 * the larger of the estimates is used on each side (a run-to-run estimate
 * from two or three runs can be accidentally tiny: two runs that were not
 * interrupted agree to the nanosecond). */
#ifndef SCOPEPROF_DIFF_H
#define SCOPEPROF_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scopeprof/analysis.h"
#include "scopeprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sp_metric {
    SP_METRIC_TOTAL = 0, /* sum of the call durations (inclusive), ns */
    SP_METRIC_OWN,       /* sum of the exclusive times, ns */
    SP_METRIC_MEAN,      /* total / calls, ns */
    SP_METRIC_CALLS,     /* number of calls */
    SP_METRIC_P50,       /* median call duration, ns */
    SP_METRIC_P95,       /* 95th percentile of the call durations, ns */
    SP_METRIC_IMBALANCE, /* largest per-rank total / mean per-rank total */
    SP_METRIC_P99,       /* 99th percentile of the call durations, ns */
    SP_METRIC_MIN,       /* shortest call, ns */
    SP_METRIC_MAX        /* longest call, ns */
} sp_metric;

/* "total", "own", "mean", "calls", "p50", "p95", "imbalance", and the Python
 * package's "avg" (= mean), "p99", "min", "max"; also "exclusive" (= own).
 * 0 or -1. */
int sp_metric_parse(const char *text, sp_metric *out);
const char *sp_metric_name(sp_metric metric);
/* Is the metric a duration in ns (else a count or a ratio)? */
int sp_metric_is_time(sp_metric metric);

/* Percentiles come from at most this many calls per key (a uniform random
 * sample, reproducible: the generator is seeded by the key). */
#define SP_DIFF_SAMPLE_CAP 65536
/* Calls needed to estimate a run's delay noise (noise_rate below). */
#define SP_DIFF_MIN_NOISE_CALLS 30

typedef struct sp_key_stats {
    char *key;                /* call path "a > b > c", or the region name */
    const char *name;         /* last element of the path (points into key) */
    uint32_t depth;           /* path elements - 1 (0 by name) */
    uint64_t calls;
    double total, own;        /* ns */
    /* Welford accumulators of the call durations and exclusive times */
    double mean_incl, m2_incl, mean_own, m2_own;
    double rank_max;          /* largest per-rank total, ns */
    int64_t minimum, maximum; /* shortest and longest call, ns */
    int64_t *samples;         /* sorted durations, num_samples of them */
    size_t num_samples;
    int64_t parent;           /* index of the parent path in keys; -1 root or by name */
} sp_key_stats;

typedef struct sp_run_stats {
    char *description;        /* the inputs as given, for headers */
    size_t num_files;         /* files read */
    char *label;              /* metadata label, or NULL */
    size_t num_ranks;         /* selected ranks with rows */
    uint32_t *ranks;          /* ascending */
    size_t num_threads;       /* thread-table rows of those ranks; 0 = no table */
    int64_t wall_ns;          /* -1 unknown */
    uint64_t num_calls;
    size_t num_keys;
    sp_key_stats *keys;       /* sorted by key (strcmp) */
    size_t num_warnings;      /* ranks left out (not properly nested) */
    char **warnings;
    /* Delay noise of the run: sum over the calls of (duration - median of
     * their path)^2, per ns of those calls' duration (paths of >= 2 calls).
     * A machine's interruptions arrive over time, so a span of T ns carries
     * a variance of about noise_rate x T: the spread of a path with one
     * call per run.  NAN when the paths of two calls or more hold fewer
     * than SP_DIFF_MIN_NOISE_CALLS calls. */
    double noise_rate;
    /* Share of the calls' time lost to delays: sum of (duration - median of
     * their path) over the calls above it, per ns of those calls (same
     * paths).  How much a machine interrupts a program changes from run to
     * run, so a time T of this run is uncertain by at least delay_share x T.
     * NAN like noise_rate. */
    double delay_share;
    /* How it was read: streamed rank by rank in bounded memory, or in
     * memory with the reason (docs/stream.md); for traces and tests. */
    int streamed;
    char path_note[512];
} sp_run_stats;

/* The files of one run named by `input`: a file; a directory (its *.h5
 * files, sorted) or @LIST (as sp_run_inputs_expand); a glob pattern (quoted on the shell); or an output prefix
 * P of rank files P_rank*.h5.  *paths is malloc'd (free each and the array).
 * 0, or -1 with a one-line message in err. */
int sp_run_inputs(const char *input, char ***paths, size_t *count, char *err, size_t errlen);

/* Read one run and compute its statistics (selection as everywhere; by_name
 * keys by region name instead of call path).  0, or -1 with a one-line
 * message in err (unreadable file, aggregate layout: no calls to compare). */
int sp_run_stats_load(const char *input, const sp_selection *sel, int by_name,
                      sp_run_stats *out, char *err, size_t errlen);
/* The same, choosing the path: SP_RUN_STATS_STREAM streams the run when it
 * can (bounded memory: the distinct call paths and the percentile samples)
 * and reads it in memory otherwise; SP_RUN_STATS_IN_MEMORY always reads it
 * in memory.  Both give the same statistics, bit for bit. */
typedef enum sp_run_stats_path { SP_RUN_STATS_STREAM = 0, SP_RUN_STATS_IN_MEMORY } sp_run_stats_path;
int sp_run_stats_load_how(const char *input, const sp_selection *sel, int by_name,
                          sp_run_stats_path how, sp_run_stats *out, char *err, size_t errlen);
void sp_run_stats_free(sp_run_stats *run);
/* Key of `run`, or NULL. */
const sp_key_stats *sp_run_stats_find(const sp_run_stats *run, const char *key);

/* The metric of one key in one run, and its standard error from the spread
 * of the run's calls and its delay noise (0 for calls, NAN when it cannot be
 * estimated: imbalance; min and max of several calls; one call in a run
 * without a path of two calls). */
double sp_key_metric(const sp_run_stats *run, const sp_key_stats *key, sp_metric metric);
double sp_key_metric_se(const sp_run_stats *run, const sp_key_stats *key, sp_metric metric);

/* ---- two sides matched --------------------------------------------------- */

typedef enum sp_diff_status {
    SP_DIFF_BOTH = 0,         /* in both sides */
    SP_DIFF_NEW,              /* only in B */
    SP_DIFF_REMOVED           /* only in A */
} sp_diff_status;

/* Where the confidence interval's spread came from. */
typedef enum sp_diff_noise {
    SP_NOISE_NONE = 0,        /* not estimable: interval NAN */
    SP_NOISE_CALLS,           /* per-call spread */
    SP_NOISE_RUNS             /* run-to-run spread (repetitions) */
} sp_diff_noise;

typedef struct sp_diff_row {
    const char *key;          /* points into a side's run stats */
    const char *name;
    uint32_t depth;
    sp_diff_status status;
    double a, b;              /* metric, mean over the side's runs (0 when absent) */
    double delta;             /* b - a */
    double pct;               /* 100 (b - a) / a; NAN when a == 0 */
    double pct_low, pct_high; /* 90 % interval of pct; NAN when not estimable */
    sp_diff_noise noise;
    uint64_t calls_a, calls_b;/* summed over the side's runs */
    int flagged;              /* set by sp_diff_judge */
} sp_diff_row;

typedef enum sp_diff_sort {
    SP_DIFF_SORT_DELTA = 0,   /* |delta| descending */
    SP_DIFF_SORT_PCT,         /* |pct| descending, new/removed first */
    SP_DIFF_SORT_NAME         /* by key */
} sp_diff_sort;

typedef struct sp_diff {
    sp_metric metric;
    int by_name;
    size_t num_a, num_b;      /* runs per side */
    const sp_run_stats *a, *b;
    size_t num_rows;
    sp_diff_row *rows;
} sp_diff;

/* Match the keys of the runs of side A and of side B.  The run arrays must
 * outlive the diff.  0, or -1 (out of memory, err set). */
int sp_diff_build(const sp_run_stats *a, size_t num_a, const sp_run_stats *b, size_t num_b,
                  sp_metric metric, sp_diff *out, char *err, size_t errlen);
void sp_diff_free(sp_diff *diff);
void sp_diff_sort_rows(sp_diff *diff, sp_diff_sort key);
/* "delta", "pct", "name"; 0 or -1. */
int sp_diff_parse_sort(const char *text, sp_diff_sort *out);

/* The regression gate: set `flagged` on each row in both sides whose change
 * exceeds max_pct and, unless ignore_noise, whose whole interval lies above
 * max_pct (a row whose noise cannot be estimated is then not flagged); with
 * fail_on_new also on new rows.  Returns the number flagged. */
size_t sp_diff_judge(sp_diff *diff, double max_pct, int fail_on_new, int ignore_noise);

/* One-sided 95 % quantile of Student's t (df <= 0: the normal's 1.645). */
double sp_t95(double df);

/* ---- output ---------------------------------------------------------------- */

typedef struct sp_diff_output {
    double threshold;         /* hide rows in both sides with |pct| below it */
    const char *command;      /* "diff" or "check", in the JSON document */
    int color;                /* text only */
    int gate;                 /* check: the gate's verdict columns */
    double max_pct;           /* check */
} sp_diff_output;

/* Rows shown by the threshold (new/removed always). */
int sp_diff_row_shown(const sp_diff_row *row, double threshold);
/* Notes about the comparison (different rank counts, left-out ranks...),
 * one line each, through `note`. */
void sp_diff_notes(const sp_diff *diff, void (*note)(void *ctx, const char *line), void *ctx);

int sp_diff_write_text(FILE *out, const sp_diff *diff, const sp_diff_output *opt);
int sp_diff_write_json(FILE *out, const sp_diff *diff, const sp_diff_output *opt);
int sp_diff_write_csv(FILE *out, const sp_diff *diff, const sp_diff_output *opt);

/* ---- differential flame graph ---------------------------------------------- */

/* Width from B, colour from the change of each frame's own time between the
 * mean of A's runs and the mean of B's (red slower, blue faster), both
 * runs' numbers in the tooltip.  Frames only in A are listed in a line under
 * the title.  0 or -1 (err set). */
int sp_flame_diff_svg(FILE *out, const sp_run_stats *a, size_t num_a, const sp_run_stats *b,
                      size_t num_b, const char *title, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* SCOPEPROF_DIFF_H */
