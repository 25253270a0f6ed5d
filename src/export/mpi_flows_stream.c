/* mpi_flows_stream.c - the message ends of a run source, read in windows
 * (mpi_flows.h, "on the stream"): the chrome and perfetto exports pair
 * them as the in-memory path does, without loading the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_flows.h"
#include "scopeprof/h5.h"

enum { WINDOW = 16384 };

/* The columns a message end needs; sent and received bytes are not. */
static const int flow_columns[5] = {SP_EXTRA_MPI_COMM, SP_EXTRA_MPI_PEER, SP_EXTRA_MPI_TAG,
                                    SP_EXTRA_MPI_SOURCE, SP_EXTRA_MPI_RECV_TAG};

typedef struct reading {
    const sp_run_source *src;
    long file;                  /* of the open reader, -1 none */
    sp_h5_event_reader *reader;
    int64_t *col[6];            /* comm, peer, tag, source, recv tag, start */
    size_t sends_cap, recvs_cap;
} reading;

static int in_ranks(const uint32_t *ranks, long n, uint32_t rank)
{
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = (lo + hi) / 2;
        if (ranks[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ranks[lo] == rank;
}

static int push(sp_mpi_end **v, size_t *n, size_t *cap, sp_mpi_end e)
{
    if (*n == *cap) {
        size_t grown_cap = *cap ? 2 * *cap : 1024;
        sp_mpi_end *grown = realloc(*v, grown_cap * sizeof *grown);
        if (!grown)
            return -1;
        *v = grown;
        *cap = grown_cap;
    }
    (*v)[(*n)++] = e;
    return 0;
}

/* count values of MPI column c from pos; -1 where the file lacks it (the
 * in-memory run's missing value).  0, or 1 when it does not read. */
static int read_extra(reading *r, int c, uint64_t pos, size_t count, int64_t *out)
{
    if (!r->src->shapes[r->file].has_extra[c]) {
        for (size_t i = 0; i < count; i++)
            out[i] = -1;
        return 0;
    }
    return sp_h5_event_reader_read_extra(r->reader, c, pos, count, out) ? 1 : 0;
}

/* The ends among the events of skeleton row `r`.  0, 1 (a read failed), -1. */
static int row_ends(sp_mpi_flows_stream *s, reading *rd, size_t r, char *why, size_t whylen)
{
    const sp_row *row = &s->src->profile->rows[r];
    long file = (long)s->src->row_file[r];
    const sp_h5_event_shape *sh = &s->src->shapes[file];
    if (!sh->has_extra[SP_EXTRA_MPI_COMM] || !row->count)
        return 0; /* no communicator: -1 in memory, no end */
    if (file != rd->file) {
        sp_h5_event_reader_close(rd->reader);
        rd->file = file;
        rd->reader = sp_h5_event_reader_open(s->src->paths[file], sh, (size_t)1 << 20, why,
                                             whylen);
        if (!rd->reader)
            return 1;
    }
    /* Most rows are no MPI calls: their communicator column says so. */
    int any = 0;
    for (uint64_t pos = row->offset; pos < row->offset + row->count && !any; pos += WINDOW) {
        uint64_t left = row->offset + row->count - pos;
        size_t n = left < WINDOW ? (size_t)left : WINDOW;
        if (read_extra(rd, SP_EXTRA_MPI_COMM, pos, n, rd->col[0]))
            goto unreadable;
        for (size_t i = 0; i < n && !any; i++)
            any = rd->col[0][i] >= 0;
    }
    if (!any)
        return 0;
    int64_t prev_start = 0;
    for (uint64_t pos = row->offset; pos < row->offset + row->count; pos += WINDOW) {
        uint64_t left = row->offset + row->count - pos;
        size_t n = left < WINDOW ? (size_t)left : WINDOW;
        for (int k = 0; k < 5; k++)
            if (read_extra(rd, flow_columns[k], pos, n, rd->col[k]))
                goto unreadable;
        int64_t *start = rd->col[5];
        if (sp_h5_event_reader_read(rd->reader, SP_H5_COL_START, pos, n, start))
            goto unreadable;
        for (size_t i = 0; sh->deltas && i < n; i++) {
            /* start_deltas: a running sum within the row (h5_read.c) */
            if (pos + i > row->offset)
                start[i] = (int64_t)((uint64_t)start[i] + (uint64_t)prev_start);
            prev_start = start[i];
        }
        const int64_t *comm = rd->col[0], *peer = rd->col[1], *tag = rd->col[2],
                      *source = rd->col[3], *rtag = rd->col[4];
        for (size_t i = 0; i < n; i++) {
            if (comm[i] < 0)
                continue;
            uint64_t e = s->file_base[file] + pos + i;
            if (peer[i] >= 0 && tag[i] >= 0 &&
                push(&s->sends, &s->num_sends, &rd->sends_cap,
                     (sp_mpi_end){row->rank, peer[i], tag[i], comm[i], start[i], e}) < 0)
                return -1;
            if (source[i] >= 0 && rtag[i] >= 0 &&
                push(&s->recvs, &s->num_recvs, &rd->recvs_cap,
                     (sp_mpi_end){source[i], row->rank, rtag[i], comm[i], start[i], e}) < 0)
                return -1;
        }
    }
    return 0;
unreadable:
    snprintf(why, whylen, "%s: an MPI column does not read", s->src->paths[file]);
    return 1;
}

uint64_t *sp_run_source_event_bases(const sp_run_source *src)
{
    /* sp_load_run appends the files whole, in the order of their rows. */
    uint64_t *base = calloc(src->num_paths + 1, sizeof *base);
    unsigned char *seen = calloc(src->num_paths + 1, 1);
    if (!base || !seen) {
        free(base);
        free(seen);
        return NULL;
    }
    uint64_t next = 0;
    for (size_t r = 0; r < src->profile->num_rows; r++) {
        size_t f = src->row_file[r];
        if (!seen[f]) {
            seen[f] = 1;
            base[f] = next;
            next += src->shapes[f].num_events;
        }
    }
    free(seen);
    return base;
}

static int by_event(const void *a, const void *b)
{
    const sp_mpi_end *x = a, *y = b;
    return (x->event > y->event) - (x->event < y->event);
}

int sp_mpi_flows_stream_open(sp_mpi_flows_stream *s, const sp_run_source *src,
                             const uint32_t *ranks, long num_ranks, char *why, size_t whylen)
{
    memset(s, 0, sizeof *s);
    s->src = src;
    /* As in memory: a column no file has leaves the run without flows. */
    s->on = 1;
    for (int k = 0; k < 5; k++) {
        int any = 0;
        for (size_t f = 0; f < src->num_paths; f++)
            any |= src->shapes[f].has_extra[flow_columns[k]];
        s->on &= any;
    }
    if (!s->on)
        return 0;
    if (!(s->file_base = sp_run_source_event_bases(src)))
        return -1;
    reading rd = {.src = src, .file = -1};
    int64_t *buf = malloc(6 * WINDOW * sizeof *buf);
    int rc = buf ? 0 : -1;
    for (int k = 0; k < 6 && buf; k++)
        rd.col[k] = buf + (size_t)k * WINDOW;
    for (size_t r = 0; rc == 0 && r < src->profile->num_rows; r++)
        if (in_ranks(ranks, num_ranks, src->profile->rows[r].rank))
            rc = row_ends(s, &rd, r, why, whylen);
    sp_h5_event_reader_close(rd.reader);
    free(buf);
    if (rc == 0) {
        sp_sort_in_place(s->sends, s->num_sends, sizeof *s->sends, by_event);
        sp_sort_in_place(s->recvs, s->num_recvs, sizeof *s->recvs, by_event);
        s->send_kept = calloc(s->num_sends + 1, 1);
        s->recv_kept = calloc(s->num_recvs + 1, 1);
        if (!s->send_kept || !s->recv_kept)
            rc = -1;
    }
    return rc;
}

uint64_t sp_mpi_flows_stream_event(const sp_mpi_flows_stream *s, size_t row, uint64_t call_index)
{
    return s->file_base[s->src->row_file[row]] + s->src->profile->rows[row].offset + call_index;
}

static void mark(const sp_mpi_end *v, size_t n, unsigned char *kept, uint64_t event)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid].event < event)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n && v[lo].event == event)
        kept[lo] = 1;
}

void sp_mpi_flows_stream_keep(sp_mpi_flows_stream *s, uint64_t event)
{
    if (!s->on)
        return;
    mark(s->sends, s->num_sends, s->send_kept, event);
    mark(s->recvs, s->num_recvs, s->recv_kept, event);
}

static size_t compact(sp_mpi_end *v, size_t n, const unsigned char *kept)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (kept[i])
            v[m++] = v[i];
    return m;
}

int sp_mpi_flows_stream_pair(sp_mpi_flows_stream *s, sp_mpi_flows *out)
{
    *out = (sp_mpi_flows){0};
    if (!s->on)
        return 0;
    size_t ns = compact(s->sends, s->num_sends, s->send_kept);
    size_t nr = compact(s->recvs, s->num_recvs, s->recv_kept);
    free(s->send_kept);
    free(s->recv_kept);
    s->send_kept = s->recv_kept = NULL;
    int rc = sp_mpi_flows_pair(s->sends, ns, s->recvs, nr, out); /* frees them */
    s->sends = s->recvs = NULL;
    s->num_sends = s->num_recvs = 0;
    if (rc != 0)
        sp_mpi_flows_free(out);
    return rc;
}

void sp_mpi_flows_stream_close(sp_mpi_flows_stream *s)
{
    free(s->file_base);
    free(s->sends);
    free(s->recvs);
    free(s->send_kept);
    free(s->recv_kept);
    memset(s, 0, sizeof *s);
}
