/* capture.h - what the shim hands to the writer module at finalize.
 *
 * The writer module (libscopeprof-writer.so) is loaded with dlmopen() into a
 * link namespace of its own so that its HDF5 never meets the application's.
 * The two sides then have separate C libraries (separate malloc, stdio,
 * errno): everything here is plain data owned by the shim, only read by the
 * writer, and nothing allocated on one side is freed on the other. */
#ifndef SCOPEPROF_CAPTURE_H
#define SCOPEPROF_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "scopeprof/profile.h"

#define SP_CAPTURE_ABI 1

/* One completed call: 24 bytes. */
typedef struct sp_event {
    int64_t start;
    int64_t end;
    uint32_t region;
    int32_t task;     /* -1: outside any task */
} sp_event;

/* A run of events recorded by one thread. */
typedef struct sp_capture_chunk {
    const sp_event *events;
    const int64_t *await_ns;   /* NULL unless some event of the chunk ran in a task */
    size_t count;
    int64_t thread;            /* dense thread index */
} sp_capture_chunk;

typedef struct sp_capture_region {
    const char *name;
    const char *source_file;   /* NULL: unknown */
    int64_t source_line;       /* -1: unknown */
    const char *function;      /* NULL: unknown */
    uintptr_t callsite;        /* return address of the registering call, 0: none */
    /* Calls counted but not kept as events (ON_FULL=stop). */
    uint64_t dropped_calls;
    int64_t dropped_total_ns;
} sp_capture_region;

typedef struct sp_capture {
    int abi;                   /* SP_CAPTURE_ABI */
    const char *path;          /* final output path */
    int rank;
    int verbose;
    int track_threads;         /* write thread_ids and thread_table */
    int64_t start_time_ns;     /* run origin (CLOCK_MONOTONIC ns) */

    size_t num_regions;
    const sp_capture_region *regions;

    size_t num_chunks;
    const sp_capture_chunk *chunks;

    /* Spill files holding more chunks of this process (issue: memory cap). */
    size_t num_spill_files;
    const char *const *spill_files;

    size_t num_threads;
    const sp_thread_row *threads;  /* rank field ignored; times relative to start_time_ns */
    size_t num_tasks;
    const sp_task_row *tasks;

    size_t num_meta;
    const sp_meta *meta;
} sp_capture;

/* Exported by the writer module.  Returns 0, or -1 with a one-line reason. */
typedef int (*sp_write_capture_fn)(const sp_capture *capture, char *err, size_t errlen);
#define SP_WRITE_CAPTURE_SYMBOL "scopeprof_write_capture"

#endif /* SCOPEPROF_CAPTURE_H */
