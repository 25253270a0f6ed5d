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

const char *sp_run_source_unstreamable(const sp_run_source *src)
{
    if (src->profile->aggregate)
        return "aggregate layout";
    for (size_t i = 0; i < src->num_paths; i++) {
        if (src->shapes[i].has_fork)
            return "fork edges (events/fork_parent_ids)";
        if (src->shapes[i].has_other)
            return "MPI columns";
    }
    return NULL;
}
