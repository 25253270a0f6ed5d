/* capture_forks.c - the capture's fork edges as the events/fork_parent_ids
 * column (see capture_internal.h).
 *
 * An edge names its calls by (thread, region, ordinal): the ordinal-th call
 * of that region recorded by that thread.  Rows keep recording order within
 * a region, so walking a row and counting per thread finds every position. */
#include <stdlib.h>
#include <string.h>

#include "capture/capture_internal.h"

struct key {
    int64_t thread, ordinal;
    uint32_t region;
    int64_t pos;              /* event position, -1 until found */
};

struct key_table {
    struct key *slots;        /* region UINT32_MAX: empty */
    size_t mask;
};

static size_t key_hash(int64_t thread, uint32_t region, int64_t ordinal)
{
    uint64_t h = (uint64_t)thread * 0x9E3779B97F4A7C15ull ^ (uint64_t)region * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)ordinal * 0x165667B19E3779F9ull;
    return (size_t)(h ^ (h >> 29));
}

/* The slot of the key, inserted when `add` (the table never fills: it has
 * twice as many slots as keys). */
static struct key *key_slot(struct key_table *t, int64_t thread, uint32_t region,
                            int64_t ordinal, int add)
{
    for (size_t s = key_hash(thread, region, ordinal) & t->mask;; s = (s + 1) & t->mask) {
        struct key *k = &t->slots[s];
        if (k->region == UINT32_MAX) {
            if (!add)
                return NULL;
            *k = (struct key){thread, ordinal, region, -1};
            return k;
        }
        if (k->thread == thread && k->region == region && k->ordinal == ordinal)
            return k;
    }
}

int sp_capture_add_forks(sp_profile *p, const sp_capture *c, const int64_t *row_of)
{
    if (!c->num_fork_edges || !p->call_ids || !p->thread_ids || !p->num_events)
        return 0;
    struct key_table t;
    size_t slots = 16;
    while (slots < c->num_fork_edges * 4)
        slots *= 2;
    t.mask = slots - 1;
    t.slots = malloc(slots * sizeof *t.slots);
    uint8_t *wanted = calloc(c->num_regions ? c->num_regions : 1, 1);
    int64_t max_thread = -1;
    for (size_t i = 0; i < p->num_threads; i++)
        if (p->threads[i].index > max_thread)
            max_thread = p->threads[i].index;
    for (size_t i = 0; i < c->num_fork_edges; i++)
        if (c->fork_edges[i].child_thread > max_thread)
            max_thread = c->fork_edges[i].child_thread;
    int64_t *counts = calloc((size_t)(max_thread + 1) + 1, sizeof *counts);
    if (!t.slots || !wanted || !counts)
        goto oom;
    for (size_t s = 0; s < slots; s++)
        t.slots[s].region = UINT32_MAX;

    /* Every call an edge names, and the regions to walk. */
    for (size_t i = 0; i < c->num_fork_edges; i++) {
        const sp_fork_edge *e = &c->fork_edges[i];
        if (e->parent_region >= c->num_regions ||
            (e->child_ordinal >= 0 && e->child_region >= c->num_regions))
            continue;
        key_slot(&t, e->parent_thread, e->parent_region, e->parent_ordinal, 1);
        wanted[e->parent_region] = 1;
        if (e->child_ordinal >= 0) {
            key_slot(&t, e->child_thread, e->child_region, e->child_ordinal, 1);
            wanted[e->child_region] = 1;
        }
    }
    for (size_t r = 0; r < c->num_regions; r++) {
        if (!wanted[r] || row_of[r] < 0)
            continue;
        const sp_row *row = &p->rows[row_of[r]];
        memset(counts, 0, (size_t)(max_thread + 2) * sizeof *counts);
        for (uint64_t j = 0; j < row->count; j++) {
            uint64_t at = row->offset + j;
            int64_t thread = p->thread_ids[at];
            if (thread < 0 || thread > max_thread)
                continue;
            struct key *k = key_slot(&t, thread, (uint32_t)r, counts[thread]++, 0);
            if (k)
                k->pos = (int64_t)at;
        }
    }

    /* Parents of pthreads' root calls, by child thread (-1: none). */
    int64_t *root_parent = malloc((size_t)(max_thread + 1) * sizeof *root_parent);
    if (!(p->fork_parent_ids = malloc(p->num_events * sizeof *p->fork_parent_ids)) ||
        !root_parent) {
        free(root_parent);
        goto oom;
    }
    for (int64_t i = 0; i <= max_thread; i++)
        root_parent[i] = -1;
    for (size_t i = 0; i < p->num_events; i++)
        p->fork_parent_ids[i] = -1;
    size_t linked = 0;
    int any_roots = 0;
    for (size_t i = 0; i < c->num_fork_edges; i++) {
        const sp_fork_edge *e = &c->fork_edges[i];
        if (e->parent_region >= c->num_regions || e->child_thread < 0)
            continue;
        const struct key *parent = key_slot(&t, e->parent_thread, e->parent_region,
                                            e->parent_ordinal, 0);
        if (!parent || parent->pos < 0)
            continue; /* the parent call was dropped (memory cap, reset) */
        int64_t parent_id = p->call_ids[parent->pos];
        if (e->child_ordinal < 0) {
            root_parent[e->child_thread] = parent_id;
            any_roots = 1;
            continue;
        }
        if (e->child_region >= c->num_regions)
            continue;
        const struct key *child = key_slot(&t, e->child_thread, e->child_region,
                                           e->child_ordinal, 0);
        if (child && child->pos >= 0) {
            p->fork_parent_ids[child->pos] = parent_id;
            linked++;
        }
    }
    /* A pthread's root calls outside any task hang under the creator's call. */
    for (size_t i = 0; any_roots && p->parent_ids && i < p->num_events; i++) {
        int64_t thread = p->thread_ids[i];
        if (thread < 0 || thread > max_thread || root_parent[thread] < 0 ||
            p->parent_ids[i] >= 0 || (p->task_ids && p->task_ids[i] >= 0) ||
            p->fork_parent_ids[i] >= 0)
            continue;
        p->fork_parent_ids[i] = root_parent[thread];
        linked++;
    }
    free(root_parent);
    if (!linked) {
        free(p->fork_parent_ids);
        p->fork_parent_ids = NULL;
    }
    free(t.slots);
    free(wanted);
    free(counts);
    return 0;
oom:
    free(t.slots);
    free(wanted);
    free(counts);
    return -1;
}
