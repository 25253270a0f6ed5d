/* Call-tree reconstruction: sort one rank's calls by (start ascending, end
 * descending, input order) and recover depth, parent and exclusive time per
 * lane (spec §5.2).
 *
 * Memory: the output columns double as the radix sort's buffers before they
 * receive their final contents, so the only scratch is a map of lanes (few
 * threads and tasks) or, with very many lanes, a lane-grouped order of 16
 * bytes per call.  The per-lane stack of open calls is the parent chain of
 * the lane's latest call, so it costs nothing and depth is unbounded (no
 * recursion). */
#include "scopeprof/callstack.h"

#include "model/lane_map.h"
#include "callstack/radix_sort.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { INSERTION_SORT_MAX = 32, DESCRIPTION_MAX = 320 };

static const char USUAL_CAUSE[] =
    "Regions must nest completely or not overlap at all - check for a missing "
    "or misordered sp_end, or for threads profiled without thread tracking "
    "(SCOPE_PROFILER_TRACK_THREADS=0).";

void sp_calls_free(sp_calls *calls)
{
    if (!calls)
        return;
    free(calls->start);
    free(calls->end);
    free(calls->region);
    free(calls->call_index);
    free(calls->depth);
    free(calls->parent);
    free(calls->exclusive);
    free(calls->lane);
    free(calls->input_pos);
    memset(calls, 0, sizeof *calls);
}

/* Output columns of millions of calls are touched once each: on fresh
 * memory the page faults cost more than the reconstruction.  Big columns
 * ask for transparent huge pages (512 times fewer faults). */
static void *column_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes < 4 * huge)
        return malloc(bytes);
    void *p = aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
    if (p)
        madvise(p, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
    return p;
}

int sp_calls_alloc(sp_calls *calls, size_t n, int with_lane)
{
    memset(calls, 0, sizeof *calls);
    if (n == 0)
        return 0;
    calls->n = n;
    calls->start = column_alloc(n * sizeof *calls->start);
    calls->end = column_alloc(n * sizeof *calls->end);
    calls->region = column_alloc(n * sizeof *calls->region);
    calls->call_index = column_alloc(n * sizeof *calls->call_index);
    calls->depth = column_alloc(n * sizeof *calls->depth);
    calls->parent = column_alloc(n * sizeof *calls->parent);
    calls->exclusive = column_alloc(n * sizeof *calls->exclusive);
    calls->input_pos = column_alloc(n * sizeof *calls->input_pos);
    if (with_lane)
        calls->lane = column_alloc(n * sizeof *calls->lane);
    if (!calls->start || !calls->end || !calls->region || !calls->call_index ||
        !calls->depth || !calls->parent || !calls->exclusive || !calls->input_pos ||
        (with_lane && !calls->lane)) {
        sp_calls_free(calls);
        return -1;
    }
    return 0;
}

static void set_error(char *err, size_t errlen, const char *message)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", message);
}

/* "'name' call k [s, e] ns", the way every nesting message names a call. */
static void describe_call(char *buf, size_t len, const sp_call_input *in,
                          uint32_t region, uint64_t call_index, int64_t start, int64_t end)
{
    const char *name = in->region_names && region < in->num_regions
                           ? in->region_names[region] : NULL;
    if (name)
        snprintf(buf, len, "'%s' call %" PRIu64 " [%" PRId64 ", %" PRId64 "] ns",
                 name, call_index, start, end);
    else
        snprintf(buf, len, "'#%" PRIu32 "' call %" PRIu64 " [%" PRId64 ", %" PRId64 "] ns",
                 region, call_index, start, end);
}

/* Call index of input call i: given, or its rank among earlier calls of the
 * same region (only needed for an error message, hence the plain scan). */
static uint64_t input_call_index(const sp_call_input *in, size_t i)
{
    if (in->call_index)
        return in->call_index[i];
    uint64_t k = 0;
    for (size_t j = 0; j < i; j++)
        k += in->region[j] == in->region[i];
    return k;
}

/* What one read pass over the input learns before sorting. */
typedef struct input_summary {
    uint32_t max_region;
    int64_t min_start, max_start;
} input_summary;

/* Rejects missing columns, unknown regions and calls ending before they
 * start; summarises the input on the way. */
static int check_input(const sp_call_input *in, input_summary *sum, char *err, size_t errlen)
{
    if (!in->start || !in->end || !in->region) {
        set_error(err, errlen, "call input is missing its start, end or region column");
        return -1;
    }
    uint32_t max = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < in->n; i++) {
        int64_t start = in->start[i];
        max = in->region[i] > max ? in->region[i] : max;
        lo = start < lo ? start : lo;
        hi = start > hi ? start : hi;
        if (in->end[i] < start) {
            char call[DESCRIPTION_MAX];
            describe_call(call, sizeof call, in, in->region[i], input_call_index(in, i),
                          start, in->end[i]);
            if (err && errlen)
                snprintf(err, errlen, "a recorded call ends before it starts: %s. %s",
                         call, USUAL_CAUSE);
            return -1;
        }
    }
    if (in->region_names && max >= in->num_regions) {
        if (err && errlen)
            snprintf(err, errlen, "a recorded call has region index %" PRIu32
                     " but only %zu region names were given", max, in->num_regions);
        return -1;
    }
    sum->max_region = max;
    sum->min_start = lo;
    sum->max_start = hi;
    return 0;
}

static unsigned bit_length(uint64_t x)
{
    return x ? 64 - (unsigned)__builtin_clzll(x) : 0;
}

/* The common case: start offsets and input positions fit in one 64-bit
 * word together, so each radix pass moves 8 bytes per call and the word's
 * low bits (the position) keep the sort stable for free.  Returns as
 * sort_by_start. */
static int sort_packed_by_start(const sp_call_input *in, sp_calls *out, int64_t min_start,
                                unsigned index_bits)
{
    size_t n = in->n;
    uint64_t *words = (uint64_t *)out->parent, *spare = (uint64_t *)out->exclusive;
    uint64_t base = (uint64_t)min_start, index_mask = (UINT64_C(1) << index_bits) - 1;
    for (size_t i = 0; i < n; i++)
        words[i] = (((uint64_t)in->start[i] - base) << index_bits) | i;
    if (sp_radix_sort_words(n, index_bits, &words, &spare) != 0)
        return -1;
    int ties = 0;
    for (size_t k = 0; k < n; k++) {
        out->input_pos[k] = words[k] & index_mask;
        out->start[k] = (int64_t)(base + (words[k] >> index_bits));
        ties |= k > 0 && (words[k] ^ words[k - 1]) >> index_bits == 0;
    }
    return ties;
}

/* Any range of starts: (key, position) pairs.  Returns as sort_by_start. */
static int sort_pairs_by_start(const sp_call_input *in, sp_calls *out)
{
    size_t n = in->n;
    uint64_t *keys = (uint64_t *)out->parent, *keys_spare = (uint64_t *)out->exclusive;
    uint64_t *order = out->input_pos, *order_spare = out->call_index;
    for (size_t i = 0; i < n; i++) {
        keys[i] = sp_radix_key_ascending(in->start[i]);
        order[i] = i;
    }
    if (sp_radix_sort_pairs(n, &keys, &order, &keys_spare, &order_spare) != 0)
        return -1;
    if (order != out->input_pos) {
        /* Same size and type: hand the columns over instead of copying. */
        out->call_index = out->input_pos;
        out->input_pos = order;
    }
    int ties = 0;
    for (size_t k = 0; k < n; k++) {
        out->start[k] = (int64_t)(keys[k] ^ UINT64_C(0x8000000000000000));
        ties |= k > 0 && keys[k] == keys[k - 1];
    }
    return ties;
}

/* Radix-sorts by start, leaving the permutation in out->input_pos and the
 * sorted starts in out->start.  parent, exclusive and call_index serve as
 * the sort's buffers (their contents are produced later).  Returns 1 if
 * some calls share a start, 0 if none do, -1 when out of memory. */
static int sort_by_start(const sp_call_input *in, const input_summary *sum, sp_calls *out)
{
    unsigned index_bits = bit_length(in->n - 1);
    unsigned key_bits = bit_length((uint64_t)sum->max_start - (uint64_t)sum->min_start);
    if (index_bits < 64 && key_bits + index_bits <= 64)
        return sort_packed_by_start(in, out, sum->min_start, index_bits);
    return sort_pairs_by_start(in, out);
}

/* Orders one run of equal starts by end descending, stably. */
static int sort_run_by_end_descending(uint64_t *run, size_t m, const int64_t *end,
                                      uint64_t *spare)
{
    if (m <= INSERTION_SORT_MAX) {
        for (size_t i = 1; i < m; i++) {
            uint64_t call = run[i];
            int64_t e = end[call];
            size_t j = i;
            for (; j > 0 && end[run[j - 1]] < e; j--)
                run[j] = run[j - 1];
            run[j] = call;
        }
        return 0;
    }
    uint64_t *sorted = sp_radix_sort_indices(m, end, 1, run, spare);
    if (!sorted)
        return -1;
    if (sorted != run)
        memcpy(run, sorted, m * sizeof *run);
    return 0;
}

/* Applies the "longer first" tie-break to every run of equal starts; the
 * start sort being stable, equal (start, end) pairs stay in input order. */
static int order_equal_starts(const sp_call_input *in, sp_calls *out)
{
    uint64_t *spare = (uint64_t *)out->exclusive;
    for (size_t a = 0, b; a < out->n; a = b) {
        for (b = a + 1; b < out->n && out->start[b] == out->start[a]; b++)
            ;
        if (b - a > 1 &&
            sort_run_by_end_descending(out->input_pos + a, b - a, in->end, spare + a) != 0)
            return -1;
    }
    return 0;
}

/* Copies the remaining input columns into sorted order, in one pass so
 * that each input position is fetched once. */
static int gather_columns(const sp_call_input *in, uint32_t max_region, sp_calls *out)
{
    size_t n = in->n;
    const uint64_t *pos = out->input_pos;
    const uint64_t *call_index = in->call_index;
    if (!call_index) {
        /* Count per region in input order, parked in the exclusive column. */
        uint64_t *next = calloc((size_t)max_region + 1, sizeof *next);
        if (!next)
            return -1;
        uint64_t *by_input = (uint64_t *)out->exclusive;
        for (size_t i = 0; i < n; i++)
            by_input[i] = next[in->region[i]]++;
        free(next);
        call_index = by_input;
    }
    const int64_t *threads = out->lane ? in->thread_ids : NULL, *tasks = in->task_ids;
    for (size_t k = 0; k < n; k++) {
        uint64_t p = pos[k];
        out->end[k] = in->end[p];
        out->region[k] = in->region[p];
        out->call_index[k] = call_index[p];
        if (threads)
            out->lane[k] = sp_lane_id(threads[p], tasks ? tasks[p] : -1);
    }
    return 0;
}

void sp_calls_nesting_message(char *err, size_t errlen, const char *const *region_names,
                              size_t num_regions, const sp_call_ref *inner,
                              const sp_call_ref *outer)
{
    if (!err || !errlen)
        return;
    sp_call_input names = {.region_names = region_names, .num_regions = num_regions};
    char a[DESCRIPTION_MAX], b[DESCRIPTION_MAX];
    describe_call(a, sizeof a, &names, inner->region, inner->call_index, inner->start,
                  inner->end);
    describe_call(b, sizeof b, &names, outer->region, outer->call_index, outer->start,
                  outer->end);
    snprintf(err, errlen, "recorded calls are not properly nested: %s starts inside %s "
             "but ends after it. %s", a, b, USUAL_CAUSE);
}

static void nesting_error(const sp_call_input *in, const sp_calls *out, size_t child,
                          size_t parent, char *err, size_t errlen)
{
    sp_call_ref inner = {out->region[child], out->call_index[child], out->start[child],
                         out->end[child]};
    sp_call_ref outer = {out->region[parent], out->call_index[parent], out->start[parent],
                         out->end[parent]};
    sp_calls_nesting_message(err, errlen, in->region_names, in->num_regions, &inner, &outer);
}

/* Is open call `call` finished before a call starting at `start`?  Touching
 * calls are siblings, but a zero-length call stays open at its own instant
 * so that identical zero-length calls nest (spec §5.2). */
static int closed_before(const sp_calls *out, int64_t call, int64_t start)
{
    int64_t end = out->end[call];
    return end < start || (end == start && out->start[call] != end);
}

/* Links call k under the innermost call still open on its lane, found by
 * popping from `*top` (the lane's latest call) along the parent chain: that
 * chain is the lane's stack of open calls, so no stack is stored, and a
 * popped call never comes back, so a whole sweep is linear.  Returns 0 with
 * *top = k, or -1 (nesting error) with *top = the call k crosses. */
static inline int link_call(sp_calls *out, size_t k, int64_t *top)
{
    int64_t start = out->start[k], end = out->end[k], t = *top;
    while (t >= 0 && closed_before(out, t, start))
        t = out->parent[t];
    int64_t duration = (int64_t)((uint64_t)end - (uint64_t)start);
    out->parent[k] = t;
    out->exclusive[k] = duration;
    if (t >= 0) {
        if (end > out->end[t]) {
            *top = t;
            return -1;
        }
        out->depth[k] = out->depth[t] + 1;
        /* wraps instead of overflowing on absurd (hostile) timestamps */
        out->exclusive[t] = (int64_t)((uint64_t)out->exclusive[t] - (uint64_t)duration);
    } else {
        out->depth[k] = 0;
    }
    *top = (int64_t)k;
    return 0;
}

static int report_crossing(const sp_call_input *in, const sp_calls *out, size_t child,
                           int64_t parent, char *err, size_t errlen)
{
    nesting_error(in, out, child, (size_t)parent, err, errlen);
    return -1;
}

/* All calls on one lane. */
static int link_one_lane(const sp_call_input *in, sp_calls *out, char *err, size_t errlen)
{
    int64_t top = -1;
    for (size_t k = 0; k < out->n; k++)
        if (link_call(out, k, &top) != 0)
            return report_crossing(in, out, k, top, err, errlen);
    return 0;
}

/* Few lanes: one sweep in sorted order, each lane's latest call kept in a
 * small map.  Returns 0, -1 (nesting error) or -2 (too many lanes for the
 * map's budget, or no memory: use link_grouped_by_lane). */
static int link_with_lane_map(const sp_call_input *in, sp_calls *out, char *err, size_t errlen)
{
    sp_lane_map map;
    /* Half a slot per call at most, so the scratch stays within 16 bytes
     * per call even while the table grows. */
    if (sp_lane_map_init(&map, out->n / 2 > 64 ? out->n / 2 : 64) != 0)
        return -2;
    sp_lane_slot *slot = NULL;
    int rc = 0;
    for (size_t k = 0; k < out->n && rc == 0; k++) {
        if (!slot || out->lane[k] != slot->lane)
            slot = sp_lane_map_slot(&map, out->lane[k]);
        if (!slot)
            rc = -2;
        else if (link_call(out, k, &slot->top) != 0)
            rc = report_crossing(in, out, k, slot->top, err, errlen);
    }
    sp_lane_map_free(&map);
    return rc;
}

/* Many lanes: group the calls by lane (stable radix sort, so each lane
 * keeps the global sorted order) and sweep lane after lane. */
static int link_grouped_by_lane(const sp_call_input *in, sp_calls *out, char *err, size_t errlen)
{
    size_t n = out->n;
    uint64_t *order = malloc(n * sizeof *order), *spare = malloc(n * sizeof *spare);
    const uint64_t *by_lane = NULL;
    if (order && spare) {
        for (size_t k = 0; k < n; k++)
            order[k] = k;
        by_lane = sp_radix_sort_indices(n, out->lane, 0, order, spare);
    }
    int rc = by_lane ? 0 : -2;
    int64_t top = -1;
    for (size_t j = 0; j < n && rc == 0; j++) {
        size_t k = by_lane[j];
        if (j > 0 && out->lane[k] != out->lane[by_lane[j - 1]])
            top = -1;
        if (link_call(out, k, &top) != 0)
            rc = report_crossing(in, out, k, top, err, errlen);
    }
    free(order);
    free(spare);
    return rc;
}

static int link_calls(const sp_call_input *in, sp_calls *out, char *err, size_t errlen)
{
    if (!out->lane)
        return link_one_lane(in, out, err, errlen);
    int rc = link_with_lane_map(in, out, err, errlen);
    if (rc == -2) /* every call is linked again from scratch */
        rc = link_grouped_by_lane(in, out, err, errlen);
    if (rc == -2)
        set_error(err, errlen, "out of memory reconstructing the call tree");
    return rc == 0 ? 0 : -1;
}

int sp_calls_build(const sp_call_input *input, sp_calls *out, char *err, size_t errlen)
{
    if (!out)
        return -1;
    memset(out, 0, sizeof *out);
    if (!input) {
        set_error(err, errlen, "no call input given");
        return -1;
    }
    if (input->n == 0)
        return 0;
    input_summary summary;
    if (check_input(input, &summary, err, errlen) != 0)
        return -1;
    if (sp_calls_alloc(out, input->n, input->thread_ids != NULL) != 0) {
        set_error(err, errlen, "out of memory reconstructing the call tree");
        return -1;
    }
    int ties = sort_by_start(input, &summary, out);
    if (ties < 0 || (ties && order_equal_starts(input, out) != 0) ||
        gather_columns(input, summary.max_region, out) != 0) {
        set_error(err, errlen, "out of memory reconstructing the call tree");
        sp_calls_free(out);
        return -1;
    }
    if (link_calls(input, out, err, errlen) != 0) {
        sp_calls_free(out);
        return -1;
    }
    return 0;
}
