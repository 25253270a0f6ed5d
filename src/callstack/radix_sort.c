/* Stable LSD radix sorts on 64-bit keys.
 *
 * One read pass finds the span of bits in which keys differ at all; only
 * that span is sorted, in passes of equal digit width.  Small inputs use
 * 8-bit digits (cheap counter reset), large ones up to
 * SP_RADIX_MAX_DIGIT_BITS (fewer passes, counters still cache-resident). */
#include "callstack/radix_sort.h"

#include <stdlib.h>

#ifndef SP_RADIX_MAX_DIGIT_BITS
#define SP_RADIX_MAX_DIGIT_BITS 12
#endif

enum { MAX_PASSES = 16, SMALL_INPUT = 1 << 14 };

typedef struct radix_plan {
    unsigned bits;
    unsigned num_passes;
    unsigned shift[MAX_PASSES];
    size_t *counts; /* num_passes blocks of 2^bits counters */
} radix_plan;

/* Plans passes of equal width over the span of bits in which `diff` (the OR
 * of all key ^ first_key, non-zero) has bits set: a 35-bit span becomes
 * three 12-bit digits rather than 16 + 16 + 3.  Returns -1 if the counters
 * cannot be allocated. */
static int plan_passes(radix_plan *plan, uint64_t diff, size_t n)
{
    unsigned max_bits = n < SMALL_INPUT ? 8 : SP_RADIX_MAX_DIGIT_BITS;
    unsigned low = (unsigned)__builtin_ctzll(diff), high = 63 - (unsigned)__builtin_clzll(diff);
    unsigned span = high - low + 1;
    unsigned passes = (span + max_bits - 1) / max_bits;
    plan->bits = (span + passes - 1) / passes;
    plan->num_passes = passes;
    for (unsigned p = 0; p < passes; p++)
        plan->shift[p] = low + p * plan->bits;
    plan->counts = calloc((size_t)passes << plan->bits, sizeof *plan->counts);
    return plan->counts ? 0 : -1;
}

/* Turns the per-pass digit counts into the first output slot of each digit. */
static void counts_to_offsets(radix_plan *plan)
{
    size_t radix = (size_t)1 << plan->bits;
    for (unsigned p = 0; p < plan->num_passes; p++) {
        size_t *block = plan->counts + p * radix, sum = 0;
        for (size_t d = 0; d < radix; d++) {
            size_t count = block[d];
            block[d] = sum;
            sum += count;
        }
    }
}

/* Plan and digit offsets for n (>= 2) stored keys, sorted on the bits
 * `considered`: 1 when they are equal there (nothing to sort), 0 with the
 * plan ready, -1 if out of memory. */
static int plan_stored_keys(radix_plan *plan, const uint64_t *key, size_t n,
                            uint64_t considered)
{
    uint64_t first = key[0], diff = 0;
    for (size_t i = 1; i < n; i++)
        diff |= key[i] ^ first;
    diff &= considered;
    if (!diff)
        return 1;
    if (plan_passes(plan, diff, n) != 0)
        return -1;
    size_t radix = (size_t)1 << plan->bits;
    uint64_t mask = radix - 1;
    for (size_t i = 0; i < n; i++)
        for (unsigned p = 0; p < plan->num_passes; p++)
            plan->counts[p * radix + ((key[i] >> plan->shift[p]) & mask)]++;
    counts_to_offsets(plan);
    return 0;
}

int sp_radix_sort_pairs(size_t n, uint64_t **keys, uint64_t **indices,
                        uint64_t **keys_spare, uint64_t **indices_spare)
{
    if (n < 2)
        return 0;
    radix_plan plan;
    int planned = plan_stored_keys(&plan, *keys, n, ~UINT64_C(0));
    if (planned != 0)
        return planned < 0 ? -1 : 0;
    size_t radix = (size_t)1 << plan.bits;
    uint64_t mask = radix - 1;

    uint64_t *src_key = *keys, *src_idx = *indices;
    uint64_t *dst_key = *keys_spare, *dst_idx = *indices_spare;
    for (unsigned p = 0; p < plan.num_passes; p++) {
        size_t *next = plan.counts + p * radix;
        unsigned shift = plan.shift[p];
        for (size_t i = 0; i < n; i++) {
            uint64_t k = src_key[i];
            size_t slot = next[(k >> shift) & mask]++;
            dst_key[slot] = k;
            dst_idx[slot] = src_idx[i];
        }
        uint64_t *t = src_key; src_key = dst_key; dst_key = t;
        t = src_idx; src_idx = dst_idx; dst_idx = t;
    }
    free(plan.counts);
    *keys = src_key;
    *indices = src_idx;
    *keys_spare = dst_key;
    *indices_spare = dst_idx;
    return 0;
}

uint64_t *sp_radix_sort_indices(size_t n, const int64_t *column, int descending,
                                uint64_t *indices, uint64_t *spare)
{
    if (n < 2)
        return indices;
    uint64_t flip = descending ? ~UINT64_C(0) : 0;
    uint64_t first = sp_radix_key_ascending(column[indices[0]]) ^ flip, diff = 0;
    for (size_t i = 1; i < n; i++)
        diff |= (sp_radix_key_ascending(column[indices[i]]) ^ flip) ^ first;
    if (!diff)
        return indices;

    radix_plan plan;
    if (plan_passes(&plan, diff, n) != 0)
        return NULL;
    size_t radix = (size_t)1 << plan.bits;
    uint64_t mask = radix - 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = sp_radix_key_ascending(column[indices[i]]) ^ flip;
        for (unsigned p = 0; p < plan.num_passes; p++)
            plan.counts[p * radix + ((k >> plan.shift[p]) & mask)]++;
    }
    counts_to_offsets(&plan);

    uint64_t *src = indices, *dst = spare;
    for (unsigned p = 0; p < plan.num_passes; p++) {
        size_t *next = plan.counts + p * radix;
        unsigned shift = plan.shift[p];
        for (size_t i = 0; i < n; i++) {
            uint64_t k = sp_radix_key_ascending(column[src[i]]) ^ flip;
            dst[next[(k >> shift) & mask]++] = src[i];
        }
        uint64_t *t = src; src = dst; dst = t;
    }
    free(plan.counts);
    return src;
}

int sp_radix_sort_words(size_t n, unsigned low_bit, uint64_t **words, uint64_t **spare)
{
    if (n < 2 || low_bit >= 64)
        return 0;
    radix_plan plan;
    int planned = plan_stored_keys(&plan, *words, n, ~UINT64_C(0) << low_bit);
    if (planned != 0)
        return planned < 0 ? -1 : 0;
    size_t radix = (size_t)1 << plan.bits;
    uint64_t mask = radix - 1;

    uint64_t *src = *words, *dst = *spare;
    for (unsigned p = 0; p < plan.num_passes; p++) {
        size_t *next = plan.counts + p * radix;
        unsigned shift = plan.shift[p];
        for (size_t i = 0; i < n; i++) {
            uint64_t w = src[i];
            dst[next[(w >> shift) & mask]++] = w;
        }
        uint64_t *t = src; src = dst; dst = t;
    }
    free(plan.counts);
    *words = src;
    *spare = dst;
    return 0;
}
