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
 * skeleton): await_ns and the MPI columns of every file, in windows, a
 * compressed chunk that repeats one that read not decompressed again
 * (sp_h5_event_reader_check).  A
 * column a caller reads itself (src->deferred) is left out at open: the
 * caller records the values its reads covered, and what they left is read
 * by sp_run_source_check_deferred. */
/* Values [lo, hi) of a file that read, for one deferred column. */
typedef struct cover_span {
    uint64_t lo, hi;
} cover_span;

struct sp_run_cover {
    cover_span *spans;
    size_t n, cap;
};

/* Column c (-1 await_ns, else SP_EXTRA_*) of file f is to be read now. */
static int wanted_now(const sp_run_source *src, size_t f, int c, int deferred_pass)
{
    const sp_h5_event_shape *shape = &src->shapes[f];
    if (c < 0)
        return shape->has_await && !deferred_pass;
    int deferred = (src->deferred >> c) & 1;
    return shape->has_extra[c] && deferred == deferred_pass;
}

static int read_span(sp_h5_event_reader *r, int c, uint64_t lo, uint64_t hi)
{
    return c < 0 ? sp_h5_event_reader_check(r, SP_H5_COL_AWAIT, lo, hi)
                 : sp_h5_event_reader_check_extra(r, c, lo, hi);
}

static int by_lo(const void *a, const void *b)
{
    const cover_span *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Read what the column's recorded reads left (everything, with none). */
static int read_gaps(sp_h5_event_reader *r, struct sp_run_cover *cover, int c, uint64_t events)
{
    if (!cover || cover->n == 0)
        return read_span(r, c, 0, events);
    qsort(cover->spans, cover->n, sizeof *cover->spans, by_lo);
    uint64_t at = 0;
    for (size_t i = 0; i < cover->n && at < events; i++) {
        if (cover->spans[i].lo > at && read_span(r, c, at, cover->spans[i].lo) != 0)
            return -1;
        if (cover->spans[i].hi > at)
            at = cover->spans[i].hi;
    }
    return at < events ? read_span(r, c, at, events) : 0;
}

static void read_other_columns(sp_run_source *src, int deferred_pass)
{
    for (size_t f = 0; f < src->num_paths && !src->unreadable[0]; f++) {
        const sp_h5_event_shape *shape = &src->shapes[f];
        int wanted = 0;
        for (int c = -1; c < SP_EXTRA_N; c++)
            wanted |= wanted_now(src, f, c, deferred_pass);
        if (!wanted || shape->num_events == 0)
            continue;
        char err[1024];
        sp_h5_event_reader *r = sp_h5_event_reader_open(src->paths[f], shape, 1 << 20, err,
                                                        sizeof err);
        if (!r) {
            snprintf(src->unreadable, sizeof src->unreadable, "event columns cannot be opened");
            break;
        }
        for (int c = -1; !src->unreadable[0] && c < SP_EXTRA_N; c++) {
            if (!wanted_now(src, f, c, deferred_pass))
                continue;
            struct sp_run_cover *cover =
                deferred_pass && src->cover ? &src->cover[f * SP_EXTRA_N + (size_t)c] : NULL;
            int got = deferred_pass ? read_gaps(r, cover, c, shape->num_events)
                                    : read_span(r, c, 0, shape->num_events);
            if (got != 0)
                snprintf(src->unreadable, sizeof src->unreadable, "events/%s does not read",
                         c < 0 ? "await_ns" : sp_event_extra_names[c]);
        }
        sp_h5_event_reader_close(r);
    }
}

int sp_run_source_open_deferring(sp_run_source *src, const char *const *args, size_t count,
                                 unsigned deferred, char *err, size_t errlen)
{
    memset(src, 0, sizeof *src);
    src->profile = sp_load_run_skeleton(args, count, &src->paths, &src->num_paths,
                                        &src->shapes, &src->row_file, err, errlen);
    for (size_t i = 0; src->profile && i < src->num_paths; i++) {
        src->any_thread |= src->shapes[i].has[SP_H5_COL_THREAD];
        src->any_task |= src->shapes[i].has[SP_H5_COL_TASK];
        src->any_parent |= src->shapes[i].has[SP_H5_COL_PARENT];
    }
    if (!src->profile)
        return -1;
    src->deferred = deferred & ((1u << SP_EXTRA_N) - 1);
    /* without room for the record, every value is read after */
    if (src->deferred && src->num_paths)
        src->cover = calloc(src->num_paths * SP_EXTRA_N, sizeof *src->cover);
    read_other_columns(src, 0);
    return 0;
}

int sp_run_source_open(sp_run_source *src, const char *const *args, size_t count, char *err,
                       size_t errlen)
{
    return sp_run_source_open_deferring(src, args, count, 0, err, errlen);
}

void sp_run_source_covered(const sp_run_source *src, size_t file, int extra, uint64_t at,
                           size_t n)
{
    if (!src->cover || extra < 0 || extra >= SP_EXTRA_N || !((src->deferred >> extra) & 1) ||
        file >= src->num_paths || n == 0)
        return;
    struct sp_run_cover *cover = &src->cover[file * SP_EXTRA_N + (size_t)extra];
    /* reads come in order along a row: extend the last span when they touch */
    if (cover->n && cover->spans[cover->n - 1].hi == at) {
        cover->spans[cover->n - 1].hi = at + n;
        return;
    }
    if (cover->n == cover->cap) {
        size_t cap = cover->cap ? 2 * cover->cap : 16;
        cover_span *grown = realloc(cover->spans, cap * sizeof *grown);
        if (!grown)
            return; /* not recorded: read again by the check */
        cover->spans = grown;
        cover->cap = cap;
    }
    cover->spans[cover->n++] = (cover_span){at, at + n};
}

int sp_run_source_check_deferred(sp_run_source *src)
{
    if (src->deferred && !src->unreadable[0])
        read_other_columns(src, 1);
    src->deferred = 0;
    return src->unreadable[0] ? -1 : 0;
}

static void free_cover(sp_run_source *src)
{
    for (size_t i = 0; src->cover && i < src->num_paths * SP_EXTRA_N; i++)
        free(src->cover[i].spans);
    free(src->cover);
    src->cover = NULL;
}

void sp_run_source_close(sp_run_source *src)
{
    sp_stream_release_reader(src);
    free_cover(src);
    if (src->profile)
        sp_profile_free(src->profile);
    sp_run_inputs_free(src->paths, (long)src->num_paths);
    free(src->shapes);
    free(src->row_file);
    memset(src, 0, sizeof *src);
}

/* The earliest start of file f's events, decoded as the reader decodes
 * them, into *lo (left when it has none).  0, or -1 when a window does
 * not read. */
static int first_start_read(const sp_run_source *src, size_t f, int64_t *lo)
{
    enum { WINDOW = 16384 };
    const sp_h5_event_shape *sh = &src->shapes[f];
    char err[256];
    sp_h5_event_reader *r = sp_h5_event_reader_open(src->paths[f], sh, 1 << 20, err, sizeof err);
    int64_t *w = malloc(WINDOW * sizeof *w);
    int rc = r && w ? 0 : -1;
    const sp_profile *p = src->profile;
    for (size_t k = 0; rc == 0 && k < p->num_rows; k++) {
        const sp_row *row = &p->rows[k];
        if (src->row_file[k] != f)
            continue;
        int64_t prev = 0;
        for (uint64_t at = row->offset; rc == 0 && at < row->offset + row->count;) {
            uint64_t left = row->offset + row->count - at;
            size_t n = left < WINDOW ? (size_t)left : WINDOW;
            rc = sp_h5_event_reader_read(r, SP_H5_COL_START, at, n, w);
            for (size_t i = 0; rc == 0 && i < n; i++) {
                /* start deltas: a running sum along the row, unsigned */
                int64_t start = sh->deltas && at + i > row->offset
                                    ? (int64_t)((uint64_t)w[i] + (uint64_t)prev)
                                    : w[i];
                prev = start;
                if (start < *lo)
                    *lo = start;
            }
            at += n;
        }
    }
    free(w);
    sp_h5_event_reader_close(r);
    return rc;
}

int sp_run_source_origin(const sp_run_source *src, int64_t *origin, char *why, size_t whylen)
{
    const sp_profile *p = src->profile;
    if (sp_profile_meta_int(p, "start_time_ns", origin) == 0)
        return 0;
    uint64_t *in_rows = calloc(src->num_paths + 1, sizeof *in_rows);
    if (!in_rows) {
        snprintf(why, whylen, "out of memory");
        return 1;
    }
    int64_t lo = INT64_MAX;
    for (size_t r = 0; r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        size_t f = src->row_file[r];
        in_rows[f] += row->count;
        /* the stream checks start_minimum against the events */
        if (row->count && src->shapes[f].has_stats && row->stats.start_minimum < lo)
            lo = row->stats.start_minimum;
    }
    int rc = 0;
    for (size_t f = 0; f < src->num_paths && rc == 0; f++) {
        /* rows do not overlap (the skeleton's check): equal counts cover all */
        if (in_rows[f] != src->shapes[f].num_events) {
            snprintf(why, whylen, "--from / --to without metadata start_time_ns, and events "
                                  "outside every row (the origin is the first event)");
            rc = 1;
        } else if (!src->shapes[f].has_stats && in_rows[f] &&
                   first_start_read(src, f, &lo) != 0) {
            snprintf(why, whylen, "--from / --to: the start column does not read");
            rc = 1;
        }
    }
    free(in_rows);
    /* as sp_profile_origin_ns: 0 for a run without events */
    *origin = lo == INT64_MAX ? 0 : lo;
    return rc;
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
