/* scopeprof/callstack.h - call-tree reconstruction from (start, end) pairs.
 *
 * Nesting is recovered from timestamp containment, separately on every lane
 * (thread or task), with the rules of spec §5.2: sort by start ascending then
 * end descending, stable otherwise; touching intervals are siblings; a
 * zero-length call at a parent's start is its child, at its end it is not;
 * identical intervals nest in input order.  A call ending before it starts or
 * two calls overlapping partially on one lane is a nesting error.
 *
 * Cost: O(n) radix sorting and a few linear passes, no allocation per call,
 * no recursion, at most 16 bytes of scratch per call. */
#ifndef SCOPEPROF_CALLSTACK_H
#define SCOPEPROF_CALLSTACK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's calls as columns, in any order (recording order). */
typedef struct sp_call_input {
    size_t n;
    const int64_t *start;
    const int64_t *end;
    const uint32_t *region;      /* index into region_names */
    const uint64_t *call_index;  /* index of the call within its region; may be NULL (then computed in input order) */
    const int64_t *thread_ids;   /* NULL: no lane column (one lane) */
    const int64_t *task_ids;     /* NULL: no tasks; ignored without thread_ids */
    const char *const *region_names; /* for error messages; may be NULL (else every
                                      * region index must be < num_regions) */
    size_t num_regions;
} sp_call_input;

/* The reconstruction, every column indexed by call id (= sorted position). */
typedef struct sp_calls {
    size_t n;
    int64_t *start;
    int64_t *end;
    uint32_t *region;
    uint64_t *call_index;
    uint32_t *depth;
    int64_t *parent;       /* -1 for a root */
    int64_t *exclusive;    /* ns */
    int64_t *lane;         /* NULL when the input had no lane column (one lane) */
    uint64_t *input_pos;   /* position of the call in the input columns */
} sp_calls;

/* Build the reconstruction.  Returns 0, or -1 with a one-line message in
 * err (the nesting error names both calls: region, call index, [start, end] ns,
 * and the usual cause) and *out left empty.  Free with sp_calls_free. */
int sp_calls_build(const sp_call_input *input, sp_calls *out, char *err, size_t errlen);
void sp_calls_free(sp_calls *calls);

/* The nesting error as sp_calls_build words it (`inner` starts inside
 * `outer` but ends after it), for readers that link calls themselves
 * (src/stream/): one wording whichever path finds the crossing. */
typedef struct sp_call_ref {
    uint32_t region;
    uint64_t call_index;
    int64_t start, end;
} sp_call_ref;
void sp_calls_nesting_message(char *err, size_t errlen, const char *const *region_names,
                              size_t num_regions, const sp_call_ref *inner,
                              const sp_call_ref *outer);

/* Allocate every column of n calls (lane only if with_lane), contents
 * unspecified; n == 0 leaves all columns NULL.  Returns 0, or -1 with *calls
 * left empty.  For code that assembles an sp_calls itself (readers, splits). */
int sp_calls_alloc(sp_calls *calls, size_t n, int with_lane);

/* lane = task if task >= 0, else -2 - thread if thread >= 0, else -1. */
static inline int64_t sp_lane_id(int64_t thread, int64_t task)
{
    return task >= 0 ? task : (thread >= 0 ? -2 - thread : -1);
}
/* Fill lanes[i] for n calls; tasks may be NULL. */
void sp_lane_ids(const int64_t *threads, const int64_t *tasks, size_t n, int64_t *lanes);

/* One reconstruction per lane, ascending lane order, parents remapped to
 * positions within the lane.  Without a lane column: one part, lane -1.
 * Every part owns a copy of its columns (also when there is only one).
 * Returns the number of parts (0 for no calls) or -1; free with sp_lane_parts_free. */
typedef struct sp_lane_part {
    int64_t lane;
    sp_calls calls;
} sp_lane_part;
long sp_split_by_lane(const sp_calls *calls, sp_lane_part **parts);
void sp_lane_parts_free(sp_lane_part *parts, long count);

/* totals[r] = sum of exclusive ns of region r, for r < num_regions. */
void sp_exclusive_totals(const sp_calls *calls, size_t num_regions, int64_t *totals);

/* Children iteration: first_child[i] and next_sibling[i] (-1 = none), roots
 * chained from *first_root through next_sibling, all in start order.
 * Arrays of calls->n entries supplied by the caller. */
void sp_calls_children(const sp_calls *calls, int64_t *first_child,
                       int64_t *next_sibling, int64_t *first_root);

/* Write the call path "a > b > c" of call i into buf (truncated to fit,
 * always NUL-terminated); returns the full length it needed.  sep NULL means " > ". */
size_t sp_call_path(const sp_calls *calls, const char *const *region_names,
                    size_t i, const char *sep, char *buf, size_t buflen);

#ifdef __cplusplus
}
#endif

#endif /* SCOPEPROF_CALLSTACK_H */
