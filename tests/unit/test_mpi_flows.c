/* test_mpi_flows.c - pairing MPI send and receive ends for the Chrome
 * export's message lines (src/export/mpi_flows.h): k-th to k-th per
 * (sender, receiver, tag, communicator) in start order, keys whose counts
 * differ left out, a call that is both ends (MPI_Sendrecv). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "export/mpi_flows.h"

typedef struct ev {
    uint32_t rank;
    int64_t start, peer, tag, comm, source, rtag;
} ev;

/* One row per event (region 0), in the order given. */
static sp_profile *build(const ev *evs, size_t n)
{
    sp_profile *p = sp_profile_new();
    p->start = malloc(n * sizeof *p->start);
    p->end = malloc(n * sizeof *p->end);
    for (int c = 0; c < SP_EXTRA_N; c++)
        p->extra[c] = malloc(n * sizeof *p->extra[c]);
    p->rows = calloc(n, sizeof *p->rows);
    sp_profile_intern_name(p, "MPI_x");
    for (size_t i = 0; i < n; i++) {
        p->rows[i] = (sp_row){.region = 0, .rank = evs[i].rank, .offset = i, .count = 1};
        p->rows[i].source_file = strdup("");
        p->rows[i].source_text = strdup("");
        p->rows[i].tags = strdup("[]");
        p->rows[i].event_metadata = strdup("[]");
        p->start[i] = evs[i].start;
        p->end[i] = evs[i].start + 10;
        for (int c = 0; c < SP_EXTRA_N; c++)
            p->extra[c][i] = -1;
        p->extra[SP_EXTRA_MPI_PEER][i] = evs[i].peer;
        p->extra[SP_EXTRA_MPI_TAG][i] = evs[i].tag;
        p->extra[SP_EXTRA_MPI_COMM][i] = evs[i].comm;
        p->extra[SP_EXTRA_MPI_SOURCE][i] = evs[i].source;
        p->extra[SP_EXTRA_MPI_RECV_TAG][i] = evs[i].rtag;
    }
    p->num_rows = p->num_events = n;
    p->num_ranks = 3;
    return p;
}

/* The message id at event e for the given end, 0 if none. */
static uint64_t id_at(const sp_mpi_flows *f, uint64_t e, int send)
{
    size_t n = 0;
    const sp_mpi_flow_end *ends = sp_mpi_flows_at(f, e, &n);
    for (size_t k = 0; k < n; k++)
        if (ends[k].send == send)
            return ends[k].id;
    return 0;
}

Test(mpi_flows, kth_send_meets_kth_receive)
{
    const ev evs[] = {
        /* 0 -> 1 tag 5 twice; the receives listed in reverse start order */
        {0, 100, 1, 5, 0, -1, -1},   /* e0: first send */
        {0, 200, 1, 5, 0, -1, -1},   /* e1: second send */
        {1, 400, 0, -1, 0, 0, 5},    /* e2: second receive */
        {1, 150, 0, -1, 0, 0, 5},    /* e3: first receive */
        /* 0 -> 1 tag 6 on another communicator: its own key */
        {0, 300, 1, 6, 7, -1, -1},   /* e4 */
        {1, 350, 0, -1, 7, 0, 6},    /* e5 */
        /* 2 -> 0 twice, one receive end missing: no line for that key */
        {2, 100, 0, 9, 0, -1, -1},   /* e6 */
        {2, 110, 0, 9, 0, -1, -1},   /* e7 */
        {0, 500, 2, -1, 0, 2, 9},    /* e8 */
        /* a Sendrecv on rank 1: sends to 2 (tag 4), receives from 2 (tag 4) */
        {1, 600, 2, 4, 0, 2, 4},     /* e9 */
        {2, 600, 1, 4, 0, 1, 4},     /* e10: the partner's Sendrecv */
    };
    sp_profile *p = build(evs, sizeof evs / sizeof *evs);
    sp_mpi_flows f;
    cr_assert_eq(sp_mpi_flows_build(p, NULL, &f), 0);
    cr_assert_eq(f.messages, 5);
    cr_assert_eq(f.unpaired, 3);
    cr_assert_neq(id_at(&f, 0, 1), 0);
    cr_assert_eq(id_at(&f, 0, 1), id_at(&f, 3, 0), "first send, first receive");
    cr_assert_eq(id_at(&f, 1, 1), id_at(&f, 2, 0), "second send, second receive");
    cr_assert_eq(id_at(&f, 4, 1), id_at(&f, 5, 0));
    cr_assert_eq(id_at(&f, 6, 1), 0);
    cr_assert_eq(id_at(&f, 8, 0), 0);
    cr_assert_eq(id_at(&f, 9, 1), id_at(&f, 10, 0), "1 -> 2");
    cr_assert_eq(id_at(&f, 10, 1), id_at(&f, 9, 0), "2 -> 1");
    cr_assert_neq(id_at(&f, 9, 1), id_at(&f, 9, 0));
    sp_mpi_flows_free(&f);

    /* Only kept events take part: without e3, tag 5 has 2 sends, 1 receive. */
    unsigned char kept[11];
    memset(kept, 1, sizeof kept);
    kept[3] = 0;
    cr_assert_eq(sp_mpi_flows_build(p, kept, &f), 0);
    cr_assert_eq(f.messages, 3);
    cr_assert_eq(id_at(&f, 0, 1), 0);
    sp_mpi_flows_free(&f);
    sp_profile_free(p);
}

Test(mpi_flows, no_columns_no_flows)
{
    sp_profile *p = sp_profile_new();
    sp_mpi_flows f;
    cr_assert_eq(sp_mpi_flows_build(p, NULL, &f), 0);
    cr_assert_eq(f.num_ends, 0);
    sp_mpi_flows_free(&f);
    sp_profile_free(p);
}

static int by_u64_then_tag(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* The pairing's sort (no scratch copy) orders like qsort: random, sorted,
 * reversed and all-equal-first-key inputs, sizes around its cut-over to
 * insertion sort, elements of 16 and 48 bytes. */
Test(mpi_flows, in_place_sort_orders_like_qsort)
{
    static const size_t sizes[] = {0, 1, 2, 15, 16, 17, 33, 1000, 100003};
    unsigned seed = 12345;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (int shape = 0; shape < 4; shape++)
            for (size_t words = 2; words <= 6; words += 4) {
                size_t n = sizes[s];
                uint64_t *a = calloc(n * words + 1, sizeof *a);
                uint64_t *b = calloc(n * words + 1, sizeof *b);
                cr_assert(a && b);
                for (size_t i = 0; i < n; i++) {
                    seed = seed * 1103515245u + 12345u;
                    uint64_t key = shape == 0   ? seed % 997
                                   : shape == 1 ? i
                                   : shape == 2 ? n - i
                                                : 7;
                    a[i * words] = key;
                    a[i * words + 1] = i; /* distinct: the tie break */
                    for (size_t w = 2; w < words; w++)
                        a[i * words + w] = key * 31 + w;
                }
                memcpy(b, a, n * words * sizeof *a);
                sp_sort_in_place(a, n, words * sizeof *a, by_u64_then_tag);
                qsort(b, n, words * sizeof *b, by_u64_then_tag);
                cr_expect_eq(memcmp(a, b, n * words * sizeof *a), 0, "n %zu shape %d words %zu",
                             n, shape, words);
                free(a);
                free(b);
            }
}
