/* scopeprof/h5.h - read and write scope-profiler HDF5 files (schema 1-3 in,
 * schema 3 out).  Errors come back as one line in err naming the file and the
 * problem, e.g. "run.h5: not a readable HDF5 profiling file (truncated, or
 * interrupted while writing)". */
#ifndef SCOPEPROF_H5_H
#define SCOPEPROF_H5_H

#include <stddef.h>
#include <stdint.h>
#include "scopeprof/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SP_SCHEMA_CURRENT 3
/* From this many events on, event columns are gzip+shuffle compressed. */
#define SP_COMPRESS_MIN_EVENTS 16384

/* The file the reader is inside right now (NULL between reads).  HDF5
 * itself can crash on some corrupt files; a program may name the file from
 * a SIGSEGV handler with this (the `scopeprof` command does). */
extern const char *volatile sp_h5_current_path;
/* ... since when (CLOCK_MONOTONIC ns) and its size in bytes, for a watchdog
 * (HDF5 1.10 can also loop forever on some corrupt files).  Read them with
 * __atomic_load_n from another thread. */
extern int64_t sp_h5_current_since_ns;
extern int64_t sp_h5_current_bytes;

/* Set to 1 by a single-threaded program (the scopeprof command) to read
 * variable-length string attributes with the address space limited to its
 * current size + 1 GiB: a corrupt heap then makes HDF5's allocation fail
 * instead of taking the machine's memory (HDF5 1.10 cannot report their
 * size beforehand). */
extern int sp_h5_bound_attribute_memory;

/* Read a whole file.  NULL on error (message in err). */
sp_profile *sp_h5_read(const char *path, char *err, size_t errlen);

/* The files of a run as given on a command line: each argument is a file,
 * a directory (its *.h5 files, not hidden, in name order, not recursive) or
 * @LIST (a file naming one path per line; blank lines and '#' comments
 * skipped; relative paths are relative to the list's directory).  Returns
 * the number of paths (*paths to free with sp_run_inputs_free), or -1 with
 * a one-line message in err (an empty directory or list is an error).
 * sp_load_run and sp_h5_merge expand their inputs this way. */
long sp_run_inputs_expand(const char *const *args, size_t count, char ***paths, char *err,
                          size_t errlen);
void sp_run_inputs_free(char **paths, long count);

/* Read several files (rank files of one run, merged files, Python-written
 * files) into one profile in memory, rows of every rank together, as if they
 * had been merged.  Two files claiming the same rank is an error naming both.
 * NULL on error (message in err). */
sp_profile *sp_load_run(const char *const *paths, size_t count, char *err, size_t errlen);

/* Write `profile` as one schema-3 file, atomically: a sibling temporary file,
 * fsync, rename, fsync of the directory.  On failure nothing is left behind
 * and a previous file at `path` is untouched.  Returns 0 or -1 (err set). */
int sp_h5_write(const char *path, const sp_profile *profile, char *err, size_t errlen);

/* Streaming merge of several files (rank files of one run, or merged files)
 * into one multi-rank file, memory bounded by the largest input rank.
 * Rejects two inputs claiming the same rank and inputs from different runs
 * (naming both files).  Returns 0 or -1 (err set). */
int sp_h5_merge(const char *const *inputs, size_t count, const char *output,
                char *err, size_t errlen);

/* Structural validation for `scopeprof check`: every problem found is
 * reported through `report` (one line each).  Returns the number of problems,
 * or -1 if the file could not be opened at all (err set). */
typedef void (*sp_check_report_fn)(void *ctx, const char *problem);
long sp_h5_check(const char *path, sp_check_report_fn report, void *ctx,
                 char *err, size_t errlen);

/* ---- streaming reads (h5_read_events.c) --------------------------------- *
 * For the bounded-memory analysis (src/stream/): a file's index, names,
 * lane tables and metadata without its event columns (the "skeleton"), and
 * the event columns read back in windows. */
enum {
    SP_H5_COL_START = 0, /* start_deltas (deltas) or start_times */
    SP_H5_COL_SECOND,    /* durations (deltas) or end_times */
    SP_H5_COL_GPU,
    SP_H5_COL_CALL,
    SP_H5_COL_PARENT,
    SP_H5_COL_THREAD,
    SP_H5_COL_TASK,
    SP_H5_COL_N,
    /* read by the streamed json export only (opened at their first read) */
    SP_H5_COL_AWAIT = SP_H5_COL_N,
    SP_H5_COL_FORK,
    SP_H5_COL_ALL
};

typedef struct sp_h5_event_shape {
    uint64_t num_events;
    int deltas;               /* start_deltas/durations, else start_times/end_times */
    int has[SP_H5_COL_N];     /* which of the columns above exist */
    int has_other;            /* an MPI column exists */
    int has_extra[SP_EXTRA_N]; /* which MPI columns (events/mpi_*) exist */
    int has_fork;             /* fork_parent_ids exists */
    int has_await;            /* await_ns exists (not read by the stream) */
    int has_stats;            /* rows carry the file's summary_statistics */
    uint64_t chunk;           /* elements per chunk of the start column; 0 contiguous */
} sp_h5_event_shape;

/* Read `path` without its event columns (their shape goes to *shape) and
 * without the event checks sp_h5_read applies (the streaming reader makes
 * them as it goes).  Row offsets index the file's own event columns.
 * Schema-1 files are refused (NULL).  NULL on error (message in err). */
sp_profile *sp_h5_read_skeleton(const char *path, sp_h5_event_shape *shape, char *err,
                                size_t errlen);

/* The files of a run (as sp_load_run takes them) as one skeleton profile,
 * rows in sp_load_run's order.  row_file[r] is the index in *paths of the
 * file row r came from, shapes[i] the event columns of (*paths)[i].  NULL on
 * error; free the arrays with free() and the paths with sp_run_inputs_free. */
sp_profile *sp_load_run_skeleton(const char *const *args, size_t count, char ***paths,
                                 size_t *num_paths, sp_h5_event_shape **shapes,
                                 size_t **row_file, char *err, size_t errlen);

/* Windowed reads of one file's event columns, as int64 (raw: start deltas
 * are not decoded).  Use from one thread (HDF5 serialises its calls
 * anyway; the report parallelises with processes). */
typedef struct sp_h5_event_reader sp_h5_event_reader;
sp_h5_event_reader *sp_h5_event_reader_open(const char *path, const sp_h5_event_shape *shape,
                                            size_t cache_bytes, char *err, size_t errlen);
/* count values of column col from offset; 0 or -1. */
int sp_h5_event_reader_read(sp_h5_event_reader *reader, int col, uint64_t offset,
                            size_t count, int64_t *out);
/* The same for MPI column `extra` (SP_EXTRA_*, shape->has_extra). */
int sp_h5_event_reader_read_extra(sp_h5_event_reader *reader, int extra, uint64_t offset,
                                  size_t count, int64_t *out);
/* Whether values [lo, hi) of column col (SP_H5_COL_*; the MPI columns:
 * sp_h5_event_reader_check_extra) read as sp_h5_read reads them, without
 * keeping them: a compressed chunk whose stored bytes equal those of a chunk
 * of an alike column that read already is not decompressed again (HDF5
 * decodes a chunk from those bytes and the column's pipeline alone).
 * 0, or -1 when some value does not read. */
int sp_h5_event_reader_check(sp_h5_event_reader *reader, int col, uint64_t lo, uint64_t hi);
int sp_h5_event_reader_check_extra(sp_h5_event_reader *reader, int extra, uint64_t lo,
                                   uint64_t hi);
void sp_h5_event_reader_close(sp_h5_event_reader *reader);

#ifdef __cplusplus
}
#endif

#endif /* SCOPEPROF_H5_H */
