/* mpi_flows.c - see mpi_flows.h. */
#include "mpi_flows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sp_mpi_end_by_key(const void *a, const void *b)
{
    const sp_mpi_end *x = a, *y = b;
    const int64_t kx[6] = {x->src, x->dst, x->tag, x->comm, x->start, (int64_t)x->event};
    const int64_t ky[6] = {y->src, y->dst, y->tag, y->comm, y->start, (int64_t)y->event};
    for (int i = 0; i < 6; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

static int same_key(const sp_mpi_end *x, const sp_mpi_end *y)
{
    return x->src == y->src && x->dst == y->dst && x->tag == y->tag && x->comm == y->comm;
}

static int by_event(const void *a, const void *b)
{
    const sp_mpi_flow_end *x = a, *y = b;
    if (x->event != y->event)
        return x->event < y->event ? -1 : 1;
    return y->send - x->send;
}

/* ---- an in-place sort ----------------------------------------------------
 * glibc's qsort merges through a scratch copy as large as the array, which
 * would be the peak of a streamed export: a quicksort (median of three,
 * the smaller side first) on elements of at most 64 bytes, whose keys are
 * all distinct here (the event breaks every tie). */
#define SORT_MAX_SIZE 64

static void swap_elements(char *a, char *b, size_t size)
{
    char t[SORT_MAX_SIZE];
    memcpy(t, a, size);
    memcpy(a, b, size);
    memcpy(b, t, size);
}

void sp_sort_in_place(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    char *base = v, pivot[SORT_MAX_SIZE];
    if (size > SORT_MAX_SIZE) {
        qsort(v, n, size, cmp);
        return;
    }
    while (n > 16) {
        char *lo = base, *mid = base + (n / 2) * size, *hi = base + (n - 1) * size;
        if (cmp(mid, lo) < 0)
            swap_elements(mid, lo, size);
        if (cmp(hi, mid) < 0) {
            swap_elements(hi, mid, size);
            if (cmp(mid, lo) < 0)
                swap_elements(mid, lo, size);
        }
        memcpy(pivot, mid, size);
        /* Hoare: [0, j] <= pivot <= [j + 1, n), both sides non-empty */
        size_t i = (size_t)-1, j = n;
        for (;;) {
            do
                i++;
            while (cmp(base + i * size, pivot) < 0);
            do
                j--;
            while (cmp(pivot, base + j * size) < 0);
            if (i >= j)
                break;
            swap_elements(base + i * size, base + j * size, size);
        }
        size_t left = j + 1, right = n - left;
        if (left < right) {
            sp_sort_in_place(base, left, size, cmp);
            base += left * size;
            n = right;
        } else {
            sp_sort_in_place(base + left * size, right, size, cmp);
            n = left;
        }
    }
    for (size_t k = 1; k < n; k++)
        for (size_t m = k; m > 0 && cmp(base + m * size, base + (m - 1) * size) < 0; m--)
            swap_elements(base + m * size, base + (m - 1) * size, size);
}

/* The paired ends of v (their start holds the message id, 0 unpaired) as
 * flow ends, written over the records they come from (32 bytes over 56:
 * never over one not yet read).  Their number. */
static size_t to_flow_ends(sp_mpi_end *v, size_t n, int send)
{
    char *base = (char *)v;
    size_t m = 0;
    for (size_t r = 0; r < n; r++) {
        sp_mpi_end e;
        memcpy(&e, base + r * sizeof e, sizeof e);
        if (e.start == 0)
            continue;
        sp_mpi_flow_end f;
        memset(&f, 0, sizeof f); /* (the padding too: the records may go to a file) */
        f.event = e.event;
        f.id = (uint64_t)e.start;
        f.bytes = e.bytes;
        f.send = send;
        memcpy(base + m * sizeof f, &f, sizeof f);
        m++;
    }
    return m;
}

int sp_mpi_flows_pair(sp_mpi_end *sends, size_t ns, sp_mpi_end *recvs, size_t nr,
                      sp_mpi_flows *out)
{
    *out = (sp_mpi_flows){0};
    sp_sort_in_place(sends, ns, sizeof *sends, sp_mpi_end_by_key);
    sp_sort_in_place(recvs, nr, sizeof *recvs, sp_mpi_end_by_key);
    /* Walk the keys of both lists in order; a paired end's start (no
     * longer needed) becomes its message id, 0 for the ends left out. */
    size_t i = 0, j = 0;
    while (i < ns || j < nr) {
        int c = i < ns && j < nr
                    ? sp_mpi_end_by_key(&(sp_mpi_end){sends[i].src, sends[i].dst, sends[i].tag,
                                                      sends[i].comm, 0, 0, 0},
                                        &(sp_mpi_end){recvs[j].src, recvs[j].dst, recvs[j].tag,
                                                      recvs[j].comm, 0, 0, 0})
                    : (i < ns ? -1 : 1);
        size_t i_end = i, j_end = j;
        if (c <= 0)
            while (i_end < ns && same_key(&sends[i_end], &sends[i]))
                i_end++;
        if (c >= 0)
            while (j_end < nr && same_key(&recvs[j_end], &recvs[j]))
                j_end++;
        if (c == 0 && i_end - i == j_end - j) {
            for (size_t k = 0; k < i_end - i; k++) {
                int64_t id = (int64_t)++out->messages;
                sends[i + k].start = id;
                recvs[j + k].start = id;
                recvs[j + k].bytes = sends[i + k].bytes; /* MPI_RECV's length */
            }
        } else {
            out->unpaired += (i_end - i) + (j_end - j);
            for (size_t k = i; k < i_end; k++)
                sends[k].start = 0;
            for (size_t k = j; k < j_end; k++)
                recvs[k].start = 0;
        }
        i = i_end;
        j = j_end;
    }
    /* Both lists shrink to their flow ends, then become one (the receives
     * after the sends) in the sends' memory: never more than the ends. */
    size_t ms = to_flow_ends(sends, ns, 1), mr = to_flow_ends(recvs, nr, 0);
    sp_mpi_flow_end *ends = realloc(sends, (ms + mr) * sizeof *ends + 1);
    if (!ends) {
        free(sends);
        free(recvs);
        *out = (sp_mpi_flows){0};
        return -1;
    }
    if (mr)
        memcpy(ends + ms, recvs, mr * sizeof *ends);
    free(recvs);
    out->ends = ends;
    out->num_ends = ms + mr;
    sp_sort_in_place(out->ends, out->num_ends, sizeof *out->ends, by_event);
    return 0;
}

int sp_mpi_flows_build(const sp_profile *p, const unsigned char *kept, sp_mpi_flows *out)
{
    *out = (sp_mpi_flows){0};
    const int64_t *peer = p->extra[SP_EXTRA_MPI_PEER], *tag = p->extra[SP_EXTRA_MPI_TAG],
                  *comm = p->extra[SP_EXTRA_MPI_COMM], *source = p->extra[SP_EXTRA_MPI_SOURCE],
                  *rtag = p->extra[SP_EXTRA_MPI_RECV_TAG],
                  *sent = p->extra[SP_EXTRA_MPI_SENT_BYTES];
    if (!peer || !tag || !comm || !source || !rtag)
        return 0;
    size_t n = p->num_events ? p->num_events : 1;
    sp_mpi_end *sends = malloc(n * sizeof *sends), *recvs = malloc(n * sizeof *recvs);
    size_t ns = 0, nr = 0;
    int rc = -1;
    if (sends && recvs) {
        for (size_t r = 0; r < p->num_rows; r++) {
            const sp_row *row = &p->rows[r];
            for (uint64_t k = 0; k < row->count; k++) {
                uint64_t e = row->offset + k;
                if ((kept && !kept[e]) || comm[e] < 0)
                    continue;
                if (peer[e] >= 0 && tag[e] >= 0)
                    sends[ns++] = (sp_mpi_end){row->rank, peer[e], tag[e], comm[e],
                                               p->start[e], e, sent ? sent[e] : -1};
                if (source[e] >= 0 && rtag[e] >= 0)
                    recvs[nr++] = (sp_mpi_end){source[e], row->rank, rtag[e], comm[e],
                                               p->start[e], e, -1};
            }
        }
        rc = sp_mpi_flows_pair(sends, ns, recvs, nr, out);
        sends = recvs = NULL; /* freed by the pairing */
    }
    free(sends);
    free(recvs);
    if (rc != 0)
        sp_mpi_flows_free(out);
    return rc;
}

int sp_mpi_flows_build_selected(const sp_profile *p, const sp_selection *sel,
                                const uint32_t *ranks, long num_ranks, sp_mpi_flows *out,
                                char *err, size_t errlen)
{
    *out = (sp_mpi_flows){0};
    unsigned char *kept = calloc(p->num_events ? p->num_events : 1, 1);
    if (!kept) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (long k = 0; k < num_ranks && rc == 0; k++) {
        sp_rank_data data;
        if (sp_rank_data_load(p, ranks[k], sel, &data, err, errlen) < 0) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < data.calls.n; i++)
            kept[data.event[i]] = 1;
        sp_rank_data_free(&data);
    }
    if (rc == 0 && sp_mpi_flows_build(p, kept, out) != 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    free(kept);
    return rc;
}

void sp_mpi_flows_free(sp_mpi_flows *flows)
{
    sp_mpi_flows_file_free(flows->file);
    free(flows->ends);
    *flows = (sp_mpi_flows){0};
}

const sp_mpi_flow_end *sp_mpi_flows_at_call(const sp_mpi_flows *flows, uint32_t rank,
                                            int64_t start, uint64_t e, size_t *count)
{
    if (flows->file)
        return sp_mpi_flows_file_at(flows->file, rank, start, e, count);
    return sp_mpi_flows_at(flows, e, count);
}

const sp_mpi_flow_end *sp_mpi_flows_at(const sp_mpi_flows *flows, uint64_t e, size_t *count)
{
    if (flows->file) { /* (the file is read by call: sp_mpi_flows_at_call) */
        *count = 0;
        return NULL;
    }
    size_t lo = 0, hi = flows->num_ends;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (flows->ends[mid].event < e)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t k = lo;
    while (k < flows->num_ends && flows->ends[k].event == e)
        k++;
    *count = k - lo;
    return flows->ends + lo;
}
