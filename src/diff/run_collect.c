/* run_collect.c - one run's per-key accumulators (run_collect.h): what a
 * comparison needs beyond the report's sums, the spread of the durations, a
 * sample of them for percentiles, and per-rank totals for the imbalance. */
#include "run_collect.h"

#include <stdlib.h>
#include <string.h>

#include "scopeprof/diff.h"

void run_collect_init(run_collect *c, int by_name)
{
    memset(c, 0, sizeof *c);
    c->by_name = by_name;
    sp_path_tree_init(&c->tree);
}

void run_collect_free(run_collect *c)
{
    for (size_t k = 0; k < c->num_acc; k++) {
        free(c->acc[k].samples);
        free(c->pending[k].v);
    }
    free(c->acc);
    free(c->pending);
    free(c->touched);
    free(c->node_of_call);
    free(c->slot_of_node);
    sp_path_tree_free(&c->tree);
    memset(c, 0, sizeof *c);
}

int run_collect_grow(run_collect *c, size_t slots)
{
    if (slots <= c->num_acc)
        return 0;
    size_t n = c->num_acc ? c->num_acc : 64;
    while (n < slots)
        n *= 2;
    key_acc *grown = realloc(c->acc, n * sizeof *grown);
    if (!grown)
        return -1;
    c->acc = grown;
    pending_queue *queues = realloc(c->pending, n * sizeof *queues);
    if (!queues)
        return -1; /* acc grown, num_acc not: the next call grows both again */
    c->pending = queues;
    memset(grown + c->num_acc, 0, (n - c->num_acc) * sizeof *grown);
    memset(queues + c->num_acc, 0, (n - c->num_acc) * sizeof *queues);
    c->num_acc = n;
    return 0;
}

void run_collect_begin_rank(run_collect *c)
{
    c->rank_stamp++;
    c->num_touched = 0;
}

void run_collect_end_rank(run_collect *c)
{
    for (size_t k = 0; k < c->num_touched; k++) {
        key_acc *a = &c->acc[c->touched[k]];
        if (a->rank_total > a->rank_max)
            a->rank_max = a->rank_total;
    }
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state; /* xorshift64*: reproducible, seeded per key */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Reservoir sampling keeps a uniform sample of at most SP_DIFF_SAMPLE_CAP. */
static int add_sample(key_acc *a, size_t slot, int64_t duration)
{
    if (a->num_samples < SP_DIFF_SAMPLE_CAP) {
        if (a->num_samples == a->cap) {
            size_t ncap = a->cap ? 2 * a->cap : 16;
            int64_t *grown = realloc(a->samples, ncap * sizeof *grown);
            if (!grown)
                return -1;
            a->samples = grown;
            a->cap = ncap;
        }
        a->samples[a->num_samples++] = duration;
        return 0;
    }
    if (!a->rng)
        a->rng = 0x9E3779B97F4A7C15ull * (slot + 1);
    uint64_t j = next_random(&a->rng) % a->calls;
    if (j < SP_DIFF_SAMPLE_CAP)
        a->samples[j] = duration;
    return 0;
}

int run_collect_duration(run_collect *c, size_t slot, int64_t duration)
{
    key_acc *a = &c->acc[slot];
    if (a->calls == 0 || duration < a->minimum)
        a->minimum = duration;
    if (a->calls == 0 || duration > a->maximum)
        a->maximum = duration;
    a->calls++;
    double d = (double)duration;
    a->total += d;
    double dm = d - a->mean_incl;
    a->mean_incl += dm / (double)a->calls;
    a->m2_incl += dm * (d - a->mean_incl);
    if (a->rank_stamp != c->rank_stamp) {
        a->rank_stamp = c->rank_stamp;
        a->rank_total = 0;
        if (c->num_touched == c->touched_cap) {
            size_t ncap = c->touched_cap ? 2 * c->touched_cap : 64;
            uint32_t *grown = realloc(c->touched, ncap * sizeof *grown);
            if (!grown)
                return -1;
            c->touched = grown;
            c->touched_cap = ncap;
        }
        c->touched[c->num_touched++] = (uint32_t)slot;
    }
    a->rank_total += d;
    return add_sample(a, slot, duration);
}

void run_collect_own(run_collect *c, size_t slot, int64_t exclusive)
{
    key_acc *a = &c->acc[slot];
    a->own_calls++;
    double e = (double)exclusive;
    a->own += e;
    double em = e - a->mean_own;
    a->mean_own += em / (double)a->own_calls;
    a->m2_own += em * (e - a->mean_own);
}

int run_collect_on_rank(void *ctx, const sp_profile *profile, const sp_rank_data *data)
{
    run_collect *c = ctx;
    const sp_calls *calls = &data->calls;
    run_collect_begin_rank(c);
    if (calls->n == 0)
        return 0;
    if (!c->by_name) {
        if (calls->n > c->node_cap) {
            free(c->node_of_call);
            c->node_of_call = malloc(calls->n * sizeof *c->node_of_call);
            c->node_cap = c->node_of_call ? calls->n : 0;
            if (!c->node_of_call)
                return -1;
        }
        /* The nodes sp_path_tree_add would make, in its order (parents come
         * first); sources are not needed, so any profile naming the regions
         * will do (the skeleton, for a rank the stream read in memory). */
        for (size_t i = 0; i < calls->n; i++) {
            int64_t parent = calls->parent[i] >= 0 ? c->node_of_call[calls->parent[i]] : -1;
            int64_t node = sp_path_tree_child(&c->tree, parent, SP_PATH_REGION, calls->region[i]);
            if (node < 0)
                return -1;
            c->node_of_call[i] = node;
        }
    }
    if (run_collect_grow(c, c->by_name ? profile->num_names : c->tree.n) != 0)
        return -1;
    for (size_t i = 0; i < calls->n; i++) {
        size_t slot = c->by_name ? calls->region[i] : (size_t)c->node_of_call[i];
        if (run_collect_duration(c, slot, calls->end[i] - calls->start[i]) != 0)
            return -1;
        run_collect_own(c, slot, calls->exclusive[i]);
    }
    run_collect_end_rank(c);
    return 0;
}
