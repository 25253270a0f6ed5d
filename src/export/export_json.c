/* export_json.c - the lossless JSON profile (spec §7.4, format
 * "scope-profiler-profile" version 1): every row with its raw event columns
 * in integer nanoseconds, metadata, thread and task tables.  Being lossless,
 * it honours the row filters (--ranks, --include, --exclude) only. */
#include <stdlib.h>
#include <string.h>

#include "export_stream.h"
#include "scopeprof/export.h"
#include "scopeprof/h5.h"
#include "stream_filter.h"
#include "scopeprof_config.h"

/* tags / event_metadata are stored as JSON text; pass them through only if
 * they look like the list they must be, so a damaged string cannot break
 * the document. */
static int looks_like_list(const char *s)
{
    if (!s)
        return 0;
    size_t n = strlen(s);
    int quoted = 0, depth = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (quoted) {
            if (c == '\\')
                i++;
            else if (c == '"')
                quoted = 0;
        } else if (c == '"') {
            quoted = 1;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            if (--depth < 0)
                return 0;
        } else if ((unsigned char)c < 0x20 && c != '\n' && c != '\t' && c != '\r') {
            return 0;
        }
    }
    return n >= 2 && s[0] == '[' && s[n - 1] == ']' && depth == 0 && !quoted;
}

/* The event columns a row lists, in the document's order. */
enum { J_START, J_END, J_GPU, J_CALL, J_PARENT, J_THREAD, J_TASK, J_AWAIT, J_FORK, J_N };

static const char *const column_keys[J_N] = {
    "start_times_ns", "end_times_ns", "gpu_durations_ns", "call_ids", "parent_ids",
    "thread_ids", "task_ids", "await_ns", "fork_parent_ids"};

/* Where a row's values come from: the loaded profile, or windows of the
 * file (the stream). */
typedef struct columns {
    int (*present)(void *ctx, int col);                 /* the run has the column */
    int (*any_gpu)(void *ctx, const sp_row *row);       /* a value >= 0 in the row */
    void (*write)(void *ctx, sp_json *j, int col, const sp_row *row);
    void *ctx;
} columns;

static void write_row(sp_json *j, const sp_profile *p, const sp_row *row, const columns *cols)
{
    sp_json_newline(j);
    sp_json_begin_object(j);
    sp_json_key(j, "name");
    sp_json_string(j, p->names[row->region]);
    sp_json_key(j, "rank");
    sp_json_uint(j, row->rank);
    if (row->source_file && row->source_file[0]) {
        sp_json_key(j, "source_file");
        sp_json_string(j, row->source_file);
    }
    if (row->source_line >= 0) {
        sp_json_key(j, "source_lineno");
        sp_json_int(j, row->source_line);
    }
    if (row->source_text && row->source_text[0]) {
        sp_json_key(j, "source_text");
        sp_json_string(j, row->source_text);
    }
    sp_json_key(j, "tags");
    sp_json_raw(j, looks_like_list(row->tags) ? row->tags : "[]");
    if (p->aggregate) {
        sp_json_key(j, "aggregate");
        sp_json_begin_object(j);
        sp_json_key(j, "count");
        sp_json_uint(j, row->agg_count);
        sp_json_key(j, "total_ns");
        sp_json_int(j, row->agg_total);
        sp_json_key(j, "minimum_ns");
        sp_json_int(j, row->agg_minimum);
        sp_json_key(j, "maximum_ns");
        sp_json_int(j, row->agg_maximum);
        sp_json_key(j, "exclusive_ns");
        sp_json_int(j, row->agg_exclusive);
        sp_json_end_object(j);
        sp_json_end_object(j);
        return;
    }
    for (int col = 0; col < J_N; col++) {
        if (col == J_GPU) {
            /* event_metadata sits between the times and the other columns */
            if (row->event_metadata && strcmp(row->event_metadata, "[]") &&
                looks_like_list(row->event_metadata)) {
                sp_json_key(j, "event_metadata");
                sp_json_raw(j, row->event_metadata);
            }
            if (!cols->present(cols->ctx, col) || !cols->any_gpu(cols->ctx, row))
                continue;
        } else if (!cols->present(cols->ctx, col)) {
            continue;
        }
        sp_json_key(j, column_keys[col]);
        sp_json_begin_array(j);
        cols->write(cols->ctx, j, col, row);
        sp_json_end_array(j);
    }
    if (row->exclusive_total >= 0) {
        sp_json_key(j, "exclusive_total_ns");
        sp_json_int(j, row->exclusive_total);
    }
    sp_json_end_object(j);
}

/* ---- columns of the loaded profile ---- */

static const int64_t *memory_column(const sp_profile *p, int col)
{
    switch (col) {
    case J_START: return p->start;
    case J_END: return p->end;
    case J_GPU: return p->gpu;
    case J_CALL: return p->call_ids;
    case J_PARENT: return p->parent_ids;
    case J_THREAD: return p->thread_ids;
    case J_TASK: return p->task_ids;
    case J_AWAIT: return p->await_ns;
    default: return p->fork_parent_ids;
    }
}

static int memory_present(void *ctx, int col)
{
    return memory_column(ctx, col) != NULL;
}

static int memory_any_gpu(void *ctx, const sp_row *row)
{
    const sp_profile *p = ctx;
    for (uint64_t e = row->offset; e < row->offset + row->count; e++)
        if (p->gpu[e] >= 0)
            return 1;
    return 0;
}

static void memory_write(void *ctx, sp_json *j, int col, const sp_row *row)
{
    const int64_t *values = memory_column(ctx, col);
    for (uint64_t e = row->offset; e < row->offset + row->count; e++)
        sp_json_int(j, values[e]);
}

static void write_meta(sp_json *j, const sp_profile *p)
{
    sp_json_key(j, "metadata");
    sp_json_begin_object(j);
    for (size_t m = 0; m < p->num_meta; m++) {
        const sp_meta *meta = &p->meta[m];
        sp_json_key(j, meta->key);
        switch (meta->type) {
        case SP_META_INT: sp_json_int(j, meta->i); break;
        case SP_META_FLOAT: sp_json_double(j, meta->f); break; /* non-finite -> null */
        case SP_META_STRING: sp_json_string(j, meta->s); break;
        default:
            sp_json_begin_array(j);
            for (size_t k = 0; k < meta->list_len; k++)
                sp_json_string(j, meta->list[k]);
            sp_json_end_array(j);
        }
    }
    sp_json_end_object(j);
}

static void write_threads(sp_json *j, const sp_profile *p, const uint32_t *ranks, long n)
{
    sp_json_key(j, "threads");
    sp_json_begin_object(j);
    for (long k = 0; k < n; k++) {
        char key[16];
        snprintf(key, sizeof key, "%u", ranks[k]);
        sp_json_key(j, key);
        sp_json_begin_array(j);
        for (size_t t = 0; t < p->num_threads; t++) {
            const sp_thread_row *th = &p->threads[t];
            if (th->rank != ranks[k])
                continue;
            sp_json_begin_object(j);
            sp_json_key(j, "index"); sp_json_int(j, th->index);
            sp_json_key(j, "ident"); sp_json_int(j, th->ident);
            sp_json_key(j, "native_id"); sp_json_int(j, th->native_id);
            sp_json_key(j, "name"); sp_json_string(j, th->name ? th->name : "");
            sp_json_key(j, "daemon"); sp_json_int(j, th->daemon);
            sp_json_key(j, "start_ns"); sp_json_int(j, th->start_ns);
            sp_json_key(j, "end_ns"); sp_json_int(j, th->end_ns);
            sp_json_key(j, "cpu_ns"); sp_json_int(j, th->cpu_ns);
            if (th->kind && th->kind[0]) { /* files before issue 15 have none */
                sp_json_key(j, "kind"); sp_json_string(j, th->kind);
                sp_json_key(j, "omp_thread_num"); sp_json_int(j, th->omp_thread_num);
            }
            sp_json_end_object(j);
        }
        sp_json_end_array(j);
    }
    sp_json_end_object(j);
}

static void write_tasks(sp_json *j, const sp_profile *p, const uint32_t *ranks, long n)
{
    sp_json_key(j, "tasks");
    sp_json_begin_object(j);
    for (long k = 0; k < n; k++) {
        char key[16];
        snprintf(key, sizeof key, "%u", ranks[k]);
        sp_json_key(j, key);
        sp_json_begin_array(j);
        for (size_t t = 0; t < p->num_tasks; t++) {
            const sp_task_row *tk = &p->tasks[t];
            if (tk->rank != ranks[k])
                continue;
            sp_json_begin_object(j);
            sp_json_key(j, "index"); sp_json_int(j, tk->index);
            sp_json_key(j, "kind"); sp_json_string(j, tk->kind ? tk->kind : "");
            sp_json_key(j, "name"); sp_json_string(j, tk->name ? tk->name : "");
            sp_json_key(j, "coro_name"); sp_json_string(j, tk->coro_name ? tk->coro_name : "");
            sp_json_key(j, "thread_index"); sp_json_int(j, tk->thread_index);
            sp_json_key(j, "created_ns"); sp_json_int(j, tk->created_ns);
            sp_json_key(j, "done_ns"); sp_json_int(j, tk->done_ns);
            sp_json_key(j, "steps"); sp_json_int(j, tk->steps);
            sp_json_key(j, "running_ns"); sp_json_int(j, tk->running_ns);
            sp_json_key(j, "suspended_ns"); sp_json_int(j, tk->suspended_ns);
            sp_json_end_object(j);
        }
        sp_json_end_array(j);
    }
    sp_json_end_object(j);
}

/* qsort has no context argument; exports run on one thread. */
static const sp_row *sorting_rows;

static int compare_rows(const void *a, const void *b)
{
    const sp_row *x = &sorting_rows[*(const size_t *)a], *y = &sorting_rows[*(const size_t *)b];
    if (x->region != y->region)
        return x->region < y->region ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The document: profile gives everything but the event values, cols
 * those.  0, -1 (err set). */
static int write_document(FILE *out, const sp_profile *profile, const sp_export_options *options,
                          const columns *cols, char *err, size_t errlen)
{
    const sp_selection *sel = options ? options->selection : NULL;
    uint32_t *ranks = NULL;
    long num_ranks = sp_selected_ranks(profile, sel, &ranks);
    if (num_ranks < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    sp_json j;
    sp_json_init(&j, out);
    sp_json_begin_object(&j);
    sp_json_key(&j, "format");
    sp_json_string(&j, "scope-profiler-profile");
    sp_json_key(&j, "format_version");
    sp_json_int(&j, 1);
    sp_json_key(&j, "exporter");
    sp_json_string(&j, "scopeprof@" SCOPEPROF_VERSION);
    sp_json_key(&j, "time_unit");
    sp_json_string(&j, "nanoseconds");
    sp_json_key(&j, "num_ranks");
    sp_json_uint(&j, profile->num_ranks);
    sp_json_key(&j, "event_data_available");
    sp_json_bool(&j, !profile->aggregate);
    write_meta(&j, profile);
    sp_json_key(&j, "regions");
    sp_json_begin_array(&j);
    /* Region order, then rank order. */
    uint64_t events = 0;
    size_t *order = malloc((profile->num_rows ? profile->num_rows : 1) * sizeof *order);
    size_t kept = 0;
    for (size_t r = 0; order && r < profile->num_rows; r++) {
        const sp_row *row = &profile->rows[r];
        if (row->region < profile->num_names && sp_selection_has_rank(sel, row->rank) &&
            sp_selection_keeps_region(sel, profile->names[row->region]))
            order[kept++] = r;
    }
    sorting_rows = profile->rows;
    if (order)
        qsort(order, kept, sizeof *order, compare_rows);
    for (size_t k = 0; k < kept; k++) {
        write_row(&j, profile, &profile->rows[order[k]], cols);
        events += profile->rows[order[k]].count;
    }
    free(order);
    sp_json_end_array(&j);
    if (profile->has_thread_table)
        write_threads(&j, profile, ranks, num_ranks);
    if (profile->has_task_table)
        write_tasks(&j, profile, ranks, num_ranks);
    sp_json_end_object(&j);
    fputc('\n', out);
    free(ranks);
    sp_export_warn_events(options, events, "json export");
    return 0;
}

int sp_export_json(FILE *out, const sp_profile *profile, const sp_export_options *options,
                   char *err, size_t errlen)
{
    columns cols = {memory_present, memory_any_gpu, memory_write, (void *)profile};
    return write_document(out, profile, options, &cols, err, errlen);
}

/* ---- The same document from a run source (docs/stream.md, "Exports") ----
 *
 * Nothing here needs the calls reconstructed: every rank is first streamed
 * for the reader's checks alone (before the first byte; a rank that does
 * not nest, which the lossless export would take, goes to the in-memory
 * path like any doubt), then each row's columns are read back in windows
 * of its file as they are written.  A file lacking a column some other
 * file has gives the value the in-memory run gives it (-1, await 0). */

#define JSON_WINDOW ((size_t)1 << 14)

typedef struct stream_columns {
    const sp_run_source *src;
    int present[J_N];
    sp_h5_event_reader *reader;
    long reader_file;
    int64_t *a, *b;              /* windows */
    int failed;
} stream_columns;

static const sp_h5_event_shape *shape_of(stream_columns *sc, const sp_row *row)
{
    return &sc->src->shapes[sc->src->row_file[row - sc->src->profile->rows]];
}

static sp_h5_event_reader *reader_for(stream_columns *sc, const sp_row *row)
{
    long file = (long)sc->src->row_file[row - sc->src->profile->rows];
    if (sc->reader && sc->reader_file == file)
        return sc->reader;
    sp_h5_event_reader_close(sc->reader);
    char err[256];
    sc->reader = sp_h5_event_reader_open(sc->src->paths[file], &sc->src->shapes[file],
                                         (size_t)4 << 20, err, sizeof err);
    sc->reader_file = sc->reader ? file : -1;
    if (!sc->reader)
        sc->failed = 1;
    return sc->reader;
}

/* The file's column for a document column, or -1 when the file has none. */
static int file_column(const sp_h5_event_shape *sh, int col)
{
    static const int map[J_N] = {SP_H5_COL_START, SP_H5_COL_SECOND, SP_H5_COL_GPU,
                                 SP_H5_COL_CALL, SP_H5_COL_PARENT, SP_H5_COL_THREAD,
                                 SP_H5_COL_TASK, SP_H5_COL_AWAIT, SP_H5_COL_FORK};
    int c = map[col];
    if (c == SP_H5_COL_AWAIT)
        return sh->has_await ? c : -1;
    if (c == SP_H5_COL_FORK)
        return sh->has_fork ? c : -1;
    return sh->has[c] ? c : -1;
}

static int stream_present(void *ctx, int col)
{
    return ((stream_columns *)ctx)->present[col];
}

/* Values [pos, pos + n) of a row as the loaded profile holds them: starts
 * decoded (running sum of the deltas from the row's first event, *prev the
 * start before pos), ends = start + duration. */
static int read_values(stream_columns *sc, const sp_row *row, int col, uint64_t pos, size_t n,
                       int64_t *prev, int64_t *out)
{
    const sp_h5_event_shape *sh = shape_of(sc, row);
    int fc = file_column(sh, col);
    if (fc < 0) {
        for (size_t i = 0; i < n; i++)
            out[i] = col == J_AWAIT ? 0 : -1;
        return 0;
    }
    sp_h5_event_reader *r = reader_for(sc, row);
    if (!r || sp_h5_event_reader_read(r, fc, pos, n, out) != 0)
        return -1;
    if (!sh->deltas || (col != J_START && col != J_END))
        return 0;
    int64_t *starts = out;
    if (col == J_END) {
        starts = sc->b;
        if (sp_h5_event_reader_read(r, SP_H5_COL_START, pos, n, starts) != 0)
            return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (pos + i > row->offset)
            starts[i] = (int64_t)((uint64_t)starts[i] + (uint64_t)*prev);
        *prev = starts[i];
        if (col == J_END)
            out[i] = (int64_t)((uint64_t)starts[i] + (uint64_t)out[i]);
    }
    return 0;
}

static int stream_any_gpu(void *ctx, const sp_row *row)
{
    stream_columns *sc = ctx;
    int64_t prev = 0;
    for (uint64_t pos = row->offset; pos < row->offset + row->count && !sc->failed;) {
        uint64_t left = row->offset + row->count - pos;
        size_t n = left < JSON_WINDOW ? (size_t)left : JSON_WINDOW;
        if (read_values(sc, row, J_GPU, pos, n, &prev, sc->a) != 0) {
            sc->failed = 1;
            return 0;
        }
        for (size_t i = 0; i < n; i++)
            if (sc->a[i] >= 0)
                return 1;
        pos += n;
    }
    return 0;
}

static void stream_write(void *ctx, sp_json *j, int col, const sp_row *row)
{
    stream_columns *sc = ctx;
    int64_t prev = 0;
    for (uint64_t pos = row->offset; pos < row->offset + row->count && !sc->failed;) {
        uint64_t left = row->offset + row->count - pos;
        size_t n = left < JSON_WINDOW ? (size_t)left : JSON_WINDOW;
        if (read_values(sc, row, col, pos, n, &prev, sc->a) != 0) {
            sc->failed = 1;
            return;
        }
        for (size_t i = 0; i < n; i++)
            sp_json_int(j, sc->a[i]);
        pos += n;
    }
}

int sp_export_json_stream(FILE *out, const sp_run_source *src, const sp_export_options *options,
                          char *why, size_t whylen)
{
    /* (MPI columns are not part of this output: the stream leaves them) */
    const char *reason = sp_run_source_unstreamable_calls(src);
    if (reason) {
        snprintf(why, whylen, "%s", reason);
        return 1;
    }
    /* every rank checked as the in-memory reader checks it */
    if (sp_stream_check_run(src, NULL, 0, NULL, why, whylen) != 0)
        return 1;
    stream_columns sc = {.src = src, .reader_file = -1};
    for (size_t f = 0; f < src->num_paths; f++)
        for (int col = 0; col < J_N; col++)
            sc.present[col] |= file_column(&src->shapes[f], col) >= 0;
    sc.present[J_START] = sc.present[J_END] = 1;
    sc.a = malloc(JSON_WINDOW * sizeof *sc.a);
    sc.b = malloc(JSON_WINDOW * sizeof *sc.b);
    if (!sc.a || !sc.b) {
        free(sc.a);
        free(sc.b);
        snprintf(why, whylen, "out of memory");
        return 1;
    }
    columns cols = {stream_present, stream_any_gpu, stream_write, &sc};
    int rc = write_document(out, src->profile, options, &cols, why, whylen);
    if (rc == 0 && (sc.failed || ferror(out)))
        rc = -1;
    if (rc < 0)
        snprintf(why, whylen, "write failed, out of memory, or the files changed");
    sp_h5_event_reader_close(sc.reader);
    free(sc.a);
    free(sc.b);
    return rc;
}
