/* dist_merge.c - `mpirun -np N scopeprof merge FILES -o OUT`: each process
 * merges its block of rank files into a hidden part next to OUT, then
 * process 0 merges the parts in process order.
 *
 * The serial merge orders its inputs by lowest rank, takes the metadata of
 * the first and the region names in order of first appearance, so merging
 * the parts gives the serial file exactly when the parts' ranks come in
 * increasing, disjoint ranges (rank files named by rank, listed in order:
 * a directory).  Otherwise - or when merging the parts fails for a reason
 * that would name a part instead of an input (two runs, one rank twice) -
 * process 0 merges the inputs serially: the serial output or the serial
 * message, never a different one.  Parts are removed in every case. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist/dist.h"
#include "scopeprof/h5.h"

/* What each process sends to process 0. */
typedef struct part_result {
    int32_t status;     /* 0 merged, 1 empty block, -1 failed */
    int32_t has_ranks;  /* lowest/highest valid */
    uint32_t lowest, highest;
    char err[1024];
} part_result;

/* ".<name>.part<K>.h5" beside output: hidden, so a `merge DIR` of the
 * output's directory never takes a part for a rank file. */
static char *part_path(const char *output, int k)
{
    const char *slash = strrchr(output, '/');
    int dir_len = slash ? (int)(slash - output) + 1 : 0;
    const char *base = slash ? slash + 1 : output;
    size_t n = strlen(output) + 32;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%.*s.%s.part%05d.h5", dir_len, output, base, k);
    return p;
}

/* The lowest and highest rank of a merged part (its row index only). */
static int part_ranks(const char *path, uint32_t *lowest, uint32_t *highest)
{
    int found = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f >= 0 ? H5Dopen2(f, "rank_region_index/ranks", H5P_DEFAULT) : -1;
    hid_t space = d >= 0 ? H5Dget_space(d) : -1;
    hssize_t n = space >= 0 ? H5Sget_simple_extent_npoints(space) : -1;
    uint32_t *ranks = n > 0 ? malloc((size_t)n * sizeof *ranks) : NULL;
    if (ranks && H5Dread(d, H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, ranks) >= 0) {
        *lowest = *highest = ranks[0];
        for (hssize_t i = 1; i < n; i++) {
            *lowest = ranks[i] < *lowest ? ranks[i] : *lowest;
            *highest = ranks[i] > *highest ? ranks[i] : *highest;
        }
        found = 1;
    }
    free(ranks);
    if (space >= 0)
        H5Sclose(space);
    if (d >= 0)
        H5Dclose(d);
    if (f >= 0)
        H5Fclose(f);
    return found;
}

/* A part that cannot be written is the output that cannot be (same
 * directory): say so with the name the user gave. */
static void name_the_output(char *err, size_t errlen, const char *part, const char *output)
{
    char *at = strstr(err, part);
    if (!at)
        return;
    char rest[1024];
    snprintf(rest, sizeof rest, "%s", at + strlen(part));
    snprintf(at, errlen - (size_t)(at - err), "%s%s", output, rest);
}

static void merge_block(const sp_dist_session *s, char **files, size_t count, const char *part,
                        const char *output, part_result *r)
{
    memset(r, 0, sizeof *r);
    size_t first;
    size_t n = sp_dist_block(count, s->rank, s->size, &first);
    if (n == 0) {
        r->status = 1;
        return;
    }
    if (!part) {
        r->status = -1;
        snprintf(r->err, sizeof r->err, "out of memory");
        return;
    }
    if (sp_h5_merge((const char *const *)files + first, n, part, r->err, sizeof r->err) < 0) {
        r->status = -1;
        name_the_output(r->err, sizeof r->err, part, output);
        return;
    }
    H5E_BEGIN_TRY {
        r->has_ranks = part_ranks(part, &r->lowest, &r->highest);
    } H5E_END_TRY;
}

/* Parts in increasing, disjoint rank ranges; NULL-free list of the
 * non-empty ones in *parts. */
static int parts_in_rank_order(const sp_dist_session *s, const part_result *const *results,
                               char **paths, const char **parts, size_t *num_parts)
{
    int ordered = 1;
    int64_t last = -1;
    *num_parts = 0;
    for (int k = 0; k < s->size; k++) {
        if (results[k]->status == 1)
            continue;
        if (!results[k]->has_ranks || (int64_t)results[k]->lowest <= last)
            ordered = 0;
        last = results[k]->highest;
        parts[(*num_parts)++] = paths[k];
    }
    return ordered;
}

static int mentions_a_part(const char *err, char **paths, int n)
{
    for (int k = 0; k < n; k++)
        if (paths[k] && strstr(err, paths[k]))
            return 1;
    return 0;
}

int sp_dist_merge(const sp_dist_session *s, char **files, size_t count, const char *output,
                  char *err, size_t errlen)
{
    char *mine = part_path(output, s->rank);
    part_result result;
    merge_block(s, files, count, mine, output, &result);
    uint8_t **got = NULL;
    size_t *lens = NULL;
    int gathered = sp_dist_gather(&result, sizeof result, &got, &lens);
    if (s->rank != 0 || gathered < 0) {
        if (gathered < 0 || result.status < 0)
            unlink(mine); /* process 0 removes the others */
        free(mine);
        if (gathered < 0)
            snprintf(err, errlen, "gathering the parts over MPI failed");
        return gathered < 0 ? -1 : 0;
    }
    free(mine);

    char **paths = calloc((size_t)s->size, sizeof *paths);
    const char **parts = calloc((size_t)s->size, sizeof *parts);
    const part_result **results = calloc((size_t)s->size, sizeof *results);
    int rc = paths && parts && results ? 0 : -1;
    if (rc < 0)
        snprintf(err, errlen, "out of memory");
    for (int k = 0; rc == 0 && k < s->size; k++) {
        results[k] = (const part_result *)got[k];
        if (lens[k] != sizeof(part_result) || !(paths[k] = part_path(output, k))) {
            snprintf(err, errlen, "out of memory, or a process sent a damaged result");
            rc = -1;
        }
    }
    /* The first failure in process order: the one the serial merge meets first. */
    for (int k = 0; rc == 0 && k < s->size; k++)
        if (results[k]->status < 0) {
            snprintf(err, errlen, "%s", results[k]->err);
            rc = -1;
        }
    if (rc == 0) {
        size_t num_parts = 0;
        int ordered = parts_in_rank_order(s, results, paths, parts, &num_parts);
        int fall_back = !ordered;
        if (ordered) {
            rc = sp_h5_merge(parts, num_parts, output, err, errlen);
            fall_back = rc < 0 && mentions_a_part(err, paths, s->size);
        }
        if (fall_back)
            rc = sp_h5_merge((const char *const *)files, count, output, err, errlen);
    }
    for (int k = 0; paths && k < s->size; k++) {
        if (paths[k])
            unlink(paths[k]);
        free(paths[k]);
    }
    free(paths);
    free(parts);
    free(results);
    sp_dist_gather_free(got, lens);
    return rc;
}
