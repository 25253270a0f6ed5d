/* h5_layout.c - the schema-3 layout on disk (spec §1.2/§1.3): create every
 * dataset with its final size, then append profiles one after the other.
 * The writer appends one profile; the merger appends each input in turn, so
 * it never holds more than one input in memory. */
#include <stdlib.h>
#include <string.h>

#include "h5/h5_internal.h"

enum col_kind { K_U32, K_U64, K_I64, K_I8, K_STR, K_STATS };

struct column {
    const char *name;
    enum col_kind kind;
};

enum { IX_REGION, IX_RANK, IX_OFFSET, IX_COUNT, IX_LINE, IX_EXCL, IX_STATS,
       IX_FILE, IX_TEXT, IX_TAGS, IX_EMETA, IX_N };
static const struct column index_cols[IX_N] = {
    {"region_ids", K_U32}, {"ranks", K_U32}, {"event_offsets", K_U64},
    {"event_counts", K_U64}, {"source_lines", K_I64}, {"exclusive_totals", K_I64},
    {"summary_statistics", K_STATS}, {"source_files", K_STR}, {"source_texts", K_STR},
    {"tags", K_STR}, {"event_metadata", K_STR},
};

enum { AG_REGION, AG_RANK, AG_COUNT, AG_TOTAL, AG_MIN, AG_MAX, AG_EXCL, AG_N };
static const struct column agg_cols[AG_N] = {
    {"region_ids", K_U32}, {"ranks", K_U32}, {"aggregate_counts", K_U64},
    {"aggregate_totals", K_I64}, {"aggregate_minimums", K_I64},
    {"aggregate_maximums", K_I64}, {"aggregate_exclusives", K_I64},
};

static const char *const fixed_event_names[SP_EV_EXTRA] = {
    "start_deltas", "durations", "gpu_durations", "call_ids", "parent_ids",
    "thread_ids", "task_ids", "await_ns", "fork_parent_ids",
};

static const char *event_name(int c)
{
    return c < SP_EV_EXTRA ? fixed_event_names[c] : sp_event_extra_names[c - SP_EV_EXTRA];
}

enum { TH_RANK, TH_INDEX, TH_IDENT, TH_NATIVE, TH_DAEMON, TH_START, TH_END, TH_CPU,
       TH_NAME, TH_KIND, TH_OMP, TH_N };
static const struct column thread_cols[TH_N] = {
    {"ranks", K_U32}, {"index", K_I64}, {"ident", K_I64}, {"native_id", K_I64},
    {"daemon", K_I8}, {"start_ns", K_I64}, {"end_ns", K_I64}, {"cpu_ns", K_I64},
    {"name", K_STR}, {"kind", K_STR}, {"omp_thread_num", K_I64},
};

enum { TK_RANK, TK_INDEX, TK_THREAD, TK_CREATED, TK_DONE, TK_STEPS, TK_RUNNING,
       TK_SUSPENDED, TK_KIND, TK_NAME, TK_CORO, TK_N };
static const struct column task_cols[TK_N] = {
    {"ranks", K_U32}, {"index", K_I64}, {"thread_index", K_I64}, {"created_ns", K_I64},
    {"done_ns", K_I64}, {"steps", K_I64}, {"running_ns", K_I64}, {"suspended_ns", K_I64},
    {"kind", K_STR}, {"name", K_STR}, {"coro_name", K_STR},
};

struct sp_h5_sink {
    hid_t file;
    sp_h5_layout layout;
    hid_t index[IX_N], agg[AG_N], events[SP_EV_N], threads[TH_N], tasks[TK_N];
    hid_t str_type, stats_file, stats_mem;
    hsize_t rows_done, events_done, threads_done, tasks_done;
};

uint64_t sp_h5_row_events(const sp_profile *profile)
{
    uint64_t total = 0;
    for (size_t i = 0; i < profile->num_rows; i++)
        total += profile->rows[i].count;
    return total;
}

void sp_h5_layout_add(sp_h5_layout *layout, const sp_profile *profile)
{
    layout->aggregate |= profile->aggregate;
    layout->num_rows += profile->num_rows;
    if (!profile->aggregate)
        layout->num_events += sp_h5_row_events(profile);
    layout->has_gpu |= profile->gpu != NULL;
    layout->has_call_ids |= profile->call_ids != NULL;
    layout->has_parent_ids |= profile->parent_ids != NULL;
    layout->has_thread_ids |= profile->thread_ids != NULL;
    layout->has_task_ids |= profile->task_ids != NULL;
    layout->has_await |= profile->await_ns != NULL;
    for (int c = 0; c < SP_EXTRA_N; c++)
        layout->has_extra[c] |= profile->extra[c] != NULL;
    layout->has_fork |= profile->fork_parent_ids != NULL;
    if (profile->has_thread_table) {
        layout->has_thread_table = 1;
        layout->num_threads += profile->num_threads;
    }
    if (profile->has_task_table) {
        layout->has_task_table = 1;
        layout->num_tasks += profile->num_tasks;
    }
}

static hid_t file_type_of(const sp_h5_sink *sink, enum col_kind kind)
{
    switch (kind) {
    case K_U32: return H5T_STD_U32LE;
    case K_U64: return H5T_STD_U64LE;
    case K_I64: return H5T_STD_I64LE;
    case K_I8: return H5T_STD_I8LE;
    case K_STR: return sink->str_type;
    case K_STATS: return sink->stats_file;
    }
    return -1;
}

static hid_t mem_type_of(const sp_h5_sink *sink, enum col_kind kind)
{
    switch (kind) {
    case K_U32: return H5T_NATIVE_UINT32;
    case K_U64: return H5T_NATIVE_UINT64;
    case K_I64: return H5T_NATIVE_INT64;
    case K_I8: return H5T_NATIVE_INT8;
    case K_STR: return sink->str_type;
    case K_STATS: return sink->stats_mem;
    }
    return -1;
}

static void close_all(hid_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= 0)
            H5Dclose(ids[i]);
        ids[i] = -1;
    }
}

static void set_all(hid_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ids[i] = -1;
}

/* Create group `group` holding the given columns of n elements. */
static int create_table(sp_h5_sink *sink, const char *group, const struct column *cols,
                        size_t ncols, hsize_t n, hid_t *out)
{
    hid_t g = sp_h5_create_group(sink->file, group);
    if (g < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < ncols && rc == 0; i++) {
        out[i] = sp_h5_create_column(g, cols[i].name, file_type_of(sink, cols[i].kind), n, 0);
        if (out[i] < 0)
            rc = -1;
    }
    if (H5Gclose(g) < 0)
        rc = -1;
    return rc;
}

static int write_names(hid_t file, hid_t str_type, const char *const *names, hsize_t n)
{
    hid_t g = sp_h5_create_group(file, "region_table");
    if (g < 0)
        return -1;
    hid_t d = sp_h5_create_column(g, "names", str_type, n, 0);
    int rc = d < 0 || sp_h5_put(d, str_type, 0, n, names) < 0 ? -1 : 0;
    if (d >= 0 && H5Dclose(d) < 0)
        rc = -1;
    if (H5Gclose(g) < 0)
        rc = -1;
    return rc;
}

static int create_events(sp_h5_sink *sink)
{
    const sp_h5_layout *l = &sink->layout;
    int present[SP_EV_N] = {1, 1, l->has_gpu, l->has_call_ids, l->has_parent_ids,
                         l->has_thread_ids, l->has_task_ids, l->has_await, l->has_fork};
    for (int c = 0; c < SP_EXTRA_N; c++)
        present[SP_EV_EXTRA + c] = l->has_extra[c];
    int compress = l->num_events >= SP_COMPRESS_MIN_EVENTS;
    hid_t g = sp_h5_create_group(sink->file, "events");
    if (g < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < SP_EV_N && rc == 0; i++) {
        if (!present[i])
            continue;
        sink->events[i] = sp_h5_create_column(g, event_name((int)i), H5T_STD_I64LE,
                                              l->num_events, compress);
        if (sink->events[i] < 0)
            rc = -1;
    }
    if (H5Gclose(g) < 0)
        rc = -1;
    return rc;
}

sp_h5_sink *sp_h5_sink_create(hid_t file, const sp_h5_layout *layout, char *err, size_t errlen)
{
    sp_h5_sink *sink = calloc(1, sizeof *sink);
    if (!sink) {
        sp_h5_errf(err, errlen, "out of memory");
        return NULL;
    }
    sink->file = file;
    sink->layout = *layout;
    set_all(sink->index, IX_N);
    set_all(sink->agg, AG_N);
    set_all(sink->events, SP_EV_N);
    set_all(sink->threads, TH_N);
    set_all(sink->tasks, TK_N);
    sink->str_type = sp_h5_string_type();
    sink->stats_file = sp_h5_stats_file_type();
    sink->stats_mem = sp_h5_stats_mem_type();
    int rc = sink->str_type < 0 || sink->stats_file < 0 || sink->stats_mem < 0 ? -1 : 0;
    if (rc == 0)
        rc = sp_h5_attr_put_int(file, "scope_profiler_schema", SP_SCHEMA_CURRENT) |
             sp_h5_attr_put_string(file, "storage_layout",
                                   layout->aggregate ? "aggregate" : "columnar");
    if (rc == 0 && layout->aggregate)
        rc = create_table(sink, "rank_region_index", agg_cols, AG_N, layout->num_rows, sink->agg);
    else if (rc == 0)
        rc = create_table(sink, "rank_region_index", index_cols, IX_N, layout->num_rows,
                          sink->index);
    if (rc == 0 && !layout->aggregate)
        rc = create_events(sink);
    if (rc == 0 && layout->has_thread_table)
        rc = create_table(sink, "thread_table", thread_cols, TH_N, layout->num_threads,
                          sink->threads);
    if (rc == 0 && layout->has_task_table)
        rc = create_table(sink, "task_table", task_cols, TK_N, layout->num_tasks, sink->tasks);
    if (rc < 0) {
        char detail[256];
        sp_h5_errf(err, errlen, "creating the file layout failed: %s",
                   sp_h5_error_detail(detail, sizeof detail));
        sp_h5_sink_abort(sink);
        return NULL;
    }
    return sink;
}

/* Scratch columns for one profile's part, reused column after column. */
struct scratch {
    size_t n;
    union {
        uint32_t *u32;
        uint64_t *u64;
        int64_t *i64;
        int8_t *i8;
        void *any;
    } num;
    const char **str;
};

static int scratch_init(struct scratch *s, size_t n)
{
    s->n = n;
    s->num.any = malloc((n ? n : 1) * sizeof(int64_t));
    s->str = malloc((n ? n : 1) * sizeof *s->str);
    return s->num.any && s->str ? 0 : -1;
}

static void scratch_free(struct scratch *s)
{
    free(s->num.any);
    free(s->str);
}

static int put_scratch(const sp_h5_sink *sink, hid_t dset, enum col_kind kind,
                       hsize_t offset, const struct scratch *s)
{
    const void *data = kind == K_STR ? (const void *)s->str : s->num.any;
    return sp_h5_put(dset, mem_type_of(sink, kind), offset, s->n, data);
}

static const char *or_empty(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

static int put_aggregate_rows(sp_h5_sink *sink, const sp_profile *profile,
                              const uint32_t *name_map, struct scratch *s)
{
    for (int c = 0; c < AG_N; c++) {
        for (size_t i = 0; i < profile->num_rows; i++) {
            const sp_row *r = &profile->rows[i];
            switch (c) {
            case AG_REGION: s->num.u32[i] = name_map ? name_map[r->region] : r->region; break;
            case AG_RANK: s->num.u32[i] = r->rank; break;
            case AG_COUNT: s->num.u64[i] = r->agg_count; break;
            case AG_TOTAL: s->num.i64[i] = r->agg_total; break;
            case AG_MIN: s->num.i64[i] = r->agg_minimum; break;
            case AG_MAX: s->num.i64[i] = r->agg_maximum; break;
            default: s->num.i64[i] = r->agg_exclusive; break;
            }
        }
        if (put_scratch(sink, sink->agg[c], agg_cols[c].kind, sink->rows_done, s) < 0)
            return -1;
    }
    return 0;
}

static int put_index_rows(sp_h5_sink *sink, const sp_profile *profile,
                          const uint32_t *name_map, const sp_summary_stats *given,
                          struct scratch *s)
{
    size_t n = profile->num_rows;
    sp_summary_stats *stats = malloc((n ? n : 1) * sizeof *stats);
    if (!stats)
        return -1;
    int rc = 0;
    for (int c = 0; c < IX_N && rc == 0; c++) {
        uint64_t next = sink->events_done;
        for (size_t i = 0; i < n; i++) {
            const sp_row *r = &profile->rows[i];
            switch (c) {
            case IX_REGION: s->num.u32[i] = name_map ? name_map[r->region] : r->region; break;
            case IX_RANK: s->num.u32[i] = r->rank; break;
            case IX_OFFSET: s->num.u64[i] = next; next += r->count; break;
            case IX_COUNT: s->num.u64[i] = r->count; break;
            case IX_LINE: s->num.i64[i] = r->source_line; break;
            case IX_EXCL: s->num.i64[i] = r->exclusive_total; break;
            case IX_STATS:
                /* Recomputed from the events so the file always agrees with
                 * them (a streaming writer computed them the same way). */
                if (given)
                    stats[i] = given[i];
                else if (r->count == 0)
                    memset(&stats[i], 0, sizeof stats[i]);
                else
                    sp_summary_compute(profile->start + r->offset, profile->end + r->offset,
                                       profile->gpu ? profile->gpu + r->offset : NULL,
                                       (size_t)r->count, &stats[i]);
                break;
            case IX_FILE: s->str[i] = or_empty(r->source_file, ""); break;
            case IX_TEXT: s->str[i] = or_empty(r->source_text, ""); break;
            case IX_TAGS: s->str[i] = or_empty(r->tags, "[]"); break;
            default: s->str[i] = or_empty(r->event_metadata, "[]"); break;
            }
        }
        if (c == IX_STATS)
            rc = sp_h5_put(sink->index[c], sink->stats_mem, sink->rows_done, n, stats);
        else
            rc = put_scratch(sink, sink->index[c], index_cols[c].kind, sink->rows_done, s);
    }
    free(stats);
    return rc;
}

/* Event column c of the profile's rows, packed row after row. */
static void fill_event_column(const sp_profile *profile, int c, int64_t *out)
{
    static const int64_t fixed_missing[SP_EV_EXTRA] = {0, 0, -1, -1, -1, -1, -1, 0, -1};
    const int64_t *fixed_src[SP_EV_EXTRA] = {NULL, NULL, profile->gpu, profile->call_ids,
                                profile->parent_ids, profile->thread_ids,
                                profile->task_ids, profile->await_ns,
                                profile->fork_parent_ids};
    const int64_t *src[SP_EV_N];
    int64_t missing[SP_EV_N];
    for (int i = 0; i < SP_EV_N; i++) {
        src[i] = i < SP_EV_EXTRA ? fixed_src[i] : profile->extra[i - SP_EV_EXTRA];
        missing[i] = i < SP_EV_EXTRA ? fixed_missing[i] : -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < profile->num_rows; i++) {
        const sp_row *r = &profile->rows[i];
        if (r->count == 0)
            continue;
        const int64_t *start = profile->start + r->offset, *end = profile->end + r->offset;
        for (uint64_t j = 0; j < r->count; j++, k++) {
            if (c == SP_EV_START)
                /* Unsigned arithmetic: wraps instead of overflowing, and the
                 * reader's cumulative sum wraps back exactly. */
                out[k] = (int64_t)((uint64_t)start[j] - (j ? (uint64_t)start[j - 1] : 0));
            else if (c == SP_EV_DUR)
                out[k] = (int64_t)((uint64_t)end[j] - (uint64_t)start[j]);
            else
                out[k] = src[c] ? src[c][r->offset + j] : missing[c];
        }
    }
}

static int put_events(sp_h5_sink *sink, const sp_profile *profile, uint64_t count)
{
    int64_t *buf = malloc((count ? count : 1) * sizeof *buf);
    if (!buf)
        return -1;
    int rc = 0;
    for (int c = 0; c < SP_EV_N && rc == 0; c++) {
        if (sink->events[c] < 0)
            continue;
        fill_event_column(profile, c, buf);
        rc = sp_h5_put(sink->events[c], H5T_NATIVE_INT64, sink->events_done, count, buf);
    }
    free(buf);
    return rc;
}

static int put_threads(sp_h5_sink *sink, const sp_profile *profile)
{
    struct scratch s;
    size_t n = profile->num_threads;
    int rc = scratch_init(&s, n);
    for (int c = 0; c < TH_N && rc == 0; c++) {
        for (size_t i = 0; i < n; i++) {
            const sp_thread_row *t = &profile->threads[i];
            switch (c) {
            case TH_RANK: s.num.u32[i] = t->rank; break;
            case TH_INDEX: s.num.i64[i] = t->index; break;
            case TH_IDENT: s.num.i64[i] = t->ident; break;
            case TH_NATIVE: s.num.i64[i] = t->native_id; break;
            case TH_DAEMON: s.num.i8[i] = t->daemon; break;
            case TH_START: s.num.i64[i] = t->start_ns; break;
            case TH_END: s.num.i64[i] = t->end_ns; break;
            case TH_CPU: s.num.i64[i] = t->cpu_ns; break;
            case TH_KIND: s.str[i] = or_empty(t->kind, ""); break;
            case TH_OMP: s.num.i64[i] = t->kind && t->kind[0] ? t->omp_thread_num : -1; break;
            default: s.str[i] = or_empty(t->name, ""); break;
            }
        }
        rc = put_scratch(sink, sink->threads[c], thread_cols[c].kind, sink->threads_done, &s);
    }
    scratch_free(&s);
    sink->threads_done += n;
    return rc;
}

static int put_tasks(sp_h5_sink *sink, const sp_profile *profile)
{
    struct scratch s;
    size_t n = profile->num_tasks;
    int rc = scratch_init(&s, n);
    for (int c = 0; c < TK_N && rc == 0; c++) {
        for (size_t i = 0; i < n; i++) {
            const sp_task_row *t = &profile->tasks[i];
            switch (c) {
            case TK_RANK: s.num.u32[i] = t->rank; break;
            case TK_INDEX: s.num.i64[i] = t->index; break;
            case TK_THREAD: s.num.i64[i] = t->thread_index; break;
            case TK_CREATED: s.num.i64[i] = t->created_ns; break;
            case TK_DONE: s.num.i64[i] = t->done_ns; break;
            case TK_STEPS: s.num.i64[i] = t->steps; break;
            case TK_RUNNING: s.num.i64[i] = t->running_ns; break;
            case TK_SUSPENDED: s.num.i64[i] = t->suspended_ns; break;
            case TK_KIND: s.str[i] = or_empty(t->kind, ""); break;
            case TK_NAME: s.str[i] = or_empty(t->name, ""); break;
            default: s.str[i] = or_empty(t->coro_name, ""); break;
            }
        }
        rc = put_scratch(sink, sink->tasks[c], task_cols[c].kind, sink->tasks_done, &s);
    }
    scratch_free(&s);
    sink->tasks_done += n;
    return rc;
}

/* The profile must fit what the layout announced and point inside itself. */
static const char *part_problem(const sp_h5_sink *sink, const sp_profile *profile,
                                uint64_t events)
{
    const sp_h5_layout *l = &sink->layout;
    if (!!profile->aggregate != !!l->aggregate)
        return "cannot mix aggregate and columnar profiles";
    for (size_t i = 0; i < profile->num_rows; i++) {
        const sp_row *r = &profile->rows[i];
        if (r->region >= profile->num_names)
            return "a row names a region that is not in the region table";
        if (!profile->aggregate &&
            (r->offset > profile->num_events || r->count > profile->num_events - r->offset))
            return "a row points past the end of the event columns";
    }
    if (sink->rows_done + profile->num_rows > l->num_rows ||
        sink->events_done + events > l->num_events ||
        (profile->has_thread_table && sink->threads_done + profile->num_threads > l->num_threads) ||
        (profile->has_task_table && sink->tasks_done + profile->num_tasks > l->num_tasks))
        return "more rows than the layout was created for";
    return NULL;
}

/* Rows and lane tables of `profile`, with its events unless stats are
 * given (then the events come through sp_h5_sink_put_events). */
static int put_part(sp_h5_sink *sink, const sp_profile *profile, const uint32_t *name_map,
                    const sp_summary_stats *stats, char *err, size_t errlen)
{
    uint64_t events = profile->aggregate ? 0 : sp_h5_row_events(profile);
    const char *problem = part_problem(sink, profile, events);
    if (problem) {
        sp_h5_errf(err, errlen, "%s", problem);
        return -1;
    }
    struct scratch s;
    int rc = scratch_init(&s, profile->num_rows);
    if (rc == 0)
        rc = profile->aggregate ? put_aggregate_rows(sink, profile, name_map, &s)
                                : put_index_rows(sink, profile, name_map, stats, &s);
    scratch_free(&s);
    if (rc == 0 && !profile->aggregate && !stats)
        rc = put_events(sink, profile, events);
    if (rc == 0 && profile->has_thread_table)
        rc = put_threads(sink, profile);
    if (rc == 0 && profile->has_task_table)
        rc = put_tasks(sink, profile);
    if (rc < 0) {
        char detail[256];
        sp_h5_errf(err, errlen, "writing failed: %s", sp_h5_error_detail(detail, sizeof detail));
        return -1;
    }
    sink->rows_done += profile->num_rows;
    sink->events_done += events;
    return 0;
}

int sp_h5_sink_put(sp_h5_sink *sink, const sp_profile *profile, const uint32_t *name_map,
                   char *err, size_t errlen)
{
    return put_part(sink, profile, name_map, NULL, err, errlen);
}

int sp_h5_sink_put_rows(sp_h5_sink *sink, const sp_profile *profile,
                        const sp_summary_stats *stats, char *err, size_t errlen)
{
    return put_part(sink, profile, NULL, stats, err, errlen);
}

int sp_h5_sink_put_events(sp_h5_sink *sink, int column, uint64_t offset, uint64_t count,
                          const int64_t *values, char *err, size_t errlen)
{
    if (column < 0 || column >= SP_EV_N || sink->events[column] < 0 ||
        offset > sink->layout.num_events || count > sink->layout.num_events - offset) {
        sp_h5_errf(err, errlen, "internal error: events outside the layout");
        return -1;
    }
    if (sp_h5_put(sink->events[column], H5T_NATIVE_INT64, offset, count, values) < 0) {
        char detail[256];
        sp_h5_errf(err, errlen, "writing failed: %s", sp_h5_error_detail(detail, sizeof detail));
        return -1;
    }
    return 0;
}

int sp_h5_sink_has_events(const sp_h5_sink *sink, int column)
{
    return column >= 0 && column < SP_EV_N && sink->events[column] >= 0;
}

static int put_meta(hid_t group, const sp_meta *m)
{
    switch (m->type) {
    case SP_META_INT: return sp_h5_attr_put_int(group, m->key, m->i);
    case SP_META_FLOAT: return sp_h5_attr_put_float(group, m->key, m->f);
    case SP_META_STRING: return sp_h5_attr_put_string(group, m->key, m->s);
    case SP_META_STRINGS:
        if (m->list_len > SP_META_ATTR_MAX_STRINGS)
            return sp_h5_put_string_column(group, m->key, (const char *const *)m->list,
                                           m->list_len);
        return sp_h5_attr_put_strings(group, m->key, (const char *const *)m->list, m->list_len);
    }
    return -1;
}

static int close_datasets(sp_h5_sink *sink)
{
    hid_t *groups[] = {sink->index, sink->agg, sink->events, sink->threads, sink->tasks};
    size_t sizes[] = {IX_N, AG_N, SP_EV_N, TH_N, TK_N};
    int rc = 0;
    for (size_t g = 0; g < 5; g++)
        for (size_t i = 0; i < sizes[g]; i++) {
            if (groups[g][i] >= 0 && H5Dclose(groups[g][i]) < 0)
                rc = -1;
            groups[g][i] = -1;
        }
    return rc;
}

int sp_h5_sink_finish(sp_h5_sink *sink, const char *const *names, size_t num_names,
                      const sp_profile *meta_from, const int64_t *mpi_size_override,
                      char *err, size_t errlen)
{
    int rc = write_names(sink->file, sink->str_type, names, num_names);
    const sp_h5_layout *l = &sink->layout;
    if (sink->rows_done != l->num_rows || sink->events_done != l->num_events ||
        sink->threads_done != l->num_threads || sink->tasks_done != l->num_tasks) {
        sp_h5_errf(err, errlen, "fewer rows were written than the layout announced");
        sp_h5_sink_abort(sink);
        return -1;
    }
    hid_t g = rc == 0 ? sp_h5_create_group(sink->file, "metadata") : -1;
    if (g < 0)
        rc = -1;
    for (size_t i = 0; rc == 0 && meta_from && i < meta_from->num_meta; i++) {
        const sp_meta *m = &meta_from->meta[i];
        if (mpi_size_override && !strcmp(m->key, "mpi_size"))
            continue;
        rc = put_meta(g, m);
    }
    if (rc == 0 && mpi_size_override)
        rc = sp_h5_attr_put_int(g, "mpi_size", *mpi_size_override);
    if (g >= 0 && H5Gclose(g) < 0)
        rc = -1;
    if (close_datasets(sink) < 0)
        rc = -1;
    if (rc < 0) {
        char detail[256];
        sp_h5_errf(err, errlen, "writing failed: %s", sp_h5_error_detail(detail, sizeof detail));
    }
    sp_h5_sink_abort(sink);
    return rc;
}

void sp_h5_sink_abort(sp_h5_sink *sink)
{
    if (!sink)
        return;
    close_all(sink->index, IX_N);
    close_all(sink->agg, AG_N);
    close_all(sink->events, SP_EV_N);
    close_all(sink->threads, TH_N);
    close_all(sink->tasks, TK_N);
    if (sink->str_type >= 0)
        H5Tclose(sink->str_type);
    if (sink->stats_file >= 0)
        H5Tclose(sink->stats_file);
    if (sink->stats_mem >= 0)
        H5Tclose(sink->stats_mem);
    free(sink);
}
