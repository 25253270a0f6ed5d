/* scopeprof/analysis.h - what the report, the exports and the flame graph
 * share: one rank's reconstruction tied back to the profile's columns, the
 * selection given on the command line, and lane labels (spec §6.5). */
#ifndef SCOPEPROF_ANALYSIS_H
#define SCOPEPROF_ANALYSIS_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "scopeprof/callstack.h"
#include "scopeprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- selection (CLI filters) -------------------------------------------- */

/* What to keep.  A zero-initialised struct (or sp_selection_init) keeps
 * everything.  Filters act on calls *before* reconstruction, as in the
 * reference exporters: a call whose region is excluded disappears and its
 * children hang from the nearest kept ancestor.  Time window and minimum
 * duration keep whole calls (never clipped): a call is kept when it
 * intersects [from, to] (seconds after sp_profile_origin_ns) and lasts at
 * least min_duration seconds; since a child is never longer than its parent
 * and lies inside it, what remains is still properly nested. */
typedef struct sp_selection {
    uint32_t *ranks;      /* sorted, unique; NULL = every rank */
    size_t num_ranks;
    char **lanes;         /* lane selectors (sp_lane_matches); NULL = all */
    size_t num_lanes;
    int has_include, has_exclude;
    regex_t include, exclude; /* POSIX extended, matched anywhere in the name */
    int has_from, has_to, has_min_duration;
    double from_s, to_s, min_duration_s;
    int no_graft;         /* --no-graft: forked work stays on its own lane */
} sp_selection;

void sp_selection_init(sp_selection *sel);
void sp_selection_free(sp_selection *sel);

/* Parsers for the option values; 0 or -1 with a one-line message in err.
 * Ranks: "0,2-3" (adds to what is already selected).  Lanes: comma list.
 * Regexes: POSIX extended.  Seconds: a finite number >= 0 for durations. */
int sp_selection_add_ranks(sp_selection *sel, const char *text, char *err, size_t errlen);
int sp_selection_add_lanes(sp_selection *sel, const char *text, char *err, size_t errlen);
int sp_selection_set_include(sp_selection *sel, const char *re, char *err, size_t errlen);
int sp_selection_set_exclude(sp_selection *sel, const char *re, char *err, size_t errlen);
int sp_selection_set_seconds(double *out, const char *what, const char *text,
                             int allow_negative, char *err, size_t errlen);

/* Try to consume one filter option at argv[*i] ("--ranks 0,2", "--ranks=0,2",
 * -r, --lanes, --include/-i, --exclude/-e, --from, --to, --min-duration).
 * Returns 1 when consumed (*i advanced past its value), 0 when argv[*i] is
 * not a filter option, -1 on a bad value or missing argument (err set). */
int sp_selection_parse_option(sp_selection *sel, int argc, char **argv, int *i,
                              char *err, size_t errlen);
/* The lines describing those options, for --help texts. */
extern const char sp_selection_help[];

int sp_selection_has_rank(const sp_selection *sel, uint32_t rank);
/* Region name passes --include / --exclude. */
int sp_selection_keeps_region(const sp_selection *sel, const char *name);
/* A selection's seconds (--from, --to, --min-duration) as ns, rounded,
 * saturated at the int64 range: every path applies them alike. */
int64_t sp_selection_seconds_to_ns(double s);
/* Any per-call filter (region, time, duration) set? */
int sp_selection_filters_calls(const sp_selection *sel);
/* Lane passes --lanes (always true without --lanes). */
int sp_selection_keeps_lane(const sp_selection *sel, const sp_profile *profile,
                            uint32_t rank, int64_t lane);

/* The ranks that have rows and pass the selection, ascending; returns the
 * count (*ranks malloc'd, free it), or -1 on allocation failure. */
long sp_selected_ranks(const sp_profile *profile, const sp_selection *sel, uint32_t **ranks);

/* Earliest start among the calls the selection keeps (region, lane, time and
 * duration filters, selected ranks), without reconstructing: the shared time
 * origin of documents holding several profiles.  0 if nothing is kept. */
int64_t sp_selection_first_start(const sp_profile *profile, const sp_selection *sel);

/* ---- lane labels (spec §6.5) -------------------------------------------- */

/* lane >= 0: "<task name> (<coro name after its last '.'>) on <thread label>"
 * or "task N" when the task table does not know it; -1: "unknown lane";
 * otherwise thread index -2-lane: its name from the thread table, or
 * "thread N".  Returns the length needed (snprintf-like). */
size_t sp_lane_label(const sp_profile *profile, uint32_t rank, int64_t lane,
                     char *buf, size_t buflen);
/* Does a --lanes selector name this lane?  Accepted: the exact label,
 * "thread N", "task N", "unknown", or the raw lane id as "lane:N". */
int sp_lane_matches(const sp_profile *profile, uint32_t rank, int64_t lane,
                    const char *selector);

/* ---- one rank's reconstruction ------------------------------------------ */

/* The reconstruction of one rank tied back to the profile.  Region indices
 * are indices into profile->names; call_index is the position of the call in
 * its (rank, region) row, so the call's event in the profile columns is
 * rows[row_of_region[region]].offset + call_index (kept in `event`). */
typedef struct sp_rank_data {
    uint32_t rank;
    sp_calls calls;           /* call i = i-th call in sorted order */
    uint64_t *event;          /* calls.n: index into the profile's event columns */
    int64_t *call_id;         /* calls.n: the file's call id if stored, else the
                                 position in the unfiltered reconstruction */
    int64_t *parent_id;       /* calls.n: call_id of the (kept) parent, -1 root */
    int64_t *row_of_region;   /* profile->num_names: the (rank, region) row or -1 */
    int stored_ids;           /* call_id / parent_id came from the file */
    size_t num_lanes;         /* distinct lanes among the kept calls */
} sp_rank_data;

/* Gather one rank's events (rows in profile order, events in row order),
 * reconstruct, verify stored call_ids/parent_ids against the reconstruction
 * (disagreement is an error naming the call), then apply the selection's
 * per-call filters and reconstruct the kept calls.  sel may be NULL.
 * Returns 0, or -1 with a one-line message in err.  Aggregate-layout
 * profiles have no events: error. */
int sp_rank_data_load(const sp_profile *profile, uint32_t rank, const sp_selection *sel,
                      sp_rank_data *out, char *err, size_t errlen);
void sp_rank_data_free(sp_rank_data *data);

/* The plain reconstruction of one rank (no filters), with the stored-id
 * check.  Region = row's region, call_index = position in the row, lanes
 * from thread_ids / task_ids when the columns exist. */
int sp_rank_calls(const sp_profile *profile, uint32_t rank, sp_calls *out,
                  char *err, size_t errlen);

/* fork_graft.c: merged views (report tree, flame, folded, .prof) hang
 * forked calls under their fork parent (events/fork_parent_ids): an OpenMP
 * worker's implicit task merges into its encountering thread's
 * "omp parallel" call, a pthread's root calls go under the call open at
 * pthread_create.  Reorders the calls (parents first; parent/depth/lane
 * columns updated).  No-op without the column.  0, -1 out of memory, or
 * SP_GRAFT_CYCLE when the fork parent ids of a damaged file form a cycle
 * (a call forked by itself or by a call under it: no tree can hold it). */
#define SP_GRAFT_CYCLE (-2)
typedef struct sp_graft_info {
    int64_t *fork_of;     /* calls.n: new index of the call's fork parent, -1 none */
    int64_t *own_lane;    /* calls.n: the call's lane before grafting */
} sp_graft_info;
/* info may be NULL; else filled with malloc'd arrays (both NULL when
 * nothing was grafted); free with sp_graft_info_free. */
int sp_rank_data_graft(const sp_profile *profile, sp_rank_data *data, sp_graft_info *info);
void sp_graft_info_free(sp_graft_info *info);
/* The one line for a failed sp_rank_data_graft of `rank`; returns -1. */
int sp_graft_failure(int rc, uint32_t rank, char *err, size_t errlen);
/* Graft in merged views?  Not with --no-graft or a --lanes selection. */
int sp_selection_grafts(const sp_selection *sel);

/* Source of call i: row's source_file ("" unknown) and line (-1 unknown). */
const sp_row *sp_rank_data_row(const sp_profile *profile, const sp_rank_data *data, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* SCOPEPROF_ANALYSIS_H */
