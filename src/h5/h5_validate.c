/* h5_validate.c - structural rules every reader applies to the index
 * (spec §1.2): rows inside the event columns, rows not overlapping, region
 * ids inside the region table; and num_ranks. */
#include <stdlib.h>
#include <string.h>

#include "h5/h5_internal.h"

static const char *region_name(const sp_profile *profile, const sp_row *row)
{
    return row->region < profile->num_names ? profile->names[row->region] : "?";
}

static int by_offset(const void *a, const void *b, void *ctx)
{
    const sp_profile *profile = ctx;
    const sp_row *ra = &profile->rows[*(const size_t *)a];
    const sp_row *rb = &profile->rows[*(const size_t *)b];
    if (ra->offset != rb->offset)
        return ra->offset < rb->offset ? -1 : 1;
    return ra->count < rb->count ? -1 : ra->count > rb->count;
}

void sp_h5_validate_rows(const sp_profile *profile, uint64_t num_events, sp_problems *p)
{
    size_t bad_before = (size_t)p->count;
    for (size_t i = 0; i < profile->num_rows; i++) {
        const sp_row *row = &profile->rows[i];
        if (row->region >= profile->num_names)
            sp_problem(p, "row %zu names region id %u but the region table holds %zu names",
                       i, row->region, profile->num_names);
        if (row->offset > num_events || row->count > num_events - row->offset) {
            uint64_t held = row->offset < num_events ? num_events - row->offset : 0;
            sp_problem(p, "region '%s' of rank %u claims %llu recorded events but its event "
                       "columns hold %llu. The file is truncated or damaged.",
                       region_name(profile, row), row->rank,
                       (unsigned long long)row->count, (unsigned long long)held);
        }
    }
    if ((size_t)p->count != bad_before || profile->num_rows < 2)
        return;
    /* Overlap: sort non-empty rows by offset and compare neighbours. */
    size_t *order = malloc(profile->num_rows * sizeof *order);
    if (!order) {
        sp_problem(p, "out of memory while checking region rows");
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < profile->num_rows; i++)
        if (profile->rows[i].count > 0)
            order[n++] = i;
    qsort_r(order, n, sizeof *order, by_offset, (void *)profile);
    for (size_t k = 1; k < n; k++) {
        const sp_row *a = &profile->rows[order[k - 1]], *b = &profile->rows[order[k]];
        if (a->offset + a->count > b->offset)
            sp_problem(p, "overlapping region rows: '%s' of rank %u [%llu, +%llu) and '%s' "
                       "of rank %u [%llu, +%llu) share events",
                       region_name(profile, a), a->rank, (unsigned long long)a->offset,
                       (unsigned long long)a->count, region_name(profile, b), b->rank,
                       (unsigned long long)b->offset, (unsigned long long)b->count);
    }
    free(order);
}

void sp_h5_set_num_ranks(sp_profile *profile)
{
    if (profile->num_rows == 0) {
        profile->num_ranks = 0;
        return;
    }
    int64_t size = 1;
    if (sp_profile_meta_int(profile, "mpi_size", &size) < 0 || size < 1)
        size = 1;
    uint64_t ranks = size > UINT32_MAX ? UINT32_MAX : (uint64_t)size;
    for (size_t i = 0; i < profile->num_rows; i++)
        if ((uint64_t)profile->rows[i].rank + 1 > ranks)
            ranks = (uint64_t)profile->rows[i].rank + 1;
    profile->num_ranks = ranks > UINT32_MAX ? UINT32_MAX : (uint32_t)ranks;
}

/* Appends s as a JSON string (quotes and escapes) at out; returns length. */
static size_t json_quote(const char *s, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    out[k++] = '"';
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\') {
            out[k++] = '\\';
            out[k++] = (char)*c;
        } else if (*c < 0x20) {
            memcpy(out + k, "\\u00", 4);
            out[k + 4] = hex[*c >> 4];
            out[k + 5] = hex[*c & 15];
            k += 6;
        } else {
            out[k++] = (char)*c;
        }
    }
    out[k++] = '"';
    return k;
}

char *sp_json_string_list(const char *const *items, size_t n)
{
    size_t need = 3;
    for (size_t i = 0; i < n; i++)
        need += 6 * strlen(items[i]) + 4;
    char *out = malloc(need);
    if (!out)
        return NULL;
    size_t k = 0;
    out[k++] = '[';
    for (size_t i = 0; i < n; i++) {
        if (i) {
            out[k++] = ',';
            out[k++] = ' ';
        }
        k += json_quote(items[i], out + k);
    }
    out[k++] = ']';
    out[k] = '\0';
    return out;
}
