/* h5_chunk_seen.c - stored chunks already decoded once, so a check that a
 * column reads need not decompress their copies.  HDF5 decodes a chunk from
 * its stored bytes, its filter mask, and the dataset's filter pipeline and
 * type alone: two chunks with the same of all of these decode alike, so one
 * that read vouches for the other.  Columns are grouped by equal creation
 * properties (pipeline, chunk size) and type; within a group, chunks are
 * kept by their stored bytes (compared whole, not just hashed). */
#include <stdlib.h>
#include <string.h>

#include "h5/h5_internal.h"

/* Only small stored chunks repeat in practice (a run of one value: a
 * column's -1s); the budget bounds the copies. */
#define SEEN_MAX_CHUNK ((size_t)16 << 10)
#define SEEN_BUDGET ((size_t)16 << 20)

typedef struct seen_chunk {
    uint64_t hash;
    uint32_t mask;
    size_t size;
    unsigned char *bytes; /* NULL: empty slot */
} seen_chunk;

typedef struct seen_group {
    hid_t dcpl, type;
    seen_chunk *slots;
    size_t num, cap; /* cap: a power of two */
} seen_group;

struct sp_h5_chunk_seen {
    seen_group *groups;
    size_t num_groups;
    size_t bytes;
};

sp_h5_chunk_seen *sp_h5_chunk_seen_new(void)
{
    return calloc(1, sizeof(sp_h5_chunk_seen));
}

void sp_h5_chunk_seen_free(sp_h5_chunk_seen *s)
{
    if (!s)
        return;
    for (size_t g = 0; g < s->num_groups; g++) {
        seen_group *gr = &s->groups[g];
        for (size_t i = 0; i < gr->cap; i++)
            free(gr->slots[i].bytes);
        free(gr->slots);
        H5Pclose(gr->dcpl);
        H5Tclose(gr->type);
    }
    free(s->groups);
    free(s);
}

size_t sp_h5_chunk_seen_max(void)
{
    return SEEN_MAX_CHUNK;
}

long sp_h5_chunk_seen_group(sp_h5_chunk_seen *s, hid_t dset)
{
    hid_t dcpl = H5Dget_create_plist(dset), type = H5Dget_type(dset);
    long found = -1;
    for (size_t g = 0; dcpl >= 0 && type >= 0 && g < s->num_groups && found < 0; g++)
        if (H5Pequal(s->groups[g].dcpl, dcpl) > 0 && H5Tequal(s->groups[g].type, type) > 0)
            found = (long)g;
    if (found < 0 && dcpl >= 0 && type >= 0) {
        seen_group *grown = realloc(s->groups, (s->num_groups + 1) * sizeof *grown);
        if (grown) {
            s->groups = grown;
            grown[s->num_groups] = (seen_group){.dcpl = dcpl, .type = type};
            found = (long)s->num_groups++;
            return found; /* the group keeps both */
        }
    }
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (type >= 0)
        H5Tclose(type);
    return found;
}

static uint64_t hash_bytes(const unsigned char *b, size_t n, uint32_t mask)
{
    uint64_t h = 1469598103934665603ull ^ mask;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h ^ n;
}

static seen_chunk *slot_for(seen_group *gr, uint64_t hash, uint32_t mask,
                            const unsigned char *b, size_t n)
{
    for (size_t i = hash & (gr->cap - 1);; i = (i + 1) & (gr->cap - 1)) {
        seen_chunk *c = &gr->slots[i];
        if (!c->bytes || (c->hash == hash && c->mask == mask && c->size == n &&
                          !memcmp(c->bytes, b, n)))
            return c;
    }
}

int sp_h5_chunk_seen_has(sp_h5_chunk_seen *s, long group, uint32_t mask,
                         const unsigned char *bytes, size_t n)
{
    if (group < 0 || (size_t)group >= s->num_groups || !s->groups[group].cap)
        return 0;
    seen_group *gr = &s->groups[group];
    return slot_for(gr, hash_bytes(bytes, n, mask), mask, bytes, n)->bytes != NULL;
}

void sp_h5_chunk_seen_add(sp_h5_chunk_seen *s, long group, uint32_t mask,
                          const unsigned char *bytes, size_t n)
{
    if (group < 0 || (size_t)group >= s->num_groups || n > SEEN_MAX_CHUNK ||
        s->bytes + n > SEEN_BUDGET)
        return; /* not kept: a copy is decoded again */
    seen_group *gr = &s->groups[group];
    if (2 * (gr->num + 1) > gr->cap) {
        size_t cap = gr->cap ? 2 * gr->cap : 64;
        seen_chunk *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return;
        seen_group bigger = {.slots = slots, .cap = cap};
        for (size_t i = 0; i < gr->cap; i++)
            if (gr->slots[i].bytes)
                *slot_for(&bigger, gr->slots[i].hash, gr->slots[i].mask, gr->slots[i].bytes,
                          gr->slots[i].size) = gr->slots[i];
        free(gr->slots);
        gr->slots = slots;
        gr->cap = cap;
    }
    uint64_t hash = hash_bytes(bytes, n, mask);
    seen_chunk *c = slot_for(gr, hash, mask, bytes, n);
    if (c->bytes)
        return;
    unsigned char *copy = malloc(n ? n : 1);
    if (!copy)
        return;
    memcpy(copy, bytes, n);
    *c = (seen_chunk){hash, mask, n, copy};
    gr->num++;
    s->bytes += n;
}
