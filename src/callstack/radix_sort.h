/* radix_sort.h - stable LSD radix sorts on 64-bit keys (internal).
 *
 * Used by the call-tree reconstruction to order calls in O(n).  Digits that
 * are equal in every key are skipped, so timestamps spanning a few seconds
 * or lane ids spanning a few values cost one to three passes. */
#ifndef SCOPEPROF_RADIX_SORT_H
#define SCOPEPROF_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Order-preserving maps from int64 to uint64 keys. */
static inline uint64_t sp_radix_key_ascending(int64_t value)
{
    return (uint64_t)value ^ UINT64_C(0x8000000000000000);
}
static inline uint64_t sp_radix_key_descending(int64_t value)
{
    return ~sp_radix_key_ascending(value);
}

/* Sorts words[0..n) by their bits from low_bit up, keeping words that are
 * equal there in their current order (the low bits ride along: the caller
 * packs an index into them).  *words and *spare (n entries) are swapped so
 * that *words holds the result.  Returns 0, or -1 (counters not allocated,
 * words unsorted). */
int sp_radix_sort_words(size_t n, unsigned low_bit, uint64_t **words, uint64_t **spare);

/* Sorts the pairs (keys[i], indices[i]) by key, keeping equal keys in their
 * current order.  The two *_spare arrays (n entries each) are used as the
 * other half of each pass; on return the four pointers are swapped so that
 * *keys and *indices hold the sorted pairs and the spares hold garbage.
 * Returns 0, or -1 when the (small, fixed-size) digit counters cannot be
 * allocated, leaving the pairs unsorted. */
int sp_radix_sort_pairs(size_t n, uint64_t **keys, uint64_t **indices,
                        uint64_t **keys_spare, uint64_t **indices_spare);

/* Sorts indices[0..n) by the key of column[indices[i]] (ascending or, with
 * descending != 0, descending), keeping equal keys in their current order.
 * spare: n entries.  Returns the array holding the result (indices or spare),
 * or NULL when the digit counters cannot be allocated. */
uint64_t *sp_radix_sort_indices(size_t n, const int64_t *column, int descending,
                                uint64_t *indices, uint64_t *spare);

#endif /* SCOPEPROF_RADIX_SORT_H */
