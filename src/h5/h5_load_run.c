/* h5_load_run.c - sp_load_run: several files of one run read into one
 * in-memory profile, as if they had been merged first (same checks and
 * order as sp_h5_merge). */
#include <stdlib.h>
#include <string.h>

#include "h5/h5_internal.h"

struct totals {
    size_t rows, events, threads, tasks;
    int gpu, call_ids, parent_ids, thread_ids, task_ids, await_ns;
    int thread_table, task_table;
    uint32_t num_ranks;
    int extra[SP_EXTRA_N];
    int fork;
};

static void add_totals(struct totals *t, const sp_profile *p)
{
    t->rows += p->num_rows;
    t->events += p->num_events;
    t->threads += p->num_threads;
    t->tasks += p->num_tasks;
    t->gpu |= p->gpu != NULL;
    t->call_ids |= p->call_ids != NULL;
    t->parent_ids |= p->parent_ids != NULL;
    t->thread_ids |= p->thread_ids != NULL;
    t->task_ids |= p->task_ids != NULL;
    t->await_ns |= p->await_ns != NULL;
    for (int c = 0; c < SP_EXTRA_N; c++)
        t->extra[c] |= p->extra[c] != NULL;
    t->fork |= p->fork_parent_ids != NULL;
    t->thread_table |= p->has_thread_table;
    t->task_table |= p->has_task_table;
    if (p->num_ranks > t->num_ranks)
        t->num_ranks = p->num_ranks;
}

static int64_t *alloc_column(int present, size_t n, int *failed)
{
    if (!present)
        return NULL;
    int64_t *col = malloc((n ? n : 1) * sizeof *col);
    if (!col)
        *failed = 1;
    return col;
}

static int allocate(sp_profile *out, const struct totals *t)
{
    int failed = 0;
    out->rows = calloc(t->rows ? t->rows : 1, sizeof *out->rows);
    out->threads = calloc(t->threads ? t->threads : 1, sizeof *out->threads);
    out->tasks = calloc(t->tasks ? t->tasks : 1, sizeof *out->tasks);
    out->start = alloc_column(1, t->events, &failed);
    out->end = alloc_column(1, t->events, &failed);
    out->gpu = alloc_column(t->gpu, t->events, &failed);
    out->call_ids = alloc_column(t->call_ids, t->events, &failed);
    out->parent_ids = alloc_column(t->parent_ids, t->events, &failed);
    out->thread_ids = alloc_column(t->thread_ids, t->events, &failed);
    out->task_ids = alloc_column(t->task_ids, t->events, &failed);
    out->await_ns = alloc_column(t->await_ns, t->events, &failed);
    for (int c = 0; c < SP_EXTRA_N; c++)
        out->extra[c] = alloc_column(t->extra[c], t->events, &failed);
    out->fork_parent_ids = alloc_column(t->fork, t->events, &failed);
    out->has_thread_table = t->thread_table;
    out->has_task_table = t->task_table;
    return failed || !out->rows || !out->threads || !out->tasks ? -1 : 0;
}

static void copy_column(int64_t *dst, const int64_t *src, size_t n, int64_t missing)
{
    if (!dst)
        return;
    for (size_t i = 0; i < n; i++)
        dst[i] = src ? src[i] : missing;
}

/* Move the content of `in` to the end of `out` (strings change owner). */
static void append(sp_profile *out, sp_profile *in, const uint32_t *map)
{
    size_t base = out->num_events, n = in->num_events;
    copy_column(out->start + base, in->start, n, 0);
    copy_column(out->end + base, in->end, n, 0);
    copy_column(out->gpu ? out->gpu + base : NULL, in->gpu, n, -1);
    copy_column(out->call_ids ? out->call_ids + base : NULL, in->call_ids, n, -1);
    copy_column(out->parent_ids ? out->parent_ids + base : NULL, in->parent_ids, n, -1);
    copy_column(out->thread_ids ? out->thread_ids + base : NULL, in->thread_ids, n, -1);
    copy_column(out->task_ids ? out->task_ids + base : NULL, in->task_ids, n, -1);
    copy_column(out->await_ns ? out->await_ns + base : NULL, in->await_ns, n, 0);
    for (int c = 0; c < SP_EXTRA_N; c++)
        copy_column(out->extra[c] ? out->extra[c] + base : NULL, in->extra[c], n, -1);
    copy_column(out->fork_parent_ids ? out->fork_parent_ids + base : NULL,
                in->fork_parent_ids, n, -1);
    out->num_events += n;
    for (size_t i = 0; i < in->num_rows; i++) {
        sp_row *r = &out->rows[out->num_rows++];
        *r = in->rows[i];
        r->region = map[r->region];
        r->offset += base;
    }
    in->num_rows = 0; /* the strings now belong to `out` */
    if (in->num_threads)
        memcpy(out->threads + out->num_threads, in->threads, in->num_threads * sizeof *in->threads);
    out->num_threads += in->num_threads;
    in->num_threads = 0;
    if (in->num_tasks)
        memcpy(out->tasks + out->num_tasks, in->tasks, in->num_tasks * sizeof *in->tasks);
    out->num_tasks += in->num_tasks;
    in->num_tasks = 0;
}

static sp_profile *combine(sp_profile **inputs, const sp_input_info *info, size_t count,
                           size_t *row_file, char *err, size_t errlen)
{
    size_t *order = malloc(count * sizeof *order);
    sp_profile *out = sp_profile_new();
    sp_name_index names = {0};
    struct totals t = {0};
    if (!order || !out)
        goto oom;
    sp_inputs_order(info, count, order);
    for (size_t i = 0; i < count; i++)
        add_totals(&t, inputs[i]);
    if (allocate(out, &t) < 0)
        goto oom;
    for (size_t k = 0; k < count; k++) {
        sp_profile *in = inputs[order[k]];
        uint32_t *map = sp_name_index_map(&names, in);
        if (!map)
            goto oom;
        for (size_t r = 0; row_file && r < in->num_rows; r++)
            row_file[out->num_rows + r] = order[k];
        append(out, in, map);
        free(map);
    }
    /* Metadata and schema of the lowest rank's file, like a merged file. */
    sp_profile *lowest = inputs[order[0]];
    out->meta = lowest->meta;
    out->num_meta = lowest->num_meta;
    lowest->meta = NULL;
    lowest->num_meta = 0;
    out->schema_version = lowest->schema_version;
    out->aggregate = lowest->aggregate;
    if (count == 1 && lowest->path && !(out->path = strdup(lowest->path)))
        goto oom;
    out->names = names.names;
    out->num_names = names.count;
    names.names = NULL;
    names.count = 0;
    sp_name_index_free(&names);
    free(order);
    sp_h5_set_num_ranks(out);
    if (out->num_rows && t.num_ranks > out->num_ranks)
        out->num_ranks = t.num_ranks;
    return out;
oom:
    sp_h5_errf(err, errlen, "%s: out of memory loading %zu files", info[0].path, count);
    sp_name_index_free(&names);
    sp_profile_free(out);
    free(order);
    return NULL;
}

/* shapes: NULL for full reads, else skeleton reads (one shape per path,
 * and row_file filled for every row of the result). */
static sp_profile *load_files(const char *const *paths, size_t count, sp_h5_event_shape *shapes,
                              size_t **row_file, char *err, size_t errlen);

sp_profile *sp_load_run(const char *const *args, size_t count, char *err, size_t errlen)
{
    char **paths = NULL;
    long n = sp_run_inputs_expand(args, count, &paths, err, errlen);
    if (n < 0)
        return NULL;
    sp_profile *p = load_files((const char *const *)paths, (size_t)n, NULL, NULL, err, errlen);
    sp_run_inputs_free(paths, n);
    return p;
}

sp_profile *sp_load_run_skeleton(const char *const *args, size_t count, char ***paths,
                                 size_t *num_paths, sp_h5_event_shape **shapes,
                                 size_t **row_file, char *err, size_t errlen)
{
    *paths = NULL;
    *shapes = NULL;
    *row_file = NULL;
    *num_paths = 0;
    long n = sp_run_inputs_expand(args, count, paths, err, errlen);
    if (n < 0)
        return NULL;
    *shapes = calloc((size_t)n + 1, sizeof **shapes);
    sp_profile *p = *shapes ? load_files((const char *const *)*paths, (size_t)n, *shapes,
                                         row_file, err, errlen)
                            : NULL;
    if (!*shapes)
        sp_h5_errf(err, errlen, "out of memory");
    if (!p) {
        free(*shapes);
        free(*row_file);
        sp_run_inputs_free(*paths, n);
        *paths = NULL;
        *shapes = NULL;
        *row_file = NULL;
        return NULL;
    }
    /* No events: the columns combine() sized for them are not wanted. */
    free(p->start);
    free(p->end);
    p->start = p->end = NULL;
    *num_paths = (size_t)n;
    return p;
}

static sp_profile *load_files(const char *const *paths, size_t count, sp_h5_event_shape *shapes,
                              size_t **row_file, char *err, size_t errlen)
{
    if (count == 0) {
        sp_h5_errf(err, errlen, "no profile files given");
        return NULL;
    }
    sp_profile **inputs = calloc(count, sizeof *inputs);
    sp_input_info *info = calloc(count, sizeof *info);
    sp_profile *out = NULL;
    size_t loaded = 0;
    if (!inputs || !info) {
        sp_h5_errf(err, errlen, "%s: out of memory", paths[0]);
        goto done;
    }
    for (; loaded < count; loaded++) {
        inputs[loaded] = shapes ? sp_h5_read_skeleton(paths[loaded], &shapes[loaded], err, errlen)
                                : sp_h5_read(paths[loaded], err, errlen);
        if (!inputs[loaded])
            goto done;
        if (sp_input_info_fill(&info[loaded], paths[loaded], inputs[loaded]) < 0) {
            sp_h5_errf(err, errlen, "%s: out of memory", paths[loaded]);
            loaded++;
            goto done;
        }
    }
    if (sp_inputs_check(info, count, err, errlen) == 0) {
        size_t rows = 0;
        for (size_t i = 0; i < count; i++)
            rows += inputs[i]->num_rows;
        if (row_file && !(*row_file = malloc((rows + 1) * sizeof **row_file)))
            sp_h5_errf(err, errlen, "%s: out of memory", paths[0]);
        else
            out = combine(inputs, info, count, row_file ? *row_file : NULL, err, errlen);
    }
done:
    for (size_t i = 0; inputs && i < loaded; i++) {
        sp_profile_free(inputs[i]);
        sp_input_info_free(&info[i]);
    }
    free(inputs);
    free(info);
    return out;
}
