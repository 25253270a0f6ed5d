/* h5_inputs.c - what combining several files of one run needs: a region
 * name index, and the cross-file checks (one run, each rank once). */
#include <stdlib.h>
#include <string.h>

#include "h5/h5_internal.h"

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int rehash(sp_name_index *idx, size_t cap)
{
    uint32_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t id = 0; id < idx->count; id++) {
        size_t s = hash_name(idx->names[id]) & (cap - 1);
        while (slots[s])
            s = (s + 1) & (cap - 1);
        slots[s] = (uint32_t)id + 1;
    }
    free(idx->slots);
    idx->slots = slots;
    idx->slots_cap = cap;
    return 0;
}

int64_t sp_name_index_add(sp_name_index *idx, const char *name)
{
    if (2 * (idx->count + 1) > idx->slots_cap &&
        rehash(idx, idx->slots_cap ? 2 * idx->slots_cap : 64) < 0)
        return -1;
    size_t s = hash_name(name) & (idx->slots_cap - 1);
    for (; idx->slots[s]; s = (s + 1) & (idx->slots_cap - 1))
        if (!strcmp(idx->names[idx->slots[s] - 1], name))
            return idx->slots[s] - 1;
    if (idx->count >= UINT32_MAX - 1)
        return -1;
    if (idx->count == idx->names_cap) {
        size_t cap = idx->names_cap ? 2 * idx->names_cap : 16;
        char **grown = realloc(idx->names, cap * sizeof *grown);
        if (!grown)
            return -1;
        idx->names = grown;
        idx->names_cap = cap;
    }
    if (!(idx->names[idx->count] = strdup(name)))
        return -1;
    idx->slots[s] = (uint32_t)idx->count + 1;
    return (int64_t)idx->count++;
}

void sp_name_index_free(sp_name_index *idx)
{
    sp_h5_free_strings(idx->names, idx->count);
    free(idx->slots);
    memset(idx, 0, sizeof *idx);
}

uint32_t *sp_name_index_map(sp_name_index *idx, const sp_profile *profile)
{
    uint32_t *map = malloc((profile->num_names ? profile->num_names : 1) * sizeof *map);
    for (size_t i = 0; map && i < profile->num_names; i++) {
        int64_t id = sp_name_index_add(idx, profile->names[i]);
        if (id < 0) {
            free(map);
            return NULL;
        }
        map[i] = (uint32_t)id;
    }
    return map;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int sp_input_info_fill(sp_input_info *info, const char *path, const sp_profile *profile)
{
    memset(info, 0, sizeof *info);
    info->path = path;
    info->aggregate = profile->aggregate;
    const char *run_id = sp_profile_meta_string(profile, "run_id");
    if (run_id && !(info->run_id = strdup(run_id)))
        return -1;
    info->ranks = malloc((profile->num_rows ? profile->num_rows : 1) * sizeof *info->ranks);
    if (!info->ranks)
        return -1;
    for (size_t i = 0; i < profile->num_rows; i++)
        info->ranks[i] = profile->rows[i].rank;
    qsort(info->ranks, profile->num_rows, sizeof *info->ranks, cmp_u32);
    size_t n = 0;
    for (size_t i = 0; i < profile->num_rows; i++)
        if (n == 0 || info->ranks[n - 1] != info->ranks[i])
            info->ranks[n++] = info->ranks[i];
    info->num_ranks = n;
    return 0;
}

void sp_input_info_free(sp_input_info *info)
{
    free(info->run_id);
    free(info->ranks);
    memset(info, 0, sizeof *info);
}

struct rank_claim {
    uint32_t rank;
    size_t input;
};

static int by_claim(const void *a, const void *b)
{
    const struct rank_claim *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->input < y->input ? -1 : x->input > y->input;
}

int sp_inputs_check(const sp_input_info *inputs, size_t n, char *err, size_t errlen)
{
    const sp_input_info *first_run = NULL;
    size_t claims = 0;
    for (size_t i = 0; i < n; i++) {
        const sp_input_info *in = &inputs[i];
        if (in->run_id) {
            if (first_run && strcmp(first_run->run_id, in->run_id)) {
                sp_h5_errf(err, errlen, "%s and %s come from different runs (run_id %s and %s); "
                           "combine only the files of one run", first_run->path, in->path,
                           first_run->run_id, in->run_id);
                return -1;
            }
            if (!first_run)
                first_run = in;
        }
        if (in->aggregate != inputs[0].aggregate) {
            sp_h5_errf(err, errlen, "%s and %s use different storage layouts (aggregate and "
                       "columnar); they cannot be combined", inputs[0].path, in->path);
            return -1;
        }
        claims += in->num_ranks;
    }
    struct rank_claim *all = malloc((claims ? claims : 1) * sizeof *all);
    if (!all) {
        sp_h5_errf(err, errlen, "out of memory");
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t r = 0; r < inputs[i].num_ranks; r++)
            all[k++] = (struct rank_claim){inputs[i].ranks[r], i};
    qsort(all, claims, sizeof *all, by_claim);
    int rc = 0;
    for (k = 1; k < claims && rc == 0; k++)
        if (all[k].rank == all[k - 1].rank) {
            sp_h5_errf(err, errlen, "%s and %s both claim rank %u",
                       inputs[all[k - 1].input].path, inputs[all[k].input].path, all[k].rank);
            rc = -1;
        }
    free(all);
    return rc;
}

static int by_lowest_rank(const void *a, const void *b, void *ctx)
{
    const sp_input_info *inputs = ctx;
    const sp_input_info *x = &inputs[*(const size_t *)a], *y = &inputs[*(const size_t *)b];
    if (!x->num_ranks || !y->num_ranks) {
        if (x->num_ranks != y->num_ranks)
            return x->num_ranks ? -1 : 1;
    } else if (x->ranks[0] != y->ranks[0]) {
        return x->ranks[0] < y->ranks[0] ? -1 : 1;
    }
    /* stable: keep the order given */
    size_t ia = *(const size_t *)a, ib = *(const size_t *)b;
    return ia < ib ? -1 : ia > ib;
}

void sp_inputs_order(const sp_input_info *inputs, size_t n, size_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    qsort_r(order, n, sizeof *order, by_lowest_rank, (void *)inputs);
}
