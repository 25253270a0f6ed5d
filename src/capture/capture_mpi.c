/* capture_mpi.c - see capture_internal.h: the MPI side data of a capture
 * matched to its events.  A record names its event by (thread, region,
 * ordinal); the events of one thread arrive in recording order, so one
 * cursor per (thread, region) walks that group's records as its events go
 * by, in O(1) per event. */
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"

struct mpi_group {
    int64_t thread;           /* -1: empty slot */
    uint32_t region;
    uint64_t seen;            /* events of this group so far */
    size_t next, end;         /* cursor and end in the sorted records */
};

struct sp_mpi_match {
    sp_capture_mpi *records;  /* sorted by (thread, region, ordinal) */
    size_t num_records;
    unsigned char *has_mpi;   /* per region */
    size_t num_regions;
    struct mpi_group *groups;
    size_t cap;               /* power of two */
};

static int record_order(const void *a, const void *b)
{
    const sp_capture_mpi *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->region != y->region)
        return x->region < y->region ? -1 : 1;
    return x->ordinal < y->ordinal ? -1 : x->ordinal > y->ordinal;
}

static size_t slot_of(const struct sp_mpi_match *m, int64_t thread, uint32_t region)
{
    uint64_t h = ((uint64_t)thread * 0x9e3779b97f4a7c15ull) ^ (region * 0xff51afd7ed558ccdull);
    size_t i = (size_t)(h >> 17) & (m->cap - 1);
    while (m->groups[i].thread >= 0 &&
           (m->groups[i].thread != thread || m->groups[i].region != region))
        i = (i + 1) & (m->cap - 1);
    return i;
}

sp_mpi_match *sp_mpi_match_new(const sp_capture *c)
{
    sp_mpi_match *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->num_regions = c->num_regions;
    m->num_records = c->num_mpi;
    m->records = malloc((c->num_mpi ? c->num_mpi : 1) * sizeof *m->records);
    m->has_mpi = calloc(c->num_regions ? c->num_regions : 1, 1);
    size_t groups = 0;
    if (m->records && c->num_mpi) {
        memcpy(m->records, c->mpi, c->num_mpi * sizeof *m->records);
        qsort(m->records, c->num_mpi, sizeof *m->records, record_order);
    }
    for (size_t i = 0; m->records && i < c->num_mpi; i++)
        groups += i == 0 || m->records[i].thread != m->records[i - 1].thread ||
                  m->records[i].region != m->records[i - 1].region;
    for (m->cap = 16; m->cap < 2 * groups; m->cap *= 2) {
    }
    m->groups = malloc(m->cap * sizeof *m->groups);
    if (!m->records || !m->has_mpi || !m->groups) {
        sp_mpi_match_free(m);
        return NULL;
    }
    for (size_t i = 0; i < m->cap; i++)
        m->groups[i].thread = -1;
    for (size_t i = 0; i < c->num_mpi; i++) {
        const sp_capture_mpi *r = &m->records[i];
        if (r->region >= c->num_regions)
            continue;
        m->has_mpi[r->region] = 1;
        struct mpi_group *g = &m->groups[slot_of(m, r->thread, r->region)];
        if (g->thread < 0)
            *g = (struct mpi_group){r->thread, r->region, 0, i, i};
        g->end = i + 1;
    }
    return m;
}

const sp_capture_mpi *sp_mpi_match_event(sp_mpi_match *m, int64_t thread, uint32_t region)
{
    if (!m || region >= m->num_regions || !m->has_mpi[region] || thread < 0)
        return NULL;
    struct mpi_group *g = &m->groups[slot_of(m, thread, region)];
    if (g->thread < 0)
        return NULL;
    uint64_t ordinal = ++g->seen;
    while (g->next < g->end && m->records[g->next].ordinal < ordinal)
        g->next++;
    if (g->next < g->end && m->records[g->next].ordinal == ordinal)
        return &m->records[g->next++];
    return NULL;
}

void sp_mpi_match_free(sp_mpi_match *m)
{
    if (!m)
        return;
    free(m->records);
    free(m->has_mpi);
    free(m->groups);
    free(m);
}

void sp_mpi_store(sp_profile *p, size_t at, const sp_capture_mpi *r)
{
    const int64_t values[SP_EXTRA_N] = {
        [SP_EXTRA_MPI_SENT_BYTES] = r->sent_bytes, [SP_EXTRA_MPI_RECV_BYTES] = r->recv_bytes,
        [SP_EXTRA_MPI_PEER] = r->peer, [SP_EXTRA_MPI_TAG] = r->tag,
        [SP_EXTRA_MPI_COMM] = r->comm, [SP_EXTRA_MPI_SOURCE] = r->source,
        [SP_EXTRA_MPI_RECV_TAG] = r->recv_tag,
    };
    for (int c = SP_EXTRA_MPI_SENT_BYTES; c <= SP_EXTRA_MPI_RECV_TAG; c++)
        if (p->extra[c])
            p->extra[c][at] = values[c];
}

int sp_mpi_alloc_columns(sp_profile *p, size_t cells)
{
    for (int c = SP_EXTRA_MPI_SENT_BYTES; c <= SP_EXTRA_MPI_RECV_TAG; c++) {
        if (!(p->extra[c] = malloc((cells ? cells : 1) * sizeof *p->extra[c])))
            return -1;
        for (size_t i = 0; i < cells; i++)
            p->extra[c][i] = -1;
    }
    return 0;
}
