/* mpi_flows.c - see mpi_flows.h. */
#include "mpi_flows.h"

#include <stdio.h>
#include <stdlib.h>

static int by_key(const void *a, const void *b)
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

int sp_mpi_flows_pair(sp_mpi_end *sends, size_t ns, sp_mpi_end *recvs, size_t nr,
                      sp_mpi_flows *out)
{
    *out = (sp_mpi_flows){0};
    qsort(sends, ns, sizeof *sends, by_key);
    qsort(recvs, nr, sizeof *recvs, by_key);
    out->ends = malloc(2 * (ns < nr ? ns : nr) * sizeof *out->ends + 1);
    if (!out->ends) {
        free(sends);
        free(recvs);
        return -1;
    }
    /* Walk the keys of both lists in order. */
    size_t i = 0, j = 0;
    while (i < ns || j < nr) {
        int c = i < ns && j < nr ? by_key(&(sp_mpi_end){sends[i].src, sends[i].dst, sends[i].tag,
                                                        sends[i].comm, 0, 0},
                                          &(sp_mpi_end){recvs[j].src, recvs[j].dst, recvs[j].tag,
                                                        recvs[j].comm, 0, 0})
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
                uint64_t id = ++out->messages;
                out->ends[out->num_ends++] = (sp_mpi_flow_end){sends[i + k].event, id, 1};
                out->ends[out->num_ends++] = (sp_mpi_flow_end){recvs[j + k].event, id, 0};
            }
        } else {
            out->unpaired += (i_end - i) + (j_end - j);
        }
        i = i_end;
        j = j_end;
    }
    /* the ends are not needed for the last sort (its scratch is as large) */
    free(sends);
    free(recvs);
    qsort(out->ends, out->num_ends, sizeof *out->ends, by_event);
    return 0;
}

int sp_mpi_flows_build(const sp_profile *p, const unsigned char *kept, sp_mpi_flows *out)
{
    *out = (sp_mpi_flows){0};
    const int64_t *peer = p->extra[SP_EXTRA_MPI_PEER], *tag = p->extra[SP_EXTRA_MPI_TAG],
                  *comm = p->extra[SP_EXTRA_MPI_COMM], *source = p->extra[SP_EXTRA_MPI_SOURCE],
                  *rtag = p->extra[SP_EXTRA_MPI_RECV_TAG];
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
                    sends[ns++] = (sp_mpi_end){row->rank, peer[e], tag[e], comm[e], p->start[e], e};
                if (source[e] >= 0 && rtag[e] >= 0)
                    recvs[nr++] = (sp_mpi_end){source[e], row->rank, rtag[e], comm[e], p->start[e], e};
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
    free(flows->ends);
    *flows = (sp_mpi_flows){0};
}

const sp_mpi_flow_end *sp_mpi_flows_at(const sp_mpi_flows *flows, uint64_t e, size_t *count)
{
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
