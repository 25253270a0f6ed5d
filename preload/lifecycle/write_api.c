/* write_api.c - the marker API calls that write, flush or drop a profile
 * (sp_finalize, sp_flush, sp_reset and their sp_profiler_* forms) and name
 * its file.  They belong to the life cycle, not to the recorder: they take
 * the spill lock and call the writer. */
#include <stdlib.h>

#include "lifecycle.h"
#include "spill.h"
#include "record/mpi_side.h"

SP_EXPORT int sp_profiler_reset(sp_profiler *p)
{
    if (!p)
        return SP_ERR_INACTIVE;
    /* Lock order as everywhere (fork.c): spill lock, then the profiler. */
    sp_spill_lock();
    pthread_mutex_lock(&p->lock);
    for (struct sp_lane *lane = p->lanes; lane; lane = lane->next_in_profiler) {
        /* The stack moves only under the lane's lock (sp_lane_depth). */
        pthread_mutex_lock(&lane->lock);
        uint32_t depth = sp_lane_depth(lane);
        pthread_mutex_unlock(&lane->lock);
        if (depth) {
            pthread_mutex_unlock(&p->lock);
            sp_spill_unlock();
            return SP_ERR_OPEN_SCOPES;
        }
    }
    sp_spill_discard(p);
    for (struct sp_lane *lane = p->lanes; lane; lane = lane->next_in_profiler) {
        sp_lane_reset_events(lane);
        pthread_mutex_lock(&lane->lock);
        sp_mpi_side_reset(lane);
        pthread_mutex_unlock(&lane->lock);
    }
    pthread_mutex_unlock(&p->lock);
    sp_spill_unlock();
    return SP_OK;
}

SP_EXPORT int sp_profiler_flush(sp_profiler *p)
{
    if (!p || !SP_LOAD(p->active))
        return 0;
    return sp_profiler_write(p, 0, "flush") == 0 ? 0 : SP_ERR_IO;
}

SP_EXPORT int sp_profiler_finalize(sp_profiler *p)
{
    if (!p || !SP_LOAD(p->active))
        return 0;
    return sp_profiler_write(p, 1, "sp_finalize") == 0 ? 0 : SP_ERR_IO;
}

SP_EXPORT const char *sp_profiler_output_path(sp_profiler *p)
{
    return p ? sp_profiler_given_path(p) : NULL;
}

SP_EXPORT int sp_finalize(void) { return sp_profiler_finalize(sp_current_profiler()); }
SP_EXPORT int sp_flush(void) { return sp_profiler_flush(sp_current_profiler()); }
SP_EXPORT int sp_reset(void) { return sp_profiler_reset(sp_current_profiler()); }
SP_EXPORT const char *sp_output_path(void) { return sp_profiler_output_path(sp_current_profiler()); }
