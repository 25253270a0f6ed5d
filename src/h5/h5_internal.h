/* h5_internal.h - helpers shared by the HDF5 reader, writer, merger and
 * checker (not part of the public API). */
#ifndef SCOPEPROF_H5_INTERNAL_H
#define SCOPEPROF_H5_INTERNAL_H

#include <hdf5.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "scopeprof/h5.h"

#define SP_UNREADABLE_MSG \
    "not a readable HDF5 profiling file (truncated, or interrupted while writing)"

/* ---- errors (h5_io.c) ---------------------------------------------------- */

/* Stop HDF5 printing its error stack; we turn failures into our messages. */
void sp_h5_silence(void);
/* snprintf into err (tolerates err == NULL). */
void sp_h5_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Innermost description on HDF5's current error stack, e.g. the system
 * error behind a failed write; "" when there is none. */
const char *sp_h5_error_detail(char *buf, size_t len);
/* " (check free disk space and quotas)" when `why` (a write failure) is the
 * system's no space / quota / file too large; else "". */
const char *sp_h5_write_hint(const char *why);

/* Problems found while reading: the reader stops at the first one, the
 * checker collects them all.  Messages are stored as "<path>: <problem>". */
typedef struct sp_problems {
    const char *path;
    char *err;
    size_t errlen;
    sp_check_report_fn report;  /* NULL: reader mode */
    void *ctx;
    long count;
    int nesting_required; /* check: calls that do not nest are a problem */
    /* Skeleton read (sp_h5_read_skeleton): event columns are measured into
     * it, not read, and not validated; NULL for a full read. */
    sp_h5_event_shape *skeleton;
} sp_problems;
void sp_problem(sp_problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- types and columns (h5_io.c) ----------------------------------------- */

hid_t sp_h5_string_type(void);        /* vlen UTF-8; caller closes */
hid_t sp_h5_stats_file_type(void);    /* summary_statistics compound, packed LE */
hid_t sp_h5_stats_mem_type(void);     /* mirrors sp_summary_stats */

/* A group in the compact (link message) format, see h5_publish.c. */
hid_t sp_h5_create_group(hid_t loc, const char *name);

/* 1 if `name` (a path, intermediate groups allowed) exists under loc. */
int sp_h5_exists(hid_t loc, const char *name);

/* Create a 1-D dataset of n elements: contiguous, or chunked and
 * gzip(4)+shuffle compressed when `compress`.  Negative on failure. */
hid_t sp_h5_create_column(hid_t loc, const char *name, hid_t file_type, hsize_t n,
                          int compress);
/* Write count elements at offset into a 1-D dataset. */
int sp_h5_put(hid_t dset, hid_t mem_type, hsize_t offset, hsize_t count, const void *data);

/* Length of the 1-D dataset `name`: 1 found, 0 absent, -1 not a 1-D dataset. */
int sp_h5_column_length(hid_t loc, const char *name, hsize_t *n);
/* Read all n elements of a 1-D column converted to mem_type (malloc'd in
 * *out, at least one byte so a NULL means failure).  Refuses shapes that
 * differ from n and sizes the file could not hold.  0 or -1. */
int sp_h5_read_column(hid_t loc, const char *name, hid_t mem_type, hsize_t n, void **out);
/* Strings of a 1-D column (vlen or fixed width): n malloc'd strings. */
int sp_h5_read_strings(hid_t loc, const char *name, hsize_t n, char ***out);
void sp_h5_free_strings(char **strings, size_t n);

/* One column `group/name` of a table whose reference column holds n rows
 * (strings when mem_type < 0).  1 read, 0 absent and optional, -1 a problem
 * was reported (missing when required, wrong shape, wrong length, unreadable). */
int sp_h5_table_column(hid_t file, sp_problems *p, const char *group, const char *name,
                       hid_t mem_type, hsize_t n, const char *ref, int required, void **out);

/* ---- attributes (h5_io.c) ------------------------------------------------ */

int sp_h5_attr_put_int(hid_t obj, const char *name, int64_t value);
int sp_h5_attr_put_float(hid_t obj, const char *name, double value);
int sp_h5_attr_put_string(hid_t obj, const char *name, const char *value);
int sp_h5_attr_put_strings(hid_t obj, const char *name, const char *const *values, size_t n);
/* A 1-D vlen UTF-8 dataset `name` under loc holding n strings. */
int sp_h5_put_string_column(hid_t loc, const char *name, const char *const *values, size_t n);
/* A list of strings longer than this is stored as a dataset /metadata/<key>
 * instead of an attribute: each vlen string takes 16 bytes of the object
 * header, whose messages HDF5 limits to 64 KiB (about 4,000 strings; a run
 * with more distinct regions lost its file on region_functions). */
#define SP_META_ATTR_MAX_STRINGS 1024
/* Read any integer/float/string (scalar or 1-D list of strings) attribute as
 * metadata.  1 read, 0 skipped (unsupported type), -1 failure. */
int sp_h5_attr_get_meta(hid_t attr, sp_meta *out);
void sp_h5_meta_clear(sp_meta *meta);

/* ---- reading (h5_read*.c) ------------------------------------------------ */

/* Open `path` read-only: "no such file", "not a readable HDF5 ..." */
hid_t sp_h5_open_read(const char *path, sp_problems *p);
/* Schema version (1 when absent) or -1 after a problem. */
int sp_h5_schema_version(hid_t file, sp_problems *p);
/* The whole reader; stops at the first problem in reader mode, reports
 * every problem of the first failing stage in checker mode. */
sp_profile *sp_h5_read_problems(const char *path, sp_problems *p);
int sp_h5_read_metadata(hid_t file, sp_profile *profile, sp_problems *p);
int sp_h5_read_lanes(hid_t file, sp_profile *profile, sp_problems *p);
int sp_h5_read_v1(hid_t file, sp_profile *profile, sp_problems *p);
/* Row bounds, overlaps and region ids against the event column length. */
void sp_h5_validate_rows(const sp_profile *profile, uint64_t num_events, sp_problems *p);
/* The validation every command applies to what it read (the reader calls
 * it, so report, export, flame, merge and check agree): lane ids against
 * the lane tables, call ids unique and parent ids naming calls, duplicate
 * rows, summary statistics against the events, stored call_ids/parent_ids
 * against the tree the times give.  Ranks whose calls do not nest or end
 * before they start are a problem only when nesting_required (check); the
 * other commands show them flat with a warning. */
void sp_h5_validate_profile(const sp_profile *prof, int nesting_required, sp_problems *p);
/* num_ranks from metadata mpi_size and the rows' ranks. */
void sp_h5_set_num_ranks(sp_profile *profile);
/* JSON text of a list of strings ("[]" when empty); malloc'd. */
char *sp_json_string_list(const char *const *items, size_t n);

/* ---- writing (h5_layout.c, h5_publish.c) --------------------------------- */

/* What a schema-3 file will hold; the writer fills it from one profile, the
 * merger from all its inputs. */
typedef struct sp_h5_layout {
    int aggregate;
    hsize_t num_rows, num_events, num_threads, num_tasks;
    int has_gpu, has_call_ids, has_parent_ids, has_thread_ids, has_task_ids, has_await;
    int has_thread_table, has_task_table;
    int has_extra[SP_EXTRA_N];  /* optional columns of profile.h */
    int has_fork;           /* events/fork_parent_ids */
} sp_h5_layout;

/* Events a profile really holds in its rows (the writer packs them). */
uint64_t sp_h5_row_events(const sp_profile *profile);
/* Adds one profile's shape to the layout. */
void sp_h5_layout_add(sp_h5_layout *layout, const sp_profile *profile);

/* Event columns, in the order a file lists them. */
enum { SP_EV_START, SP_EV_DUR, SP_EV_GPU, SP_EV_CALL, SP_EV_PARENT, SP_EV_THREAD,
       SP_EV_TASK, SP_EV_AWAIT, SP_EV_FORK, SP_EV_EXTRA, SP_EV_N = SP_EV_EXTRA + SP_EXTRA_N };
/* Chunk of compressed event columns, in elements (128 KiB of int64): small
 * enough that the default 1 MiB chunk cache holds several while a merge
 * appends input after input. */
#define SP_H5_EVENT_CHUNK 16384

typedef struct sp_h5_sink sp_h5_sink;
/* Create every group and dataset of `layout` with final sizes in `file`
 * and the root attributes. */
sp_h5_sink *sp_h5_sink_create(hid_t file, const sp_h5_layout *layout, char *err, size_t errlen);
/* Append one profile's rows, events and lane rows after what is already
 * written; name_map[i] = output region id of profile->names[i] (NULL: identity). */
int sp_h5_sink_put(sp_h5_sink *sink, const sp_profile *profile, const uint32_t *name_map,
                   char *err, size_t errlen);
/* A writer streaming its events: the rows and lane tables of `profile`
 * (its event columns may be NULL; rows still point into num_events) with
 * the given per-row summary statistics, then the events window by window
 * (int64 values of column SP_EV_*, count of them at offset). */
int sp_h5_sink_put_rows(sp_h5_sink *sink, const sp_profile *profile,
                        const sp_summary_stats *stats, char *err, size_t errlen);
int sp_h5_sink_put_events(sp_h5_sink *sink, int column, uint64_t offset, uint64_t count,
                          const int64_t *values, char *err, size_t errlen);
/* 1 if the layout has event column SP_EV_* `column`. */
int sp_h5_sink_has_events(const sp_h5_sink *sink, int column);
/* Write the region names (known only once every input was seen), /metadata
 * (mpi_size replaced when given); closes every dataset and frees the sink. */
int sp_h5_sink_finish(sp_h5_sink *sink, const char *const *names, size_t num_names,
                      const sp_profile *meta_from, const int64_t *mpi_size_override,
                      char *err, size_t errlen);
void sp_h5_sink_abort(sp_h5_sink *sink);

/* Atomic publication: create a sibling temp file, then publish or discard
 * it.  Messages are "<path>: <reason> (<what to do>)".
 *
 * HDF5 1.10 crashes at process exit after an H5Fclose that failed because
 * the disk filled up, so where that matters (the writer runs inside the
 * profiled application) the file is built in memory (core driver) and its
 * image written by us: every I/O error is then ours to report.  `in_memory`
 * 0 streams to disk through HDF5 instead (the merger, whose output may not
 * fit in memory). */
typedef struct sp_h5_publish {
    char *final_path;
    char *temp_path;
    int fd;          /* the temp file, open while in_memory */
    int in_memory;
    hid_t file;
    int reserve_fd;  /* sp_h5_publish_reserve: the temp file, -1 otherwise */
    uint64_t reserved;
} sp_h5_publish;
int sp_h5_publish_begin(sp_h5_publish *pub, const char *path, int in_memory,
                        char *err, size_t errlen);
/* Streaming to disk (in_memory 0) inside the profiled application: reserve
 * `bytes` of disk for the temp file before HDF5 writes to it, so that a
 * full disk or quota (or a file size limit) is found here, with a
 * one-line message, and not by HDF5 half-way (see above).  The blocks not
 * used are given back at commit.  0, or -1 with err set. */
int sp_h5_publish_reserve(sp_h5_publish *pub, uint64_t bytes, char *err, size_t errlen);
int sp_h5_publish_commit(sp_h5_publish *pub, char *err, size_t errlen);
void sp_h5_publish_abort(sp_h5_publish *pub);

/* ---- several inputs of one run (h5_inputs.c) ----------------------------- */

/* Region names in first-seen order with a hash index (merging thousands of
 * files must not compare every name with every name). */
typedef struct sp_name_index {
    char **names;
    size_t count, names_cap;
    uint32_t *slots;   /* id + 1, 0 = empty */
    size_t slots_cap;  /* power of two */
} sp_name_index;
/* Id of `name`, added if new; -1 out of memory. */
int64_t sp_name_index_add(sp_name_index *idx, const char *name);
void sp_name_index_free(sp_name_index *idx);
/* map[i] = id of profile->names[i] (malloc'd), NULL out of memory. */
uint32_t *sp_name_index_map(sp_name_index *idx, const sp_profile *profile);

/* What the cross-file checks need to know of one input. */
typedef struct sp_input_info {
    const char *path;
    char *run_id;        /* NULL: none recorded */
    uint32_t *ranks;     /* distinct ranks of its rows, ascending */
    size_t num_ranks;
    int aggregate;
} sp_input_info;
int sp_input_info_fill(sp_input_info *info, const char *path, const sp_profile *profile);
void sp_input_info_free(sp_input_info *info);
/* Different runs, two files claiming one rank, mixed layouts: 0 or -1. */
int sp_inputs_check(const sp_input_info *inputs, size_t n, char *err, size_t errlen);
/* order[k] = input index, sorted by lowest rank (inputs without rows last). */
void sp_inputs_order(const sp_input_info *inputs, size_t n, size_t *order);

/* ---- chunks already decoded (h5_chunk_seen.c) ---------------------------- */

/* Stored chunks that read once, by group (columns of equal creation
 * properties and type), for checks that a column reads. */
typedef struct sp_h5_chunk_seen sp_h5_chunk_seen;
sp_h5_chunk_seen *sp_h5_chunk_seen_new(void);
void sp_h5_chunk_seen_free(sp_h5_chunk_seen *s);
/* The largest stored chunk kept (bytes): larger ones are not looked up. */
size_t sp_h5_chunk_seen_max(void);
/* dset's group (added when new), or -1 (then nothing is kept). */
long sp_h5_chunk_seen_group(sp_h5_chunk_seen *s, hid_t dset);
/* A chunk of the group with these stored bytes and filter mask read. */
int sp_h5_chunk_seen_has(sp_h5_chunk_seen *s, long group, uint32_t mask,
                         const unsigned char *bytes, size_t n);
/* Remember one that read (not kept beyond the budget). */
void sp_h5_chunk_seen_add(sp_h5_chunk_seen *s, long group, uint32_t mask,
                          const unsigned char *bytes, size_t n);

#endif /* SCOPEPROF_H5_INTERNAL_H */
