/* markers_noop.c - libscopeprof-markers.so: the marker API as cheap no-ops.
 *
 * Link instrumented programs against this library; they then run at full
 * speed without the profiler, and record when libscopeprof.so is preloaded
 * (the preloaded definitions win).  Every call behaves like the reference
 * API before sp_init: ids are -1, nothing is active, nothing is written.
 * sp_init returns 0 so programs that check it keep running. */
#include <stddef.h>
#include <time.h>

#include "scope_profiler.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT const char *sp_error_string(int status)
{
    static const char *const text[] = {
        "ok", "profiler is not active", "no monotonic clock available", "out of memory",
        "output file could not be written", "no open call to end", "a region is still open",
        "output format not available in this build"};
    return status >= 0 && status <= 7 ? text[status] : "unknown status";
}

EXPORT sp_profiler *sp_create(const char *prefix, int rank) { (void)prefix; (void)rank; return NULL; }
EXPORT void sp_destroy(sp_profiler *p) { (void)p; }
EXPORT int sp_profiler_region(sp_profiler *p, const char *name) { (void)p; (void)name; return SP_INVALID_REGION; }
EXPORT int sp_profiler_region_at(sp_profiler *p, const char *name, const char *file, int line)
{ (void)p; (void)name; (void)file; (void)line; return SP_INVALID_REGION; }
EXPORT void sp_profiler_begin(sp_profiler *p, int region) { (void)p; (void)region; }
EXPORT void sp_profiler_end(sp_profiler *p, int region) { (void)p; (void)region; }
EXPORT int sp_profiler_end_last(sp_profiler *p) { (void)p; return SP_ERR_UNMATCHED_END; }
EXPORT sp_scope sp_profiler_scope_begin(sp_profiler *p, int region) { sp_scope s = {p, region, -1}; return s; }
EXPORT int sp_scope_end(sp_scope *s) { (void)s; return SP_ERR_UNMATCHED_END; }
EXPORT int sp_profiler_reset(sp_profiler *p) { (void)p; return SP_ERR_INACTIVE; }
EXPORT int sp_profiler_get_region_stats(sp_profiler *p, int region, sp_region_stats *stats)
{ (void)p; (void)region; (void)stats; return SP_ERR_INACTIVE; }
EXPORT int sp_profiler_num_regions(sp_profiler *p) { (void)p; return 0; }
EXPORT const char *sp_profiler_region_name(sp_profiler *p, int region) { (void)p; (void)region; return NULL; }
EXPORT int64_t sp_profiler_num_calls(sp_profiler *p, int region) { (void)p; (void)region; return 0; }
EXPORT int sp_profiler_flush(sp_profiler *p) { (void)p; return 0; }
EXPORT int sp_profiler_finalize(sp_profiler *p) { (void)p; return 0; }
EXPORT int sp_profiler_is_active(sp_profiler *p) { (void)p; return 0; }
EXPORT const char *sp_profiler_output_path(sp_profiler *p) { (void)p; return NULL; }
EXPORT sp_status sp_profiler_last_error(sp_profiler *p) { (void)p; return SP_OK; }
EXPORT int sp_profiler_set_output_format(sp_profiler *p, sp_output_format f) { (void)p; (void)f; return SP_ERR_INACTIVE; }
EXPORT sp_output_format sp_profiler_output_format(sp_profiler *p) { (void)p; return SP_OUTPUT_HDF5; }
EXPORT int sp_hdf5_available(void) { return 0; }
EXPORT sp_output_format sp_default_output_format(void) { return SP_OUTPUT_HDF5; }

EXPORT int sp_init(const char *prefix, int rank) { (void)prefix; (void)rank; return 0; }
EXPORT sp_profiler *sp_default_profiler(void) { return NULL; }
EXPORT int sp_region(const char *name) { (void)name; return SP_INVALID_REGION; }
EXPORT int sp_region_at(const char *name, const char *file, int line) { (void)name; (void)file; (void)line; return SP_INVALID_REGION; }
EXPORT void sp_begin(int region) { (void)region; }
EXPORT void sp_end(int region) { (void)region; }
EXPORT int64_t sp_num_calls(int region) { (void)region; return 0; }
EXPORT int sp_is_active(void) { return 0; }
EXPORT int sp_finalize(void) { return 0; }
EXPORT int sp_flush(void) { return 0; }
EXPORT int sp_reset(void) { return SP_ERR_INACTIVE; }
EXPORT int sp_end_last(void) { return SP_ERR_UNMATCHED_END; }
EXPORT int sp_get_region_stats(int region, sp_region_stats *stats) { (void)region; (void)stats; return SP_ERR_INACTIVE; }
EXPORT const char *sp_output_path(void) { return NULL; }
EXPORT int sp_set_output_format(sp_output_format f) { (void)f; return SP_ERR_INACTIVE; }
EXPORT sp_output_format sp_current_output_format(void) { return SP_OUTPUT_HDF5; }
EXPORT sp_status sp_last_error(void) { return SP_OK; }
EXPORT sp_status sp_begin_by_name(const char *name, size_t length)
{ (void)name; (void)length; return SP_ERR_INACTIVE; }
EXPORT sp_status sp_end_by_name(const char *name, size_t length)
{ (void)name; (void)length; return SP_ERR_INACTIVE; }

EXPORT int64_t sp_now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

EXPORT int64_t sp_task_create(const char *kind, const char *name) { (void)kind; (void)name; return -1; }
EXPORT void sp_task_switch(int64_t task) { (void)task; }
EXPORT void sp_task_done(int64_t task) { (void)task; }
