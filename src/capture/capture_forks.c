/* capture_forks.c - the capture's fork edges as event positions, for the
 * events/fork_parent_ids column of both writers (capture_internal.h).
 *
 * An edge names its calls by (thread, region, ordinal): the ordinal-th call
 * of that region recorded by that thread.  Rows keep recording order within
 * a region, so counting a region's events per thread in row order finds
 * every call an edge names, whatever the writer. */
#include <stdlib.h>
#include <string.h>

#include "capture/capture_internal.h"

struct fork_key {
    int64_t thread, ordinal;  /* ordinal -1: a (thread, region) counter */
    uint32_t region;          /* UINT32_MAX: empty slot */
    int64_t value;            /* position found (-1 not yet), or the count */
};

static uint64_t key_hash(int64_t thread, uint32_t region, int64_t ordinal)
{
    uint64_t h = (uint64_t)thread * 0x9E3779B97F4A7C15ull ^ (uint64_t)region * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)ordinal * 0x165667B19E3779F9ull;
    return h ^ (h >> 29);
}

/* The slot of a key, added when `add`; NULL when absent (or no memory). */
static struct fork_key *slot(sp_fork_resolver *r, int64_t thread, uint32_t region,
                             int64_t ordinal, int add)
{
    if (add && (r->used + 1) * 2 > r->mask + 1) {
        size_t cap = (r->mask + 1) * 2;
        struct fork_key *grown = malloc(cap * sizeof *grown);
        if (!grown)
            return NULL;
        for (size_t s = 0; s < cap; s++)
            grown[s].region = UINT32_MAX;
        for (size_t s = 0; s <= r->mask; s++) {
            struct fork_key *k = &r->keys[s];
            if (k->region == UINT32_MAX)
                continue;
            size_t t = key_hash(k->thread, k->region, k->ordinal) & (cap - 1);
            while (grown[t].region != UINT32_MAX)
                t = (t + 1) & (cap - 1);
            grown[t] = *k;
        }
        free(r->keys);
        r->keys = grown;
        r->mask = cap - 1;
    }
    for (size_t s = key_hash(thread, region, ordinal) & r->mask;; s = (s + 1) & r->mask) {
        struct fork_key *k = &r->keys[s];
        if (k->region == UINT32_MAX) {
            if (!add)
                return NULL;
            *k = (struct fork_key){thread, ordinal, region, ordinal < 0 ? 0 : -1};
            r->used++;
            return k;
        }
        if (k->thread == thread && k->region == region && k->ordinal == ordinal)
            return k;
    }
}

int sp_fork_resolver_init(sp_fork_resolver *r, const sp_capture *c)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    if (!c->num_fork_edges || !c->track_threads)
        return 0;
    r->mask = 63;
    r->keys = malloc((r->mask + 1) * sizeof *r->keys);
    r->wanted = calloc(c->num_regions ? c->num_regions : 1, 1);
    if (!r->keys || !r->wanted)
        return -1;
    for (size_t s = 0; s <= r->mask; s++)
        r->keys[s].region = UINT32_MAX;
    for (size_t i = 0; i < c->num_fork_edges; i++) {
        const sp_fork_edge *e = &c->fork_edges[i];
        if (e->parent_region >= c->num_regions || e->parent_ordinal < 0 || e->child_thread < 0 ||
            (e->child_ordinal >= 0 && e->child_region >= c->num_regions))
            continue;
        if (!slot(r, e->parent_thread, e->parent_region, e->parent_ordinal, 1))
            return -1;
        r->wanted[e->parent_region] = 1;
        if (e->child_ordinal >= 0) {
            if (!slot(r, e->child_thread, e->child_region, e->child_ordinal, 1))
                return -1;
            r->wanted[e->child_region] = 1;
        }
        r->active = 1;
    }
    return 0;
}

int sp_fork_resolver_see(sp_fork_resolver *r, int64_t thread, uint32_t region, uint64_t pos)
{
    if (!r->active || region >= r->c->num_regions || !r->wanted[region] || thread < 0)
        return 0;
    struct fork_key *count = slot(r, thread, region, -1, 1);
    if (!count)
        return -1;
    struct fork_key *k = slot(r, thread, region, count->value++, 0);
    if (k)
        k->value = (int64_t)pos;
    return 0;
}

static int by_child(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

int sp_fork_resolver_finish(sp_fork_resolver *r)
{
    if (!r->active)
        return 0;
    const sp_capture *c = r->c;
    size_t n = 0;
    int64_t max_thread = -1;
    for (size_t i = 0; i < c->num_fork_edges; i++)
        if (c->fork_edges[i].child_thread > max_thread)
            max_thread = c->fork_edges[i].child_thread;
    r->pairs = malloc((c->num_fork_edges ? c->num_fork_edges : 1) * 2 * sizeof *r->pairs);
    r->root_parent = malloc((size_t)(max_thread + 1) * sizeof *r->root_parent);
    if (!r->pairs || !r->root_parent)
        return -1;
    r->num_threads = (size_t)(max_thread + 1);
    for (size_t t = 0; t < r->num_threads; t++)
        r->root_parent[t] = -1;
    int links = 0;
    for (size_t i = 0; i < c->num_fork_edges; i++) {
        const sp_fork_edge *e = &c->fork_edges[i];
        if (e->parent_region >= c->num_regions || e->parent_ordinal < 0 || e->child_thread < 0)
            continue;
        const struct fork_key *parent = slot(r, e->parent_thread, e->parent_region,
                                             e->parent_ordinal, 0);
        if (!parent || parent->value < 0)
            continue; /* the parent call was not kept (memory cap, reset) */
        if (e->child_ordinal < 0) {
            r->root_parent[e->child_thread] = parent->value;
            links = 1;
            continue;
        }
        if (e->child_region >= c->num_regions)
            continue;
        const struct fork_key *child = slot(r, e->child_thread, e->child_region,
                                            e->child_ordinal, 0);
        if (child && child->value >= 0) {
            r->pairs[2 * n] = child->value;
            r->pairs[2 * n + 1] = parent->value;
            n++;
            links = 1;
        }
    }
    qsort(r->pairs, n, 2 * sizeof *r->pairs, by_child);
    r->num_pairs = n;
    r->linked = links;
    return 0;
}

int64_t sp_fork_resolver_parent(const sp_fork_resolver *r, uint64_t pos, int64_t thread,
                                int64_t parent, int64_t task)
{
    if (!r->linked)
        return -1;
    size_t lo = 0, hi = r->num_pairs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->pairs[2 * mid] < (int64_t)pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < r->num_pairs && r->pairs[2 * lo] == (int64_t)pos)
        return r->pairs[2 * lo + 1];
    /* a thread's root calls outside tasks hang under its creator's call */
    if (parent < 0 && task < 0 && thread >= 0 && (size_t)thread < r->num_threads)
        return r->root_parent[thread];
    return -1;
}

void sp_fork_resolver_free(sp_fork_resolver *r)
{
    free(r->keys);
    free(r->wanted);
    free(r->pairs);
    free(r->root_parent);
    memset(r, 0, sizeof *r);
}

int sp_capture_add_forks(sp_profile *p, const sp_capture *c, const int64_t *row_of)
{
    if (!c->num_fork_edges || !p->call_ids || !p->parent_ids || !p->thread_ids ||
        !p->num_events)
        return 0;
    sp_fork_resolver r;
    int rc = sp_fork_resolver_init(&r, c);
    /* each wanted row in recording order */
    for (size_t reg = 0; rc == 0 && r.active && reg < c->num_regions; reg++) {
        if (!r.wanted[reg] || row_of[reg] < 0)
            continue;
        const sp_row *row = &p->rows[row_of[reg]];
        for (uint64_t j = 0; rc == 0 && j < row->count; j++)
            rc = sp_fork_resolver_see(&r, p->thread_ids[row->offset + j], (uint32_t)reg,
                                      row->offset + j);
    }
    if (rc == 0)
        rc = sp_fork_resolver_finish(&r);
    if (rc == 0 && r.linked) {
        if (!(p->fork_parent_ids = malloc(p->num_events * sizeof *p->fork_parent_ids)))
            rc = -1;
        /* present whenever an edge names a kept parent, as the streaming
         * writer does (which cannot know beforehand whether the child
         * calls exist) */
        for (size_t i = 0; rc == 0 && i < p->num_events; i++) {
            int64_t at = sp_fork_resolver_parent(&r, i, p->thread_ids[i], p->parent_ids[i],
                                                 p->task_ids ? p->task_ids[i] : -1);
            p->fork_parent_ids[i] = at >= 0 ? p->call_ids[at] : -1;
        }
    }
    sp_fork_resolver_free(&r);
    return rc;
}
