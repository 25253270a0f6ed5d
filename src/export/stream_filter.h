/* stream_filter.h - what the streamed exporters share (docs/stream.md,
 * "Exports"): the selection's per-call filter applied to a call stream the
 * way rank_calls.c applies it to a loaded rank, and the checks the
 * in-memory reader makes of the ranks an export does not write. */
#ifndef SP_EXPORT_STREAM_FILTER_H
#define SP_EXPORT_STREAM_FILTER_H

#include "scopeprof/analysis.h"
#include "scopeprof/stream.h"

typedef struct sp_lane_choice {
    int64_t lane;
    int keep;
} sp_lane_choice;

typedef struct sp_stream_filter {
    const sp_selection *sel;
    const sp_profile *profile;   /* the run source's skeleton */
    unsigned char *region_keep;
    int64_t from, to, min_duration;
    uint32_t rank;               /* the rank being streamed (sp_stream_filter_rank) */
    sp_lane_choice *choices;     /* --lanes=LIST, decided once per lane of the rank */
    size_t num_choices;
} sp_stream_filter;

/* 0; 1 when the selection needs what a run source cannot give (--from/--to
 * without metadata start_time_ns on files with events outside every row:
 * sp_run_source_origin), with why set; -1 out of memory. */
int sp_stream_filter_init(sp_stream_filter *f, const sp_run_source *src, const sp_selection *sel,
                          char *why, size_t whylen);
void sp_stream_filter_rank(sp_stream_filter *f, uint32_t rank);
int sp_stream_filter_keeps(sp_stream_filter *f, const sp_stream_call *call);
void sp_stream_filter_free(sp_stream_filter *f);

/* The file holding `rank`'s rows, or -1 (no rows). */
long sp_stream_rank_file(const sp_run_source *src, uint32_t rank);

/* The in-memory reader checks every rank of every file, and the fork parent
 * ids of the files that have them (the stream does not read those): so do
 * the streamed exports, for the files with fork edges (their call and fork
 * parent ids read in windows: sp_stream_check_fork_ids, one bit per call)
 * and the ranks outside `selected` (streamed, nothing
 * kept; their calls may cross, as the reader lets them: the exporters do
 * not reconstruct those ranks).  first_start (NULL: not wanted) gets the earliest raw start of
 * those ranks' events when it is earlier.  0, or 1 (why set: export in
 * memory, which words the problem). */
int sp_stream_check_run(const sp_run_source *src, const uint32_t *selected, long num_selected,
                        int64_t *first_start, char *why, size_t whylen);

/* A streamed export gave up on a rank whose calls do not nest: the line
 * the in-memory path prints then, found on the stream, without loading the
 * run.  That path reads every file first (sp_load_run: the reader's checks
 * of every rank, fork parent ids, the columns above), then reconstructs
 * the selected ranks in ascending order and fails on the first whose calls
 * do not nest: "FILE: rank N: <the reconstruction's message>".  So every
 * rank is streamed once here with the reader's checks (crossings allowed:
 * sp_stream_options.rows_on_crossing), the selected ones with their clock
 * offset so the words are the reconstruction's.  0 (err holds the
 * message, *rank the rank); 1 when the in-memory path must word it (a
 * problem before or elsewhere, no such rank, words the stream cannot
 * vouch for), why set; -1 out of memory. */
int sp_stream_nesting_error(const sp_run_source *src, const sp_selection *sel, uint32_t *rank,
                            char *err, size_t errlen);

/* row_of_region (the skeleton's num_names entries): the skeleton's row of
 * each region for `rank`, -1 none (what sp_rank_data_row gives in memory:
 * the run has one row per rank and region). */
void sp_stream_rows_of_rank(const sp_profile *skeleton, uint32_t rank, int64_t *row_of_region);

/* A rank of a file with fork edges, grafted as the in-memory exporters
 * graft it: the stream does not graft, so the rank's file alone is read
 * into memory (with the reader's checks; memory of one file, whatever the
 * number of files), then given the run's terms: region ids and
 * row_of_region of the skeleton (sp_rank_data_row(src->profile, data, i)).
 * The file alone must read as it does within the run: not with
 * --from/--to (the run's origin) nor with columns other files lack.
 * 0 (free *full and *data), 1 (why), -1 out of memory. */
int sp_stream_rank_grafted(const sp_run_source *src, const sp_selection *sel, uint32_t rank,
                           long file, sp_profile **full, sp_rank_data *data, char *why,
                           size_t whylen);

#endif
