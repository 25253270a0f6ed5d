/* run_source.c - a run's rank files without their event columns: the
 * skeleton profile the report prints from, and where each row's events are. */
#include <stdlib.h>
#include <string.h>

#include "scopeprof/stream.h"

int sp_run_source_open(sp_run_source *src, const char *const *args, size_t count, char *err,
                       size_t errlen)
{
    memset(src, 0, sizeof *src);
    src->profile = sp_load_run_skeleton(args, count, &src->paths, &src->num_paths,
                                        &src->shapes, &src->row_file, err, errlen);
    for (size_t i = 0; src->profile && i < src->num_paths; i++) {
        src->any_thread |= src->shapes[i].has[SP_H5_COL_THREAD];
        src->any_task |= src->shapes[i].has[SP_H5_COL_TASK];
        src->any_parent |= src->shapes[i].has[SP_H5_COL_PARENT];
    }
    return src->profile ? 0 : -1;
}

void sp_run_source_close(sp_run_source *src)
{
    if (src->profile)
        sp_profile_free(src->profile);
    sp_run_inputs_free(src->paths, (long)src->num_paths);
    free(src->shapes);
    free(src->row_file);
    memset(src, 0, sizeof *src);
}

typedef struct row_key {
    size_t file;
    uint32_t rank, region;
} row_key;

static int by_key(const void *a, const void *b)
{
    const row_key *x = a, *y = b;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->region > y->region) - (x->region < y->region);
}

/* Two rows for one (rank, region) of a file: the reader refuses the file. */
static int duplicate_rows(const sp_run_source *src)
{
    const sp_profile *p = src->profile;
    row_key *keys = malloc((p->num_rows + 1) * sizeof *keys);
    if (!keys)
        return 1;
    for (size_t r = 0; r < p->num_rows; r++)
        keys[r] = (row_key){src->row_file[r], p->rows[r].rank, p->rows[r].region};
    qsort(keys, p->num_rows, sizeof *keys, by_key);
    int dup = 0;
    for (size_t r = 1; r < p->num_rows && !dup; r++)
        dup = by_key(&keys[r - 1], &keys[r]) == 0;
    free(keys);
    return dup;
}

const char *sp_run_source_unstreamable(const sp_run_source *src)
{
    if (src->profile->aggregate)
        return "aggregate layout";
    if (duplicate_rows(src))
        return "two rows for one rank and region";
    for (size_t i = 0; i < src->num_paths; i++)
        if (src->shapes[i].has_other)
            return "MPI columns";
    return NULL;
}
