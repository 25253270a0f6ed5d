/* capture.h - a process's recorded calls as the writer sees them.
 *
 * The shim hands them over at finalize in the spill-file format
 * (spill_format.h, the handover frames); the writer process (or the
 * fallback module, or `scopeprof recover`) reads them back into this
 * struct (capture/spill_capture.h).  Everything here is plain data owned by
 * whoever built it, only read by the conversion and the writers. */
#ifndef SCOPEPROF_CAPTURE_H
#define SCOPEPROF_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "scopeprof/profile.h"

#define SP_CAPTURE_ABI 4

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

/* One frame of the call that registered a region, located in its module by
 * the shim (dladdr1); the writer resolves it with libdw (issue 8). */
typedef struct sp_capture_frame {
    const char *module_path;   /* file to read ("/proc/self/exe" for the main
                                  program in the shim, "/proc/<pid>/exe" in the
                                  handover); NULL: not located, address is raw */
    const char *module_name;   /* the module's path as loaded, for display */
    uint64_t address;          /* file address of the call instruction */
} sp_capture_frame;

typedef struct sp_capture_region {
    const char *name;
    const char *source_file;   /* NULL: unknown */
    int64_t source_line;       /* -1: unknown */
    const char *function;      /* NULL: unknown */
    uintptr_t callsite;        /* return address of the registering call, 0: none */
    /* Calls counted but not kept as events (ON_FULL=stop). */
    uint64_t dropped_calls;
    int64_t dropped_total_ns;
    /* Frames of the registering call, innermost first (none: 0).  The
     * writer resolves them into source_file/source_line (when no
     * explicit location was given) and function. */
    const sp_capture_frame *frames;
    size_t num_frames;
} sp_capture_region;

/* Side data of one recorded MPI call (issue 14): which event it belongs to
 * is (thread, region, ordinal), ordinal = 1 for the first event of that
 * region kept on that thread, in recording order.  Values -1 where they do
 * not apply; see docs/mpi.md. */
typedef struct sp_capture_mpi {
    int64_t thread;            /* dense thread index */
    uint32_t region;
    uint32_t reserved;
    uint64_t ordinal;
    int64_t sent_bytes, recv_bytes;
    int64_t peer;              /* rank in MPI_COMM_WORLD */
    int64_t tag;
    int64_t comm;              /* communicator id, equal on every member rank */
    int64_t source;            /* world rank a received message came from */
    int64_t recv_tag;          /* its tag */
} sp_capture_mpi;
/* A fork edge (docs/tasks.md, events/fork_parent_ids): the child call
 * hangs under the parent call in merged views.  Calls are named by thread,
 * region and ordinal, the position of the call among that thread's calls
 * of that region in recording (end) order, which both writers see in the
 * same order as the shim; no timestamp is compared. */
typedef struct sp_fork_edge {
    int64_t child_thread;
    int64_t child_ordinal;     /* -1: every root call of the child thread */
    int64_t parent_thread;
    int64_t parent_ordinal;
    uint32_t child_region;     /* unused when child_ordinal is -1 */
    uint32_t parent_region;
} sp_fork_edge;

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

    /* SCOPE_PROFILER_MAX_MEMORY: with spill files, the writer's event
     * windows take about this much (at least 32 MiB; 0: 32 MiB). */
    uint64_t max_memory;

    /* MPI side data of recorded calls, per thread in recording order. */
    size_t num_mpi;
    const sp_capture_mpi *mpi;
    /* Fork edges (OpenMP regions, pthread_create inside a call). */
    size_t num_fork_edges;
    const sp_fork_edge *fork_edges;
} sp_capture;

/* capture_to_profile.c: the capture as a one-rank profile - events grouped
 * by region (recording order within a region), lane columns, and the call
 * tree (call_ids, parent_ids, exclusive_totals).  When the calls are not
 * properly nested the timings are kept, the id columns are left out,
 * exclusive totals are -1 and *warning says why.  Returns NULL with err set
 * on failure (out of memory). */
sp_profile *sp_capture_to_profile(const sp_capture *capture, char *warning, size_t warnlen,
                                  char *err, size_t errlen);
/* capture_stream.c: the capture's schema-3 file written without holding
 * its events in memory, for captures with spill files: memory is one
 * window of `window` output events (0: from max_memory) plus the lanes'
 * open-call stacks, whatever the number of calls.  The file is the one
 * sp_capture_to_profile + sp_h5_write make, except that call_ids are the
 * calls' positions in the event columns.  Returns 0 (*events_out = calls
 * written; *warning as sp_capture_to_profile), -1 with a one-line err, or
 * 1 when some lane's calls are not in end order (streaming needs it, every
 * recording gives it): nothing was written, use the in-memory path. */
int sp_capture_write_stream(const sp_capture *capture, uint64_t window, uint64_t *events_out,
                            char *warning, size_t warnlen, char *err, size_t errlen);
#endif /* SCOPEPROF_CAPTURE_H */
