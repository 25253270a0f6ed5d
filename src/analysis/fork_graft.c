/* fork_graft.c - merged views of forked work: calls with a fork parent
 * (events/fork_parent_ids, docs/tasks.md) hang under the call that forked
 * them, so "outer > omp parallel > work" sums every thread's work.
 *
 * An OpenMP worker's implicit task is a call of the same region as its
 * parent: it takes the parent's place (same parent, same lane) and merges
 * into the parent's node; any other forked call (a pthread's root calls)
 * becomes a child of its fork parent.  The calls are then reordered so that
 * every parent precedes its children, which is all the tree builders need. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/analysis.h"

int sp_selection_grafts(const sp_selection *sel)
{
    return !sel || (!sel->no_graft && !sel->lanes);
}

/* dst[k] = src[order[k]] for a column of n elements of `size` bytes. */
static int permute(void *column, size_t size, const size_t *order, size_t n)
{
    if (!column)
        return 0;
    char *copy = malloc(n * size);
    if (!copy)
        return -1;
    memcpy(copy, column, n * size);
    for (size_t k = 0; k < n; k++)
        memcpy((char *)column + k * size, copy + order[k] * size, size);
    free(copy);
    return 0;
}

void sp_graft_info_free(sp_graft_info *info)
{
    if (!info)
        return;
    free(info->fork_of);
    free(info->own_lane);
    info->fork_of = info->own_lane = NULL;
}

int sp_rank_data_graft(const sp_profile *profile, sp_rank_data *data, sp_graft_info *info)
{
    sp_calls *c = &data->calls;
    size_t n = c->n;
    if (info)
        info->fork_of = info->own_lane = NULL;
    if (!profile->fork_parent_ids || n == 0 || !data->call_id)
        return 0;
    int64_t max_id = -1;
    for (size_t i = 0; i < n; i++)
        if (data->call_id[i] > max_id)
            max_id = data->call_id[i];
    int64_t *index_of = malloc((size_t)(max_id + 1) * sizeof *index_of);
    int64_t *fork = malloc(n * sizeof *fork);
    uint8_t *state = calloc(n, 1);
    int64_t *chain = malloc(n * sizeof *chain);
    int64_t *first = malloc(n * sizeof *first), *last = malloc(n * sizeof *last);
    int64_t *next = malloc(n * sizeof *next);
    size_t *order = malloc(n * sizeof *order);
    int64_t *own_lane = NULL;
    int rc = -1;
    if (!index_of || !fork || !state || !chain || !first || !last || !next || !order)
        goto out;
    for (int64_t id = 0; id <= max_id; id++)
        index_of[id] = -1;
    for (size_t i = 0; i < n; i++)
        if (data->call_id[i] >= 0)
            index_of[data->call_id[i]] = (int64_t)i;
    size_t grafted = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t f = profile->fork_parent_ids[data->event[i]];
        fork[i] = f >= 0 && f <= max_id && c->parent[i] < 0 ? index_of[f] : -1;
        grafted += fork[i] >= 0;
    }
    if (!grafted) {
        rc = 0;
        goto out;
    }
    if (info && !(own_lane = malloc(n * sizeof *own_lane)))
        goto out;
    for (size_t i = 0; own_lane && i < n; i++)
        own_lane[i] = c->lane ? c->lane[i] : -1;

    /* New parents.  A merged call's parent is its fork parent's final
     * parent, so fork parents are settled first (chains of nested teams);
     * state 1 = being settled, 2 = settled.  A chain of merged calls that
     * comes back to itself is a damaged file, as any other cycle (below):
     * named, not left ungrafted in silence. */
    int merged_cycle = 0;
    for (size_t i = 0; i < n; i++) {
        size_t depth = 0;
        int64_t at = (int64_t)i;
        while (at >= 0 && state[at] == 0) {
            state[at] = 1;
            chain[depth++] = at;
            at = fork[at] >= 0 && c->region[fork[at]] == c->region[at] ? fork[at] : -1;
        }
        while (depth-- > 0) {
            int64_t k = chain[depth];
            int64_t f = fork[k];
            if (f >= 0 && state[f] == 1 && f != k && c->region[f] == c->region[k]) {
                state[k] = 2;
                merged_cycle = 1;
                continue;
            }
            if (f >= 0 && c->region[f] == c->region[k]) {
                c->parent[k] = c->parent[f];
                if (c->lane)
                    c->lane[k] = c->lane[f];
            } else if (f >= 0) {
                c->parent[k] = f;
            }
            state[k] = 2;
        }
    }

    /* Parents first: children in their original order, preorder walk. */
    for (size_t i = 0; i < n; i++)
        first[i] = last[i] = next[i] = -1;
    int64_t roots = -1, roots_last = -1;
    for (size_t i = 0; i < n; i++) {
        int64_t p = c->parent[i];
        int64_t *head = p >= 0 ? &first[p] : &roots, *tail = p >= 0 ? &last[p] : &roots_last;
        if (*tail >= 0)
            next[*tail] = (int64_t)i;
        else
            *head = (int64_t)i;
        *tail = (int64_t)i;
    }
    size_t k = 0, top = 0;
    int64_t *stack = chain; /* reused: at most n entries */
    for (int64_t r = roots; r >= 0; r = next[r]) {
        stack[top++] = r;
        while (top) {
            int64_t at = stack[--top];
            order[k++] = (size_t)at;
            /* push children in reverse so the first pops first */
            size_t mark = top;
            for (int64_t ch = first[at]; ch >= 0; ch = next[ch])
                stack[top++] = ch;
            for (size_t a = mark, b = top; a + 1 < b; a++, b--) {
                int64_t t = stack[a];
                stack[a] = stack[b - 1];
                stack[b - 1] = t;
            }
        }
    }
    if (merged_cycle || k != n) { /* (else: calls unreachable from every root) */
        rc = SP_GRAFT_CYCLE;
        goto out;
    }
    /* new position of each old call, for the parent column */
    int64_t *new_pos = first;
    for (size_t i = 0; i < n; i++)
        new_pos[order[i]] = (int64_t)i;
    for (size_t i = 0; i < n; i++)
        if (c->parent[i] >= 0)
            c->parent[i] = new_pos[c->parent[i]];
    if (permute(c->start, sizeof *c->start, order, n) || permute(c->end, sizeof *c->end, order, n) ||
        permute(c->region, sizeof *c->region, order, n) ||
        permute(c->call_index, sizeof *c->call_index, order, n) ||
        permute(c->parent, sizeof *c->parent, order, n) ||
        permute(c->exclusive, sizeof *c->exclusive, order, n) ||
        permute(c->lane, sizeof *c->lane, order, n) ||
        permute(c->input_pos, sizeof *c->input_pos, order, n) ||
        permute(data->event, sizeof *data->event, order, n) ||
        permute(data->call_id, sizeof *data->call_id, order, n))
        goto out;
    if (info) {
        /* fork parents in the new order (reusing `last`, free below) */
        for (size_t i = 0; i < n; i++)
            last[i] = fork[order[i]] >= 0 ? new_pos[fork[order[i]]] : -1;
        if (permute(own_lane, sizeof *own_lane, order, n) != 0)
            goto out;
        info->fork_of = last;
        info->own_lane = own_lane;
        last = own_lane = NULL;
    }
    for (size_t i = 0; i < n; i++) {
        c->depth[i] = c->parent[i] >= 0 ? c->depth[c->parent[i]] + 1 : 0;
        if (data->parent_id)
            data->parent_id[i] = c->parent[i] >= 0 ? data->call_id[c->parent[i]] : -1;
    }
    rc = 0;
out:
    free(index_of);
    free(fork);
    free(state);
    free(chain);
    free(first);
    free(last);
    free(next);
    free(order);
    free(own_lane);
    return rc;
}

int sp_graft_failure(int rc, uint32_t rank, char *err, size_t errlen)
{
    if (rc == SP_GRAFT_CYCLE)
        snprintf(err, errlen,
                 "rank %u: its fork parent ids form a cycle (a call forked by itself or by a "
                 "call under it): the file is damaged; --no-graft shows each lane as recorded",
                 rank);
    else
        snprintf(err, errlen, "out of memory grafting forked calls of rank %u", rank);
    return -1;
}
