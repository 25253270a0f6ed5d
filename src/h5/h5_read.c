/* h5_read.c - sp_h5_read: open and identify a file (spec §1.1), then read
 * the columnar layout of schemas 2 and 3 (§1.2, §1.3, §1.5).  Schema 1 is in
 * h5_read_v1.c, metadata and lane tables in h5_read_meta.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "h5/h5_internal.h"
#include "model/file_kind.h"

hid_t sp_h5_open_read(const char *path, sp_problems *p)
{
    struct stat st;
    if (stat(path, &st) < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            sp_problem(p, "no such file");
        else
            sp_problem(p, "cannot open: %s", strerror(errno));
        return -1;
    }
    /* Before HDF5 opens it: opening a FIFO waits for a writer for ever. */
    const char *kind = sp_file_kind_not_regular(&st);
    if (kind) {
        sp_problem(p, "is %s, not a profile file (give the path of a regular .h5 file)", kind);
        return -1;
    }
    sp_h5_silence();
    hid_t file = H5Fis_hdf5(path) > 0 ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
    if (file < 0)
        sp_problem(p, SP_UNREADABLE_MSG);
    return file;
}

int sp_h5_schema_version(hid_t file, sp_problems *p)
{
    const char *name = "scope_profiler_schema";
    htri_t exists = H5Aexists(file, name);
    if (exists < 0) {
        sp_problem(p, SP_UNREADABLE_MSG);
        return -1;
    }
    if (!exists)
        return 1; /* schema 1 predates the attribute */
    hid_t attr = H5Aopen(file, name, H5P_DEFAULT);
    hid_t type = attr >= 0 ? H5Aget_type(attr) : -1;
    hid_t space = attr >= 0 ? H5Aget_space(attr) : -1;
    int version = -1;
    int64_t value = 0;
    if (type < 0 || space < 0) {
        sp_problem(p, SP_UNREADABLE_MSG);
    } else if (H5Tget_class(type) != H5T_INTEGER) {
        /* numpy bools are enums, 2.0 is a float, "2" a string */
        sp_problem(p, "scope_profiler_schema must be an integer");
    } else if (H5Sget_simple_extent_npoints(space) != 1) {
        sp_problem(p, "scope_profiler_schema must be an integer, not a list");
    } else if (H5Aread(attr, H5T_NATIVE_INT64, &value) < 0) {
        sp_problem(p, SP_UNREADABLE_MSG);
    } else if (value < 1) {
        sp_problem(p, "scope_profiler_schema is %lld: schema versions must be positive",
                   (long long)value);
    } else if (value > SP_SCHEMA_CURRENT) {
        sp_problem(p, "written with schema version %lld, newer than this reader "
                   "understands (%d). Upgrade scope-profiler to read this file",
                   (long long)value, SP_SCHEMA_CURRENT);
    } else {
        version = (int)value;
    }
    if (space >= 0)
        H5Sclose(space);
    if (type >= 0)
        H5Tclose(type);
    if (attr >= 0)
        H5Aclose(attr);
    return version;
}

static int read_storage_layout(hid_t file, sp_profile *profile, sp_problems *p)
{
    if (H5Aexists(file, "storage_layout") <= 0)
        return 0;
    hid_t attr = H5Aopen(file, "storage_layout", H5P_DEFAULT);
    sp_meta value;
    int rc = attr >= 0 ? sp_h5_attr_get_meta(attr, &value) : -1;
    if (attr >= 0)
        H5Aclose(attr);
    if (rc < 0) {
        sp_problem(p, "storage_layout attribute cannot be read");
        return -1;
    }
    if (rc == 1 && value.type == SP_META_STRING && !strcmp(value.s, "aggregate"))
        profile->aggregate = 1;
    sp_h5_meta_clear(&value);
    return 0;
}

static int read_names(hid_t file, sp_profile *profile, sp_problems *p)
{
    hsize_t n = 0;
    int st = sp_h5_column_length(file, "region_table/names", &n);
    if (st < 0) {
        sp_problem(p, "region_table/names is not a one-dimensional dataset");
        return -1;
    }
    if (st == 0)
        return 0;
    if (sp_h5_read_strings(file, "region_table/names", n, &profile->names) < 0) {
        sp_problem(p, "region_table/names cannot be read (wrong type, or damaged)");
        return -1;
    }
    profile->num_names = (size_t)n;
    return 0;
}

/* Index columns in memory before they become sp_row fields. */
struct index_columns {
    hsize_t n;
    uint32_t *region, *rank;
    uint64_t *offset, *count, *agg_count;
    int64_t *line, *excl, *agg_total, *agg_min, *agg_max, *agg_excl;
    sp_summary_stats *stats;
    char **file, **text, **tags, **emeta;
};

static void free_index_columns(struct index_columns *c)
{
    free(c->region);
    free(c->rank);
    free(c->offset);
    free(c->count);
    free(c->agg_count);
    free(c->line);
    free(c->excl);
    free(c->agg_total);
    free(c->agg_min);
    free(c->agg_max);
    free(c->agg_excl);
    free(c->stats);
    sp_h5_free_strings(c->file, c->n);
    sp_h5_free_strings(c->text, c->n);
    sp_h5_free_strings(c->tags, c->n);
    sp_h5_free_strings(c->emeta, c->n);
}

/* summary_statistics is used only when it carries all 11 fields (§1.6);
 * otherwise the statistics are recomputed from the events. */
static int stats_complete(hid_t file)
{
    const char *path = "rank_region_index/summary_statistics";
    if (!sp_h5_exists(file, path))
        return 0;
    hid_t dset = H5Dopen2(file, path, H5P_DEFAULT);
    hid_t type = dset >= 0 ? H5Dget_type(dset) : -1;
    hid_t mem = sp_h5_stats_mem_type();
    int ok = type >= 0 && mem >= 0 && H5Tget_class(type) == H5T_COMPOUND;
    for (int i = 0; ok && i < H5Tget_nmembers(mem); i++) {
        char *name = H5Tget_member_name(mem, (unsigned)i);
        ok = name && H5Tget_member_index(type, name) >= 0;
        if (name)
            H5free_memory(name);
    }
    if (mem >= 0)
        H5Tclose(mem);
    if (type >= 0)
        H5Tclose(type);
    if (dset >= 0)
        H5Dclose(dset);
    return ok;
}

static int read_index_columns(hid_t file, int aggregate, struct index_columns *c, sp_problems *p)
{
    const char *g = "rank_region_index";
    if (!sp_h5_exists(file, g))
        return 0;
    int st = sp_h5_column_length(file, "rank_region_index/region_ids", &c->n);
    if (st <= 0) {
        sp_problem(p, st == 0 ? "rank_region_index/region_ids is missing"
                              : "rank_region_index/region_ids is not a one-dimensional dataset");
        return -1;
    }
    const char *ref = "region_ids";
    long before = p->count;
    hsize_t n = c->n;
    hid_t stats_mem = sp_h5_stats_mem_type();
    sp_h5_table_column(file, p, g, "region_ids", H5T_NATIVE_UINT32, n, ref, 1, (void **)&c->region);
    sp_h5_table_column(file, p, g, "ranks", H5T_NATIVE_UINT32, n, ref, 1, (void **)&c->rank);
    if (aggregate) {
        sp_h5_table_column(file, p, g, "aggregate_counts", H5T_NATIVE_UINT64, n, ref, 1,
                           (void **)&c->agg_count);
        sp_h5_table_column(file, p, g, "aggregate_totals", H5T_NATIVE_INT64, n, ref, 1,
                           (void **)&c->agg_total);
        sp_h5_table_column(file, p, g, "aggregate_minimums", H5T_NATIVE_INT64, n, ref, 0,
                           (void **)&c->agg_min);
        sp_h5_table_column(file, p, g, "aggregate_maximums", H5T_NATIVE_INT64, n, ref, 0,
                           (void **)&c->agg_max);
        sp_h5_table_column(file, p, g, "aggregate_exclusives", H5T_NATIVE_INT64, n, ref, 0,
                           (void **)&c->agg_excl);
    } else {
        sp_h5_table_column(file, p, g, "event_offsets", H5T_NATIVE_UINT64, n, ref, 1,
                           (void **)&c->offset);
        sp_h5_table_column(file, p, g, "event_counts", H5T_NATIVE_UINT64, n, ref, 1,
                           (void **)&c->count);
        sp_h5_table_column(file, p, g, "source_lines", H5T_NATIVE_INT64, n, ref, 0,
                           (void **)&c->line);
        sp_h5_table_column(file, p, g, "exclusive_totals", H5T_NATIVE_INT64, n, ref, 0,
                           (void **)&c->excl);
        if (stats_complete(file))
            sp_h5_table_column(file, p, g, "summary_statistics", stats_mem, n, ref, 0,
                               (void **)&c->stats);
        sp_h5_table_column(file, p, g, "source_files", -1, n, ref, 0, (void **)&c->file);
        sp_h5_table_column(file, p, g, "source_texts", -1, n, ref, 0, (void **)&c->text);
        sp_h5_table_column(file, p, g, "tags", -1, n, ref, 0, (void **)&c->tags);
        sp_h5_table_column(file, p, g, "event_metadata", -1, n, ref, 0, (void **)&c->emeta);
    }
    if (stats_mem >= 0)
        H5Tclose(stats_mem);
    return p->count > before ? -1 : 0;
}

static char *take(char **strings, hsize_t i, const char *dflt)
{
    if (strings) {
        char *s = strings[i];
        strings[i] = NULL;
        return s;
    }
    return strdup(dflt);
}

static int build_rows(sp_profile *profile, struct index_columns *c)
{
    profile->rows = calloc(c->n ? c->n : 1, sizeof *profile->rows);
    if (!profile->rows)
        return -1;
    profile->num_rows = (size_t)c->n;
    for (hsize_t i = 0; i < c->n; i++) {
        sp_row *r = &profile->rows[i];
        r->region = c->region[i];
        r->rank = c->rank[i];
        r->offset = c->offset ? c->offset[i] : 0;
        r->count = c->count ? c->count[i] : 0;
        r->source_line = c->line ? c->line[i] : -1;
        r->exclusive_total = c->excl ? c->excl[i] : -1;
        if (c->stats)
            r->stats = c->stats[i];
        r->source_file = take(c->file, i, "");
        r->source_text = take(c->text, i, "");
        r->tags = take(c->tags, i, "[]");
        r->event_metadata = take(c->emeta, i, "[]");
        if (!r->source_file || !r->source_text || !r->tags || !r->event_metadata)
            return -1;
        if (c->agg_count) {
            r->agg_count = c->agg_count[i];
            r->agg_total = c->agg_total[i];
            r->agg_minimum = c->agg_min ? c->agg_min[i] : 0;
            r->agg_maximum = c->agg_max ? c->agg_max[i] : 0;
            r->agg_exclusive = c->agg_excl ? c->agg_excl[i] : -1;
            r->stats.total = r->agg_total;
            r->stats.minimum = r->agg_minimum;
            r->stats.maximum = r->agg_maximum;
            r->stats.mean = r->agg_count ? (double)r->agg_total / (double)r->agg_count : 0.0;
        }
    }
    return 0;
}

/* Skeleton read: the event columns' presence, length and chunking, nothing
 * read.  Any column of another length is a problem (the full reader names it). */
static int measure_events(hid_t file, sp_profile *profile, int deltas, int have_stats,
                          hsize_t n, sp_problems *p)
{
    static const char *const names[2][SP_H5_COL_N] = {
        {"start_times", "end_times", "gpu_durations", "call_ids", "parent_ids", "thread_ids",
         "task_ids"},
        {"start_deltas", "durations", "gpu_durations", "call_ids", "parent_ids", "thread_ids",
         "task_ids"}};
    sp_h5_event_shape *shape = p->skeleton;
    memset(shape, 0, sizeof *shape);
    shape->num_events = n;
    shape->deltas = deltas;
    shape->has_stats = have_stats;
    char path[96];
    for (int c = 0; c < SP_H5_COL_N + 2 + SP_EXTRA_N; c++) {
        const char *name = c < SP_H5_COL_N       ? names[deltas][c]
                           : c == SP_H5_COL_N     ? "await_ns"
                           : c == SP_H5_COL_N + 1 ? "fork_parent_ids"
                                                  : sp_event_extra_names[c - SP_H5_COL_N - 2];
        snprintf(path, sizeof path, "events/%s", name);
        hsize_t len = 0;
        int st = sp_h5_column_length(file, path, &len);
        if (st == 0)
            continue;
        if (st < 0 || len != n) {
            sp_problem(p, "events/%s does not hold %llu values", name, (unsigned long long)n);
            return -1;
        }
        if (c < SP_H5_COL_N)
            shape->has[c] = 1;
        else if (c == SP_H5_COL_N)
            shape->has_await = 1;
        else if (c == SP_H5_COL_N + 1)
            shape->has_fork = 1;
        else if (c > SP_H5_COL_N + 1) { /* (await_ns: nothing the analysis reads) */
            shape->has_other = 1;
            shape->has_extra[c - SP_H5_COL_N - 2] = 1;
        }
    }
    if (!shape->has[SP_H5_COL_SECOND]) {
        sp_problem(p, "events/%s is missing", names[deltas][SP_H5_COL_SECOND]);
        return -1;
    }
    snprintf(path, sizeof path, "events/%s", names[deltas][SP_H5_COL_START]);
    hid_t dset = H5Dopen2(file, path, H5P_DEFAULT);
    hid_t plist = dset >= 0 ? H5Dget_create_plist(dset) : -1;
    hsize_t chunk[1];
    if (plist >= 0 && H5Pget_layout(plist) == H5D_CHUNKED && H5Pget_chunk(plist, 1, chunk) == 1)
        shape->chunk = chunk[0];
    if (plist >= 0)
        H5Pclose(plist);
    if (dset >= 0)
        H5Dclose(dset);
    (void)profile;
    return 0;
}

/* Event columns: the two timestamp columns (either encoding) plus the
 * optional ones, all of one length. */
static int read_events(hid_t file, sp_profile *profile, int have_stats, sp_problems *p)
{
    const char *g = "events";
    if (!sp_h5_exists(file, g)) {
        if (profile->num_rows == 0)
            return 0;
        sp_problem(p, "has no events group, but its index lists %zu region rows "
                   "(the file is damaged)", profile->num_rows);
        return -1;
    }
    int deltas = sp_h5_exists(file, "events/start_deltas");
    const char *first = deltas ? "start_deltas" : "start_times";
    const char *second = deltas ? "durations" : "end_times";
    char path[64];
    snprintf(path, sizeof path, "events/%s", first);
    hsize_t n = 0;
    int st = sp_h5_column_length(file, path, &n);
    if (st <= 0) {
        sp_problem(p, st == 0 ? "events holds neither start_deltas nor start_times"
                              : "events/%s is not a one-dimensional dataset", first);
        return -1;
    }
    sp_h5_validate_rows(profile, n, p);
    if (p->count > 0)
        return -1;
    if (p->skeleton)
        return measure_events(file, profile, deltas, have_stats, n, p);
    long before = p->count;
    sp_h5_table_column(file, p, g, first, H5T_NATIVE_INT64, n, first, 1, (void **)&profile->start);
    sp_h5_table_column(file, p, g, second, H5T_NATIVE_INT64, n, first, 1, (void **)&profile->end);
    sp_h5_table_column(file, p, g, "gpu_durations", H5T_NATIVE_INT64, n, first, 0,
                       (void **)&profile->gpu);
    sp_h5_table_column(file, p, g, "call_ids", H5T_NATIVE_INT64, n, first, 0,
                       (void **)&profile->call_ids);
    sp_h5_table_column(file, p, g, "parent_ids", H5T_NATIVE_INT64, n, first, 0,
                       (void **)&profile->parent_ids);
    sp_h5_table_column(file, p, g, "thread_ids", H5T_NATIVE_INT64, n, first, 0,
                       (void **)&profile->thread_ids);
    sp_h5_table_column(file, p, g, "task_ids", H5T_NATIVE_INT64, n, first, 0,
                       (void **)&profile->task_ids);
    sp_h5_table_column(file, p, g, "await_ns", H5T_NATIVE_INT64, n, first, 0,
                       (void **)&profile->await_ns);
    for (int c = 0; c < SP_EXTRA_N; c++)
        sp_h5_table_column(file, p, g, sp_event_extra_names[c], H5T_NATIVE_INT64, n, first, 0,
                           (void **)&profile->extra[c]);
    sp_h5_table_column(file, p, g, "fork_parent_ids", H5T_NATIVE_INT64, n, first, 0,
                       (void **)&profile->fork_parent_ids);
    if (p->count > before)
        return -1;
    profile->num_events = (size_t)n;
    if (deltas) {
        /* Decode per row: cumulative sum of the gaps, then end = start + duration
         * (unsigned, so the wrap-around of the encoder is undone exactly). */
        for (size_t i = 0; i < profile->num_rows; i++) {
            const sp_row *r = &profile->rows[i];
            for (uint64_t j = 1; j < r->count; j++)
                profile->start[r->offset + j] =
                    (int64_t)((uint64_t)profile->start[r->offset + j] +
                              (uint64_t)profile->start[r->offset + j - 1]);
        }
        for (size_t i = 0; i < profile->num_events; i++)
            profile->end[i] = (int64_t)((uint64_t)profile->start[i] + (uint64_t)profile->end[i]);
    }
    if (!have_stats)
        for (size_t i = 0; i < profile->num_rows; i++) {
            sp_row *r = &profile->rows[i];
            if (r->count)
                sp_summary_compute(profile->start + r->offset, profile->end + r->offset,
                                   profile->gpu ? profile->gpu + r->offset : NULL,
                                   (size_t)r->count, &r->stats);
        }
    return 0;
}

static int read_columnar(hid_t file, sp_profile *profile, sp_problems *p)
{
    if (read_storage_layout(file, profile, p) < 0 || read_names(file, profile, p) < 0)
        return -1;
    struct index_columns c = {0};
    int rc = read_index_columns(file, profile->aggregate, &c, p);
    if (rc == 0 && build_rows(profile, &c) < 0) {
        sp_problem(p, "out of memory");
        rc = -1;
    }
    int have_stats = c.stats != NULL;
    free_index_columns(&c);
    if (rc < 0)
        return -1;
    if (profile->aggregate) {
        sp_h5_validate_rows(profile, 0, p);
        return p->count > 0 ? -1 : 0;
    }
    return read_events(file, profile, have_stats, p);
}

const char *volatile sp_h5_current_path;
int64_t sp_h5_current_since_ns;
int64_t sp_h5_current_bytes;

static sp_profile *read_problems(const char *path, sp_problems *p);

sp_profile *sp_h5_read_problems(const char *path, sp_problems *p)
{
    struct stat st;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    __atomic_store_n(&sp_h5_current_bytes, stat(path, &st) == 0 ? (int64_t)st.st_size : 0,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&sp_h5_current_since_ns, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&sp_h5_current_path, path, __ATOMIC_RELEASE);
    sp_profile *profile = read_problems(path, p);
    __atomic_store_n(&sp_h5_current_path, NULL, __ATOMIC_RELEASE);
    /* After the watchdog's window: this is our own work, not HDF5's. */
    if (profile && !p->skeleton) {
        sp_h5_validate_profile(profile, p->nesting_required, p);
        if (p->count > 0) {
            sp_profile_free(profile);
            return NULL;
        }
    }
    return profile;
}

static sp_profile *read_problems(const char *path, sp_problems *p)
{
    hid_t file = sp_h5_open_read(path, p);
    if (file < 0)
        return NULL;
    sp_profile *profile = sp_profile_new();
    int rc = profile && (profile->path = strdup(path)) ? 0 : -1;
    if (rc < 0)
        sp_problem(p, "out of memory");
    int version = rc == 0 ? sp_h5_schema_version(file, p) : -1;
    if (version < 0)
        rc = -1;
    else
        profile->schema_version = version;
    if (rc == 0)
        rc = sp_h5_read_metadata(file, profile, p);
    if (rc == 0 && version == 1 && p->skeleton) {
        sp_problem(p, "schema 1 files are not read in windows");
        rc = -1;
    }
    if (rc == 0)
        rc = version == 1 ? sp_h5_read_v1(file, profile, p) : read_columnar(file, profile, p);
    if (rc == 0)
        rc = sp_h5_read_lanes(file, profile, p);
    if (H5Fclose(file) < 0 && rc == 0) {
        sp_problem(p, SP_UNREADABLE_MSG);
        rc = -1;
    }
    if (rc < 0 || p->count > 0) {
        sp_profile_free(profile);
        return NULL;
    }
    sp_h5_set_num_ranks(profile);
    return profile;
}

sp_profile *sp_h5_read(const char *path, char *err, size_t errlen)
{
    sp_problems p = {.path = path, .err = err, .errlen = errlen};
    return sp_h5_read_problems(path, &p);
}

sp_profile *sp_h5_read_skeleton(const char *path, sp_h5_event_shape *shape, char *err,
                                size_t errlen)
{
    memset(shape, 0, sizeof *shape);
    sp_problems p = {.path = path, .err = err, .errlen = errlen, .skeleton = shape};
    return sp_h5_read_problems(path, &p);
}
