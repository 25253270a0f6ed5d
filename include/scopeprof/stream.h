/* scopeprof/stream.h - a run's calls in bounded memory (docs/stream.md).
 *
 * A run source holds what every rank file says about itself except its
 * event columns: names, rows, thread and task tables, metadata (a skeleton
 * sp_profile, rows in sp_load_run's order).  sp_stream_rank then reads one
 * rank's event columns in chunk-aligned windows and reconstructs every lane
 * with a stack of open calls, handing each call to a visitor in the order
 * the in-memory reconstruction lists them (start ascending, longer first,
 * file order on ties; spec §5.2).  Memory: a few windows per run of sorted
 * calls, the open calls, and what the visitor keeps. */
#ifndef SCOPEPROF_STREAM_H
#define SCOPEPROF_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "scopeprof/analysis.h"
#include "scopeprof/h5.h"
#include "scopeprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sp_run_source {
    sp_profile *profile;      /* skeleton: no event columns, num_events 0 */
    char **paths;
    size_t num_paths;
    sp_h5_event_shape *shapes; /* per path */
    size_t *row_file;         /* per row of profile: index into paths */
    /* Columns some file of the run has: the in-memory path reads the run as
     * one profile, where the others' calls get the missing value (-1). */
    int any_thread, any_task, any_parent;
    /* The columns no pass reads whole (await_ns, events/mpi_*) are read
     * once at open, as the in-memory reader reads every column: "" when
     * they all read, else "events/NAME does not read" (the streamed
     * commands then take the in-memory path, which words the problem). */
    char unreadable[96];
    /* MPI columns (bit 1 << SP_EXTRA_*) the caller reads itself, left out of
     * that read at open (sp_run_source_open_deferring), and the values its
     * reads covered, per file and column (sp_run_source_covered). */
    unsigned deferred;
    struct sp_run_cover *cover;
} sp_run_source;

/* Files as sp_load_run takes them.  0, or -1 with a one-line message. */
int sp_run_source_open(sp_run_source *src, const char *const *args, size_t count, char *err,
                       size_t errlen);
void sp_run_source_close(sp_run_source *src);
/* sp_run_source_open, but the MPI columns in `deferred` (bits 1 << SP_EXTRA_*)
 * are not read at open: the caller reads them (the report's MPI tables),
 * records each read that succeeded with sp_run_source_covered, and then
 * calls sp_run_source_check_deferred, which reads every value no record
 * covers (other rows, ranks --ranks leaves out), so every value is read
 * once as the in-memory reader reads it.  Until then `unreadable` does not
 * speak for those columns. */
int sp_run_source_open_deferring(sp_run_source *src, const char *const *args, size_t count,
                                 unsigned deferred, char *err, size_t errlen);
/* Values [at, at + n) of MPI column `extra` of file `file` read (the record
 * lives behind src->cover, so a const source takes it). */
void sp_run_source_covered(const sp_run_source *src, size_t file, int extra, uint64_t at,
                           size_t n);
/* Read what the records left of the deferred columns.  0 when every value
 * of every checked column reads, else -1 with `unreadable` set. */
int sp_run_source_check_deferred(sp_run_source *src);
/* Why this run cannot be analysed by streaming (aggregate layout, MPI
 * columns, two rows for one rank and region, an unreadable column), or
 * NULL when it can.  Fork edges (events/fork_parent_ids) are the caller's
 * business: sp_stream_rank does not read them. */
const char *sp_run_source_unstreamable(const sp_run_source *src);
/* The same with MPI columns allowed, for a caller that reads them itself
 * (the report's MPI tables, report_mpi_stream.c). */
const char *sp_run_source_unstreamable_calls(const sp_run_source *src);

/* The run's origin as the in-memory run has it (sp_profile_origin_ns), for
 * --from/--to: metadata start_time_ns, else the earliest start of any event
 * of any file, from the rows' start_minimum (which the stream checks
 * against the events; every rank is streamed, --ranks or not) or, for a
 * file without row statistics, one read of its start column.  0, or 1
 * with why when the files do not give it that way (events outside every
 * row, a start column that does not read). */
int sp_run_source_origin(const sp_run_source *src, int64_t *origin, char *why, size_t whylen);

/* A rank whose file has fork edges, read from that file alone into memory
 * (the streamed commands graft such ranks this way, one file at a time):
 * *full is the file, *data the rank's calls with the selection applied.
 * Refused (1, why set) when the file would not read as it does within the
 * run: a time window (the run's origin), or lane columns other files have
 * and this one lacks.  0, 1; on 0 free both. */
int sp_run_source_rank_alone(const sp_run_source *src, uint32_t rank, long file,
                             const sp_selection *sel, int window, sp_profile **full,
                             sp_rank_data *data, char *why, size_t whylen);
/* Give data's calls the run's region ids (the skeleton interned every name
 * in the run's order).  0, or -1 out of memory. */
int sp_run_source_run_regions(const sp_run_source *src, const sp_profile *full,
                              sp_rank_data *data);

typedef struct sp_stream_call {
    uint32_t region;          /* index into the skeleton's names */
    uint32_t depth;           /* on its lane, every call counted */
    int64_t lane;             /* -1 without lane columns */
    int64_t select_lane;      /* the lane --lanes=LIST judges (rank_calls.c: tasks
                                 count even where no file has thread ids) */
    uint64_t call_index;      /* position in its (rank, region) row */
    int64_t start, end;       /* on the run's time axis (clock offset applied) */
    int64_t exclusive;        /* on exit: duration minus the kept children's */
    int64_t call_id;          /* the file's stored call id, -1 when it has none */
    /* sp_stream_rank_mpi, during enter only: the call's MPI columns
     * (SP_EXTRA_N values, -1 where they do not apply); else NULL */
    const int64_t *mpi;
    /* sp_stream_rank_mpi, during enter only: the call's GPU duration (-1
     * none) and await_ns (0 where the file has no such column), the values
     * the in-memory run gives it; else unset */
    int64_t gpu_ns, await_ns;
    /* sp_stream_rank_forks: the call's events/fork_parent_ids value (-1
     * none), read in the windows of the other columns; else unset */
    int64_t fork_parent_id;
} sp_stream_call;

/* enter: `parent` is the user word of the nearest kept ancestor (-1 none);
 * set *user and return 1 to keep the call, 0 to drop it (its children then
 * hang from the nearest kept ancestor), -1 on failure.  exit: kept calls
 * only, with their user word; 0 or -1. */
typedef struct sp_call_visitor {
    int (*enter)(void *ctx, const sp_stream_call *call, int64_t parent, int64_t *user);
    int (*exit)(void *ctx, const sp_stream_call *call, int64_t user);
    void *ctx;
} sp_call_visitor;

/* A visitor that keeps nothing: a pass made for the reader's checks alone
 * (a rank not exported, or one whose origin is needed). */
extern const sp_call_visitor sp_call_visitor_checks_only;

/* What a pass over a rank learns besides its calls. */
typedef struct sp_rank_stream_info {
    uint64_t calls;
    int64_t first_start, last_end;  /* clock offset applied; INT64_MAX / INT64_MIN: none */
    size_t num_thread_slots;        /* thread_calls / thread_busy by thread index */
    uint64_t *thread_calls;         /* calls recorded on the thread */
    int64_t *thread_busy;           /* its root "omp parallel" time (parent id < 0) */
    /* On 2 (rows_on_crossing): per row of the rank, in the skeleton's row
     * order, {total, minimum, maximum} of its durations as the events give
     * them (the skeleton has none when the file stores no statistics). */
    size_t num_rows;
    int64_t (*row_durations)[3];
    /* A scattered rank (rank_stream.c, docs/stream.md "Scattered ranks"):
     * the sorted runs written to its temporary file (0: none, the rank
     * sorted in one block or merged in windows), whether it was replayed
     * from memory instead (no temporary file could be made). */
    size_t sorted_runs;
    int replayed;
} sp_rank_stream_info;
void sp_rank_stream_info_free(sp_rank_stream_info *info);

/* Stream one rank.  Returns 0; 1 when the rank cannot be streamed the way
 * the in-memory path reads it (a problem the reader reports, calls that do
 * not nest, stored ids that disagree, a scattered rank with fork edges and
 * no temporary file for its sort: `why` says which; the
 * caller then uses the in-memory path, which gives the exact message);
 * -1 when the visitor failed.  The visitor may have seen calls before a 1. */
int sp_stream_rank(const sp_run_source *src, uint32_t rank, int64_t clock_offset,
                   const sp_call_visitor *visitor, sp_rank_stream_info *info, char *why,
                   size_t whylen);

/* What a pass may do besides handing calls to its visitor. */
typedef struct sp_stream_options {
    /* Optional: every event of the rank, before enter and whether it nests
     * or not, on the file's time axis (no clock offset). */
    void (*event)(void *ctx, int64_t start, int64_t end);
    void *event_ctx;
    /* Nonzero: calls that do not nest are no reason to give up.  The first
     * crossing is worded as the reconstruction words it, the rest of the
     * rank is read with every check of the reader (`event`, not the
     * visitor, sees those calls), and sp_stream_rank_with returns 2. */
    int rows_on_crossing;
} sp_stream_options;

/* sp_stream_rank with options (NULL: none).  Also returns 2 with
 * rows_on_crossing, for a rank that passes every check of the reader but
 * whose calls do not nest: `why` is the reconstruction's message
 * (sp_calls_build's, without file or rank), info is complete (calls, span,
 * thread counts: every event counted), and the calls the visitor saw before
 * the crossing are to be dropped: the in-memory path shows such a rank from
 * its rows. */
int sp_stream_rank_with(const sp_run_source *src, uint32_t rank, int64_t clock_offset,
                        const sp_call_visitor *visitor, const sp_stream_options *options,
                        sp_rank_stream_info *info, char *why, size_t whylen);
/* sp_stream_rank_with, each call carrying its fork parent id (a file with
 * events/fork_parent_ids). */
int sp_stream_rank_forks(const sp_run_source *src, uint32_t rank, int64_t clock_offset,
                         const sp_call_visitor *visitor, const sp_stream_options *options,
                         sp_rank_stream_info *info, char *why, size_t whylen);

/* sp_stream_rank that also reads the MPI columns (events/mpi_*), the GPU
 * durations and await_ns in the windows of the others and hands each
 * call's to enter (call->mpi, gpu_ns, await_ns): for the exports that
 * write MPI records (otf2) or per-call args (chrome --call-args).
 * Memory: up to 9 more columns per window. */
int sp_stream_rank_mpi(const sp_run_source *src, uint32_t rank, int64_t clock_offset,
                       const sp_call_visitor *visitor, sp_rank_stream_info *info, char *why,
                       size_t whylen);

/* sp_stream_rank keeps the last file's event reader open for the next rank
 * (its chunk cache serves the ranks of a merged file that share chunks):
 * close it, if it belongs to src (NULL: whichever).  sp_run_source_close
 * calls it; call it before fork(). */
void sp_stream_release_reader(const sp_run_source *src);

/* `validate` of one file in bounded memory: 0 when every check the full
 * checker makes passes (nesting required); 1 when the file has a problem or
 * something this path does not check (then run sp_h5_check, which lists
 * the problems), with the reason in why. */
int sp_stream_validate(const char *path, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif

#endif /* SCOPEPROF_STREAM_H */
