/* Walking a reconstruction: per-region exclusive totals, child lists and
 * call paths, all without recursion or per-call allocation. */
#include "scopeprof/callstack.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void sp_exclusive_totals(const sp_calls *calls, size_t num_regions, int64_t *totals)
{
    for (size_t r = 0; r < num_regions; r++)
        totals[r] = 0;
    for (size_t k = 0; k < calls->n; k++)
        if (calls->region[k] < num_regions)
            /* wraps instead of overflowing on absurd (hostile) timestamps */
            totals[calls->region[k]] = (int64_t)((uint64_t)totals[calls->region[k]] +
                                                 (uint64_t)calls->exclusive[k]);
}

void sp_calls_children(const sp_calls *calls, int64_t *first_child,
                       int64_t *next_sibling, int64_t *first_root)
{
    for (size_t k = 0; k < calls->n; k++)
        first_child[k] = -1;
    /* Prepending from the last call leaves every list in start order. */
    int64_t root = -1;
    for (size_t k = calls->n; k-- > 0;) {
        int64_t parent = calls->parent[k];
        int64_t *head = parent < 0 ? &root : &first_child[parent];
        next_sibling[k] = *head;
        *head = (int64_t)k;
    }
    *first_root = root;
}

/* Name of region r, or "#r" (in spare) when no name is known. */
static const char *region_name(const char *const *names, uint32_t region,
                               char *spare, size_t spare_len)
{
    if (names && names[region])
        return names[region];
    snprintf(spare, spare_len, "#%" PRIu32, region);
    return spare;
}

/* Copies the part of `piece` that lands at [at, at + len) of the full path
 * and inside the buffer (which keeps its last byte for the NUL). */
static void place(char *buf, size_t buflen, size_t at, const char *piece, size_t len)
{
    if (buflen == 0 || at >= buflen - 1)
        return;
    size_t room = buflen - 1 - at;
    memcpy(buf + at, piece, len < room ? len : room);
}

size_t sp_call_path(const sp_calls *calls, const char *const *region_names,
                    size_t i, const char *sep, char *buf, size_t buflen)
{
    if (!sep)
        sep = " > ";
    size_t sep_len = strlen(sep), total = 0;
    char spare[16];
    /* First walk: the full length.  Second walk: write leaf-to-root from
     * the end, so no per-path stack of ancestors is needed. */
    for (int64_t k = (int64_t)i; k >= 0; k = calls->parent[k]) {
        total += strlen(region_name(region_names, calls->region[k], spare, sizeof spare));
        if (calls->parent[k] >= 0)
            total += sep_len;
    }
    size_t at = total;
    for (int64_t k = (int64_t)i; k >= 0; k = calls->parent[k]) {
        const char *name = region_name(region_names, calls->region[k], spare, sizeof spare);
        size_t len = strlen(name);
        at -= len;
        place(buf, buflen, at, name, len);
        if (calls->parent[k] >= 0) {
            at -= sep_len;
            place(buf, buflen, at, sep, sep_len);
        }
    }
    if (buflen)
        buf[total < buflen ? total : buflen - 1] = '\0';
    return total;
}
