/* fork_ids_check.c - a file's fork parent ids checked as the reader checks
 * them, in windows (fork_ids_check.h).  The in-memory reader holds the
 * whole file for it (about 160 bytes per call); this holds one bit per
 * possible call id. */
#include "stream/fork_ids_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The call ids one rank has in the file. */
typedef struct rank_ids {
    uint32_t rank;
    uint64_t events;         /* the rank's events in the file */
    unsigned char *bits;     /* one bit per id below span */
    uint64_t span;
} rank_ids;

/* A row of the file, in offset order. */
typedef struct file_row {
    uint64_t offset, count;
    size_t slot;             /* its rank's rank_ids */
} file_row;

typedef struct checker {
    const sp_run_source *src;
    sp_h5_event_reader *reader;
    file_row *rows;
    size_t num_rows;
    rank_ids *ranks;
    size_t num_ranks;
    int64_t *window;
    size_t window_len;
    char *why;
    size_t whylen;
} checker;

static int by_offset(const void *a, const void *b)
{
    const file_row *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int fail(checker *c, const char *what, uint32_t rank)
{
    snprintf(c->why, c->whylen, "rank %u: %s", rank, what);
    return 1;
}

/* The rows of the file with events, in offset order, and its ranks. */
static int gather_rows(checker *c, size_t file)
{
    const sp_profile *p = c->src->profile;
    c->rows = malloc((p->num_rows + 1) * sizeof *c->rows);
    c->ranks = malloc((p->num_rows + 1) * sizeof *c->ranks);
    if (!c->rows || !c->ranks)
        return 1;
    for (size_t r = 0; r < p->num_rows; r++) {
        const sp_row *row = &p->rows[r];
        if (c->src->row_file[r] != file || row->count == 0)
            continue;
        size_t slot = 0;
        while (slot < c->num_ranks && c->ranks[slot].rank != row->rank)
            slot++;
        if (slot == c->num_ranks)
            c->ranks[c->num_ranks++] = (rank_ids){.rank = row->rank};
        c->ranks[slot].events += row->count;
        c->rows[c->num_rows++] = (file_row){row->offset, row->count, slot};
    }
    qsort(c->rows, c->num_rows, sizeof *c->rows, by_offset);
    return 0;
}

/* id into its rank's bitmap, grown by doubling up to a byte per event of
 * the rank (plus 1 KiB): ids are 0..n-1 in the files we and the Python
 * package write, so this is one bit per call. */
static int note_id(checker *c, rank_ids *ids, int64_t id)
{
    if (id < 0)
        return fail(c, "a call without a stored call id", ids->rank);
    if ((uint64_t)id >= ids->span) {
        uint64_t limit = 8 * ids->events + 8192;
        uint64_t span = ids->span ? ids->span : 1024;
        while (span <= (uint64_t)id)
            span *= 2;
        if (span > limit) {
            if ((uint64_t)id >= limit)
                return fail(c, "call ids too sparse to check in bounded memory", ids->rank);
            span = (limit + 7) / 8 * 8;
        }
        unsigned char *grown = realloc(ids->bits, (size_t)(span / 8));
        if (!grown)
            return fail(c, "out of memory", ids->rank);
        memset(grown + ids->span / 8, 0, (size_t)((span - ids->span) / 8));
        ids->bits = grown;
        ids->span = span;
    }
    unsigned char bit = (unsigned char)(1u << (id & 7));
    if (ids->bits[id >> 3] & bit)
        return fail(c, "a call id appears twice", ids->rank);
    ids->bits[id >> 3] |= bit;
    return 0;
}

static int is_call(const rank_ids *ids, int64_t id)
{
    return id >= 0 && (uint64_t)id < ids->span && (ids->bits[id >> 3] >> (id & 7) & 1);
}

/* One pass over column `col` of the whole file, in windows: each value in
 * a row goes to its rank (a call id noted; a fork parent id checked when
 * the file has call ids), and the values between rows are read, as the
 * reader reads every value, and left alone. */
static int pass(checker *c, size_t file, int col)
{
    const sp_h5_event_shape *shape = &c->src->shapes[file];
    int calls = shape->has[SP_H5_COL_CALL];
    size_t cur = 0; /* the first row that ends after the window's start */
    for (uint64_t pos = 0; pos < shape->num_events; pos += c->window_len) {
        size_t len = shape->num_events - pos < c->window_len ? (size_t)(shape->num_events - pos)
                                                             : c->window_len;
        if (sp_h5_event_reader_read(c->reader, col, pos, len, c->window)) {
            snprintf(c->why, c->whylen, "events/%s does not read",
                     col == SP_H5_COL_FORK ? "fork_parent_ids" : "call_ids");
            return 1;
        }
        while (cur < c->num_rows && c->rows[cur].offset + c->rows[cur].count <= pos)
            cur++;
        for (size_t k = cur; k < c->num_rows && c->rows[k].offset < pos + len; k++) {
            const file_row *row = &c->rows[k];
            rank_ids *ids = &c->ranks[row->slot];
            uint64_t from = row->offset > pos ? row->offset : pos;
            uint64_t to = row->offset + row->count < pos + len ? row->offset + row->count
                                                               : pos + len;
            for (uint64_t i = from; i < to; i++) {
                int64_t v = c->window[i - pos];
                if (col == SP_H5_COL_CALL) {
                    if (note_id(c, ids, v))
                        return 1;
                } else if (calls && v != -1 && !is_call(ids, v)) {
                    char what[96];
                    snprintf(what, sizeof what, "fork parent id %lld is no call of the rank",
                             (long long)v);
                    return fail(c, what, ids->rank);
                }
            }
        }
    }
    return 0;
}

/* Windows of whole chunks (the columns share the start column's chunking
 * in the files we and the Python package write), about 64 Ki values. */
static size_t window_for(const sp_h5_event_shape *shape)
{
    uint64_t chunk = shape->chunk;
    if (chunk == 0 || chunk > ((uint64_t)1 << 20))
        return 65536;
    return (size_t)((65536 + chunk - 1) / chunk * chunk);
}

int sp_stream_check_fork_ids(const sp_run_source *src, size_t file, char *why, size_t whylen)
{
    const sp_h5_event_shape *shape = &src->shapes[file];
    if (!shape->has_fork)
        return 0;
    checker c = {.src = src, .why = why, .whylen = whylen, .window_len = window_for(shape)};
    int rc = gather_rows(&c, file);
    char err[512] = "out of memory";
    if (rc == 0) {
        size_t cache = shape->chunk && shape->chunk <= ((uint64_t)1 << 20)
                           ? (size_t)shape->chunk * sizeof(int64_t) * 2
                           : 0;
        if (cache < ((size_t)4 << 20))
            cache = (size_t)4 << 20;
        c.reader = sp_h5_event_reader_open(src->paths[file], shape, cache, err, sizeof err);
        c.window = c.reader ? malloc(c.window_len * sizeof *c.window) : NULL;
        rc = c.window ? 0 : 1;
    }
    if (rc)
        snprintf(why, whylen, "%s", err);
    if (rc == 0 && shape->has[SP_H5_COL_CALL])
        rc = pass(&c, file, SP_H5_COL_CALL);
    if (rc == 0)
        rc = pass(&c, file, SP_H5_COL_FORK);
    free(c.window);
    if (c.reader)
        sp_h5_event_reader_close(c.reader);
    for (size_t k = 0; k < c.num_ranks; k++)
        free(c.ranks[k].bits);
    free(c.ranks);
    free(c.rows);
    return rc;
}
