/* capture_to_profile.c - turn what the shim recorded into a profile row set.
 * See capture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture_internal.h"
#include "capture/capture_source.h"
#include "scopeprof/callstack.h"

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

static int copy_meta(sp_profile *p, const sp_capture *c)
{
    for (size_t i = 0; i < c->num_meta; i++) {
        const sp_meta *m = &c->meta[i];
        int rc = 0;
        switch (m->type) {
        case SP_META_INT: rc = sp_profile_set_meta_int(p, m->key, m->i); break;
        case SP_META_FLOAT: rc = sp_profile_set_meta_float(p, m->key, m->f); break;
        case SP_META_STRING: rc = sp_profile_set_meta_string(p, m->key, m->s); break;
        case SP_META_STRINGS:
            rc = sp_profile_set_meta_strings(p, m->key, (const char *const *)m->list, m->list_len);
            break;
        }
        if (rc != 0)
            return -1;
    }
    return 0;
}

static int copy_threads(sp_profile *p, const sp_capture *c)
{
    if (!c->track_threads || !c->num_threads)
        return 0;
    p->threads = calloc(c->num_threads, sizeof *p->threads);
    if (!p->threads)
        return -1;
    p->has_thread_table = 1;
    for (size_t i = 0; i < c->num_threads; i++) {
        p->threads[i] = c->threads[i];
        p->threads[i].rank = (uint32_t)c->rank;
        p->threads[i].name = dup_or_empty(c->threads[i].name);
        p->threads[i].kind = dup_or_empty(c->threads[i].kind);
        p->num_threads++;
        if (!p->threads[i].name || !p->threads[i].kind)
            return -1;
    }
    return 0;
}

static int copy_tasks(sp_profile *p, const sp_capture *c)
{
    if (!c->num_tasks)
        return 0;
    p->tasks = calloc(c->num_tasks, sizeof *p->tasks);
    if (!p->tasks)
        return -1;
    p->has_task_table = 1;
    for (size_t i = 0; i < c->num_tasks; i++) {
        sp_task_row *t = &p->tasks[i];
        *t = c->tasks[i];
        t->rank = (uint32_t)c->rank;
        t->kind = dup_or_empty(c->tasks[i].kind);
        t->name = dup_or_empty(c->tasks[i].name);
        t->coro_name = dup_or_empty(c->tasks[i].coro_name);
        p->num_tasks++;
        if (!t->kind || !t->name || !t->coro_name)
            return -1;
    }
    return 0;
}

/* Rows: one per region with at least one kept call, in region id order,
 * renumbered densely.  row_of[region] = row index or -1. */
static int make_rows(sp_profile *p, const sp_capture *c, const uint64_t *counts, int64_t *row_of)
{
    size_t rows = 0;
    for (size_t r = 0; r < c->num_regions; r++)
        rows += counts[r] > 0;
    p->rows = calloc(rows ? rows : 1, sizeof *p->rows);
    if (!p->rows)
        return -1;
    uint64_t offset = 0;
    for (size_t r = 0; r < c->num_regions; r++) {
        row_of[r] = -1;
        if (!counts[r])
            continue;
        const sp_capture_region *reg = &c->regions[r];
        int64_t name = sp_profile_intern_name(p, reg->name);
        if (name < 0)
            return -1;
        sp_row *row = &p->rows[p->num_rows];
        row->region = (uint32_t)name;
        row->rank = (uint32_t)c->rank;
        row->offset = offset;
        row->count = counts[r];
        row->source_line = reg->source_file ? reg->source_line : -1;
        row->exclusive_total = -1;
        row->source_file = dup_or_empty(reg->source_file);
        row->source_text = dup_or_empty(NULL);
        row->tags = strdup("[]");
        row->event_metadata = strdup("[]");
        row_of[r] = (int64_t)p->num_rows++;
        if (!row->source_file || !row->source_text || !row->tags || !row->event_metadata)
            return -1;
        offset += counts[r];
    }
    return 0;
}

/* Metadata region_functions: the function that registered each region,
 * aligned with region_table/names, "" when unknown (docs/callsites.md).
 * Left out when no function is known at all (call sites off). */
static int add_region_functions(sp_profile *p, const sp_capture *c, const int64_t *row_of)
{
    const char **functions = calloc(p->num_names ? p->num_names : 1, sizeof *functions);
    if (!functions)
        return -1;
    int known = 0;
    for (size_t r = 0; r < c->num_regions; r++)
        if (row_of[r] >= 0 && c->regions[r].function) {
            functions[p->rows[row_of[r]].region] = c->regions[r].function;
            known = 1;
        }
    for (size_t i = 0; i < p->num_names; i++)
        if (!functions[i])
            functions[i] = "";
    int rc = known ? sp_profile_set_meta_strings(p, "region_functions", functions, p->num_names)
                   : 0;
    free(functions);
    return rc;
}

/* A nesting error names the calls by quoted region name: add where those
 * regions were registered, which is where to look for the misplaced end. */
void sp_capture_append_callsites(const sp_profile *p, const sp_capture *c,
                                 const int64_t *row_of, char *msg, size_t len)
{
    /* the (at most) two regions named first in the message, in its order */
    const char *at[2] = {NULL, NULL};
    size_t region[2] = {0, 0};
    for (size_t r = 0; r < c->num_regions; r++) {
        if (row_of[r] < 0 || !c->regions[r].source_file)
            continue;
        char quoted[300];
        snprintf(quoted, sizeof quoted, "'%s' call ", p->names[p->rows[row_of[r]].region]);
        const char *pos = strstr(msg, quoted);
        if (!pos)
            continue;
        if (!at[0] || pos < at[0]) {
            at[1] = at[0];
            region[1] = region[0];
            at[0] = pos;
            region[0] = r;
        } else if (!at[1] || pos < at[1]) {
            at[1] = pos;
            region[1] = r;
        }
    }
    for (int k = 0; k < 2 && at[k]; k++) {
        const sp_capture_region *reg = &c->regions[region[k]];
        size_t used = strlen(msg);
        char where[600];
        if (reg->source_line > 0)
            snprintf(where, sizeof where, "%s:%lld", reg->source_file, (long long)reg->source_line);
        else
            snprintf(where, sizeof where, "%s", reg->source_file);
        if (used + 1 < len)
            snprintf(msg + used, len - used, " '%s' is registered at %s%s%s.",
                     p->names[p->rows[row_of[region[k]]].region], where,
                     reg->function ? " in " : "", reg->function ? reg->function : "");
    }
}

/* Call ids, parent ids and exclusive totals from the reconstruction. */
static int add_call_tree(sp_profile *p, const sp_capture *c, const int64_t *row_of,
                         int has_tasks, char *warning, size_t warnlen)
{
    size_t n = p->num_events;
    uint32_t *region = malloc((n ? n : 1) * sizeof *region);
    uint64_t *call_index = malloc((n ? n : 1) * sizeof *call_index);
    const char **names = malloc((p->num_names ? p->num_names : 1) * sizeof *names);
    if (!region || !call_index || !names) {
        free(region);
        free(call_index);
        free(names);
        return -1;
    }
    for (size_t r = 0; r < p->num_rows; r++)
        for (uint64_t k = 0; k < p->rows[r].count; k++) {
            region[p->rows[r].offset + k] = p->rows[r].region;
            call_index[p->rows[r].offset + k] = k;
        }
    for (size_t i = 0; i < p->num_names; i++)
        names[i] = p->names[i];
    sp_call_input in = {
        .n = n,
        .start = p->start,
        .end = p->end,
        .region = region,
        .call_index = call_index,
        .thread_ids = p->thread_ids,
        .task_ids = has_tasks ? p->task_ids : NULL,
        .region_names = names,
        .num_regions = p->num_names,
    };
    sp_calls calls;
    char why[2048] = "";
    int rc = sp_calls_build(&in, &calls, why, sizeof why);
    free(region);
    free(call_index);
    free(names);
    if (rc != 0) {
        sp_capture_append_callsites(p, c, row_of, why, sizeof why);
        snprintf(warning, warnlen, "call graph not recorded: %s", why);
        return 0;
    }
    p->call_ids = malloc((n ? n : 1) * sizeof *p->call_ids);
    p->parent_ids = malloc((n ? n : 1) * sizeof *p->parent_ids);
    int64_t *totals = calloc(p->num_names ? p->num_names : 1, sizeof *totals);
    if (!p->call_ids || !p->parent_ids || !totals) {
        free(totals);
        sp_calls_free(&calls);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t at = calls.input_pos[i];
        p->call_ids[at] = (int64_t)i;
        p->parent_ids[at] = calls.parent[i];
    }
    sp_exclusive_totals(&calls, p->num_names, totals);
    for (size_t r = 0; r < p->num_rows; r++)
        p->rows[r].exclusive_total = totals[p->rows[r].region];
    free(totals);
    sp_calls_free(&calls);
    return 0;
}

/* ---- every run of events: spilled ones, then those still in memory ---- */

struct pass {
    const sp_capture *c;
    sp_profile *p;
    uint64_t *counts;       /* count pass */
    size_t n;
    int has_tasks;
    const int64_t *row_of;  /* scatter pass */
    uint64_t *fill;
    sp_mpi_match *mpi;      /* NULL: no MPI side data */
    char *err;
    size_t errlen;
};

static int count_chunk(void *ctx, const sp_capture_chunk *ch)
{
    struct pass *pass = ctx;
    for (size_t i = 0; i < ch->count; i++) {
        uint32_t r = ch->events[i].region;
        if (r >= pass->c->num_regions) {
            snprintf(pass->err, pass->errlen, "internal error: event of unknown region %u", r);
            return -1;
        }
        pass->counts[r]++;
        pass->has_tasks |= ch->events[i].task >= 0;
    }
    pass->n += ch->count;
    return 0;
}

/* Scatter the events into their rows, keeping recording order. */
static int scatter_chunk(struct pass *pass, const sp_capture_chunk *ch)
{
    sp_profile *p = pass->p;
    for (size_t i = 0; i < ch->count; i++) {
        const sp_event *e = &ch->events[i];
        if (e->region >= pass->c->num_regions) {
            snprintf(pass->err, pass->errlen, "internal error: event of unknown region %u",
                     e->region);
            return -1;
        }
        size_t row = (size_t)pass->row_of[e->region];
        if (pass->fill[row] == p->rows[row].count) {
            /* a spill file that changed between the two passes */
            snprintf(pass->err, pass->errlen, "the recorded events changed while being written");
            return -1;
        }
        size_t at = p->rows[row].offset + pass->fill[row]++;
        p->start[at] = e->start;
        p->end[at] = e->end;
        if (p->thread_ids)
            p->thread_ids[at] = ch->thread;
        if (p->task_ids) {
            p->task_ids[at] = e->task;
            p->await_ns[at] = ch->await_ns ? ch->await_ns[i] : 0;
        }
        const sp_capture_mpi *m = sp_mpi_match_event(pass->mpi, ch->thread, e->region);
        if (m)
            sp_mpi_store(p, at, m);
    }
    return 0;
}

/* ON_FULL=stop: per region, "name=calls:total_ns" of the calls counted but
 * not kept as events (documented in docs/robustness.md). */
static int add_dropped_meta(sp_profile *p, const sp_capture *c)
{
    uint64_t dropped = 0;
    size_t with_drops = 0;
    for (size_t r = 0; r < c->num_regions; r++) {
        dropped += c->regions[r].dropped_calls;
        with_drops += c->regions[r].dropped_calls > 0;
    }
    if (!dropped)
        return 0;
    if (sp_profile_set_meta_int(p, "dropped_calls", (int64_t)dropped) != 0)
        return -1;
    char **list = calloc(with_drops, sizeof *list);
    if (!list)
        return -1;
    size_t k = 0;
    int rc = 0;
    for (size_t r = 0; r < c->num_regions && rc == 0; r++) {
        const sp_capture_region *reg = &c->regions[r];
        if (!reg->dropped_calls)
            continue;
        size_t len = strlen(reg->name) + 48;
        if (!(list[k] = malloc(len)))
            rc = -1;
        else
            snprintf(list[k++], len, "%s=%llu:%lld", reg->name,
                     (unsigned long long)reg->dropped_calls, (long long)reg->dropped_total_ns);
    }
    if (rc == 0)
        rc = sp_profile_set_meta_strings(p, "dropped_calls_by_region", (const char *const *)list, k);
    for (size_t i = 0; i < k; i++)
        free(list[i]);
    free(list);
    return rc;
}

sp_profile *sp_capture_skeleton(const sp_capture *c, const uint64_t *counts, int64_t *row_of,
                                char *err, size_t errlen)
{
    sp_profile *p = sp_profile_new();
    if (!p || make_rows(p, c, counts, row_of) != 0 || add_region_functions(p, c, row_of) != 0 ||
        copy_threads(p, c) != 0 || copy_tasks(p, c) != 0 || copy_meta(p, c) != 0 ||
        add_dropped_meta(p, c) != 0) {
        snprintf(err, errlen, "out of memory while building the profile");
        sp_profile_free(p);
        return NULL;
    }
    for (size_t r = 0; r < p->num_rows; r++)
        p->num_events += p->rows[r].count;
    p->num_ranks = (uint32_t)c->rank + 1;
    return p;
}

sp_profile *sp_capture_to_profile(const sp_capture *c, char *warning, size_t warnlen,
                                  char *err, size_t errlen)
{
    if (warnlen)
        warning[0] = '\0';
    sp_profile *p = NULL;
    sp_source source;
    uint64_t *counts = calloc(c->num_regions ? c->num_regions : 1, sizeof *counts);
    int64_t *row_of = calloc(c->num_regions ? c->num_regions : 1, sizeof *row_of);
    uint64_t *fill = NULL;
    struct pass pass = {.c = c, .counts = counts, .row_of = row_of, .err = err,
                        .errlen = errlen};
    int opened = counts && row_of ? sp_source_open(&source, c, count_chunk, &pass, err, errlen)
                                  : -2;
    if (opened == -2)
        goto oom;
    if (opened != 0)
        goto fail;
    int has_tasks = pass.has_tasks;
    if (!(p = sp_capture_skeleton(c, counts, row_of, err, errlen)))
        goto fail;
    pass.p = p;

    size_t cells = p->num_events ? p->num_events : 1;
    p->start = malloc(cells * sizeof *p->start);
    p->end = malloc(cells * sizeof *p->end);
    if (!p->start || !p->end)
        goto oom;
    if (c->track_threads && !(p->thread_ids = malloc(cells * sizeof *p->thread_ids)))
        goto oom;
    if (has_tasks && (!(p->task_ids = malloc(cells * sizeof *p->task_ids)) ||
                      !(p->await_ns = calloc(cells, sizeof *p->await_ns))))
        goto oom;

    if (c->num_mpi + source.num_mpi &&
        (sp_mpi_alloc_columns(p, p->num_events) != 0 || !(pass.mpi = sp_mpi_match_new(c)) ||
         sp_mpi_match_add_records(pass.mpi, c->mpi, c->num_mpi, source.mpi, source.num_mpi) != 0))
        goto oom;
    fill = calloc(p->num_rows ? p->num_rows : 1, sizeof *fill);
    if (!fill)
        goto oom;
    pass.fill = fill;
    /* Spilled events were recorded before the ones in memory; a file is
     * read one frame at a time, so the events are never all in memory twice. */
    for (size_t k = 0; k < source.num_segments; k++) {
        sp_capture_chunk chunk;
        if (sp_source_chunk(&source, k, &chunk, err, errlen) != 0 ||
            scatter_chunk(&pass, &chunk) != 0)
            goto fail;
    }
    /* Summary statistics are left to the writer, which computes them from
     * the events of every profile it writes (h5_layout.c). */

    if (add_call_tree(p, c, row_of, has_tasks, warning, warnlen) != 0 ||
        sp_capture_add_forks(p, c, row_of) != 0)
        goto oom;
    sp_source_close(&source);
    sp_mpi_match_free(pass.mpi);
    free(counts);
    free(row_of);
    free(fill);
    return p;
oom:
    snprintf(err, errlen, "out of memory while building the profile");
fail:
    if (opened != -2)
        sp_source_close(&source);
    sp_mpi_match_free(pass.mpi);
    free(counts);
    free(row_of);
    free(fill);
    sp_profile_free(p);
    return NULL;
}
