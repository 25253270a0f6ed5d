/* export_json.c - the lossless JSON profile (spec §7.4, format
 * "scope-profiler-profile" version 1): every row with its raw event columns
 * in integer nanoseconds, metadata, thread and task tables.  Being lossless,
 * it honours the row filters (--ranks, --include, --exclude) only. */
#include <stdlib.h>
#include <string.h>

#include "scopeprof/export.h"
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

static void column(sp_json *j, const char *key, const int64_t *values, const sp_row *row)
{
    sp_json_key(j, key);
    sp_json_begin_array(j);
    for (uint64_t e = row->offset; e < row->offset + row->count; e++)
        sp_json_int(j, values[e]);
    sp_json_end_array(j);
}

static void write_row(sp_json *j, const sp_profile *p, const sp_row *row)
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
    column(j, "start_times_ns", p->start, row);
    column(j, "end_times_ns", p->end, row);
    if (row->event_metadata && strcmp(row->event_metadata, "[]") &&
        looks_like_list(row->event_metadata)) {
        sp_json_key(j, "event_metadata");
        sp_json_raw(j, row->event_metadata);
    }
    if (p->gpu) {
        int any = 0;
        for (uint64_t e = row->offset; e < row->offset + row->count && !any; e++)
            any = p->gpu[e] >= 0;
        if (any)
            column(j, "gpu_durations_ns", p->gpu, row);
    }
    if (p->call_ids)
        column(j, "call_ids", p->call_ids, row);
    if (p->parent_ids)
        column(j, "parent_ids", p->parent_ids, row);
    if (p->thread_ids)
        column(j, "thread_ids", p->thread_ids, row);
    if (p->task_ids)
        column(j, "task_ids", p->task_ids, row);
    if (p->await_ns)
        column(j, "await_ns", p->await_ns, row);
    if (p->fork_parent_ids)
        column(j, "fork_parent_ids", p->fork_parent_ids, row);
    if (row->exclusive_total >= 0) {
        sp_json_key(j, "exclusive_total_ns");
        sp_json_int(j, row->exclusive_total);
    }
    sp_json_end_object(j);
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

int sp_export_json(FILE *out, const sp_profile *profile, const sp_export_options *options,
                   char *err, size_t errlen)
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
        write_row(&j, profile, &profile->rows[order[k]]);
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
