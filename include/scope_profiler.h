/* scope_profiler.h - the scope-profiler C marker API.
 *
 * Same names, types, values and misuse behaviour as the scope-profiler
 * package's C header, so a program instrumented against either runs under
 * libscopeprof.so unchanged.  Provided three ways:
 *   - libscopeprof.so          (LD_PRELOAD): records and writes HDF5,
 *   - libscopeprof-markers.so  (link time):  every call is a cheap no-op,
 *   - any other library providing these symbols.
 * Unlike the reference, the implementation in libscopeprof.so is thread-safe
 * and has no nesting or recursion limit.  See README.md, "Marker API". */
#ifndef SCOPE_PROFILER_H
#define SCOPE_PROFILER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SP_FORMAT_VERSION 2
#define SP_INVALID_REGION (-1)

typedef struct sp_profiler sp_profiler;

typedef enum sp_status {
    SP_OK = 0,
    SP_ERR_INACTIVE = 1,
    SP_ERR_NO_CLOCK = 2,
    SP_ERR_NO_MEMORY = 3,
    SP_ERR_IO = 4,
    SP_ERR_UNMATCHED_END = 5,
    SP_ERR_OPEN_SCOPES = 6,
    SP_ERR_UNSUPPORTED = 7
} sp_status;

typedef enum sp_output_format {
    SP_OUTPUT_HDF5 = 0,
    SP_OUTPUT_TRACE = 1
} sp_output_format;

typedef struct sp_region_stats {
    int64_t calls;    /* entered count */
    int64_t total_ns; /* over completed calls */
    int64_t min_ns;   /* 0 when no call completed */
    int64_t max_ns;
} sp_region_stats;

/* A token naming one exact open call; slot -1 means inert. */
typedef struct sp_scope {
    sp_profiler *profiler;
    int region;
    int64_t slot;
} sp_scope;

const char *sp_error_string(int status);

/* Explicit contexts. */
sp_profiler *sp_create(const char *prefix, int rank);
void sp_destroy(sp_profiler *profiler);
int sp_profiler_region(sp_profiler *profiler, const char *name);
int sp_profiler_region_at(sp_profiler *profiler, const char *name,
                          const char *file, int line);
void sp_profiler_begin(sp_profiler *profiler, int region);
void sp_profiler_end(sp_profiler *profiler, int region);
int sp_profiler_end_last(sp_profiler *profiler);
sp_scope sp_profiler_scope_begin(sp_profiler *profiler, int region);
int sp_scope_end(sp_scope *scope);
int sp_profiler_reset(sp_profiler *profiler);
int sp_profiler_get_region_stats(sp_profiler *profiler, int region,
                                 sp_region_stats *stats);
int sp_profiler_num_regions(sp_profiler *profiler);
const char *sp_profiler_region_name(sp_profiler *profiler, int region);
int64_t sp_profiler_num_calls(sp_profiler *profiler, int region);
int sp_profiler_flush(sp_profiler *profiler);
int sp_profiler_finalize(sp_profiler *profiler);
int sp_profiler_is_active(sp_profiler *profiler);
const char *sp_profiler_output_path(sp_profiler *profiler);
sp_status sp_profiler_last_error(sp_profiler *profiler);
int sp_profiler_set_output_format(sp_profiler *profiler, sp_output_format format);
sp_output_format sp_profiler_output_format(sp_profiler *profiler);

int sp_hdf5_available(void);
sp_output_format sp_default_output_format(void);

/* The default profiler (global convenience API). */
int sp_init(const char *prefix, int rank);
sp_profiler *sp_default_profiler(void);
int sp_region(const char *name);
int sp_region_at(const char *name, const char *file, int line);
void sp_begin(int region);
void sp_end(int region);
/* By name, for languages whose strings carry a length (the Fortran
 * module's sp_begin_name/sp_end_name): the name is its first `length`
 * bytes, up to a NUL among them; registered if new.  Returns the status
 * sp_last_error() gives after the call (SP_ERR_INACTIVE when no region
 * could be had).  An existing name is found without a lock or a copy. */
sp_status sp_begin_by_name(const char *name, size_t length);
sp_status sp_end_by_name(const char *name, size_t length);
int64_t sp_num_calls(int region);
int64_t sp_now_ns(void);
int sp_is_active(void);
int sp_finalize(void);
int sp_flush(void);
int sp_reset(void);
int sp_end_last(void);
int sp_get_region_stats(int region, sp_region_stats *stats);
const char *sp_output_path(void);
int sp_set_output_format(sp_output_format format);
sp_output_format sp_current_output_format(void);
sp_status sp_last_error(void);

/* Cooperative lanes (tasks, fibers): for runtimes that switch call stacks
 * on one thread themselves.  See README.md, "Tasks". */
int64_t sp_task_create(const char *kind, const char *name);
void sp_task_switch(int64_t task);  /* -1: back to the thread's own stack */
void sp_task_done(int64_t task);

#define SP_REGION_AT(name) sp_region_at((name), __FILE__, __LINE__)
#define SP_PROFILER_REGION_AT(profiler, name) \
    sp_profiler_region_at((profiler), (name), __FILE__, __LINE__)

#ifdef __cplusplus
}
#endif

#endif /* SCOPE_PROFILER_H */
