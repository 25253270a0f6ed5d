/* lane_walk.c - depth-first traversal of one lane of a reconstruction,
 * without copying calls per lane (sp_split_by_lane would double the memory of
 * a ten-million-call export). */
#include <stdlib.h>
#include <string.h>

#include "scopeprof/export.h"

void sp_lane_walk_free(sp_lane_walk *walk)
{
    free(walk->lanes);
    free(walk->first_root);
    free(walk->lane_calls);
    free(walk->first_child);
    free(walk->next_sibling);
    memset(walk, 0, sizeof *walk);
}

static long lane_index(const sp_lane_walk *walk, int64_t lane)
{
    size_t lo = 0, hi = walk->num_lanes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (walk->lanes[mid] < lane)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < walk->num_lanes && walk->lanes[lo] == lane ? (long)lo : -1;
}

/* Sorted distinct lanes of the calls. */
static int collect_lanes(const sp_calls *calls, sp_lane_walk *walk)
{
    size_t cap = 8;
    walk->lanes = malloc(cap * sizeof *walk->lanes);
    if (!walk->lanes)
        return -1;
    if (!calls->lane) {
        walk->lanes[0] = -1;
        walk->num_lanes = calls->n ? 1 : 0;
        return 0;
    }
    for (size_t i = 0; i < calls->n; i++) {
        int64_t lane = calls->lane[i];
        if ((i > 0 && calls->lane[i - 1] == lane) || lane_index(walk, lane) >= 0)
            continue;
        if (walk->num_lanes == cap) {
            cap *= 2;
            int64_t *grown = realloc(walk->lanes, cap * sizeof *grown);
            if (!grown)
                return -1;
            walk->lanes = grown;
        }
        size_t at = walk->num_lanes++;
        while (at > 0 && walk->lanes[at - 1] > lane) {
            walk->lanes[at] = walk->lanes[at - 1];
            at--;
        }
        walk->lanes[at] = lane;
    }
    return 0;
}

int sp_lane_walk_build(const sp_calls *calls, sp_lane_walk *walk)
{
    memset(walk, 0, sizeof *walk);
    size_t n = calls->n ? calls->n : 1;
    walk->first_child = malloc(n * sizeof *walk->first_child);
    walk->next_sibling = malloc(n * sizeof *walk->next_sibling);
    if (!walk->first_child || !walk->next_sibling || collect_lanes(calls, walk) < 0)
        goto fail;
    size_t lanes = walk->num_lanes ? walk->num_lanes : 1;
    walk->first_root = malloc(lanes * sizeof *walk->first_root);
    walk->lane_calls = calloc(lanes, sizeof *walk->lane_calls);
    int64_t *last_root = malloc(lanes * sizeof *last_root);
    if (!walk->first_root || !walk->lane_calls || !last_root) {
        free(last_root);
        goto fail;
    }
    int64_t first_root;
    sp_calls_children(calls, walk->first_child, walk->next_sibling, &first_root);
    for (size_t l = 0; l < lanes; l++)
        walk->first_root[l] = last_root[l] = -1;
    /* Re-chain the roots per lane, keeping start order. */
    for (int64_t r = first_root; r >= 0;) {
        int64_t next = walk->next_sibling[r];
        long l = calls->lane ? lane_index(walk, calls->lane[r]) : 0;
        walk->next_sibling[r] = -1;
        if (last_root[l] < 0)
            walk->first_root[l] = r;
        else
            walk->next_sibling[last_root[l]] = r;
        last_root[l] = r;
        r = next;
    }
    free(last_root);
    for (size_t i = 0; i < calls->n; i++)
        walk->lane_calls[calls->lane ? lane_index(walk, calls->lane[i]) : 0]++;
    return 0;
fail:
    sp_lane_walk_free(walk);
    return -1;
}

int sp_lane_walk_visit(const sp_lane_walk *walk, const sp_calls *calls, size_t lane_index_,
                       sp_walk_fn open, sp_walk_fn close, void *ctx)
{
    int64_t node = walk->first_root[lane_index_];
    while (node >= 0) {
        int rc = open ? open(ctx, (size_t)node) : 0;
        if (rc)
            return rc;
        if (walk->first_child[node] >= 0) {
            node = walk->first_child[node];
            continue;
        }
        /* Leaf: close it and every ancestor whose last child it was. */
        while (node >= 0) {
            rc = close ? close(ctx, (size_t)node) : 0;
            if (rc)
                return rc;
            if (walk->next_sibling[node] >= 0) {
                node = walk->next_sibling[node];
                break;
            }
            node = calls->parent[node];
        }
    }
    return 0;
}
