/* test_cli_compare.c - `scopeprof diff` and `check` read each run streamed
 * rank by rank (docs/stream.md), and say the same, byte for byte, as the
 * in-memory path (SCOPEPROF_DIFF_IN_MEMORY=1): runs whose calls of one path
 * overlap on several lanes and whose regions recurse (exclusive times that
 * arrive out of order), a path of more calls than the percentile sample
 * holds, selections, ranks with fork edges, and a rank that does not nest
 * (the in-memory path then runs and words the note); the HTML report
 * likewise (SCOPEPROF_REPORT_IN_MEMORY=1). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scopeprof/h5.h"
#include "scopeprof/profile.h"
#include "cli_dir.h"

static void make_dir(void) { cli_dir_make("cli-compare"); }

TestSuite(cli_compare, .init = make_dir, .fini = cli_dir_remove);

/* `scopeprof args...` in the test directory with "KEY=VALUE" entries of env. */
static result run_env(const char *const *args, const char *const *env)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (chdir(dir) != 0)
            _exit(120);
        int out = open("stdout.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int err = open("stderr.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
            _exit(121);
        unsetenv("SCOPE_PROFILER_OUTPUT");
        unsetenv("LD_PRELOAD");
        unsetenv("SCOPEPROF_DIFF_IN_MEMORY");
        unsetenv("SCOPEPROF_DIFF_TRACE");
        setenv("NO_COLOR", "1", 1);
        for (size_t k = 0; env && env[k]; k++)
            putenv((char *)env[k]);
        const char *argv[64] = {SCOPEPROF_EXE};
        size_t n = 1;
        for (size_t k = 0; args[k] && n < 63; k++)
            argv[n++] = args[k];
        argv[n] = NULL;
        execv(SCOPEPROF_EXE, (char *const *)argv);
        _exit(122);
    }
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    result r;
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    r.out = slurp(in_dir("stdout.txt"));
    r.err = slurp(in_dir("stderr.txt"));
    remove(in_dir("stdout.txt"));
    remove(in_dir("stderr.txt"));
    return r;
}

typedef struct ev {
    const char *region;
    int64_t start, end, thread; /* ns */
} ev;

typedef struct evs {
    ev *v;
    size_t n, cap;
} evs;

static void add(evs *e, const char *region, int64_t start, int64_t end, int64_t thread)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 1024;
        e->v = realloc(e->v, e->cap * sizeof *e->v);
        cr_assert_not_null(e->v);
    }
    e->v[e->n++] = (ev){region, start, end, thread};
}

/* One rank's file, rows in order of first appearance, events in given order,
 * `shift` ns later; with_start: metadata start_time_ns. */
static void write_rank_with(const char *name, uint32_t rank, const evs *e,
                            const char *const *threads, int64_t shift, int with_start)
{
    size_t n = e->n;
    sp_profile *p = sp_profile_new();
    p->start = malloc(n * sizeof *p->start);
    p->end = malloc(n * sizeof *p->end);
    p->thread_ids = malloc(n * sizeof *p->thread_ids);
    p->rows = calloc(n, sizeof *p->rows);
    char *used = calloc(n, 1);
    for (size_t i = 0; i < n; i++) {
        if (used[i])
            continue;
        sp_row *row = &p->rows[p->num_rows++];
        row->region = (uint32_t)sp_profile_intern_name(p, e->v[i].region);
        row->rank = rank;
        row->offset = p->num_events;
        row->source_line = -1;
        row->exclusive_total = -1;
        row->source_file = strdup("");
        row->source_text = strdup("");
        row->tags = strdup("[]");
        row->event_metadata = strdup("[]");
        for (size_t j = i; j < n; j++) {
            if (used[j] || strcmp(e->v[j].region, e->v[i].region))
                continue;
            used[j] = 1;
            p->start[p->num_events] = 1000000 + shift + e->v[j].start;
            p->end[p->num_events] = 1000000 + shift + e->v[j].end;
            p->thread_ids[p->num_events] = e->v[j].thread;
            p->num_events++;
            row->count++;
        }
        sp_summary_compute(p->start + row->offset, p->end + row->offset, NULL, row->count,
                           &row->stats);
    }
    free(used);
    p->has_thread_table = 1;
    for (size_t t = 0; threads[t]; t++) {
        p->threads = realloc(p->threads, (t + 1) * sizeof *p->threads);
        p->threads[t] = (sp_thread_row){.rank = rank, .index = (int64_t)t, .ident = 1,
                                        .native_id = 1, .start_ns = 0, .end_ns = 100000000,
                                        .cpu_ns = 1000, .name = strdup(threads[t])};
        p->num_threads = t + 1;
    }
    p->num_ranks = rank + 1;
    if (with_start)
        sp_profile_set_meta_int(p, "start_time_ns", 1000000);
    sp_profile_set_meta_int(p, "mpi_size", 2);
    sp_profile_set_meta_int(p, "mpi_rank", rank);
    char err[512];
    cr_assert_eq(sp_h5_write(in_dir(name), p, err, sizeof err), 0, "%s", err);
    sp_profile_free(p);
}

static void write_rank(const char *name, uint32_t rank, const evs *e, const char *const *threads)
{
    write_rank_with(name, rank, e, threads, 0, 1);
}

static const char *const lanes3[] = {"MainThread", "worker1", "worker2", NULL};

/* One rank of a run: `scale` stretches the work so the two runs differ.
 *  - lane 0: "work" [0, 40 ms] holding "step" calls; lanes 1 and 2: many
 *    short "work" roots (> 1 of them inside lane 0's "work"), so the path
 *    "work" exits out of its entering order;
 *  - lane 1: "rec > rec > rec" (by name: a region inside itself);
 *  - lane 2: 70,000 "tick" calls under "work": more than the percentile
 *    sample (65,536) holds. */
static void write_side_with(const char *name, uint32_t rank, int64_t scale, int64_t shift,
                            int with_start)
{
    evs e = {0};
    add(&e, "work", 0, 40000000, 0);
    for (int64_t k = 0; k < 2000; k++)
        add(&e, "step", 1000 + k * 19000, 1000 + k * 19000 + 9000 + (k % 7) * scale, 0);
    for (int64_t k = 0; k < 400; k++) {
        int64_t t = 10000 + k * 90000;
        add(&e, "work", t, t + 80000, 1);
        add(&e, "rec", t + 100, t + 70000 + (k % 5) * scale, 1);
        add(&e, "rec", t + 200, t + 50000, 1);
        add(&e, "rec", t + 300, t + 30000 + (k % 3) * scale, 1);
    }
    for (int64_t k = 0; k < 7; k++) {
        int64_t t = k * 5000000;
        add(&e, "work", t + 20, t + 4900000, 2);
        for (int64_t j = 0; j < 10000; j++) {
            int64_t s = t + 100 + j * 480;
            add(&e, "tick", s, s + 100 + ((j * 7919 + k) % 300) * scale / 4000, 2);
        }
    }
    write_rank_with(name, rank, &e, lanes3, shift, with_start);
    free(e.v);
}

static void write_side(const char *name, uint32_t rank, int64_t scale)
{
    write_side_with(name, rank, scale, 0, 1);
}

static void expect_same(const char *const *args, int want_streamed)
{
    static const char *const trace[] = {"SCOPEPROF_DIFF_TRACE=1", NULL};
    static const char *const memory[] = {"SCOPEPROF_DIFF_IN_MEMORY=1", NULL};
    result s = run_env(args, trace), m = run_env(args, memory);
    char what[512] = "";
    for (size_t k = 0; args[k]; k++)
        snprintf(what + strlen(what), sizeof what - strlen(what), " %s", args[k]);
    cr_expect_eq(s.status, m.status, "%s: %d / %d\n%s", what, s.status, m.status, s.err);
    cr_expect_str_eq(s.out, m.out, "%s: streamed and in memory differ", what);
    /* the trace lines, one per run, then what the in-memory path printed */
    char *rest = s.err;
    size_t traced = 0, streamed = 0;
    for (char *nl; !strncmp(rest, "scopeprof ", 10) && (nl = strchr(rest, '\n')); rest = nl + 1) {
        size_t len = (size_t)(nl - rest);
        int is_streamed = len > 10 && !strncmp(nl - 10, ": streamed", 10);
        int is_memory = memmem(rest, len, ": in memory: ", 13) != NULL;
        if (!is_streamed && !is_memory)
            break;
        traced++;
        streamed += (size_t)is_streamed;
    }
    cr_expect_eq(traced, 2, "%s: trace lines %zu\n%s", what, traced, s.err);
    cr_expect_eq(streamed, want_streamed ? 2u : 0u, "%s: streamed %zu\n%s", what, streamed,
                 s.err);
    cr_expect_str_eq(rest, m.err, "%s: messages differ", what);
    result_free(&s);
    result_free(&m);
}

Test(cli_compare, diff_streamed_equals_in_memory)
{
    write_side("a_rank00000.h5", 0, 1000);
    write_side("a_rank00001.h5", 1, 1500);
    write_side("b_rank00000.h5", 0, 1300);
    write_side("b_rank00001.h5", 1, 1100);
    const char *const variants[][12] = {
        {"diff", "a", "b", NULL},
        {"diff", "a", "b", "--format", "json", NULL},
        {"diff", "a", "b", "--by-name", "--format", "json", NULL},
        {"diff", "a", "b", "--by-name", "--metric", "own", "--format", "csv", NULL},
        {"diff", "a", "b", "--metric", "p95", "--format", "json", NULL},
        {"diff", "a", "b", "--metric", "p50", "--format", "csv", NULL},
        {"diff", "a", "b", "--metric", "own", "--format", "json", NULL},
        {"diff", "a", "b", "--metric", "mean", "--format", "json", NULL},
        {"diff", "a", "b", "--metric", "imbalance", "--format", "json", NULL},
        {"diff", "a", "b", "--exclude", "step", "--metric", "own", "--format", "json", NULL},
        {"diff", "a", "b", "--min-duration", "0.000001", "--format", "json", NULL},
        {"diff", "a", "b", "--ranks", "1", "--lanes=worker1,worker2", "--format", "json", NULL},
        {"diff", "a", "b", "--from", "0.005", "--to", "0.02", "--format", "json", NULL},
        {"check", "a", "b", "--max-regression", "5", "--metric", "own", NULL},
        {"check", "a", "b", "--max-regression", "5", "--metric", "p95", "--format", "json",
         NULL},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
        expect_same(variants[v], 1);
    /* the runs do differ, and the path with 140,000 calls is there */
    result r = run_env((const char *const[]){"diff", "a", "b", "--metric", "calls", NULL}, NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_neq(strstr(r.out, "work > tick"), NULL, "%s", r.out);
    cr_expect_neq(strstr(r.out, "rec > rec > rec"), NULL, "%s", r.out);
    result_free(&r);
}

/* A rank whose calls do not nest: the stream hands the run to the in-memory
 * path, which leaves the rank out with a note. */
Test(cli_compare, diff_falls_back_on_a_rank_that_does_not_nest)
{
    write_side("a_rank00000.h5", 0, 1000);
    write_side("b_rank00000.h5", 0, 1200);
    evs e = {0};
    add(&e, "main", 0, 1000, 0);
    add(&e, "solve", 500, 2000, 0); /* overlaps main's end */
    write_rank("b_rank00001.h5", 1, &e, lanes3);
    free(e.v);
    static const char *const trace[] = {"SCOPEPROF_DIFF_TRACE=1", NULL};
    const char *const args[] = {"diff", "a", "b", "--format", "json", NULL};
    result s = run_env(args, trace);
    cr_expect_eq(s.status, 0, "%s", s.err);
    cr_expect_neq(strstr(s.err, "scopeprof diff: a: streamed\n"), NULL, "%s", s.err);
    cr_expect_neq(strstr(s.err, "scopeprof diff: b: in memory: "), NULL, "%s", s.err);
    result_free(&s);
    result r = run_env((const char *const[]){"diff", "a", "b", NULL}, NULL);
    cr_expect_neq(strstr(r.out, "rank 1"), NULL, "the note names the rank:\n%s", r.out);
    result_free(&r);
    const char *const variants[][8] = {
        {"diff", "a", "b", "--format", "json", NULL},
        {"diff", "b", "a", NULL},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        result x = run_env(variants[v], (const char *const[]){"SCOPEPROF_DIFF_IN_MEMORY=1", NULL});
        result y = run_env(variants[v], NULL);
        cr_expect_eq(x.status, y.status);
        cr_expect_str_eq(x.out, y.out, "variant %zu", v);
        cr_expect_str_eq(x.err, y.err, "variant %zu", v);
        result_free(&x);
        result_free(&y);
    }
}

/* No rank with fork edges read whole for the graft (the report's trace
 * would say "with fork edges in memory"). */
static void expect_grafted_on_the_stream(const char *const *args)
{
    static const char *const trace[] = {"SCOPEPROF_DIFF_TRACE=1", "SCOPEPROF_REPORT_TRACE=1",
                                        NULL};
    result s = run_env(args, trace);
    cr_expect_eq(strstr(s.err, "with fork edges in memory"), NULL, "%s %s: %s", args[0],
                 args[1], s.err);
    result_free(&s);
}

/* Ranks with fork edges (OpenMP recorded by the shim: a region, nested
 * teams): the streamed report grafts them on the stream and hands the
 * grafted calls to the comparison in the in-memory path's order (the rank
 * streamed once more, report_stream.c's hook_pass); no file read whole. */
Test(cli_compare, diff_of_fork_edges_equals_in_memory)
{
    char program[600];
    snprintf(program, sizeof program, "%s/programs/omp_fork_gomp", TEST_BUILD_DIR);
    static const char *const env[] = {"ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0",
                                      "OMP_NUM_THREADS=2", NULL};
    static const char *const nested_env[] = {
        "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0", "OMP_NUM_THREADS=3",
        "OMP_MAX_ACTIVE_LEVELS=2", "OMP_DYNAMIC=false", NULL};
    result r = run_env((const char *const[]){"run", "-o", "omp", "--", program, NULL}, env);
    cr_assert_eq(r.status, 0, "%s", r.err);
    result_free(&r);
    r = run_env((const char *const[]){"run", "-o", "omp2", "--", program, NULL}, env);
    cr_assert_eq(r.status, 0, "%s", r.err);
    result_free(&r);
    r = run_env((const char *const[]){"run", "-o", "nested", "--", program, "nested", NULL},
                nested_env);
    cr_assert_eq(r.status, 0, "%s", r.err);
    result_free(&r);
    const char *const variants[][10] = {
        {"diff", "omp_rank00000.h5", "omp2_rank00000.h5", "--format", "json", NULL},
        {"diff", "omp_rank00000.h5", "omp2_rank00000.h5", "--no-graft", "--format", "json",
         NULL},
        {"diff", "omp_rank00000.h5", "omp2_rank00000.h5", "--by-name", NULL},
        {"diff", "omp_rank00000.h5", "nested_rank00000.h5", "--format", "json", NULL},
        {"diff", "nested_rank00000.h5", "omp2_rank00000.h5", "--metric", "p95", "--format",
         "json", NULL},
        {"diff", "nested_rank00000.h5", "omp_rank00000.h5", "--exclude", "omp parallel",
         "--format", "json", NULL},
        {"check", "omp_rank00000.h5", "nested_rank00000.h5", "--max-regression", "1000000",
         "--metric", "own", NULL},
        {"flame", "--diff", "omp_rank00000.h5", "nested_rank00000.h5", "-o", "-", NULL},
        {"diff", "omp_rank00000.h5", "nested_rank00000.h5", "--from", "0.0003", "--to", "0.003",
         "--format", "json", NULL},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        expect_same(variants[v], 1);
        expect_grafted_on_the_stream(variants[v]);
    }
}

/* One parallel region holding 1.1 M of the worker's calls: in the in-memory
 * path's preorder they all come after the encountering thread's region
 * ends, so the hook's pass would hold them all; past 1 Mi waiting the
 * stream gives up and the whole run goes to the in-memory path (the hook
 * has seen part of the rank), which the trace words. */
Test(cli_compare, diff_of_a_long_parallel_region_falls_back, .timeout = 120)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 %s/fixtures/make_long_parallel_region.py %s 1100000",
             TEST_SOURCE_DIR, in_dir("long_rank00000.h5"));
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    const char *const args[] = {"diff", "long_rank00000.h5", "long_rank00000.h5", "--format",
                                "json", NULL};
    expect_same(args, 0);
    static const char *const trace[] = {"SCOPEPROF_DIFF_TRACE=1", NULL};
    result s = run_env(args, trace);
    cr_expect_neq(strstr(s.err, "in memory: more than 1 Mi grafted calls waiting for an earlier "
                                "one\n"),
                  NULL, "%s", s.err);
    result_free(&s);
}

/* ---- the HTML report (docs/html-report.md) ---------------------------------- */

/* `report ... -o page.html` streamed and in memory: same status, output,
 * messages and page bytes; the trace says each run streamed. */
static void expect_same_page(const char *const *args, size_t runs)
{
    static const char *const trace[] = {"SCOPEPROF_REPORT_TRACE=1", NULL};
    static const char *const memory[] = {"SCOPEPROF_REPORT_IN_MEMORY=1", NULL};
    char what[512] = "";
    for (size_t k = 0; args[k]; k++)
        snprintf(what + strlen(what), sizeof what - strlen(what), " %s", args[k]);
    remove(in_dir("page.html"));
    result m = run_env(args, memory);
    cr_assert_eq(m.status, 0, "%s: %s", what, m.err);
    char *in_memory = slurp(in_dir("page.html"));
    remove(in_dir("page.html"));
    result s = run_env(args, trace);
    cr_assert_eq(s.status, 0, "%s: %s", what, s.err);
    char *streamed = slurp(in_dir("page.html"));
    cr_expect_str_eq(s.out, m.out, "%s", what);
    size_t traced = 0;
    for (const char *p = s.err; (p = strstr(p, "scopeprof report: html: ")); p++)
        traced++;
    size_t ok = 0;
    for (const char *p = s.err; (p = strstr(p, "streamed\n")); p++)
        ok++;
    cr_expect(traced == runs && ok == runs, "%s: not streamed:\n%s", what, s.err);
    /* ranks with fork edges too, none read whole for the graft */
    cr_expect_eq(strstr(s.err, "with fork edges in memory"), NULL, "%s:\n%s", what, s.err);
    cr_expect(strlen(streamed) > 1000 && !strcmp(streamed, in_memory),
              "%s: the page differs streamed / in memory", what);
    free(streamed);
    free(in_memory);
    result_free(&s);
    result_free(&m);
}

Test(cli_compare, html_streamed_equals_in_memory)
{
    write_side("a_rank00000.h5", 0, 1000);
    write_side("a_rank00001.h5", 1, 1500);
    write_side("b_rank00000.h5", 0, 1300);
    const char *const variants[][12] = {
        {"report", "a_rank00000.h5", "a_rank00001.h5", "-o", "page.html", NULL},
        {"report", "a_rank00000.h5", "a_rank00001.h5", "--include", "work|rec", "-o",
         "page.html", NULL},
        {"report", "a_rank00000.h5", "a_rank00001.h5", "--exclude", "work", "-o", "page.html",
         NULL},
        {"report", "a_rank00000.h5", "a_rank00001.h5", "--min-duration", "0.000001", "-o",
         "page.html", NULL},
        {"report", "a_rank00000.h5", "a_rank00001.h5", "--ranks", "1", "-o", "page.html", NULL},
        {"report", "a_rank00000.h5", "a_rank00001.h5", "--lanes=worker1,worker2", "-o",
         "page.html", NULL},
        {"report", "a_rank00000.h5", "a_rank00001.h5", "--from", "0.005", "--to", "0.02", "-o",
         "page.html", NULL},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
        expect_same_page(variants[v], 1);
    expect_same_page((const char *const[]){"report", "a_rank00000.h5", "a_rank00001.h5",
                                           "--compare", "b_rank00000.h5", "-o", "page.html",
                                           NULL},
                     2);
}

/* OpenMP recorded by the shim: fork edges; the page's tree is not grafted
 * (html_model.c), the report's tables are. */
Test(cli_compare, html_of_fork_edges_equals_in_memory)
{
    char program[600];
    snprintf(program, sizeof program, "%s/programs/omp_fork_gomp", TEST_BUILD_DIR);
    static const char *const env[] = {"ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0",
                                      "OMP_NUM_THREADS=2", NULL};
    result r = run_env((const char *const[]){"run", "-o", "omp", "--", program, NULL}, env);
    cr_assert_eq(r.status, 0, "%s", r.err);
    result_free(&r);
    expect_same_page((const char *const[]){"report", "omp_rank00000.h5", "-o", "page.html", NULL},
                     1);
    expect_same_page((const char *const[]){"report", "omp_rank00000.h5", "--no-graft", "-o",
                                           "page.html", NULL},
                     1);
    expect_same_page((const char *const[]){"report", "omp_rank00000.h5", "--exclude",
                                           "omp parallel", "-o", "page.html", NULL},
                     1);
    expect_same_page((const char *const[]){"report", "omp_rank00000.h5", "--from", "0.0003",
                                           "--to", "0.003", "-o", "page.html", NULL},
                     1);
}

/* Runs without metadata start_time_ns: --from/--to count from the run's
 * first event (rank 1's here, also when --ranks leaves it out), which the
 * stream takes from the rows' start_minimum (sp_run_source_origin), and so
 * does the page for its rank walls and timeline, window or not (it counted
 * from 0 before).  diff, check, flame --diff and the page stream, with the
 * in-memory bytes. */
Test(cli_compare, compare_and_page_without_start_time_ns_stream)
{
    write_side_with("na_rank00000.h5", 0, 1000, 3000000, 0);
    write_side_with("na_rank00001.h5", 1, 1500, 500000, 0);
    write_side_with("nb_rank00000.h5", 0, 1300, 2000000, 0);
    write_side_with("nb_rank00001.h5", 1, 1100, 1000000, 0);
    const char *const variants[][12] = {
        {"diff", "na", "nb", "--from", "0.005", "--to", "0.02", "--format", "json", NULL},
        {"diff", "na", "nb", "--ranks", "0", "--to", "0.009", "--metric", "own", NULL},
        {"diff", "na", "nb", "--from", "0.021", "--by-name", "--format", "csv", NULL},
        {"check", "na", "nb", "--max-regression", "5", "--from", "0.004", NULL},
        {"check", "na", "nb", "--max-regression", "5", "--to", "0.01", "--metric", "p95",
         "--format", "json", NULL},
        {"flame", "--diff", "na", "nb", "--from", "0.005", "--to", "0.02", "-o", "-", NULL},
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
        expect_same(variants[v], 1);
    const char *const pages[][12] = {
        {"report", "na_rank00000.h5", "na_rank00001.h5", "-o", "page.html", NULL},
        {"report", "na_rank00000.h5", "na_rank00001.h5", "--from", "0.005", "--to", "0.02", "-o",
         "page.html", NULL},
        {"report", "na_rank00000.h5", "na_rank00001.h5", "--ranks", "0", "--to", "0.009", "-o",
         "page.html", NULL},
        {"report", "na_rank00000.h5", "na_rank00001.h5", "--from", "0.021", "-o", "page.html",
         NULL},
    };
    for (size_t v = 0; v < sizeof pages / sizeof pages[0]; v++)
        expect_same_page(pages[v], 1);
    expect_same_page((const char *const[]){"report", "na_rank00000.h5", "na_rank00001.h5",
                                           "--compare", "nb_rank00000.h5", "nb_rank00001.h5",
                                           "--from", "0.005", "--to", "0.02", "-o", "page.html",
                                           NULL},
                     2);
    /* an event outside every row: the origin is the first event of all,
     * which the rows do not give, so the page is read in memory (it
     * streamed before, counted from 0) */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cd %s && cp na_rank00000.h5 nx_rank00000.h5 && /usr/bin/python3 -c \"import h5py\n"
             "f = h5py.File('nx_rank00000.h5', 'r+')\n"
             "for k in list(f['events']):\n"
             "    a = f['events'][k][:]\n"
             "    del f['events'][k]\n"
             "    f['events'].create_dataset(k, data=list(a) + [a[-1]], dtype=a.dtype)\n"
             "f.close()\"",
             dir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    static const char *const trace[] = {"SCOPEPROF_REPORT_TRACE=1", NULL};
    static const char *const memory[] = {"SCOPEPROF_REPORT_IN_MEMORY=1", NULL};
    const char *const outside[] = {"report", "nx_rank00000.h5", "-o", "page.html", NULL};
    result s = run_env(outside, trace);
    cr_assert_eq(s.status, 0, "%s", s.err);
    char *streamed = slurp(in_dir("page.html"));
    result m = run_env(outside, memory);
    cr_assert_eq(m.status, 0, "%s", m.err);
    char *in_memory = slurp(in_dir("page.html"));
    cr_expect_str_eq(s.err, "scopeprof report: html: in memory: no metadata start_time_ns, and "
                            "events outside every row (the page's origin is the first event)\n");
    cr_expect(strlen(streamed) > 1000 && !strcmp(streamed, in_memory), "the page differs");
    free(streamed);
    free(in_memory);
    result_free(&s);
    result_free(&m);
}
