/* run_source.c - a run's rank files without their event columns: the
 * skeleton profile the report prints from, and where each row's events are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scopeprof/analysis.h"
#include "scopeprof/h5.h"
#include "scopeprof/stream.h"

/* Every value of the columns the call stream leaves alone must read, as
 * the in-memory reader reads them (their lengths were checked with the
 * skeleton): await_ns and the MPI columns of every file, in windows. */
#define OTHER_WINDOW 65536

static void read_other_columns(sp_run_source *src)
{
    int64_t *window = NULL;
    for (size_t f = 0; f < src->num_paths && !src->unreadable[0]; f++) {
        const sp_h5_event_shape *shape = &src->shapes[f];
        int wanted = shape->has_await;
        for (int c = 0; c < SP_EXTRA_N; c++)
            wanted |= shape->has_extra[c];
        if (!wanted || shape->num_events == 0)
            continue;
        char err[1024];
        sp_h5_event_reader *r = sp_h5_event_reader_open(src->paths[f], shape, 1 << 20, err,
                                                        sizeof err);
        if (!window)
            window = malloc(OTHER_WINDOW * sizeof *window);
        if (!r || !window) {
            snprintf(src->unreadable, sizeof src->unreadable, "%s",
                     r ? "out of memory" : "event columns cannot be opened");
            sp_h5_event_reader_close(r);
            break;
        }
        for (int c = -1; !src->unreadable[0] && c < SP_EXTRA_N; c++) {
            if (c < 0 ? !shape->has_await : !shape->has_extra[c])
                continue;
            for (uint64_t at = 0; at < shape->num_events; at += OTHER_WINDOW) {
                size_t n = shape->num_events - at < OTHER_WINDOW
                               ? (size_t)(shape->num_events - at)
                               : OTHER_WINDOW;
                int got = c < 0 ? sp_h5_event_reader_read(r, SP_H5_COL_AWAIT, at, n, window)
                                : sp_h5_event_reader_read_extra(r, c, at, n, window);
                if (got != 0) {
                    snprintf(src->unreadable, sizeof src->unreadable, "events/%s does not read",
                             c < 0 ? "await_ns" : sp_event_extra_names[c]);
                    break;
                }
            }
        }
        sp_h5_event_reader_close(r);
    }
    free(window);
}

int sp_run_source_open(sp_run_source *src, const char *const *args, size_t count, char *err,
                       size_t errlen)
{
    memset(src, 0, sizeof *src);
    src->profile = sp_load_run_skeleton(args, count, &src->paths, &src->num_paths,
                                        &src->shapes, &src->row_file, err, errlen);
    for (size_t i = 0; src->profile && i < src->num_paths; i++) {
        src->any_thread |= src->shapes[i].has[SP_H5_COL_THREAD];
        src->any_task |= src->shapes[i].has[SP_H5_COL_TASK];
        src->any_parent |= src->shapes[i].has[SP_H5_COL_PARENT];
    }
    if (src->profile)
        read_other_columns(src);
    return src->profile ? 0 : -1;
}

void sp_run_source_close(sp_run_source *src)
{
    sp_stream_release_reader(src);
    if (src->profile)
        sp_profile_free(src->profile);
    sp_run_inputs_free(src->paths, (long)src->num_paths);
    free(src->shapes);
    free(src->row_file);
    memset(src, 0, sizeof *src);
}

typedef struct row_key {
    size_t file;
    uint32_t rank, region;
} row_key;

static int by_key(const void *a, const void *b)
{
    const row_key *x = a, *y = b;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->region > y->region) - (x->region < y->region);
}

/* Two rows for one (rank, region) of a file: the reader refuses the file. */
static int duplicate_rows(const sp_run_source *src)
{
    const sp_profile *p = src->profile;
    row_key *keys = malloc((p->num_rows + 1) * sizeof *keys);
    if (!keys)
        return 1;
    for (size_t r = 0; r < p->num_rows; r++)
        keys[r] = (row_key){src->row_file[r], p->rows[r].rank, p->rows[r].region};
    qsort(keys, p->num_rows, sizeof *keys, by_key);
    int dup = 0;
    for (size_t r = 1; r < p->num_rows && !dup; r++)
        dup = by_key(&keys[r - 1], &keys[r]) == 0;
    free(keys);
    return dup;
}

const char *sp_run_source_unstreamable_calls(const sp_run_source *src)
{
    if (src->unreadable[0])
        return src->unreadable;
    if (src->profile->aggregate)
        return "aggregate layout";
    if (duplicate_rows(src))
        return "two rows for one rank and region";
    return NULL;
}

const char *sp_run_source_unstreamable(const sp_run_source *src)
{
    const char *why = sp_run_source_unstreamable_calls(src);
    if (why)
        return why;
    for (size_t i = 0; i < src->num_paths; i++)
        if (src->shapes[i].has_other)
            return "MPI columns";
    return NULL;
}

int sp_run_source_rank_alone(const sp_run_source *src, uint32_t rank, long file,
                             const sp_selection *sel, int window, sp_profile **full,
                             sp_rank_data *data, char *why, size_t whylen)
{
    const sp_h5_event_shape *sh = &src->shapes[file];
    *full = NULL;
    if (window || src->any_thread != sh->has[SP_H5_COL_THREAD] ||
        src->any_task != sh->has[SP_H5_COL_TASK] ||
        src->any_parent != sh->has[SP_H5_COL_PARENT]) {
        snprintf(why, whylen, "rank %u: fork edges with --from/--to or mixed columns", rank);
        return 1;
    }
    char err[1024];
    sp_profile *p = sp_h5_read(src->paths[file], err, sizeof err);
    if (!p) {
        snprintf(why, whylen, "%s", err);
        return 1;
    }
    if (sp_rank_data_load(p, rank, sel, data, why, whylen) != 0) {
        sp_profile_free(p);
        return 1;
    }
    *full = p;
    return 0;
}

int sp_run_source_run_regions(const sp_run_source *src, const sp_profile *full,
                              sp_rank_data *data)
{
    sp_profile *skeleton = (sp_profile *)src->profile;
    for (size_t i = 0; i < data->calls.n; i++) {
        int64_t id = sp_profile_intern_name(skeleton, full->names[data->calls.region[i]]);
        if (id < 0)
            return -1;
        data->calls.region[i] = (uint32_t)id;
    }
    return 0;
}
