/* test_cli_html.c - `scopeprof report -o FILE.html` as a user runs it: one
 * self-contained page with every section, hostile region names that cannot
 * break out of the page's script and never make invalid UTF-8, comparison
 * of runs, and the usage and file errors (the browser checks of the page
 * itself are tests/consumers/check_html.py). */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scopeprof/h5.h"
#include "scopeprof/profile.h"
#include "cli_dir.h"

static void make_dir(void) { cli_dir_make("cli-html"); }

TestSuite(cli_html, .init = make_dir, .fini = cli_dir_remove);

static size_t count(const char *s, const char *what);

static int run_with(const char *env, const char *args, char **out, char **err)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && env -u SCOPEPROF_REPORT_IN_MEMORY -u SCOPEPROF_REPORT_TRACE %s '%s' %s "
             "> stdout.txt 2> stderr.txt", dir, env, SCOPEPROF_EXE, args);
    int ws = system(cmd);
    char path[512];
    snprintf(path, sizeof path, "%s/stdout.txt", dir);
    *out = slurp_sized(path, NULL);
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    *err = slurp_sized(path, NULL);
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128;
}

/* The page named by "-o NAME" in args, or NULL; *len its size. */
static char *page_of(const char *args, size_t *len)
{
    const char *o = strstr(args, "-o ");
    if (!o)
        return NULL;
    char name[256];
    if (sscanf(o + 3, "%255s", name) != 1)
        return NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return slurp_sized(path, len);
}

/* Run `scopeprof ARGS` (a shell word list) in the test directory; exit
 * status, stdout and stderr in out/err (caller frees).  Every command runs
 * twice, streamed and in memory (SCOPEPROF_REPORT_IN_MEMORY=1): the same
 * status, output and page, byte for byte (docs/stream.md). */
static int run(const char *args, char **out, char **err)
{
    char *mout, *merr;
    int mstatus = run_with("SCOPEPROF_REPORT_IN_MEMORY=1", args, &mout, &merr);
    size_t mlen = 0, slen = 0;
    char *mpage = page_of(args, &mlen);
    const char *o = strstr(args, "-o ");
    char name[256], path[512];
    if (o && sscanf(o + 3, "%255s", name) == 1) { /* the streamed run writes its own */
        snprintf(path, sizeof path, "%s/%s", dir, name);
        unlink(path);
    }
    int status = run_with("", args, out, err);
    char *spage = page_of(args, &slen);
    cr_expect_eq(status, mstatus, "%s: streamed %d, in memory %d", args, status, mstatus);
    cr_expect_str_eq(*out, mout, "%s: output differs streamed / in memory", args);
    cr_expect_str_eq(*err, merr, "%s: messages differ streamed / in memory", args);
    cr_expect((!mpage && !spage) ||
                  (mpage && spage && mlen == slen && !memcmp(mpage, spage, mlen)),
              "%s: the page differs streamed / in memory", args);
    free(mout);
    free(merr);
    free(mpage);
    free(spage);
    return status;
}

/* `args` streamed: the trace says so for every run. */
static void expect_streamed(const char *args, size_t runs)
{
    char *out, *err;
    run_with("SCOPEPROF_REPORT_TRACE=1", args, &out, &err);
    cr_expect_eq(count(err, "scopeprof report: html: "), runs, "%s:\n%s", args, err);
    cr_expect_eq(count(err, "streamed\n"), runs, "%s:\n%s", args, err);
    free(out);
    free(err);
}

static size_t lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* One rank's file: main [0, 1 ms] > `leaf` n times, 100 µs each. */
static void write_rank(const char *name, uint32_t rank, const char *leaf, size_t n,
                       const char *run_id)
{
    sp_profile *p = sp_profile_new();
    size_t total = n + 1;
    p->start = malloc(total * sizeof *p->start);
    p->end = malloc(total * sizeof *p->end);
    p->thread_ids = malloc(total * sizeof *p->thread_ids);
    p->rows = calloc(2, sizeof *p->rows);
    const char *regions[2] = {"main", leaf};
    for (int r = 0; r < 2; r++) {
        sp_row *row = &p->rows[p->num_rows++];
        row->region = (uint32_t)sp_profile_intern_name(p, regions[r]);
        row->rank = rank;
        row->offset = p->num_events;
        row->source_line = -1;
        row->exclusive_total = -1;
        row->source_file = strdup("");
        row->source_text = strdup("");
        row->tags = strdup("[]");
        row->event_metadata = strdup("[]");
        for (size_t k = 0; k < (r ? n : 1); k++) {
            int64_t s = r ? 10000 + (int64_t)k * 100000 : 0;
            p->start[p->num_events] = 1000000 + s;
            p->end[p->num_events] = 1000000 + (r ? s + 90000 : (int64_t)n * 100000 + 20000);
            p->thread_ids[p->num_events++] = 0;
            row->count++;
        }
        sp_summary_compute(p->start + row->offset, p->end + row->offset, NULL, row->count,
                           &row->stats);
    }
    p->has_thread_table = 1;
    p->threads = calloc(1, sizeof *p->threads);
    p->threads[0] = (sp_thread_row){.rank = rank, .start_ns = 0, .end_ns = -1, .cpu_ns = -1,
                                    .name = strdup("MainThread")};
    p->num_threads = 1;
    p->num_ranks = rank + 1;
    sp_profile_set_meta_int(p, "start_time_ns", 1000000);
    sp_profile_set_meta_int(p, "mpi_size", 2);
    sp_profile_set_meta_int(p, "mpi_rank", rank);
    sp_profile_set_meta_string(p, "label", "html-demo");
    if (run_id)
        sp_profile_set_meta_string(p, "run_id", run_id);
    char err[512], path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    sp_profile_free(p);
}

static size_t count(const char *s, const char *what)
{
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!k || i + k > n)
            return 0;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return 0;
        i += k;
    }
    return 1;
}

Test(cli_html, one_self_contained_page_with_every_section)
{
    write_rank("a_rank00000.h5", 0, "solve", 5, "run-a");
    write_rank("a_rank00001.h5", 1, "solve", 8, "run-a");
    char *out, *err;
    int status = run("report a_rank00000.h5 a_rank00001.h5 -o report.html", &out, &err);
    cr_assert_eq(status, 0, "%s", err);
    cr_expect_str_eq(out, "wrote report.html\n");
    cr_expect_str_eq(err, "");
    char path[512];
    snprintf(path, sizeof path, "%s/report.html", dir);
    size_t len;
    char *page = slurp_sized(path, &len);
    cr_assert_not_null(page);
    cr_expect_eq(strncmp(page, "<!DOCTYPE html>", 15), 0);
    static const char *const sections[] = {"Findings", "Hotspots", "Call tree", "Flame graph",
                                           "Timeline", "Load balance", "Threads"};
    for (size_t k = 0; k < sizeof sections / sizeof *sections; k++) {
        char h2[64];
        snprintf(h2, sizeof h2, "<h2>%s</h2>", sections[k]);
        cr_expect_eq(count(page, h2), 1, "%s", h2);
    }
    cr_expect_eq(count(page, "<h2>MPI</h2>"), 0, "no MPI calls, no MPI section");
    cr_expect_eq(count(page, "<h2>Comparison</h2>"), 0);
    /* nothing fetched: no external script, style, font or link */
    cr_expect_eq(count(page, " src="), 0);
    cr_expect_eq(count(page, "<link"), 0);
    cr_expect_eq(count(page, "url("), 0);
    cr_expect_eq(count(page, "http"), 0);
    cr_expect_eq(count(page, "<script type=\"application/json\" id=\"sp-data\">"), 1);
    /* the numbers: 2 ranks, 15 calls, main's imbalance on rank 1 */
    cr_expect_neq(strstr(page, "<dt>ranks</dt><dd>2</dd>"), NULL);
    cr_expect_neq(strstr(page, "<dt>calls</dt><dd>15</dd>"), NULL);
    cr_expect_neq(strstr(page, "<dt>worst imbalance</dt><dd>main (rank 1, +150 \xc2\xb5s, max/mean 1.22)</dd>"),
                  NULL, "worst imbalance: main, rank 1: 820 µs against a mean of 670");
    cr_expect(valid_utf8((const unsigned char *)page, len));
    free(page), free(out), free(err);
    expect_streamed("report a_rank00000.h5 a_rank00001.h5 -o report.html", 1);

    /* any other name: the text report, to that file */
    status = run("report a_rank00000.h5 -o report.txt", &out, &err);
    cr_expect_eq(status, 0, "%s", err);
    snprintf(path, sizeof path, "%s/report.txt", dir);
    page = slurp_sized(path, NULL);
    cr_assert_not_null(page);
    cr_expect_eq(strncmp(page, "scopeprof report: html-demo", 27), 0, "%s", page);
    free(page), free(out), free(err);
}

Test(cli_html, hostile_names_stay_inside_the_data)
{
    write_rank("h_rank00000.h5", 0, "</script><img onerror=x>\xff\xfe\"&'", 3, NULL);
    char *out, *err;
    int status = run("report h_rank00000.h5 -o hostile.html", &out, &err);
    cr_assert_eq(status, 0, "%s", err);
    char path[512];
    snprintf(path, sizeof path, "%s/hostile.html", dir);
    size_t len;
    char *page = slurp_sized(path, &len);
    cr_assert_not_null(page);
    /* only the two </script> that close the data block and the script */
    cr_expect_eq(count(page, "</script"), 2);
    cr_expect_eq(count(page, "<img"), 0);
    cr_expect(valid_utf8((const unsigned char *)page, len), "invalid UTF-8 written");
    cr_expect_neq(strstr(page, "&lt;/script&gt;&lt;img onerror=x&gt;"), NULL,
                  "escaped in the tables");
    free(page), free(out), free(err);
}

Test(cli_html, runs_compared_by_compare_or_run_id)
{
    write_rank("a_rank00000.h5", 0, "solve", 5, "run-a");
    write_rank("b_rank00000.h5", 0, "solve", 9, "run-b");
    const char *const cases[] = {"report a_rank00000.h5 --compare b_rank00000.h5 -o c.html",
                                 "report a_rank00000.h5 b_rank00000.h5 -o c.html"};
    for (size_t k = 0; k < 2; k++) {
        char *out, *err;
        int status = run(cases[k], &out, &err);
        cr_assert_eq(status, 0, "%s: %s", cases[k], err);
        char path[512];
        snprintf(path, sizeof path, "%s/c.html", dir);
        char *page = slurp_sized(path, NULL);
        cr_assert_not_null(page);
        cr_expect_eq(count(page, "<h2>Comparison</h2>"), 1, "%s", cases[k]);
        /* solve: 5 x 90 µs against 9 x 90 µs = +80 % */
        cr_expect_neq(strstr(page, "+80.0 %"), NULL, "%s", cases[k]);
        cr_expect_eq(strstr(page, "(speedup, efficiency)"), NULL, "same rank counts");
        free(page), free(out), free(err);
        expect_streamed(cases[k], 2);
    }
    /* 2 ranks against 1: speedup of the wall time, efficiency per rank */
    write_rank("c_rank00000.h5", 0, "solve", 5, "run-c");
    write_rank("c_rank00001.h5", 1, "solve", 5, "run-c");
    char *out, *err;
    int status = run("report a_rank00000.h5 --compare c_rank00000.h5 c_rank00001.h5 -o s.html",
                     &out, &err);
    cr_assert_eq(status, 0, "%s", err);
    char path[512];
    snprintf(path, sizeof path, "%s/s.html", dir);
    char *page = slurp_sized(path, NULL);
    cr_assert_not_null(page);
    /* same wall time on twice the ranks: speedup 1.00, efficiency 50 % */
    cr_expect_neq(strstr(page, "(speedup, efficiency)</td><td>1.00</td><td>1.00</td><td>50 %</td>"),
                  NULL, "%s", strstr(page, "compare-speedup") ? strstr(page, "compare-speedup") : "");
    free(page), free(out), free(err);
}

Test(cli_html, usage_and_file_errors)
{
    write_rank("a_rank00000.h5", 0, "solve", 2, NULL);
    static const struct {
        const char *args;
        int status;
        const char *says;
    } cases[] = {
        {"report a_rank00000.h5 --compare -o x.html", 2, "no files after it"},
        {"report --compare a_rank00000.h5 -o x.html", 2, "before it"},
        {"report a_rank00000.h5 --compare a_rank00000.h5", 2, "HTML"},
        {"report a_rank00000.h5 -o /nonexistent-dir/x.html", 1, "/nonexistent-dir/x.html"},
        {"report missing.h5 -o x.html", 1, "missing.h5"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char *out, *err;
        int status = run(cases[k].args, &out, &err);
        cr_expect_eq(status, cases[k].status, "%s: %d %s", cases[k].args, status, err);
        /* one line naming the problem (usage errors add the --help hint) */
        cr_expect_eq(lines(err), cases[k].status == 2 ? 2u : 1u, "%s: %s", cases[k].args, err);
        cr_expect_neq(strstr(err, cases[k].says), NULL, "%s: %s", cases[k].args, err);
        free(out), free(err);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/x.html", dir);
    cr_expect_neq(access(path, F_OK), 0, "no page left behind");
}
