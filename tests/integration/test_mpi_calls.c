/* test_mpi_calls.c - the MPI calls recorded as regions (issue 14), under
 * Open MPI and MPICH with 4 ranks: exact counts, bytes, peers (world ranks,
 * also from a sub-communicator and from the status of MPI_ANY_SOURCE),
 * MPI_IN_PLACE, ignored statuses, a derived datatype, MPI before
 * MPI_Init and after MPI_Finalize, polling aggregated, and
 * SCOPE_PROFILER_MPI_CALLS.  The program is tests/programs/mpi/mpi_calls.c,
 * whose comments give the expected values. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "mpi_launch.h"
#include "scopeprof/h5.h"

#define N MPI_TEST_RANKS

/* Expected side data of one event; -1 = not applicable.  tag: of the
 * message sent; src, rtag: of the message received (its end). */
struct want {
    int64_t sent, recv, peer, tag, src, rtag;
};

static void check_region(const sp_profile *p, int r, const char *name, size_t count,
                         const struct want *want)
{
    const sp_row *row = harness_row(p, (unsigned)r, name);
    cr_assert_not_null(row, "rank %d: no %s region", r, name);
    cr_assert_eq(row->count, count, "rank %d: %zu %s calls expected, %llu recorded", r, count,
                 name, (unsigned long long)row->count);
    for (size_t k = 0; k < count; k++) {
        size_t e = row->offset + k;
        int64_t got[6] = {p->extra[SP_EXTRA_MPI_SENT_BYTES][e], p->extra[SP_EXTRA_MPI_RECV_BYTES][e],
                          p->extra[SP_EXTRA_MPI_PEER][e], p->extra[SP_EXTRA_MPI_TAG][e],
                          p->extra[SP_EXTRA_MPI_SOURCE][e], p->extra[SP_EXTRA_MPI_RECV_TAG][e]};
        int64_t exp[6] = {want[k].sent, want[k].recv, want[k].peer, want[k].tag, want[k].src,
                          want[k].rtag};
        static const char *const what[6] = {"sent bytes", "received bytes", "peer", "tag",
                                            "source", "received tag"};
        for (int c = 0; c < 6; c++)
            cr_assert_eq(got[c], exp[c], "rank %d: %s call %zu: %s %lld, expected %lld", r, name,
                         k + 1, what[c], (long long)got[c], (long long)exp[c]);
    }
}

static int64_t comm_of(const sp_profile *p, int r, const char *name, size_t k)
{
    const sp_row *row = harness_row(p, (unsigned)r, name);
    cr_assert(row && row->count > k);
    return p->extra[SP_EXTRA_MPI_COMM][row->offset + k];
}

/* Every MPI event is a child of "main"; "main" has no MPI data. */
static void check_nesting(const sp_profile *p, int r)
{
    const sp_row *m = harness_row(p, (unsigned)r, "main");
    cr_assert(m && m->count == 1, "rank %d: main", r);
    cr_assert_not_null(p->call_ids);
    cr_assert_not_null(p->parent_ids);
    for (int c = 0; c < SP_EXTRA_N; c++)
        cr_assert_eq(p->extra[c][m->offset], -1, "rank %d: main has %s", r,
                     sp_event_extra_names[c]);
    for (size_t i = 0; i < p->num_rows; i++) {
        const sp_row *row = &p->rows[i];
        if (strncmp(p->names[row->region], "MPI_", 4) != 0)
            continue;
        for (uint64_t k = 0; k < row->count; k++)
            cr_assert_eq(p->parent_ids[row->offset + k], p->call_ids[m->offset],
                         "rank %d: %s not nested in main", r, p->names[row->region]);
    }
}

static void check_rank(const sp_profile *p, int r, long polls)
{
    int next = (r + 1) % N, prev = (r + N - 1) % N, sub0 = r < 2;
    cr_assert_not_null(p->extra[SP_EXTRA_MPI_PEER], "rank %d: no events/mpi_peer", r);
    check_nesting(p, r);

    struct want send[3] = {{400, -1, next, 7, -1, -1}};
    size_t sends = 1;
    if (sub0)
        send[sends++] = (struct want){8, -1, r + 2, 11, -1, -1};
    send[sends++] = (struct want){4, -1, r, 99, -1, -1};
    check_region(p, r, "MPI_Send", sends, send);

    struct want recv[2] = {{-1, 400, prev, -1, prev, 7}, {-1, 8, r - 2, -1, r - 2, 11}};
    check_region(p, r, "MPI_Recv", sub0 ? 1 : 2, recv);

    struct want irecv[3] = {{-1, 80, -1, -1, -1, -1}, {-1, 4, -1, -1, -1, -1}, {-1, 4, r, -1, r, 99}};
    check_region(p, r, "MPI_Irecv", 3, irecv);
    struct want isend[2] = {{80, -1, next, 8, -1, -1}, {4, -1, next, 9, -1, -1}};
    check_region(p, r, "MPI_Isend", 2, isend);
    /* Two requests with different peers; its one wildcard receive ends here. */
    struct want waitall[1] = {{-1, -1, -1, -1, prev, 8}};
    check_region(p, r, "MPI_Waitall", 1, waitall);
    /* send to next; MPI_ANY_SOURCE and MPI_ANY_TAG resolved from the
     * status; the collective's request; the receive from self of the polling
     * loop, whose message end was its MPI_Irecv (source and tag given). */
    struct want wait[4] = {{-1, -1, next, -1, -1, -1}, {-1, -1, prev, -1, prev, 9}, {-1, -1, -1, -1, -1, -1},
                           {-1, -1, r, -1, -1, -1}};
    check_region(p, r, "MPI_Wait", 4, wait);
    struct want sendrecv[1] = {{20, 20, next, 10, prev, 10}};
    check_region(p, r, "MPI_Sendrecv", 1, sendrecv);

    int half_root = 2 + r % 2;
    struct want bcast[3] = {
        {r == half_root ? 12 : -1, r == half_root ? -1 : 12, half_root, -1, -1, -1},
        {r == 1 ? 64 : -1, r == 1 ? -1 : 64, 1, -1, -1, -1},
        {r == 0 ? 24 : -1, r == 0 ? -1 : 24, 0, -1, -1, -1},
    };
    check_region(p, r, "MPI_Bcast", 3, bcast);
    struct want none3[3] = {{-1, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, -1, -1}};
    check_region(p, r, "MPI_Barrier", 3, none3);
    struct want allreduce[6];
    for (int i = 0; i < 5; i++)
        allreduce[i] = (struct want){8, 8, -1, -1, -1, -1};
    allreduce[5] = (struct want){0, 16, -1, -1, -1, -1}; /* MPI_IN_PLACE: counted once */
    check_region(p, r, "MPI_Allreduce", 6, allreduce);
    struct want reduce[1] = {{16, r == 0 ? 16 : -1, 0, -1, -1, -1}};
    check_region(p, r, "MPI_Reduce", 1, reduce);
    struct want gather[1] = {{4, r == 2 ? 4 * N : -1, 2, -1, -1, -1}};
    check_region(p, r, "MPI_Gather", 1, gather);
    struct want allgather[1] = {{4, 4 * N, -1, -1, -1, -1}};
    check_region(p, r, "MPI_Allgather", 1, allgather);
    struct want alltoall[1] = {{8 * N, 8 * N, -1, -1, -1, -1}};
    check_region(p, r, "MPI_Alltoall", 1, alltoall);
    struct want iallreduce[1] = {{8, 8, -1, -1, -1, -1}};
    check_region(p, r, "MPI_Iallreduce", 1, iallreduce);

    /* one-sided and MPI-IO */
    check_region(p, r, "MPI_Win_fence", 3, none3);
    struct want put[1] = {{4, -1, next, -1, -1, -1}}, get[1] = {{-1, 4, prev, -1, -1, -1}};
    check_region(p, r, "MPI_Put", 1, put);
    check_region(p, r, "MPI_Get", 1, get);
    check_region(p, r, "MPI_Accumulate", 1, put);
    struct want target[1] = {{-1, -1, next, -1, -1, -1}};
    check_region(p, r, "MPI_Win_lock", 1, target);
    check_region(p, r, "MPI_Win_flush", 1, target);
    check_region(p, r, "MPI_Win_unlock", 1, target);
    struct want written[1] = {{16, -1, -1, -1, -1, -1}}, read[1] = {{-1, 16, -1, -1, -1, -1}};
    check_region(p, r, "MPI_File_open", 1, none3);
    check_region(p, r, "MPI_File_write_at", 1, written);
    check_region(p, r, "MPI_File_write_at_all", 1, written);
    check_region(p, r, "MPI_File_read_at", 1, read);
    check_region(p, r, "MPI_File_close", 1, none3);

    /* MPI_COMM_WORLD is communicator 0; the split halves differ. */
    cr_assert_eq(comm_of(p, r, "MPI_Send", 0), 0);
    int64_t half = comm_of(p, r, sub0 ? "MPI_Send" : "MPI_Recv", 1);
    cr_assert_gt(half, 0, "rank %d: sub-communicator id %lld", r, (long long)half);

    /* Polling: counted, no events. */
    const sp_row *test = harness_row(p, (unsigned)r, "MPI_Test");
    cr_assert(!test || test->count == 0, "rank %d: MPI_Test kept as events", r);
    const sp_meta *dropped = sp_profile_meta(p, "dropped_calls_by_region");
    cr_assert_not_null(dropped, "rank %d: MPI_Test not counted", r);
    char expect[64];
    snprintf(expect, sizeof expect, "MPI_Test=%ld:", polls);
    int found = 0;
    for (size_t i = 0; i < dropped->list_len; i++)
        found |= strncmp(dropped->list[i], expect, strlen(expect)) == 0;
    cr_assert(found, "rank %d: no %s... in dropped_calls_by_region", r, expect);
    /* Not wrapped: MPI_Initialized, MPI_Finalized, MPI_Comm_split... */
    cr_assert_lt(harness_region(p, "MPI_Initialized"), 0);
    cr_assert_lt(harness_region(p, "MPI_Finalized"), 0);
}

static void run_calls(struct harness_run *run, const char *family, const char *polls,
                      const char *const *env)
{
    mpi_launch(run, family, N, mpi_program("mpi", "mpi_calls", family), polls, env);
    cr_assert_eq(run->exit_code, 0, "%s run failed (%d):\n%s\n%s", family, run->exit_code,
                 run->out, run->err);
    cr_assert_eq(harness_count_files(run, "*.h5"), N, "stderr:\n%s", run->err);
}

/* `VAR=VALUE scopeprof ARGS... <the run's rank files>` in the run's
 * directory (env: "" or one assignment). */
static void scopeprof_on_run_env(const struct harness_run *run, struct harness_run *out,
                                 const char *env, const char *const *args)
{
    char script[1024];
    snprintf(script, sizeof script,
             "cd '%s' && %s%s%sexec \"$0\" \"$@\" scope_profile_rank*.h5", run->dir,
             env[0] ? "export " : "", env, env[0] ? " && " : "");
    const char *argv[16] = {"/bin/sh", "-c", script, SCOPEPROF_EXE};
    int n = 4;
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    cr_assert_eq(harness_run(out, argv, NULL, 0), 0);
    cr_assert_eq(out->exit_code, 0, "scopeprof %s failed:\n%s", args[0], out->err);
}

static void scopeprof_on_run(const struct harness_run *run, struct harness_run *out,
                             const char *const *args)
{
    scopeprof_on_run_env(run, out, "", args);
}

/* The streamed report (its MPI tables read from the files in windows)
 * gives the in-memory path's bytes, with and without workers and a rank
 * selection. */
static void report_streamed_equals_in_memory(const struct harness_run *run)
{
    const char *const variants[][6] = {
        {"report", NULL},
        {"report", "--mpi", "-j", "2", NULL},
        {"report", "--mpi", "--ranks-table", "--ranks", "1,3", NULL},
    };
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        struct harness_run s, m;
        scopeprof_on_run_env(run, &s, "SCOPEPROF_REPORT_TRACE=1", variants[v]);
        scopeprof_on_run_env(run, &m, "SCOPEPROF_REPORT_IN_MEMORY=1", variants[v]);
        cr_expect_str_eq(s.err, "scopeprof report: streamed\n", "variant %zu", v);
        cr_expect_neq(strstr(s.out, "MPI per rank"), NULL, "variant %zu:\n%s", v, s.out);
        cr_expect_str_eq(s.out, m.out, "variant %zu", v);
        harness_run_free(&s);
        harness_run_free(&m);
    }
}

/* validate streams files with MPI columns and fork edges (the mpi_calls
 * program's polling thread): the checker's verdict, each file confirmed on
 * the stream; a damaged MPI column is handed to the checker, which words it. */
static void validate_streamed_equals_in_memory(const struct harness_run *run)
{
    static const char *const args[] = {"validate", NULL};
    struct harness_run s, m;
    scopeprof_on_run_env(run, &s, "SCOPEPROF_VALIDATE_TRACE=1", args);
    scopeprof_on_run_env(run, &m, "SCOPEPROF_VALIDATE_IN_MEMORY=1", args);
    cr_expect_str_eq(s.out, m.out);
    for (int r = 0; r < N; r++) {
        char line[96];
        snprintf(line, sizeof line, "scope_profile_rank%05d.h5: streamed\n", r);
        cr_expect_not_null(strstr(s.err, line), "%s", s.err);
    }
    harness_run_free(&s);
    harness_run_free(&m);

    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p damaged && cp scope_profile_rank00001.h5 damaged/ && "
             "/usr/bin/python3 -c \"import h5py, numpy\n"
             "f = h5py.File('damaged/scope_profile_rank00001.h5', 'r+')\n"
             "n = len(f['events/mpi_peer']); del f['events/mpi_peer']\n"
             "f.create_dataset('events/mpi_peer', data=numpy.array([b'x'] * n, dtype='S8'))\"",
             run->dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    const char *const bad[] = {SCOPEPROF_EXE, "validate",
                               harness_path(run, "damaged/scope_profile_rank00001.h5"), NULL};
    const char *const trace[] = {"SCOPEPROF_VALIDATE_TRACE=1", NULL};
    const char *const memory[] = {"SCOPEPROF_VALIDATE_IN_MEMORY=1", NULL};
    cr_assert_eq(harness_run(&s, bad, trace, 0), 0);
    cr_assert_eq(harness_run(&m, bad, memory, 0), 0);
    cr_expect_eq(s.exit_code, 1);
    cr_expect_str_eq(s.out, m.out);
    cr_expect_not_null(strstr(s.out, "events/mpi_peer cannot be read"), "%s", s.out);
    cr_expect_not_null(strstr(s.err, "checker: events/mpi_peer does not read"), "%s", s.err);
    harness_run_free(&s);
    harness_run_free(&m);
}

/* The file `name` of the run's directory, whole (NULL if absent). */
static char *read_run_file(const struct harness_run *run, const char *name, size_t *len)
{
    FILE *f = fopen(harness_path(run, name), "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            buf = realloc(buf, cap + 1);
            cr_assert_not_null(buf);
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

/* `scopeprof report -o page.html` streams a run with MPI columns (the page
 * reads them in windows only to confirm they read, as the in-memory reader
 * does) and writes the in-memory path's bytes, MPI section included; a
 * damaged chunk of an MPI column sends the run to the in-memory path,
 * which words it: the same status and message either way, no page. */
static void html_streamed_equals_in_memory(const struct harness_run *run)
{
    const char *const variants[][8] = {
        {"report", "-o", "page.html", NULL},
        {"report", "--ranks", "1,3", "--exclude", "^MPI_Send$", "-o", NULL},
    };
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        const char *args[8];
        size_t n = 0;
        for (; variants[v][n]; n++)
            args[n] = variants[v][n];
        if (strcmp(args[n - 1], "-o"))
            args[n++] = "-o";
        args[n++] = "page.html";
        args[n] = NULL;
        struct harness_run s, m;
        size_t slen = 0, mlen = 0;
        scopeprof_on_run_env(run, &s, "SCOPEPROF_REPORT_TRACE=1", args);
        char *streamed = read_run_file(run, "page.html", &slen);
        scopeprof_on_run_env(run, &m, "SCOPEPROF_REPORT_IN_MEMORY=1", args);
        char *in_memory = read_run_file(run, "page.html", &mlen);
        cr_assert_not_null(streamed, "variant %zu: no page", v);
        cr_assert_not_null(in_memory, "variant %zu: no page in memory", v);
        cr_expect_str_eq(s.err, "scopeprof report: html: streamed\n", "variant %zu", v);
        cr_expect_not_null(strstr(streamed, "<section id=\"mpi\">"), "variant %zu", v);
        cr_expect_not_null(strstr(streamed, "MPI_Allreduce"), "variant %zu", v);
        cr_expect(slen == mlen && !memcmp(streamed, in_memory, slen),
                  "variant %zu: the streamed page differs from the in-memory one", v);
        free(streamed);
        free(in_memory);
        harness_run_free(&s);
        harness_run_free(&m);
    }

    /* Rank 1 without fork edges (so it streams rather than being read
     * alone), its events/mpi_peer rewritten in compressed chunks of 16
     * values, the second chunk overwritten: only a read of the column
     * finds it. */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && rm -f page.html && mkdir -p damaged_html && "
             "cp scope_profile_rank*.h5 damaged_html/ && /usr/bin/python3 -c \"import h5py\n"
             "f = h5py.File('damaged_html/scope_profile_rank00001.h5', 'r+')\n"
             "del f['events/fork_parent_ids']\n"
             "v = f['events/mpi_peer'][...]; del f['events/mpi_peer']\n"
             "d = f.create_dataset('events/mpi_peer', data=v, chunks=(16,), compression='gzip')\n"
             "c = d.id.get_chunk_info(1); f.close()\n"
             "g = open('damaged_html/scope_profile_rank00001.h5', 'r+b')\n"
             "g.seek(c.byte_offset); g.write(bytes([255]) * c.size)\"",
             run->dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char script[1200];
    snprintf(script, sizeof script,
             "cd '%s' && exec \"$0\" report damaged_html/scope_profile_rank*.h5 -o page.html",
             run->dir);
    const char *const bad[] = {"/bin/sh", "-c", script, SCOPEPROF_EXE, NULL};
    const char *const trace[] = {"SCOPEPROF_REPORT_TRACE=1", NULL};
    const char *const memory[] = {"SCOPEPROF_REPORT_IN_MEMORY=1", NULL};
    struct harness_run s, m;
    cr_assert_eq(harness_run(&s, bad, trace, 0), 0);
    cr_expect(!harness_exists(run, "page.html"), "a page was left behind");
    cr_assert_eq(harness_run(&m, bad, memory, 0), 0);
    cr_expect_eq(s.exit_code, 1, "%s", s.err);
    cr_expect_eq(m.exit_code, 1, "%s", m.err);
    static const char head[] = "scopeprof report: html: in memory: ";
    cr_assert_eq(strncmp(s.err, head, strlen(head)), 0, "%s", s.err);
    const char *why = s.err + strlen(head), *rest = strchr(why, '\n');
    cr_assert_not_null(rest);
    cr_expect_not_null(strstr(why, "events/mpi_peer does not read\n"),
                       "%s", s.err);
    cr_expect_str_eq(rest + 1, m.err);
    cr_expect_not_null(strstr(m.err, "events/mpi_peer cannot be read"), "%s", m.err);
    harness_run_free(&s);
    harness_run_free(&m);
}

static void check_calls(const char *family)
{
    struct harness_run run;
    run_calls(&run, family, "1000", NULL);
    /* A polling call counted without events is not a memory-cap drop. */
    cr_assert_null(strstr(run.err, "memory cap"), "stderr:\n%s", run.err);
    int64_t halves[N];
    for (int r = 0; r < N; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        check_rank(p, r, 1000);
        halves[r] = comm_of(p, r, r < 2 ? "MPI_Send" : "MPI_Recv", 1);
        sp_profile_free(p);
    }
    cr_assert_eq(halves[0], halves[2], "members of one communicator disagree on its id");
    cr_assert_eq(halves[1], halves[3]);
    cr_assert_neq(halves[0], halves[1]);

    /* The report's MPI section and the cross-rank table's MPI wording. */
    struct harness_run report;
    const char *args[] = {"report", "--mpi", "--ranks-table", NULL};
    scopeprof_on_run(&run, &report, args);
    static const char *const wanted[] = {
        "MPI per rank", "MPI calls by time", "MPI message sizes",
        "MPI point-to-point bytes, sender (rows) to receiver", "(most waiting; rank ",
        "MPI_Allreduce", "MPI_Sendrecv",
    };
    for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++)
        cr_assert_not_null(strstr(report.out, wanted[i]), "no '%s' in the report:\n%s",
                           wanted[i], report.out);
    harness_run_free(&report);
    report_streamed_equals_in_memory(&run);
    validate_streamed_equals_in_memory(&run);
    html_streamed_equals_in_memory(&run);
    harness_run_free(&run);
}

Test(mpi_calls, openmpi, .timeout = 60) { check_calls("openmpi"); }
Test(mpi_calls, mpich, .timeout = 60) { check_calls("mpich"); }

/* ---- message lines of the Chrome export ----------------------------------- */

/* `"key":<int>` on a line of the export, or -1. */
static long json_int(const char *line, const char *key)
{
    char pattern[32];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *at = strstr(line, pattern);
    return at ? strtol(at + strlen(pattern), NULL, 10) : -1;
}

/* Every message of the program is one flow, from its sender's process to
 * its receiver's: per rank r, r -> next four times (ring, tags 8, 9 and the
 * MPI_Sendrecv), r -> r (the polling loop), and 0 -> 2, 1 -> 3 in the
 * sub-communicator. */
static void check_flows(const char *family)
{
    struct harness_run run;
    run_calls(&run, family, "10", NULL);
    struct harness_run ex;
    const char *args[] = {"export", "chrome", "-o", "trace.json", NULL};
    scopeprof_on_run_env(&run, &ex, "SCOPEPROF_EXPORT_TRACE=1", args);
    cr_expect_str_eq(ex.err, "scopeprof export: streamed\n");
    harness_run_free(&ex);
    /* the flows paired on the stream (docs/stream.md, "Exports") are the
     * in-memory path's, byte for byte, also with filters dropping ends */
    const char *const variants[][8] = {
        {"export", "chrome", "-o", "trace.json", NULL}, /* streamed above */
        {"export", "chrome", "--exclude", "MPI_Send", "-o", "s1.json", NULL},
        {"export", "chrome", "--ranks", "0,3", "-o", "s2.json", NULL},
        /* the MPI columns of every call in its args, read on the stream too */
        {"export", "chrome", "--call-args", "--exclude", "main", "-o", "s3.json", NULL},
    };
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        const char *const *a = variants[v];
        size_t out = 0; /* the index of the output path */
        while (a[out + 1])
            out++;
        char memory[64];
        snprintf(memory, sizeof memory, "m%zu.json", v);
        const char *margs[8];
        for (size_t i = 0; i <= out + 1; i++)
            margs[i] = i == out ? memory : a[i];
        struct harness_run s, m;
        if (v) {
            scopeprof_on_run_env(&run, &s, "SCOPEPROF_EXPORT_TRACE=1", a);
            cr_expect_str_eq(s.err, "scopeprof export: streamed\n", "variant %zu", v);
            harness_run_free(&s);
        }
        scopeprof_on_run_env(&run, &m, "SCOPEPROF_EXPORT_IN_MEMORY=1", margs);
        harness_run_free(&m);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "cmp -s '%s/%s' '%s/%s'", run.dir, a[out], run.dir, memory);
        cr_expect_eq(system(cmd), 0, "variant %zu: the streamed chrome export differs", v);
    }

    FILE *f = fopen(harness_path(&run, "trace.json"), "r");
    cr_assert_not_null(f);
    enum { MAX = 256 };
    long send_pid[MAX], recv_pid[MAX];
    for (int i = 0; i < MAX; i++)
        send_pid[i] = recv_pid[i] = -1;
    long max_id = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        int s = strstr(line, "\"ph\":\"s\"") != NULL, fin = strstr(line, "\"ph\":\"f\"") != NULL;
        if (!s && !fin)
            continue;
        long id = json_int(line, "id"), pid = json_int(line, "pid");
        cr_assert(id > 0 && id < MAX, "flow id %ld", id);
        long *slot = s ? &send_pid[id] : &recv_pid[id];
        cr_assert_eq(*slot, -1, "flow %ld has two %s ends", id, s ? "send" : "receive");
        *slot = pid;
        if (id > max_id)
            max_id = id;
    }
    fclose(f);
    int pairs[N][N] = {{0}};
    for (long id = 1; id <= max_id; id++) {
        cr_assert(send_pid[id] >= 0 && recv_pid[id] >= 0, "flow %ld has one end only", id);
        pairs[send_pid[id]][recv_pid[id]]++;
    }
    cr_assert_eq(max_id, 5 * N + 2, "%ld messages drawn", max_id);
    for (int a = 0; a < N; a++)
        for (int b = 0; b < N; b++) {
            int want = (b == (a + 1) % N ? 4 : 0) + (a == b) + (a < 2 && b == a + 2);
            cr_assert_eq(pairs[a][b], want, "%d -> %d: %d messages drawn, %d sent", a, b,
                         pairs[a][b], want);
        }
    harness_run_free(&run);
}

Test(mpi_calls, flows_openmpi, .timeout = 60) { check_flows("openmpi"); }
Test(mpi_calls, flows_mpich, .timeout = 60) { check_flows("mpich"); }

/* SCOPE_PROFILER_MPI_CALLS=none: no MPI region at all. */
static void check_none(const char *family)
{
    struct harness_run run;
    const char *env[] = {"SCOPE_PROFILER_MPI_CALLS=none", NULL};
    run_calls(&run, family, "10", env);
    for (int r = 0; r < N; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        for (size_t i = 0; i < p->num_names; i++)
            cr_assert_neq(strncmp(p->names[i], "MPI_", 4), 0, "rank %d recorded %s", r,
                          p->names[i]);
        cr_assert_null(p->extra[SP_EXTRA_MPI_PEER]);
        cr_assert_eq(harness_row(p, (unsigned)r, "main")->count, 1);
        sp_profile_free(p);
    }
    harness_run_free(&run);
}

Test(mpi_calls, none_openmpi, .timeout = 60) { check_none("openmpi"); }
Test(mpi_calls, none_mpich, .timeout = 60) { check_none("mpich"); }

/* A list of globs: only those functions, polling ones as events. */
static void check_globs(const char *family)
{
    struct harness_run run;
    const char *env[] = {"SCOPE_PROFILER_MPI_CALLS=MPI_All*, MPI_Test,MPI_Nosuch*", NULL};
    run_calls(&run, family, "10", env);
    cr_assert_not_null(strstr(run.err, "'MPI_Nosuch*' matches none"), "stderr:\n%s", run.err);
    for (int r = 0; r < N; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        cr_assert_eq(harness_row(p, (unsigned)r, "MPI_Allreduce")->count, 6);
        cr_assert_eq(harness_row(p, (unsigned)r, "MPI_Allgather")->count, 1);
        cr_assert_eq(harness_row(p, (unsigned)r, "MPI_Alltoall")->count, 1);
        cr_assert_eq(harness_row(p, (unsigned)r, "MPI_Test")->count, 10);
        cr_assert_lt(harness_region(p, "MPI_Send"), 0);
        cr_assert_lt(harness_region(p, "MPI_Wait"), 0);
        sp_profile_free(p);
    }
    harness_run_free(&run);
}

Test(mpi_calls, globs_openmpi, .timeout = 60) { check_globs("openmpi"); }
Test(mpi_calls, globs_mpich, .timeout = 60) { check_globs("mpich"); }

/* 10^6 MPI_Test calls under the default: counted, not kept, so the file
 * stays small (SCOPEPROF_TEST_POLLS lowers the count on slow machines). */
static void check_polling(const char *family)
{
    const char *polls = getenv("SCOPEPROF_TEST_POLLS");
    if (!polls)
        polls = "1000000";
    struct harness_run run;
    run_calls(&run, family, polls, NULL);
    for (int r = 0; r < N; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        check_rank(p, r, atol(polls));
        cr_assert_lt(p->num_events, 100, "rank %d: %zu events", r, p->num_events);
        sp_profile_free(p);
    }
    FILE *f = fopen(harness_path(&run, "scope_profile_rank00000.h5"), "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    cr_assert_lt(size, 1L << 20, "rank 0 file is %ld bytes", size);
    harness_run_free(&run);
}

Test(mpi_calls, polling_openmpi, .timeout = 90) { check_polling("openmpi"); }
Test(mpi_calls, polling_mpich, .timeout = 90) { check_polling("mpich"); }

/* ---- the Fortran bindings (use mpi) --------------------------------------- */

/* A polling call counted, not kept: "NAME=COUNT:" in dropped_calls_by_region. */
static void check_dropped(const sp_profile *p, int r, const char *expect)
{
    const sp_meta *dropped = sp_profile_meta(p, "dropped_calls_by_region");
    cr_assert_not_null(dropped, "rank %d: no dropped_calls_by_region", r);
    int found = 0;
    for (size_t i = 0; i < dropped->list_len; i++)
        found |= strncmp(dropped->list[i], expect, strlen(expect)) == 0;
    cr_assert(found, "rank %d: no %s... in dropped_calls_by_region", r, expect);
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(strchr(expect, '=') - expect), expect);
    const sp_row *row = harness_row(p, (unsigned)r, name);
    cr_assert(!row || row->count == 0, "rank %d: %s kept as events", r, name);
}

/* Open MPI's Fortran library calls PMPI_ directly (the shim's Fortran
 * wrappers record), MPICH's calls the C bindings (the C wrappers record):
 * the same file either way.  Values: tests/programs/fortran/fortran_mpi_calls.f90. */
static void check_fortran(const char *family)
{
    struct harness_run run;
    mpi_launch(&run, family, N, mpi_program("fortran", "fortran_mpi_calls", family), NULL, NULL);
    cr_assert_eq(run.exit_code, 0, "%s run failed (%d):\n%s", family, run.exit_code, run.err);
    for (int r = 0; r < N; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        int next = (r + 1) % N, prev = (r + N - 1) % N;
        struct want send[2] = {{80, -1, next, 5, -1, -1}, {8, -1, r, 99, -1, -1}};
        check_region(p, r, "MPI_Send", 2, send);
        struct want recv[1] = {{-1, 80, prev, -1, prev, 5}};
        check_region(p, r, "MPI_Recv", 1, recv);
        struct want isend[2] = {{64, -1, next, 6, -1, -1}, {8, -1, next, 8, -1, -1}};
        check_region(p, r, "MPI_Isend", 2, isend);
        struct want irecv[3] = {{-1, 64, prev, -1, prev, 6}, {-1, 8, -1, -1, -1, -1},
                                {-1, 8, r, -1, r, 99}};
        check_region(p, r, "MPI_Irecv", 3, irecv);
        struct want none[2] = {{-1, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, -1, -1}};
        check_region(p, r, "MPI_Waitall", 2, none);
        check_region(p, r, "MPI_Barrier", 2, none);
        struct want bcast[1] = {{r == 1 ? 24 : -1, r == 1 ? -1 : 24, 1, -1, -1, -1}};
        check_region(p, r, "MPI_Bcast", 1, bcast);
        struct want allreduce[4] = {{8, 8, -1, -1, -1, -1}, {8, 8, -1, -1, -1, -1},
                                    {8, 8, -1, -1, -1, -1}, {0, 16, -1, -1, -1, -1}};
        check_region(p, r, "MPI_Allreduce", 4, allreduce);
        struct want reduce[1] = {{8, r == 0 ? 8 : -1, 0, -1, -1, -1}};
        check_region(p, r, "MPI_Reduce", 1, reduce);
        /* the other families (issue 14, remaining part) */
        struct want sendrecv[1] = {{16, 16, next, 7, prev, 7}};
        check_region(p, r, "MPI_Sendrecv", 1, sendrecv);
        struct want waitany[2] = {{-1, -1, prev, -1, prev, 8}, {-1, -1, r, -1, -1, -1}};
        check_region(p, r, "MPI_Waitany", 2, waitany);
        struct want wait[1] = {{-1, -1, next, -1, -1, -1}};
        check_region(p, r, "MPI_Wait", 1, wait);
        check_dropped(p, r, "MPI_Test=5:");
        check_dropped(p, r, "MPI_Testany=3:");
        struct want iallreduce[1] = {{8, 8, -1, -1, -1, -1}};
        check_region(p, r, "MPI_Iallreduce", 1, iallreduce);
        struct want ibcast[1] = {{r == 2 ? 32 : -1, r == 2 ? -1 : 32, 2, -1, -1, -1}};
        check_region(p, r, "MPI_Ibcast", 1, ibcast);
        struct want gather[1] = {{8, r == 0 ? 32 : -1, 0, -1, -1, -1}};
        check_region(p, r, "MPI_Gather", 1, gather);
        struct want scatter[1] = {{r == 3 ? 32 : -1, 8, 3, -1, -1, -1}};
        check_region(p, r, "MPI_Scatter", 1, scatter);
        struct want alltoall[1] = {{32, 32, -1, -1, -1, -1}};
        check_region(p, r, "MPI_Alltoall", 1, alltoall);
        struct want allgather[1] = {{8, 32, -1, -1, -1, -1}};
        check_region(p, r, "MPI_Allgather", 1, allgather);
        check_region(p, r, "MPI_Win_fence", 2, none);
        struct want put[1] = {{8, -1, next, -1, -1, -1}};
        check_region(p, r, "MPI_Put", 1, put);
        check_region(p, r, "MPI_File_open", 1, none);
        struct want write[1] = {{8, -1, -1, -1, -1, -1}}, read[1] = {{-1, 8, -1, -1, -1, -1}};
        check_region(p, r, "MPI_File_write_at", 1, write);
        check_region(p, r, "MPI_File_read_at", 1, read);
        check_region(p, r, "MPI_File_close", 1, none);
        sp_profile_free(p);
    }
    harness_run_free(&run);
}

Test(mpi_calls, fortran_openmpi, .timeout = 60) { check_fortran("openmpi"); }
Test(mpi_calls, fortran_mpich, .timeout = 60) { check_fortran("mpich"); }

/* ---- spilled MPI side data -------------------------------------------------- */

/* Polling calls as events under a 1 MiB memory cap: the calls before the
 * loop reach the spill file with their side data (SP_SPILL_FRAME_MPI) and
 * the streaming writer puts it back into the MPI columns. */
static void check_spilled(const char *family)
{
    struct harness_run run;
    const char *env[] = {"SCOPE_PROFILER_MPI_CALLS=all", "SCOPE_PROFILER_MAX_MEMORY=1M",
                         "SCOPE_PROFILER_VERBOSE=1", NULL};
    run_calls(&run, family, "40000", env);
    cr_assert_not_null(strstr(run.err, "spilling recorded calls"), "nothing spilled:\n%s",
                       run.err);
    for (int r = 0; r < N; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        int next = (r + 1) % N, prev = (r + N - 1) % N;
        struct want send[3] = {{400, -1, next, 7, -1, -1}};
        size_t sends = 1;
        if (r < 2)
            send[sends++] = (struct want){8, -1, r + 2, 11, -1, -1};
        send[sends++] = (struct want){4, -1, r, 99, -1, -1};
        check_region(p, r, "MPI_Send", sends, send);
        struct want sendrecv[1] = {{20, 20, next, 10, prev, 10}};
        check_region(p, r, "MPI_Sendrecv", 1, sendrecv);
        struct want bcast[3] = {
            {r == 2 + r % 2 ? 12 : -1, r == 2 + r % 2 ? -1 : 12, 2 + r % 2, -1, -1, -1},
            {r == 1 ? 64 : -1, r == 1 ? -1 : 64, 1, -1, -1, -1},
            {r == 0 ? 24 : -1, r == 0 ? -1 : 24, 0, -1, -1, -1},
        };
        check_region(p, r, "MPI_Bcast", 3, bcast);
        const sp_row *test = harness_row(p, (unsigned)r, "MPI_Test");
        cr_assert(test && test->count == 40000, "rank %d: MPI_Test events", r);
        for (uint64_t k = 0; k < test->count; k += 997)
            cr_assert_eq(p->extra[SP_EXTRA_MPI_PEER][test->offset + k], -1);
        struct want wait[4] = {{-1, -1, next, -1, -1, -1}, {-1, -1, prev, -1, prev, 9},
                               {-1, -1, -1, -1, -1, -1}, {-1, -1, r, -1, -1, -1}};
        check_region(p, r, "MPI_Wait", 4, wait);
        sp_profile_free(p);
    }
    /* 40,000 MPI_Test calls per rank: rows of several windows */
    report_streamed_equals_in_memory(&run);
    harness_run_free(&run);
}

Test(mpi_calls, spilled_openmpi, .timeout = 90) { check_spilled("openmpi"); }
Test(mpi_calls, spilled_mpich, .timeout = 90) { check_spilled("mpich"); }

/* mpi_f08: Open MPI's module calls ompi_<name>_f, wrapped like the mpif.h
 * names.  MPICH's routes MPI_Allreduce, MPI_Send and MPI_Recv through the
 * C bindings, MPI_Barrier through mpi_barrier_f08_ straight to PMPI_
 * (wrapped itself, docs/mpi.md). */
static void check_fortran_f08(const char *family)
{
    struct harness_run run;
    mpi_launch(&run, family, 2, mpi_program("fortran", "fortran_mpi_calls_f08", family), NULL,
               NULL);
    cr_assert_eq(run.exit_code, 0, "%s run failed (%d):\n%s", family, run.exit_code, run.err);
    for (int r = 0; r < 2; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        struct want allreduce[1] = {{8, 8, -1, -1, -1, -1}};
        check_region(p, r, "MPI_Allreduce", 1, allreduce);
        struct want barrier[1] = {{-1, -1, -1, -1, -1, -1}};
        check_region(p, r, "MPI_Barrier", 1, barrier);
        struct want send[1] = {{8, -1, 1, 3, -1, -1}}, recv[1] = {{-1, 8, 0, -1, 0, 3}};
        check_region(p, r, r == 0 ? "MPI_Send" : "MPI_Recv", 1, r == 0 ? send : recv);
        sp_profile_free(p);
    }
    harness_run_free(&run);
}

Test(mpi_calls, fortran_f08_openmpi, .timeout = 60) { check_fortran_f08("openmpi"); }
Test(mpi_calls, fortran_f08_mpich, .timeout = 60) { check_fortran_f08("mpich"); }
