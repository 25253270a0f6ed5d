/* stream_calls.h - what the streamed chrome, speedscope and csv exports
 * share (docs/stream.md, "Exports"): the run's setup (checks, selection,
 * ranks), the lanes a first pass learns, the kept calls still open on each
 * lane, and a spill file for values known only at a call's exit.
 *
 * Every streamed export first streams every selected rank once without
 * writing (learning what the output needs before the calls, and making the
 * reader's checks), then writes: a problem is found before the first byte,
 * so the export can stream to standard output too. */
#ifndef SP_EXPORT_STREAM_CALLS_H
#define SP_EXPORT_STREAM_CALLS_H

#include <stdint.h>
#include <stdio.h>

#include "scopeprof/export.h"
#include "scopeprof/stream.h"
#include "stream_filter.h"

/* ---- the run -------------------------------------------------------------- */

typedef struct sx_run {
    const sp_run_source *src;
    const sp_profile *profile;   /* the skeleton */
    sp_stream_filter filter;
    int filter_ready;
    uint32_t *ranks;             /* selected, ascending */
    long num_ranks;
    int64_t *row_of_region;      /* the rank being streamed: region -> skeleton row, -1 */
    int64_t raw_first;           /* earliest raw start of the ranks streamed so far
                                    (INT64_MAX: none) */
    int read_mpi;                /* passes hand each call its MPI columns
                                    (sp_stream_rank_mpi) */
} sx_run;

/* The checks every streamed export makes before reading calls: a run the
 * stream takes (reads_mpi: a format that shows MPI columns, which the
 * stream does not read, takes no run that has them), the selection's
 * filter, the selected ranks, the reader's checks of the ranks not
 * selected and of the files with fork edges.
 * 0; 1 (export in memory: why); -1 out of memory. */
int sx_run_begin(sx_run *run, const sp_run_source *src, const sp_export_options *options,
                 int reads_mpi, char *why, size_t whylen);
/* The same for one share of a distributed export: check_others 0 leaves
 * the checks of the ranks not selected and of the fork-edge files to the
 * process that makes them for the whole run (process 0). */
int sx_run_begin_share(sx_run *run, const sp_run_source *src, const sp_export_options *options,
                       int reads_mpi, int check_others, char *why, size_t whylen);
void sx_run_end(sx_run *run);
/* Prepare the filter and the row lookup for `rank`. */
void sx_run_rank(sx_run *run, uint32_t rank);
/* The skeleton row of (current rank, region), or NULL. */
const sp_row *sx_run_row(const sx_run *run, uint32_t region);
/* One pass over `rank` (clock offset applied; raw_first updated).  0, 1
 * (why), -1 (visitor). */
int sx_run_pass(sx_run *run, uint32_t rank, const sp_call_visitor *visitor, char *why,
                size_t whylen);
/* Does a file of the run have the column (SP_H5_COL_*)? */
int sx_run_any_column(const sx_run *run, int col);
int sx_run_any_await(const sx_run *run);

/* The call id the in-memory path gives a call (rank_calls.c): the stored
 * one when the run has parent ids and the file call ids, else its position
 * among all of the rank's calls (`position`: enters counted). */
int64_t sx_call_id(const sx_run *run, const sp_stream_call *call, int64_t position);

/* ---- lanes learnt by a first pass ----------------------------------------- */

typedef struct sx_lane {
    int64_t lane;
    int64_t first_start, last_end;  /* of the kept calls */
    uint64_t calls;
} sx_lane;

typedef struct sx_lanes {
    sx_lane *v;                  /* ascending lane id */
    size_t n, cap;
} sx_lanes;

/* Count a kept call on its lane.  0, -1 out of memory. */
int sx_lanes_note(sx_lanes *lanes, const sp_stream_call *call);
void sx_lanes_free(sx_lanes *lanes);

/* ---- kept calls still open, per lane -------------------------------------- */

typedef struct sx_open {
    int64_t ordinal;             /* the visitor's user word */
    int64_t call_id;
    uint32_t region;
} sx_open;

typedef struct sx_stack {
    int64_t lane;
    sx_open *open;
    size_t depth, cap;
} sx_stack;

typedef struct sx_stacks {
    sx_stack *v;
    size_t n, cap, last;
} sx_stacks;

typedef int (*sx_close_fn)(void *ctx, const sx_open *call);

/* The stack of `lane` once the calls above the kept parent (its ordinal,
 * -1 none) are closed, innermost first, through `close` (NULL: silently):
 * the stream closes exactly those before this call starts.  NULL on
 * failure (out of memory, or close failed). */
sx_stack *sx_stacks_enter(sx_stacks *s, int64_t lane, int64_t parent, sx_close_fn close,
                          void *ctx);
int sx_stack_push(sx_stack *stack, const sx_open *call);
/* Close what is open on every lane (end of a rank). */
int sx_stacks_close_all(sx_stacks *s, sx_close_fn close, void *ctx);
void sx_stacks_free(sx_stacks *s);

/* ---- a spill file of one int64 per kept call ------------------------------ *
 * Values known at a call's exit, read back in the order of the enters.  The
 * calls' ordinals mostly exit in order: a window in memory is written out
 * once a later one is set; the calls still open then are patched in place
 * when they exit.  The file is unlinked at once ($TMPDIR, else /tmp). */
typedef struct sx_spill {
    int fd;
    int64_t *buf;
    size_t cap;
    uint64_t base, end;          /* the window [base, base + cap); values set below end */
    uint64_t read_at;            /* reading back: ordinal of buf[0] */
    size_t loaded, at;
    int failed;
} sx_spill;

int sx_spill_open(sx_spill *s);                     /* 0, -1 */
void sx_spill_set(sx_spill *s, uint64_t ordinal, int64_t value);
int sx_spill_finish(sx_spill *s);                   /* write out: 0, -1 */
/* Values in ordinal order from 0, after finish. */
int sx_spill_next(sx_spill *s, int64_t *value);     /* 0, -1 */
void sx_spill_close(sx_spill *s);

#endif
