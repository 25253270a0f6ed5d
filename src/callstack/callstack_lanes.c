/* Lanes of a reconstruction: lane ids from thread/task columns, and the
 * split into one reconstruction per lane (spec §5.3). */
#include "scopeprof/callstack.h"

#include "callstack/radix_sort.h"

#include <stdlib.h>
#include <string.h>

void sp_lane_ids(const int64_t *threads, const int64_t *tasks, size_t n, int64_t *lanes)
{
    for (size_t i = 0; i < n; i++)
        lanes[i] = sp_lane_id(threads ? threads[i] : -1, tasks ? tasks[i] : -1);
}

void sp_lane_parts_free(sp_lane_part *parts, long count)
{
    if (!parts)
        return;
    for (long p = 0; p < count; p++)
        sp_calls_free(&parts[p].calls);
    free(parts);
}

/* Copies the calls at positions order[0..m) into `part`, renumbering parents
 * through local (global position -> position in the part; parents precede
 * their children in the order, so they are always numbered already). */
static int fill_part(sp_lane_part *part, const sp_calls *calls, int64_t lane,
                     const uint64_t *order, size_t m, int64_t *local)
{
    part->lane = lane;
    if (sp_calls_alloc(&part->calls, m, calls->lane != NULL) != 0)
        return -1;
    sp_calls *dst = &part->calls;
    for (size_t j = 0; j < m; j++) {
        size_t k = order ? order[j] : j;
        local[k] = (int64_t)j;
        dst->start[j] = calls->start[k];
        dst->end[j] = calls->end[k];
        dst->region[j] = calls->region[k];
        dst->call_index[j] = calls->call_index[k];
        dst->depth[j] = calls->depth[k];
        dst->parent[j] = calls->parent[k] < 0 ? -1 : local[calls->parent[k]];
        dst->exclusive[j] = calls->exclusive[k];
        dst->input_pos[j] = calls->input_pos[k];
        if (dst->lane)
            dst->lane[j] = lane;
    }
    return 0;
}

static long single_part(const sp_calls *calls, sp_lane_part **parts)
{
    int64_t *local = malloc(calls->n * sizeof *local);
    *parts = calloc(1, sizeof **parts);
    int64_t lane = calls->lane ? calls->lane[0] : -1;
    if (!local || !*parts || fill_part(*parts, calls, lane, NULL, calls->n, local) != 0) {
        free(local);
        free(*parts);
        *parts = NULL;
        return -1;
    }
    free(local);
    return 1;
}

long sp_split_by_lane(const sp_calls *calls, sp_lane_part **parts)
{
    *parts = NULL;
    size_t n = calls->n;
    if (n == 0)
        return 0;
    int several = 0;
    for (size_t k = 1; calls->lane && k < n && !several; k++)
        several = calls->lane[k] != calls->lane[0];
    if (!several)
        return single_part(calls, parts);

    uint64_t *order = malloc(n * sizeof *order), *spare = malloc(n * sizeof *spare);
    if (!order || !spare)
        goto fail;
    for (size_t k = 0; k < n; k++)
        order[k] = k;
    const uint64_t *by_lane = sp_radix_sort_indices(n, calls->lane, 0, order, spare);
    if (!by_lane)
        goto fail;
    /* The array not holding the result becomes the renumbering table. */
    int64_t *local = (int64_t *)(by_lane == order ? spare : order);

    long count = 1;
    for (size_t j = 1; j < n; j++)
        count += calls->lane[by_lane[j]] != calls->lane[by_lane[j - 1]];
    *parts = calloc((size_t)count, sizeof **parts);
    if (!*parts)
        goto fail;
    long p = 0;
    for (size_t a = 0, b; a < n; a = b, p++) {
        int64_t lane = calls->lane[by_lane[a]];
        for (b = a + 1; b < n && calls->lane[by_lane[b]] == lane; b++)
            ;
        if (fill_part(&(*parts)[p], calls, lane, by_lane + a, b - a, local) != 0) {
            sp_lane_parts_free(*parts, p);
            *parts = NULL;
            goto fail;
        }
    }
    free(order);
    free(spare);
    return count;
fail:
    free(order);
    free(spare);
    return -1;
}
