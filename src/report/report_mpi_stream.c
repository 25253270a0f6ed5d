/* report_mpi_stream.c - the MPI tables of a streamed report: every row's
 * MPI columns read in windows from its rank file (an sp_mpi_rows source
 * over the run source), after the report's pass, so memory follows the
 * windows and the distinct collective operations, not the calls. */
#include <stdlib.h>
#include <string.h>

#include "report/report_internal.h"
#include "scopeprof/h5.h"
#include "scopeprof/stream.h"

enum { WINDOW = 16384, COLUMNS = 6 };
/* A collective row out of start order is sorted in memory up to this. */
#define SORT_BUDGET ((size_t)256 << 20)

typedef struct stream_rows {
    const sp_run_source *src;
    int any_comm;             /* some file has events/mpi_comm */
    long file;                /* of the open reader, -1 none */
    sp_h5_event_reader *reader;
    const sp_row *row;
    uint64_t pos;             /* next event of the row (index in its file) */
    int64_t prev_start;       /* decoded start of the event before pos */
    int whole, done;          /* the row sorted in memory, served as one window */
    int64_t *buf;             /* WINDOW x COLUMNS, or the sorted row */
    size_t buf_values;
    int failed;               /* a read failed or the budget ran out */
} stream_rows;

static int fail(stream_rows *s)
{
    s->failed = 1;
    return -1;
}

static int use_file(stream_rows *s, size_t r)
{
    long file = (long)s->src->row_file[r];
    if (file == s->file)
        return 0;
    sp_h5_event_reader_close(s->reader);
    s->file = file;
    char err[256];
    s->reader = sp_h5_event_reader_open(s->src->paths[file], &s->src->shapes[file],
                                        (size_t)1 << 20, err, sizeof err);
    return s->reader ? 0 : fail(s);
}

static int64_t *room(stream_rows *s, size_t values)
{
    if (values > s->buf_values) {
        int64_t *grown = realloc(s->buf, values * sizeof *grown);
        if (!grown)
            return NULL;
        s->buf = grown;
        s->buf_values = values;
    }
    return s->buf;
}

/* Events [pos, pos+n) of the current row: decoded start and end, and the
 * MPI columns (a column this file lacks reads as the in-memory run fills
 * it: -1, or no communicator column at all). */
static int read_events(stream_rows *s, uint64_t pos, size_t n, int64_t *start, int64_t *end,
                       int64_t *const extra[4])
{
    const sp_h5_event_shape *sh = &s->src->shapes[s->file];
    if (sp_h5_event_reader_read(s->reader, SP_H5_COL_START, pos, n, start) ||
        sp_h5_event_reader_read(s->reader, SP_H5_COL_SECOND, pos, n, end))
        return fail(s);
    for (size_t i = 0; i < n; i++) {
        if (sh->deltas) {
            if (pos + i > s->row->offset)
                start[i] = (int64_t)((uint64_t)start[i] + (uint64_t)s->prev_start);
            end[i] = (int64_t)((uint64_t)start[i] + (uint64_t)end[i]);
        }
        s->prev_start = start[i];
    }
    static const int cols[4] = {SP_EXTRA_MPI_SENT_BYTES, SP_EXTRA_MPI_RECV_BYTES,
                                SP_EXTRA_MPI_PEER, SP_EXTRA_MPI_COMM};
    for (int k = 0; k < 4; k++) {
        if (!extra[k])
            continue;
        if (sh->has_extra[cols[k]]) {
            if (sp_h5_event_reader_read_extra(s->reader, cols[k], pos, n, extra[k]))
                return fail(s);
            /* read: the run source's check need not read these again */
            sp_run_source_covered(s->src, (size_t)s->file, cols[k], pos, n);
        } else {
            for (size_t i = 0; i < n; i++)
                extra[k][i] = -1;
        }
    }
    return 0;
}

static int stream_span(void *ctx, size_t r, int64_t *lo, int64_t *hi)
{
    stream_rows *s = ctx;
    const sp_row *row = &s->src->profile->rows[r];
    if (s->src->shapes[s->src->row_file[r]].has_stats) {
        /* the stream checked them against the events */
        *lo = row->stats.start_minimum;
        *hi = row->stats.end_maximum;
        return 0;
    }
    if (use_file(s, r) != 0)
        return -1;
    int64_t *buf = room(s, 2 * WINDOW);
    if (!buf)
        return fail(s);
    int64_t *const none[4] = {NULL, NULL, NULL, NULL};
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    s->row = row;
    for (uint64_t pos = row->offset; pos < row->offset + row->count;) {
        uint64_t left = row->offset + row->count - pos;
        size_t n = left < WINDOW ? (size_t)left : WINDOW;
        if (read_events(s, pos, n, buf, buf + WINDOW, none) != 0)
            return -1;
        for (size_t i = 0; i < n; i++) {
            if (buf[i] < *lo)
                *lo = buf[i];
            if (buf[WINDOW + i] > *hi)
                *hi = buf[WINDOW + i];
        }
        pos += n;
    }
    return 0;
}

static const int64_t *sorted_start;
/* (start, position): what the in-memory path's stable sort gives */
static int by_start_then_position(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    if (sorted_start[x] != sorted_start[y])
        return sorted_start[x] < sorted_start[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* A collective row in start order: in windows when the file has it in that
 * order already (the usual case: one thread's calls), else sorted whole. */
static int begin_sorted(stream_rows *s)
{
    const sp_row *row = s->row;
    int64_t *buf = room(s, 2 * WINDOW);
    if (!buf)
        return fail(s);
    int64_t *const none[4] = {NULL, NULL, NULL, NULL};
    int in_order = 1;
    int64_t last = INT64_MIN;
    for (uint64_t pos = row->offset; pos < row->offset + row->count && in_order;) {
        uint64_t left = row->offset + row->count - pos;
        size_t n = left < WINDOW ? (size_t)left : WINDOW;
        if (read_events(s, pos, n, buf, buf + WINDOW, none) != 0)
            return -1;
        for (size_t i = 0; i < n && in_order; i++) {
            in_order = buf[i] >= last;
            last = buf[i];
        }
        pos += n;
    }
    s->pos = row->offset;
    if (in_order)
        return 0;
    /* start, end, comm and the order: 32 bytes per call */
    if (row->count > SORT_BUDGET / 32)
        return fail(s);
    size_t n = (size_t)row->count;
    int64_t *whole = malloc(3 * n * sizeof *whole);
    uint64_t *order = malloc(n * sizeof *order);
    int64_t *out = room(s, 3 * n);
    int rc = whole && order && out ? 0 : fail(s);
    int64_t *const comm_only[4] = {NULL, NULL, NULL, s->any_comm ? whole + 2 * n : NULL};
    if (rc == 0)
        rc = read_events(s, row->offset, n, whole, whole + n, comm_only);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        sorted_start = whole;
        qsort(order, n, sizeof *order, by_start_then_position);
        for (size_t i = 0; i < n; i++) {
            out[i] = whole[order[i]];
            out[n + i] = whole[n + order[i]];
            out[2 * n + i] = s->any_comm ? whole[2 * n + order[i]] : 0;
        }
        s->whole = 1;
    }
    free(whole);
    free(order);
    return rc;
}

static int stream_begin(void *ctx, size_t r, int sorted)
{
    stream_rows *s = ctx;
    s->row = &s->src->profile->rows[r];
    s->pos = s->row->offset;
    s->whole = 0;
    s->done = 0;
    if (use_file(s, r) != 0)
        return -1;
    return sorted ? begin_sorted(s) : 0;
}

static int stream_next(void *ctx, sp_mpi_window *w)
{
    stream_rows *s = ctx;
    const sp_row *row = s->row;
    if (s->whole) {
        if (s->done)
            return 0;
        s->done = 1;
        size_t n = (size_t)row->count;
        *w = (sp_mpi_window){.n = n, .start = s->buf, .end = s->buf + n,
                             .comm = s->any_comm ? s->buf + 2 * n : NULL};
        return 1;
    }
    if (s->pos >= row->offset + row->count)
        return 0;
    int64_t *buf = room(s, COLUMNS * WINDOW);
    if (!buf)
        return fail(s);
    uint64_t left = row->offset + row->count - s->pos;
    size_t n = left < WINDOW ? (size_t)left : WINDOW;
    int64_t *col[COLUMNS];
    for (int k = 0; k < COLUMNS; k++)
        col[k] = buf + (size_t)k * WINDOW;
    int64_t *const extra[4] = {col[2], col[3], col[4], s->any_comm ? col[5] : NULL};
    if (read_events(s, s->pos, n, col[0], col[1], extra) != 0)
        return -1;
    s->pos += n;
    *w = (sp_mpi_window){.n = n, .start = col[0], .end = col[1], .sent = col[2],
                         .recv = col[3], .peer = col[4], .comm = extra[3]};
    return 1;
}

int sp_report_mpi_build_stream(const sp_report *report, const struct sp_run_source *src,
                               sp_report_mpi *out)
{
    memset(out, 0, sizeof *out);
    int any_peer = 0, any_comm = 0;
    for (size_t i = 0; i < src->num_paths; i++) {
        any_peer |= src->shapes[i].has_extra[SP_EXTRA_MPI_PEER];
        any_comm |= src->shapes[i].has_extra[SP_EXTRA_MPI_COMM];
    }
    const sp_profile *p = report->profile;
    if (!any_peer || !report->num_ranks || !p->num_ranks)
        return 0;
    stream_rows s = {.src = src, .any_comm = any_comm, .file = -1};
    sp_mpi_rows rows = {stream_begin, stream_next, stream_span, &s};
    int rc = sp_report_mpi_build_from(report, &rows, out);
    sp_h5_event_reader_close(s.reader);
    free(s.buf);
    if (rc < 0 && s.failed) {
        sp_report_mpi_free(out);
        return 2;
    }
    return rc;
}
