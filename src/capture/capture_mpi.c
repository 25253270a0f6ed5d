/* capture_mpi.c - see capture_internal.h: the MPI side data of a capture
 * matched to its events.  A record names its event by (thread, region,
 * ordinal); the events of one thread arrive in recording order, so one
 * cursor per (thread, region) group walks that group's records as its
 * events go by, forwards (in-memory path) or backwards from the group's
 * event count (streaming writer). */
#include <stdlib.h>
#include <string.h>

#include "capture_internal.h"

struct mpi_group {
    int64_t thread;           /* -1: empty slot */
    uint32_t region;
    uint64_t seen;            /* forward: events of this group so far */
    uint64_t total, left;     /* backward: events counted, events still to come */
    size_t first, end;        /* the group's records in the sorted array */
};

struct sp_mpi_match {
    sp_capture_mpi *records;  /* sorted by (thread, region, ordinal) */
    size_t num_records;
    unsigned char *has_mpi;   /* per region: an MPI function's region */
    size_t num_regions;
    struct mpi_group *groups;
    size_t cap, used;         /* cap: power of two */
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

static size_t slot_of(const struct mpi_group *groups, size_t cap, int64_t thread, uint32_t region)
{
    uint64_t h = ((uint64_t)thread * 0x9e3779b97f4a7c15ull) ^ (region * 0xff51afd7ed558ccdull);
    size_t i = (size_t)(h >> 17) & (cap - 1);
    while (groups[i].thread >= 0 && (groups[i].thread != thread || groups[i].region != region))
        i = (i + 1) & (cap - 1);
    return i;
}

/* The group of (thread, region), created if missing; NULL: out of memory. */
static struct mpi_group *group(sp_mpi_match *m, int64_t thread, uint32_t region)
{
    size_t i = slot_of(m->groups, m->cap, thread, region);
    if (m->groups[i].thread >= 0)
        return &m->groups[i];
    if (2 * (m->used + 1) > m->cap) {
        size_t cap = m->cap * 2;
        struct mpi_group *grown = malloc(cap * sizeof *grown);
        if (!grown)
            return NULL;
        for (size_t k = 0; k < cap; k++)
            grown[k].thread = -1;
        for (size_t k = 0; k < m->cap; k++)
            if (m->groups[k].thread >= 0)
                grown[slot_of(grown, cap, m->groups[k].thread, m->groups[k].region)] =
                    m->groups[k];
        free(m->groups);
        m->groups = grown;
        m->cap = cap;
        i = slot_of(m->groups, m->cap, thread, region);
    }
    m->used++;
    m->groups[i] = (struct mpi_group){thread, region, 0, 0, 0, 0, 0};
    return &m->groups[i];
}

sp_mpi_match *sp_mpi_match_new(const sp_capture *c)
{
    sp_mpi_match *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->num_regions = c->num_regions;
    m->has_mpi = calloc(c->num_regions ? c->num_regions : 1, 1);
    m->cap = 64;
    m->groups = malloc(m->cap * sizeof *m->groups);
    if (!m->has_mpi || !m->groups) {
        sp_mpi_match_free(m);
        return NULL;
    }
    for (size_t i = 0; i < m->cap; i++)
        m->groups[i].thread = -1;
    for (size_t r = 0; r < c->num_regions; r++)
        m->has_mpi[r] = c->regions[r].name && !strncmp(c->regions[r].name, "MPI_", 4);
    return m;
}

int sp_mpi_match_count(sp_mpi_match *m, int64_t thread, uint32_t region)
{
    if (region >= m->num_regions || !m->has_mpi[region] || thread < 0)
        return 0;
    struct mpi_group *g = group(m, thread, region);
    if (!g)
        return -1;
    g->total++;
    return 0;
}

int sp_mpi_match_add_records(sp_mpi_match *m, const sp_capture_mpi *a, size_t na,
                             const sp_capture_mpi *b, size_t nb)
{
    size_t n = na + nb;
    m->records = malloc((n ? n : 1) * sizeof *m->records);
    if (!m->records)
        return -1;
    if (na)
        memcpy(m->records, a, na * sizeof *a);
    if (nb)
        memcpy(m->records + na, b, nb * sizeof *b);
    m->num_records = n;
    qsort(m->records, n, sizeof *m->records, record_order);
    for (size_t i = 0; i < n; i++) {
        const sp_capture_mpi *r = &m->records[i];
        if (r->region >= m->num_regions || r->thread < 0)
            continue;
        m->has_mpi[r->region] = 1;
        struct mpi_group *g = group(m, r->thread, r->region);
        if (!g)
            return -1;
        if (g->first == g->end)
            g->first = i;
        g->end = i + 1;
    }
    return 0;
}

size_t sp_mpi_match_records(const sp_mpi_match *m) { return m ? m->num_records : 0; }

const sp_capture_mpi *sp_mpi_match_event(sp_mpi_match *m, int64_t thread, uint32_t region)
{
    if (!m || !m->num_records || region >= m->num_regions || !m->has_mpi[region] || thread < 0)
        return NULL;
    size_t i = slot_of(m->groups, m->cap, thread, region);
    struct mpi_group *g = &m->groups[i];
    if (g->thread < 0)
        return NULL;
    uint64_t ordinal = ++g->seen;
    while (g->first < g->end && m->records[g->first].ordinal < ordinal)
        g->first++;
    if (g->first < g->end && m->records[g->first].ordinal == ordinal)
        return &m->records[g->first++];
    return NULL;
}

void sp_mpi_match_rewind(sp_mpi_match *m)
{
    for (size_t i = 0; m && i < m->cap; i++)
        m->groups[i].left = m->groups[i].total;
}

const sp_capture_mpi *sp_mpi_match_event_back(sp_mpi_match *m, int64_t thread, uint32_t region)
{
    if (!m || !m->num_records || region >= m->num_regions || !m->has_mpi[region] || thread < 0)
        return NULL;
    struct mpi_group *g = &m->groups[slot_of(m->groups, m->cap, thread, region)];
    if (g->thread < 0 || g->left == 0)
        return NULL;
    uint64_t ordinal = g->left--;
    size_t lo = g->first, hi = g->end;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->records[mid].ordinal < ordinal)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->end && m->records[lo].ordinal == ordinal ? &m->records[lo] : NULL;
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

void sp_mpi_values(const sp_capture_mpi *r, int64_t out[SP_EXTRA_N])
{
    for (int c = 0; c < SP_EXTRA_N; c++)
        out[c] = -1;
    if (!r)
        return;
    out[SP_EXTRA_MPI_SENT_BYTES] = r->sent_bytes;
    out[SP_EXTRA_MPI_RECV_BYTES] = r->recv_bytes;
    out[SP_EXTRA_MPI_PEER] = r->peer;
    out[SP_EXTRA_MPI_TAG] = r->tag;
    out[SP_EXTRA_MPI_COMM] = r->comm;
    out[SP_EXTRA_MPI_SOURCE] = r->source;
    out[SP_EXTRA_MPI_RECV_TAG] = r->recv_tag;
}

void sp_mpi_store(sp_profile *p, size_t at, const sp_capture_mpi *r)
{
    int64_t values[SP_EXTRA_N];
    sp_mpi_values(r, values);
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
