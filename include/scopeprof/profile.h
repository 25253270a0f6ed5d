/* scopeprof/profile.h - one profile in memory, as stored in a schema-3 file.
 *
 * This is the analysis model shared by the HDF5 writer and reader, the
 * exporters, the report and the `scopeprof` command.  It mirrors the file
 * (spec §1.2): a region-name table, one row per (rank, region) pointing at a
 * slice of the event columns, optional per-event columns, the lane tables and
 * the metadata attributes.  Event timestamps are absolute nanoseconds (the
 * delta encoding exists only in the file); lane-table timestamps are relative
 * to metadata start_time_ns, -1 meaning unknown, exactly as stored. */
#ifndef SCOPEPROF_PROFILE_H
#define SCOPEPROF_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Field order and types are those of the file's compound type. */
typedef struct sp_summary_stats {
    int64_t total;
    int64_t minimum;
    int64_t maximum;
    int64_t first;
    int64_t last;
    int64_t start_minimum;
    int64_t end_maximum;
    uint64_t gpu_count;
    int64_t gpu_total;
    double mean;
    double m2;
} sp_summary_stats;

/* One (rank, region) row of rank_region_index. */
typedef struct sp_row {
    uint32_t region;          /* index into sp_profile.names */
    uint32_t rank;
    uint64_t offset;          /* first event of the row in the event columns */
    uint64_t count;           /* number of events */
    int64_t source_line;      /* -1: unknown */
    int64_t exclusive_total;  /* -1: not computed */
    char *source_file;        /* "" : unknown (never NULL) */
    char *source_text;        /* "" : unknown (never NULL) */
    char *tags;               /* JSON list of strings, "[]" if none */
    char *event_metadata;     /* JSON text, "[]" if none */
    sp_summary_stats stats;
    /* aggregate layout only (sp_profile.aggregate != 0) */
    uint64_t agg_count;
    int64_t agg_total, agg_minimum, agg_maximum, agg_exclusive;
} sp_row;

typedef struct sp_thread_row {
    uint32_t rank;
    int64_t index, ident, native_id;
    int8_t daemon;
    int64_t start_ns, end_ns, cpu_ns; /* start/end relative to run start; -1 unknown */
    char *name;
    /* "main", "pthread", "openmp", "mpi", "other"; NULL or "" unknown
     * (files before the column) */
    char *kind;
    int64_t omp_thread_num;           /* OpenMP worker's thread number, -1 none */
} sp_thread_row;

typedef struct sp_task_row {
    uint32_t rank;
    int64_t index, thread_index, created_ns, done_ns, steps, running_ns, suspended_ns;
    char *kind, *name, *coro_name;
} sp_task_row;

typedef enum sp_meta_type {
    SP_META_INT = 0,
    SP_META_FLOAT = 1,
    SP_META_STRING = 2,
    SP_META_STRINGS = 3 /* array of strings */
} sp_meta_type;

typedef struct sp_meta {
    char *key;
    sp_meta_type type;
    int64_t i;
    double f;
    char *s;          /* SP_META_STRING */
    char **list;      /* SP_META_STRINGS */
    size_t list_len;
} sp_meta;

/* Optional int64 event columns beyond the fixed ones, written as
 * events/<name> when a profile has them; -1 in rows where they do not apply
 * (and in rows of profiles without them, when several are merged).  A new
 * column is one enum entry and one name (profile.c); the HDF5 layer, the
 * run loader and sp_profile_free handle every entry alike. */
typedef enum sp_event_extra {
    SP_EXTRA_MPI_SENT_BYTES = 0, /* bytes of the call's send buffer arguments (docs/mpi.md) */
    SP_EXTRA_MPI_RECV_BYTES,     /* bytes of its receive buffer arguments */
    SP_EXTRA_MPI_PEER,           /* peer or root, rank in MPI_COMM_WORLD */
    SP_EXTRA_MPI_TAG,            /* tag of the point-to-point message the call sends */
    SP_EXTRA_MPI_COMM,           /* communicator id, the same on every rank */
    SP_EXTRA_MPI_SOURCE,         /* world rank of the message the call receives */
    SP_EXTRA_MPI_RECV_TAG,       /* tag of that message (wildcards resolved) */
    SP_EXTRA_N
} sp_event_extra;
extern const char *const sp_event_extra_names[SP_EXTRA_N];

typedef struct sp_profile {
    int schema_version;   /* 1, 2 or 3 as read; 3 for profiles built in memory */
    int aggregate;        /* storage_layout == "aggregate" */
    char *path;           /* file it came from, or NULL */

    size_t num_names;
    char **names;
    struct sp_name_hash *name_hash; /* private to sp_profile_intern_name */

    size_t num_rows;
    sp_row *rows;

    size_t num_events;
    int64_t *start;       /* absolute ns */
    int64_t *end;         /* absolute ns */
    int64_t *gpu;         /* NULL when the column is absent; -1 = none */
    int64_t *call_ids;    /* NULL when absent */
    int64_t *parent_ids;  /* NULL when absent; -1 = root */
    int64_t *thread_ids;  /* NULL when absent; -1 = unknown thread */
    int64_t *task_ids;    /* NULL when absent; -1 = outside any task */
    int64_t *await_ns;    /* NULL when absent */

    int has_thread_table;
    size_t num_threads;
    sp_thread_row *threads;

    int has_task_table;
    size_t num_tasks;
    sp_task_row *tasks;

    size_t num_meta;
    sp_meta *meta;

    uint32_t num_ranks;   /* max(mpi_size, max rank + 1), 0 without rows */

    int64_t *extra[SP_EXTRA_N]; /* NULL when absent; -1 = not applicable */
    /* The call a call was forked from, on another lane (an OpenMP worker's
     * implicit task -> the encountering thread's "omp parallel" call; a
     * pthread's root calls -> the call open at pthread_create); -1 none.
     * NULL when absent (docs/tasks.md). */
    int64_t *fork_parent_ids;
} sp_profile;

/* Allocation helpers: every function returns 0 on success, -1 on failure
 * (out of memory).  Strings are copied. */
sp_profile *sp_profile_new(void);
void sp_profile_free(sp_profile *profile);
/* Index of `name` in the name table, added if missing; -1 on failure. */
int64_t sp_profile_intern_name(sp_profile *profile, const char *name);

const sp_meta *sp_profile_meta(const sp_profile *profile, const char *key);
int sp_profile_meta_int(const sp_profile *profile, const char *key, int64_t *out);
const char *sp_profile_meta_string(const sp_profile *profile, const char *key);
int sp_profile_set_meta_int(sp_profile *profile, const char *key, int64_t value);
int sp_profile_set_meta_float(sp_profile *profile, const char *key, double value);
int sp_profile_set_meta_string(sp_profile *profile, const char *key, const char *value);
int sp_profile_set_meta_strings(sp_profile *profile, const char *key,
                                const char *const *values, size_t count);

/* Summary statistics of one row's events (spec §1.6). */
void sp_summary_compute(const int64_t *start, const int64_t *end,
                        const int64_t *gpu, size_t count, sp_summary_stats *out);

/* The same statistics for a row whose events arrive in pieces, in row
 * order: begin with the row's total duration (wrapping sum) and count,
 * add every piece, end.  The result is bit-identical to
 * sp_summary_compute over the whole row (same operations, same order). */
typedef struct sp_summary_acc {
    sp_summary_stats stats;
    uint64_t count, seen;
    double mean, m2;
} sp_summary_acc;
void sp_summary_begin(sp_summary_acc *acc, int64_t total, uint64_t count);
void sp_summary_add(sp_summary_acc *acc, const int64_t *start, const int64_t *end,
                    const int64_t *gpu, size_t n);
void sp_summary_end(sp_summary_acc *acc, sp_summary_stats *out);

/* Time origin of the run: metadata start_time_ns if present, else the
 * earliest event start, else 0. */
int64_t sp_profile_origin_ns(const sp_profile *profile);

#ifdef __cplusplus
}
#endif

#endif /* SCOPEPROF_PROFILE_H */
