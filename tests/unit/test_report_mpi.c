/* test_report_mpi.c - the MPI numbers of `scopeprof report` on a hand-built
 * profile of 3 ranks: time in MPI, late-arrival waits and who arrived last,
 * bytes, message sizes and the traffic matrix. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scopeprof/h5.h"
#include "scopeprof/report.h"
#include "scopeprof/stream.h"

typedef struct ev {
    uint32_t rank;
    const char *region;
    int64_t start, end, sent, recv, peer, comm;
} ev;

/* One row per (rank, region), events in the order given. */
static sp_profile *build(const ev *evs, size_t n)
{
    sp_profile *p = sp_profile_new();
    p->start = malloc(n * sizeof *p->start);
    p->end = malloc(n * sizeof *p->end);
    for (int c = 0; c < SP_EXTRA_N; c++)
        p->extra[c] = malloc(n * sizeof *p->extra[c]);
    p->rows = calloc(n, sizeof *p->rows);
    char *used = calloc(n, 1);
    for (size_t i = 0; i < n; i++) {
        if (used[i])
            continue;
        sp_row *row = &p->rows[p->num_rows++];
        row->region = (uint32_t)sp_profile_intern_name(p, evs[i].region);
        row->rank = evs[i].rank;
        row->offset = p->num_events;
        row->source_line = row->exclusive_total = -1;
        row->source_file = strdup("");
        row->source_text = strdup("");
        row->tags = strdup("[]");
        row->event_metadata = strdup("[]");
        for (size_t j = i; j < n; j++) {
            if (used[j] || evs[j].rank != evs[i].rank || strcmp(evs[j].region, evs[i].region))
                continue;
            used[j] = 1;
            size_t e = p->num_events++;
            p->start[e] = evs[j].start;
            p->end[e] = evs[j].end;
            p->extra[SP_EXTRA_MPI_SENT_BYTES][e] = evs[j].sent;
            p->extra[SP_EXTRA_MPI_RECV_BYTES][e] = evs[j].recv;
            p->extra[SP_EXTRA_MPI_PEER][e] = evs[j].peer;
            p->extra[SP_EXTRA_MPI_TAG][e] = -1;
            p->extra[SP_EXTRA_MPI_COMM][e] = evs[j].comm;
            row->count++;
        }
        sp_summary_compute(p->start + row->offset, p->end + row->offset, NULL, row->count,
                           &row->stats);
    }
    free(used);
    p->num_ranks = 3;
    return p;
}

static const ev events[] = {
    {0, "main", 0, 1000, -1, -1, -1, -1},
    {1, "main", 0, 1000, -1, -1, -1, -1},
    {2, "main", 0, 900, -1, -1, -1, -1},
    /* Two MPI_Allreduce on MPI_COMM_WORLD; rank 2 is last both times. */
    {0, "MPI_Allreduce", 100, 200, 8, 8, -1, 0},
    {0, "MPI_Allreduce", 500, 520, 8, 8, -1, 0},
    {1, "MPI_Allreduce", 150, 200, 8, 8, -1, 0},
    {1, "MPI_Allreduce", 480, 520, 8, 8, -1, 0},
    {2, "MPI_Allreduce", 190, 200, 8, 8, -1, 0},
    {2, "MPI_Allreduce", 510, 520, 8, 8, -1, 0},
    /* One MPI_Barrier on another communicator, of ranks 0 and 1 only,
     * after one on MPI_COMM_WORLD: the k-th call is counted per communicator. */
    {0, "MPI_Barrier", 600, 700, -1, -1, -1, 0},
    {0, "MPI_Barrier", 700, 705, -1, -1, -1, 42},
    {1, "MPI_Barrier", 690, 700, -1, -1, -1, 0},
    {1, "MPI_Barrier", 700, 800, -1, -1, -1, 42},
    {2, "MPI_Barrier", 650, 700, -1, -1, -1, 0},
    /* Point to point: 0 -> 1 (1000 B), 2 -> 0 (100 B), 1 -> 2 (1 MiB). */
    {0, "MPI_Send", 300, 310, 1000, -1, 1, 0},
    {1, "MPI_Recv", 300, 320, -1, 1000, 0, 0},
    {2, "MPI_Isend", 300, 301, 100, -1, 0, 0},
    {1, "MPI_Send", 330, 340, 1 << 20, -1, 2, 0},
};

Test(report_mpi, waits_bytes_matrix)
{
    sp_profile *p = build(events, sizeof events / sizeof *events);
    sp_report r;
    char err[256];
    cr_assert_eq(sp_report_build(p, NULL, &r, err, sizeof err), 0, "%s", err);
    sp_report_mpi m;
    cr_assert_eq(sp_report_mpi_build(&r, &m), 1);

    cr_assert_eq(m.num_ranks, 3);
    /* time in MPI: rank 0 = 100 + 20 + 100 + 5 + 10 */
    cr_assert_eq(m.ranks[0].mpi_ns, 235);
    cr_assert_eq(m.ranks[0].wall_ns, 1000);
    cr_assert_eq(m.ranks[2].wall_ns, 900);
    /* waits: Allreduce #1 shortest 10 (rank 2): 90, 40, 0; #2 shortest 10:
     * 10, 30, 0.  World barrier shortest 10 (rank 1): 90, 0, 40; the
     * communicator-42 barrier shortest 5 (rank 0): 0, 95. */
    cr_assert_eq(m.ranks[0].wait_ns, 90 + 10 + 90 + 0);
    cr_assert_eq(m.ranks[1].wait_ns, 40 + 30 + 0 + 95);
    cr_assert_eq(m.ranks[2].wait_ns, 0 + 0 + 40);
    cr_assert_eq(m.ranks[0].sent_bytes, 16 + 1000);
    cr_assert_eq(m.ranks[1].recv_bytes, 16 + 1000);

    const sp_report_mpi_call *ar = NULL, *bar = NULL, *send = NULL;
    for (size_t i = 0; i < m.num_calls; i++) {
        const char *name = p->names[m.calls[i].region];
        if (!strcmp(name, "MPI_Allreduce"))
            ar = &m.calls[i];
        else if (!strcmp(name, "MPI_Barrier"))
            bar = &m.calls[i];
        else if (!strcmp(name, "MPI_Send"))
            send = &m.calls[i];
    }
    cr_assert(ar && bar && send);
    cr_assert_eq(ar->calls, 6);
    cr_assert_eq(ar->total_ns, 100 + 20 + 50 + 40 + 10 + 10);
    cr_assert_eq(ar->wait_ns, 170);
    cr_assert(ar->collective);
    cr_assert_eq(ar->most_waiting_rank, 0);
    cr_assert_eq(ar->last_arrival_rank, 2);
    cr_assert_eq(bar->wait_ns, 90 + 40 + 95);
    cr_assert_eq(bar->most_waiting_rank, 1);
    cr_assert(!send->collective);
    cr_assert_eq(send->sent_bytes, 1000 + (1 << 20));
    /* calls by time: Allreduce 230, Barrier 265 -> Barrier first */
    cr_assert_eq(m.calls[0].region, bar->region);

    /* 100 and 1000 B are up to 1 KiB (bin 2); 1 MiB up to 4 MiB (bin 5) */
    cr_assert_eq(sp_report_mpi_bin_limit(2), 1024);
    cr_assert_eq(m.p2p_messages[2], 2);
    cr_assert_eq(m.p2p_bytes[2], 1100);
    cr_assert_eq(m.p2p_messages[5], 1);
    /* the Allreduce calls move 16 B (bin 1), barriers 0 B (bin 0) */
    cr_assert_eq(m.collective_calls[1], 6);
    cr_assert_eq(m.collective_calls[0], 5);

    cr_assert_eq(m.block_size, 1);
    cr_assert_eq(m.matrix_blocks, 3);
    cr_assert_eq(m.matrix[0 * 3 + 1], 1000);
    cr_assert_eq(m.matrix[2 * 3 + 0], 100);
    cr_assert_eq(m.matrix[1 * 3 + 2], 1 << 20);
    cr_assert_eq(m.matrix[1 * 3 + 0], 0);

    sp_report_mpi_free(&m);
    sp_report_free(&r);
    sp_profile_free(p);
}

/* Many ranks: the matrix is compressed to at most 16 x 16 blocks. */
Test(report_mpi, matrix_blocks)
{
    enum { RANKS = 100 };
    ev evs[RANKS];
    for (int i = 0; i < RANKS; i++)
        evs[i] = (ev){(uint32_t)i, "MPI_Send", 0, 10, 8, -1, (i + 1) % RANKS, 0};
    sp_profile *p = build(evs, RANKS);
    p->num_ranks = RANKS;
    sp_report r;
    char err[256];
    cr_assert_eq(sp_report_build(p, NULL, &r, err, sizeof err), 0, "%s", err);
    sp_report_mpi m;
    cr_assert_eq(sp_report_mpi_build(&r, &m), 1);
    cr_assert_eq(m.block_size, 8);
    cr_assert_eq(m.matrix_blocks, 13);
    /* block 0 (ranks 0-7): 7 messages inside, rank 7 -> 8 into block 1 */
    cr_assert_eq(m.matrix[0], 7 * 8);
    cr_assert_eq(m.matrix[1], 8);
    /* rank 99 -> 0 */
    cr_assert_eq(m.matrix[12 * 13 + 0], 8);
    sp_report_mpi_free(&m);
    sp_report_free(&r);
    sp_profile_free(p);
}

/* A profile without MPI columns has no MPI section. */
Test(report_mpi, absent)
{
    ev one[] = {{0, "main", 0, 10, -1, -1, -1, -1}};
    sp_profile *p = build(one, 1);
    for (int c = 0; c < SP_EXTRA_N; c++) {
        free(p->extra[c]);
        p->extra[c] = NULL;
    }
    sp_report r;
    char err[256];
    cr_assert_eq(sp_report_build(p, NULL, &r, err, sizeof err), 0, "%s", err);
    sp_report_mpi m;
    cr_assert_eq(sp_report_mpi_build(&r, &m), 0);
    cr_assert_eq(m.num_calls, 0);
    sp_report_free(&r);
    sp_profile_free(p);
}

/* ---- the streamed tables (report_mpi_stream.c) ----------------------------- */

static void expect_same_tables(const sp_report_mpi *s, const sp_report_mpi *m)
{
    cr_assert_eq(s->num_ranks, m->num_ranks);
    for (size_t i = 0; i < m->num_ranks; i++) {
        cr_expect_eq(s->ranks[i].rank, m->ranks[i].rank, "rank row %zu", i);
        cr_expect_eq(s->ranks[i].calls, m->ranks[i].calls, "rank row %zu", i);
        cr_expect_eq(s->ranks[i].mpi_ns, m->ranks[i].mpi_ns, "rank row %zu", i);
        cr_expect_eq(s->ranks[i].wall_ns, m->ranks[i].wall_ns, "rank row %zu", i);
        cr_expect_eq(s->ranks[i].wait_ns, m->ranks[i].wait_ns, "rank row %zu", i);
        cr_expect_eq(s->ranks[i].sent_bytes, m->ranks[i].sent_bytes, "rank row %zu", i);
        cr_expect_eq(s->ranks[i].recv_bytes, m->ranks[i].recv_bytes, "rank row %zu", i);
    }
    cr_assert_eq(s->num_calls, m->num_calls);
    for (size_t i = 0; i < m->num_calls; i++)
        cr_expect_eq(memcmp(&s->calls[i], &m->calls[i], sizeof m->calls[i]), 0, "call %zu", i);
    cr_expect_eq(memcmp(s->p2p_messages, m->p2p_messages, sizeof m->p2p_messages), 0);
    cr_expect_eq(memcmp(s->p2p_bytes, m->p2p_bytes, sizeof m->p2p_bytes), 0);
    cr_expect_eq(memcmp(s->collective_calls, m->collective_calls, sizeof m->collective_calls),
                 0);
    cr_assert_eq(s->matrix_blocks, m->matrix_blocks);
    cr_expect_eq(memcmp(s->matrix, m->matrix,
                        m->matrix_blocks * m->matrix_blocks * sizeof *m->matrix),
                 0);
}

/* Rows longer than a window (16,384 events), and collective rows out of
 * start order with equal starts on two communicators (sorted whole, as the
 * in-memory path's stable sort orders them): the same numbers read from
 * the file in windows as from the run in memory. */
Test(report_mpi, streamed_tables_equal_in_memory)
{
    enum { BIG = 40000, COLL = 3000 };
    size_t fixed = sizeof events / sizeof *events, n = fixed + 3 * BIG + 3 * COLL;
    ev *evs = malloc(n * sizeof *evs);
    memcpy(evs, events, sizeof events);
    size_t k = fixed;
    for (uint32_t r = 0; r < 3; r++) {
        for (int i = 0; i < BIG; i++) /* in time order: read in windows */
            evs[k++] = (ev){r, "MPI_Isend", 2000 + i * 10, 2003 + i * 10 + (i % 7), 64 << (i % 12),
                            -1, (int64_t)((r + 1 + (unsigned)i) % 3), 0};
        for (int i = 0; i < COLL; i++) { /* backwards; rank 0: pairs of equal starts */
            int64_t t = 900000 - (r == 0 ? (i / 2) * 50 : i * 25);
            evs[k++] = (ev){r, "MPI_Bcast", t, t + 5 + (i * 7 + (int)r * 3) % 40, 16, 16, 0,
                            (i / 2) % 2 ? 5 : 0};
        }
    }
    sp_profile *p = build(evs, n);
    free(evs);
    for (size_t i = 0; i < p->num_rows; i++) /* the ranks' main covers everything */
        if (!strcmp(p->names[p->rows[i].region], "main"))
            p->end[p->rows[i].offset] = 1000000;
    for (size_t i = 0; i < p->num_rows; i++)
        sp_summary_compute(p->start + p->rows[i].offset, p->end + p->rows[i].offset, NULL,
                           p->rows[i].count, &p->rows[i].stats);
    char dir[] = "/tmp/report_mpi_XXXXXX", path[64], err[512];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/run.h5", dir);
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    sp_profile_free(p);

    const char *args[] = {path};
    sp_profile *full = sp_load_run(args, 1, err, sizeof err);
    cr_assert_not_null(full, "%s", err);
    sp_report mr;
    cr_assert_eq(sp_report_build(full, NULL, &mr, err, sizeof err), 0, "%s", err);
    sp_report_mpi mm;
    cr_assert_eq(sp_report_mpi_build(&mr, &mm), 1);

    sp_run_source src;
    cr_assert_eq(sp_run_source_open(&src, args, 1, err, sizeof err), 0, "%s", err);
    sp_report sr;
    sp_report_options opt = {.jobs = 1};
    cr_assert_eq(sp_report_build_stream(&src, &opt, &sr, err, sizeof err), 0, "%s", err);
    sp_report_mpi sm;
    cr_assert_eq(sp_report_mpi_build_stream(&sr, &src, &sm), 1);
    expect_same_tables(&sm, &mm);
    cr_expect_gt(mm.ranks[0].wait_ns, 0);

    sp_report_mpi_free(&sm);
    sp_report_mpi_free(&mm);
    sp_report_free(&sr);
    sp_report_free(&mr);
    sp_run_source_close(&src);
    sp_profile_free(full);
    remove(path);
    rmdir(dir);
}
