/* html_model.h - everything the HTML report shows about one run, computed
 * in C so the page only draws: the report tables of sp_report_build, the
 * call tree by call path with min/max/p95 per node, per-rank times per
 * region (load-balance heatmap), the share of time inside regions, and the
 * timeline's level-of-detail pyramid (html_timeline.c). */
#ifndef SP_HTML_MODEL_H
#define SP_HTML_MODEL_H

#include <stdint.h>
#include <stdio.h>

#include "scopeprof/analysis.h"
#include "scopeprof/export.h"
#include "scopeprof/report.h"

/* ---- timeline level of detail ------------------------------------------- */

/* Calls deeper than this are not drawn on the timeline (the call tree and
 * the flame graph keep them). */
#define HTML_TL_MAX_DEPTH 48
#define HTML_TL_MAX_LEVELS 12
#define HTML_TL_LEVEL0_BINS 2048

/* One pre-aggregated cell: the calls of one (lane, depth) shorter than two
 * bins of its level that fall in one bin. */
typedef struct html_bin {
    uint64_t bin;
    uint32_t depth, region;   /* region: the longest contribution */
    uint32_t calls;
    int64_t covered_ns;       /* time covered by those calls inside the bin */
    int64_t best_ns;          /* of `region` (internal) */
} html_bin;

typedef struct html_bins {
    html_bin *v;
    size_t n, cap;
} html_bins;

/* A call drawn one by one (long enough at every level that shows it). */
typedef struct html_exact {
    int64_t start, dur;       /* start relative to the run origin */
    uint32_t depth, region;
} html_exact;

typedef struct html_tl_lane {
    uint32_t rank;
    int64_t lane;
    char *label;
    uint32_t max_depth;       /* drawn levels - 1 */
    html_bins bins[HTML_TL_MAX_LEVELS];
    html_bin open[HTML_TL_MAX_LEVELS][HTML_TL_MAX_DEPTH]; /* bins being filled */
    html_exact *exact;
    size_t num_exact, cap_exact;
} html_tl_lane;

typedef struct html_timeline {
    int64_t origin;           /* start of the timeline (ns); times are relative to it */
    int64_t offset;           /* origin - run start (hover times count from the run start) */
    int64_t span;             /* ns from origin to the last call end */
    int num_levels;           /* levels kept (coarsest first) */
    double width[HTML_TL_MAX_LEVELS]; /* bin width of each level, ns */
    size_t bin_budget, exact_budget;
    size_t num_lanes, cap_lanes;
    html_tl_lane **lanes;
    uint64_t exact_total;     /* exact calls kept over all lanes */
    size_t bins_total;        /* bins kept over all lanes and levels */
    int failed;
} html_timeline;

int html_timeline_init(html_timeline *tl, int64_t origin, int64_t offset, int64_t span,
                       size_t bin_budget, size_t exact_budget);
/* Add the calls of one lane walk of one rank (clock offset applied by the
 * caller through `shift`, subtracted from every timestamp). */
int html_timeline_add_rank(html_timeline *tl, const sp_profile *profile, uint32_t rank,
                           const sp_calls *calls, const sp_lane_walk *walk, int64_t shift);
/* The same, call by call (html_model_stream.c): a lane of `rank` made at
 * its first call (labelled: the run has thread ids); each lane's calls in
 * start order, times on the run's axis, depth among the kept calls; once
 * the rank has streamed, its lanes put in band order and finished. */
html_tl_lane *html_timeline_lane(html_timeline *tl, const sp_profile *profile, uint32_t rank,
                                 int64_t lane, int labelled);
int html_timeline_call(html_timeline *tl, html_tl_lane *l, int64_t start, int64_t end,
                       uint32_t depth, uint32_t region);
int html_timeline_end_rank(html_timeline *tl, size_t first_lane);
void html_timeline_free(html_timeline *tl);
void html_timeline_json(sp_json *j, const html_timeline *tl);

/* ---- one run ------------------------------------------------------------ */

typedef struct html_tree_stats {
    int64_t minimum, maximum, p95;
} html_tree_stats;

typedef struct html_run {
    const sp_profile *profile;
    const char *const *files;
    size_t num_files;
    sp_report report;         /* the terminal report's numbers */
    sp_path_tree tree;        /* call paths over the selected ranks and lanes */
    html_tree_stats *stats;   /* per tree node */
    int64_t *rank_region_ns;  /* [rank index * num_names + region]: inclusive,
                                 recursion once; -1 unknown */
    int64_t *rank_wall_ns;    /* per rank index: run start to its last call end */
    int64_t *rank_covered_ns; /* per rank index: time with a call open on any lane */
    double inside_share;      /* sum covered / sum wall; -1 unknown */
    uint64_t tree_calls;
    html_timeline timeline;
    int has_timeline;
} html_run;

/* About 12 bytes of JSON per bin and 16 per single call: with these the
 * timeline stays under ~19 MiB however many calls the run has. */
#define HTML_DEFAULT_BIN_BUDGET 1200000
#define HTML_DEFAULT_EXACT_BUDGET 250000

typedef struct html_options {
    const sp_selection *selection;
    size_t bin_budget, exact_budget; /* timeline; 0 = defaults */
} html_options;

int html_run_build(html_run *run, const sp_profile *profile, const char *const *files,
                   size_t num_files, const html_options *options, char *err, size_t errlen);
/* The same model from a run source, each rank streamed (html_model_stream.c):
 * 0; 1 when this run needs html_run_build on the loaded run (why set); -1. */
struct sp_run_source;
int html_run_build_stream(html_run *run, const struct sp_run_source *src,
                          const char *const *files, size_t num_files,
                          const html_options *options, char *why, size_t whylen);
/* The 1-based rank of the p95 among n sorted durations (nearest rank). */
size_t html_p95_rank(size_t n);
void html_run_free(html_run *run);

/* ---- page pieces -------------------------------------------------------- */

/* JSON string safe inside <script>: '<', '>', '&' escaped, invalid UTF-8
 * replaced by U+FFFD. */
void html_json_string(sp_json *j, const char *s);
/* Text escaped for HTML element content and attributes. */
void html_text(FILE *out, const char *s);
/* Colour of a region (as `scopeprof flame`): "#rrggbb". */
void html_region_colour(const char *name, char out[8]);

/* The run's JSON (everything the script draws). */
void html_run_json(sp_json *j, const html_run *run);
/* Findings worth acting on, as text lines (at most `max`); returns count.
 * Each line is malloc'd. */
size_t html_findings(const html_run *run, char **lines, size_t max);
/* Comparison of runs[1..] against runs[0]: JSON and static table. */
void html_compare_json(sp_json *j, const html_run *runs, size_t num_runs);
void html_compare_table(FILE *out, const html_run *runs, size_t num_runs);



/* Thread kind for the Threads section: main, OpenMP, daemon, thread. */
const char *html_thread_kind(const sp_profile *profile, const sp_report_thread_row *t);
/* MPI section (html_mpi.c). */
int html_is_mpi_region(const char *name);
double html_mpi_share(const html_run *run);
void html_mpi_json(sp_json *j, const html_run *run);
/* Hotspots (html_findings.c): tree nodes by exclusive time, descending. */
size_t html_hotspots(const html_run *run, int64_t *out, size_t max);
int64_t html_total_exclusive(const html_run *run);
const sp_report_cross_row *html_worst_imbalance(const html_run *run);

#endif /* SP_HTML_MODEL_H */
