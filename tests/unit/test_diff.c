/* test_diff.c - comparing runs (src/diff): statistics of one run per call
 * path and by name, matching, the confidence interval of a change, the gate,
 * on small profiles with known numbers written to real files. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "h5_test_util.h"
#include "scopeprof/diff.h"
#include "scopeprof/h5.h"

/* main [0, 1000) on rank `rank` holding n calls of `work` of the given
 * durations back to back from 10, and, when tail > 0, one `tail` call. */
static void write_run(const char *path, uint32_t rank, const int64_t *durations, size_t n,
                      int64_t tail)
{
    int64_t main_start = 0, main_end = 100000;
    sp_profile *p = simple_profile("main", rank, &main_start, &main_end, 1);
    int64_t starts[64], ends[64], t = 10;
    cr_assert(n <= 64);
    for (size_t k = 0; k < n; k++) {
        starts[k] = t;
        ends[k] = t + durations[k];
        t = ends[k] + 5;
    }
    add_row(p, "work", rank, starts, ends, n);
    if (tail > 0) {
        int64_t s = t, e = t + tail;
        add_row(p, "tail", rank, &s, &e, 1);
    }
    char err[512];
    cr_assert_eq(sp_h5_write(path, p, err, sizeof err), 0, "%s", err);
    sp_profile_free(p);
}

static char dir[512];

static void setup(void)
{
    make_temp_dir(dir, sizeof dir);
}

static void teardown(void)
{
    remove_tree(dir);
}

static void load(sp_run_stats *run, const char *name, int by_name)
{
    char path[700], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(sp_run_stats_load(path, NULL, by_name, run, err, sizeof err), 0, "%s", err);
}

static const sp_diff_row *row_of(const sp_diff *d, const char *key)
{
    for (size_t k = 0; k < d->num_rows; k++)
        if (!strcmp(d->rows[k].key, key))
            return &d->rows[k];
    cr_assert_fail("no row %s", key);
    return NULL;
}

TestSuite(diff, .init = setup, .fini = teardown);

Test(diff, run_statistics_by_path_and_by_name)
{
    char path[700];
    int64_t d[4] = {100, 200, 300, 400};
    snprintf(path, sizeof path, "%s/a.h5", dir);
    write_run(path, 0, d, 4, 50);
    sp_run_stats run;
    load(&run, "a.h5", 0);
    cr_assert_eq(run.num_keys, 3);
    cr_assert_str_eq(run.keys[0].key, "main");
    cr_assert_str_eq(run.keys[1].key, "main > tail");
    cr_assert_str_eq(run.keys[2].key, "main > work");
    const sp_key_stats *w = sp_run_stats_find(&run, "main > work");
    cr_assert_str_eq(w->name, "work");
    cr_assert_eq(w->depth, 1);
    cr_assert_eq(w->parent, 0);
    cr_assert_eq(w->calls, 4);
    cr_assert_eq(sp_key_metric(&run, w, SP_METRIC_TOTAL), 1000);
    cr_assert_eq(sp_key_metric(&run, w, SP_METRIC_OWN), 1000);
    cr_assert_eq(sp_key_metric(&run, w, SP_METRIC_MEAN), 250);
    cr_assert_eq(sp_key_metric(&run, w, SP_METRIC_CALLS), 4);
    cr_assert_eq(sp_key_metric(&run, w, SP_METRIC_P50), 250); /* between 200 and 300 */
    cr_assert_float_eq(sp_key_metric(&run, w, SP_METRIC_P95), 385, 1e-9);
    cr_assert_eq(sp_key_metric(&run, w, SP_METRIC_IMBALANCE), 1);
    cr_assert_eq(sp_key_metric(&run, w, SP_METRIC_MIN), 100);
    cr_assert_eq(sp_key_metric(&run, w, SP_METRIC_MAX), 400);
    cr_assert_float_eq(sp_key_metric(&run, w, SP_METRIC_P99), 397, 1e-9);
    cr_assert(isnan(sp_key_metric_se(&run, w, SP_METRIC_MAX)));
    /* sd of 100..400 = 129.1; total se = sqrt(4) sd, mean se = sd / 2 */
    double sd = sqrt(50000.0 / 3);
    cr_assert_float_eq(sp_key_metric_se(&run, w, SP_METRIC_TOTAL), 2 * sd, 1e-9);
    cr_assert_float_eq(sp_key_metric_se(&run, w, SP_METRIC_MEAN), sd / 2, 1e-9);
    cr_assert_eq(sp_key_metric_se(&run, w, SP_METRIC_CALLS), 0);
    const sp_key_stats *m = sp_run_stats_find(&run, "main");
    cr_assert_eq(sp_key_metric(&run, m, SP_METRIC_OWN), 100000 - 1000 - 50);
    cr_assert(isnan(sp_key_metric_se(&run, m, SP_METRIC_TOTAL)), "one call: no spread");
    cr_assert_eq(run.num_ranks, 1);
    cr_assert_eq(run.num_calls, 6);
    sp_run_stats_free(&run);

    load(&run, "a.h5", 1);
    cr_assert_eq(run.num_keys, 3);
    cr_assert_str_eq(run.keys[2].key, "work");
    cr_assert_eq(run.keys[2].parent, -1);
    cr_assert_eq(run.keys[2].depth, 0);
    sp_run_stats_free(&run);
}

Test(diff, a_directory_is_one_run_of_several_ranks)
{
    char sub[700], path[800];
    snprintf(sub, sizeof sub, "%s/run", dir);
    cr_assert_eq(mkdir(sub, 0700), 0);
    int64_t d0[2] = {100, 100}, d1[2] = {300, 300};
    snprintf(path, sizeof path, "%s/p_rank00000.h5", sub);
    write_run(path, 0, d0, 2, 0);
    snprintf(path, sizeof path, "%s/p_rank00001.h5", sub);
    write_run(path, 1, d1, 2, 0);
    sp_run_stats run;
    load(&run, "run", 0);
    cr_assert_eq(run.num_files, 2);
    cr_assert_eq(run.num_ranks, 2);
    const sp_key_stats *w = sp_run_stats_find(&run, "main > work");
    cr_assert_eq(w->calls, 4);
    cr_assert_eq(w->total, 800);
    /* per-rank totals 200 and 600: imbalance 600 / 400 */
    cr_assert_float_eq(sp_key_metric(&run, w, SP_METRIC_IMBALANCE), 1.5, 1e-12);
    sp_run_stats_free(&run);
    /* the prefix names the same files */
    load(&run, "run/p", 0);
    cr_assert_eq(run.num_files, 2);
    sp_run_stats_free(&run);
}

Test(diff, matching_status_change_and_interval)
{
    char path[700];
    int64_t a[4] = {100, 100, 100, 100}, b[4] = {130, 130, 130, 130};
    snprintf(path, sizeof path, "%s/a.h5", dir);
    write_run(path, 0, a, 4, 50);
    snprintf(path, sizeof path, "%s/b.h5", dir);
    write_run(path, 0, b, 4, 0);
    sp_run_stats ra, rb;
    load(&ra, "a.h5", 0);
    load(&rb, "b.h5", 0);
    sp_diff d;
    char err[256];
    cr_assert_eq(sp_diff_build(&ra, 1, &rb, 1, SP_METRIC_TOTAL, &d, err, sizeof err), 0);
    cr_assert_eq(d.num_rows, 3);
    const sp_diff_row *w = row_of(&d, "main > work");
    cr_assert_eq(w->status, SP_DIFF_BOTH);
    cr_assert_eq(w->a, 400);
    cr_assert_eq(w->b, 520);
    cr_assert_eq(w->delta, 120);
    cr_assert_float_eq(w->pct, 30, 1e-9);
    /* identical calls: no spread, the interval is the point */
    cr_assert_eq(w->noise, SP_NOISE_CALLS);
    cr_assert_float_eq(w->pct_low, 30, 1e-9);
    cr_assert_float_eq(w->pct_high, 30, 1e-9);
    const sp_diff_row *t = row_of(&d, "main > tail");
    cr_assert_eq(t->status, SP_DIFF_REMOVED);
    cr_assert_eq(t->b, 0);
    cr_assert(isnan(t->pct_low));
    const sp_diff_row *m = row_of(&d, "main");
    cr_assert_eq(m->noise, SP_NOISE_NONE, "one call per run: noise unknown");
    /* the gate: work flagged above 10 %; main (0 %) is not; not above 30 % */
    cr_assert_eq(sp_diff_judge(&d, 10, 0, 0), 1);
    cr_assert(row_of(&d, "main > work")->flagged);
    cr_assert_eq(sp_diff_judge(&d, 30, 0, 0), 0);
    sp_diff_free(&d);
    /* B -> A: tail is new; --fail-on-new flags it */
    cr_assert_eq(sp_diff_build(&rb, 1, &ra, 1, SP_METRIC_TOTAL, &d, err, sizeof err), 0);
    cr_assert_eq(row_of(&d, "main > tail")->status, SP_DIFF_NEW);
    cr_assert_eq(sp_diff_judge(&d, 10, 0, 0), 0);
    cr_assert_eq(sp_diff_judge(&d, 10, 1, 0), 1);
    sp_diff_sort_rows(&d, SP_DIFF_SORT_PCT);
    cr_assert_str_eq(d.rows[0].key, "main > tail", "no percentage: first");
    cr_assert_str_eq(d.rows[1].key, "main > work");
    sp_diff_sort_rows(&d, SP_DIFF_SORT_NAME);
    cr_assert_str_eq(d.rows[0].key, "main");
    sp_diff_free(&d);
    sp_run_stats_free(&ra);
    sp_run_stats_free(&rb);
}

Test(diff, noisy_calls_widen_the_interval_past_the_threshold)
{
    char path[700];
    /* means 250 and 300 (+20 %) but the calls spread from 100 to 400 */
    int64_t a[4] = {100, 200, 300, 400}, b[4] = {150, 250, 350, 450};
    snprintf(path, sizeof path, "%s/a.h5", dir);
    write_run(path, 0, a, 4, 0);
    snprintf(path, sizeof path, "%s/b.h5", dir);
    write_run(path, 0, b, 4, 0);
    sp_run_stats ra, rb;
    load(&ra, "a.h5", 0);
    load(&rb, "b.h5", 0);
    sp_diff d;
    char err[256];
    cr_assert_eq(sp_diff_build(&ra, 1, &rb, 1, SP_METRIC_MEAN, &d, err, sizeof err), 0);
    const sp_diff_row *w = row_of(&d, "main > work");
    cr_assert_float_eq(w->pct, 20, 1e-9);
    /* se_a = se_b = 64.55; ratio 1.2: se = sqrt(64.55^2 (1 + 1.44)) / 250 */
    double sd = sqrt(50000.0 / 3) / 2;
    double half = 100 * 1.6448536 * sqrt(sd * sd + 1.44 * sd * sd) / 250;
    cr_assert_float_eq(w->pct_low, 20 - half, 1e-6);
    cr_assert_float_eq(w->pct_high, 20 + half, 1e-6);
    cr_assert_eq(sp_diff_judge(&d, 10, 0, 0), 0, "within noise");
    cr_assert_eq(sp_diff_judge(&d, 10, 0, 1), 1, "--no-noise: the change alone");
    sp_diff_free(&d);
    sp_run_stats_free(&ra);
    sp_run_stats_free(&rb);
}

Test(diff, repetitions_give_the_run_to_run_spread)
{
    /* three runs per side: work totals 400, 440, 360 (A) and 480, 520, 440
     * (B): means 400 and 480, sd 40 each; t(4 df) = 2.132 */
    const int64_t per_call[2][3] = {{100, 110, 90}, {120, 130, 110}};
    sp_run_stats runs[2][3];
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 3; r++) {
            int64_t d[4];
            for (int k = 0; k < 4; k++)
                d[k] = per_call[s][r];
            char name[32], path[700];
            snprintf(name, sizeof name, "%c%d.h5", s ? 'b' : 'a', r);
            snprintf(path, sizeof path, "%s/%s", dir, name);
            write_run(path, 0, d, 4, 0);
            load(&runs[s][r], name, 0);
        }
    sp_diff d;
    char err[256];
    cr_assert_eq(sp_diff_build(runs[0], 3, runs[1], 3, SP_METRIC_TOTAL, &d, err, sizeof err), 0);
    const sp_diff_row *w = row_of(&d, "main > work");
    cr_assert_eq(w->noise, SP_NOISE_RUNS);
    cr_assert_float_eq(w->pct, 20, 1e-9);
    cr_assert_eq(w->calls_a, 12);
    double var = 1600.0 / 3, ratio = 1.2;
    double half = 100 * 2.132 * sqrt(var + ratio * ratio * var) / 400;
    cr_assert_float_eq(w->pct_low, 20 - half, 1e-6);
    cr_assert_eq(sp_diff_judge(&d, 10, 0, 0), 0, "20 %% +- 19.2 is not surely above 10 %%");
    cr_assert_eq(sp_diff_judge(&d, 0.5, 0, 0), 1);
    sp_diff_free(&d);
    /* one candidate run borrows the baseline's relative spread (sd/mean 0.1) */
    cr_assert_eq(sp_diff_build(runs[0], 3, &runs[1][0], 1, SP_METRIC_TOTAL, &d, err,
                               sizeof err), 0);
    w = row_of(&d, "main > work");
    cr_assert_eq(w->noise, SP_NOISE_RUNS);
    double var_b = 0.01 * 480 * 480;
    half = 100 * sp_t95(2) * sqrt(var_b + ratio * ratio * var) / 400;
    cr_assert_float_eq(w->pct_low, 20 - half, 1e-6);
    sp_diff_free(&d);
    for (int s = 0; s < 2; s++)
        for (int r = 0; r < 3; r++)
            sp_run_stats_free(&runs[s][r]);
}

Test(diff, delay_noise_gives_one_call_a_spread)
{
    /* 40 calls of 100 ns, one of them delayed by 1000 ns: excess 1000^2 over
     * 5000 ns of calls (noise rate 200 ns), 1000 ns above the medians (delay
     * share 0.2).  main (one call of 100 us) is then uncertain by the larger
     * of sqrt(200 x 100000) and 0.2 x 100000 ns. */
    char path[700];
    int64_t d[40];
    for (int k = 0; k < 40; k++)
        d[k] = k == 7 ? 1100 : 100;
    snprintf(path, sizeof path, "%s/a.h5", dir);
    write_run(path, 0, d, 40, 0);
    sp_run_stats run;
    load(&run, "a.h5", 0);
    cr_assert_float_eq(run.noise_rate, 200, 1e-9);
    cr_assert_float_eq(run.delay_share, 0.2, 1e-12);
    const sp_key_stats *m = sp_run_stats_find(&run, "main");
    cr_assert_float_eq(sp_key_metric_se(&run, m, SP_METRIC_TOTAL), 20000, 1e-6);
    cr_assert_float_eq(sp_key_metric_se(&run, m, SP_METRIC_P50), 20000, 1e-6);
    cr_assert_float_eq(sp_key_metric_se(&run, m, SP_METRIC_OWN), 0.2 * (100000 - 5000), 1e-6);
    /* work: sqrt(40) x sd = 1000 = sqrt(200 x 5000) = 0.2 x 5000 */
    const sp_key_stats *w = sp_run_stats_find(&run, "main > work");
    cr_assert_float_eq(w->mean_incl, 125, 1e-9);
    cr_assert_float_eq(sp_key_metric_se(&run, w, SP_METRIC_TOTAL), 1000, 1e-6);
    cr_assert_float_eq(sp_key_metric_se(&run, w, SP_METRIC_MEAN), 25, 1e-6);
    sp_run_stats_free(&run);
    /* a quiet run: the Poisson term is the larger for a short span */
    for (int k = 0; k < 40; k++)
        d[k] = k == 7 ? 110 : 100;
    snprintf(path, sizeof path, "%s/q.h5", dir);
    write_run(path, 0, d, 40, 0);
    load(&run, "q.h5", 0);
    cr_assert_float_eq(run.noise_rate, 100.0 / 4010, 1e-12);
    cr_assert_float_eq(run.delay_share, 10.0 / 4010, 1e-12);
    m = sp_run_stats_find(&run, "main");
    cr_assert_float_eq(sp_key_metric_se(&run, m, SP_METRIC_TOTAL),
                       fmax(sqrt(100.0 / 4010 * 100000), 10.0 / 4010 * 100000), 1e-6);
    sp_run_stats_free(&run);
    /* fewer than SP_DIFF_MIN_NOISE_CALLS calls: no estimate */
    snprintf(path, sizeof path, "%s/b.h5", dir);
    write_run(path, 0, d, 10, 0);
    load(&run, "b.h5", 0);
    cr_assert(isnan(run.noise_rate) && isnan(run.delay_share));
    cr_assert(isnan(sp_key_metric_se(&run, sp_run_stats_find(&run, "main"), SP_METRIC_TOTAL)));
    sp_run_stats_free(&run);
}

Test(diff, option_values)
{
    sp_metric m;
    cr_assert_eq(sp_metric_parse("p95", &m), 0);
    cr_assert_eq(m, SP_METRIC_P95);
    cr_assert_eq(sp_metric_parse("avg", &m), 0);
    cr_assert_eq(m, SP_METRIC_MEAN);
    cr_assert_eq(sp_metric_parse("p99", &m), 0);
    cr_assert_eq(m, SP_METRIC_P99);
    cr_assert_eq(sp_metric_parse("median", &m), -1);
    cr_assert_str_eq(sp_metric_name(SP_METRIC_IMBALANCE), "imbalance");
    sp_diff_sort s;
    cr_assert_eq(sp_diff_parse_sort("pct", &s), 0);
    cr_assert_eq(s, SP_DIFF_SORT_PCT);
    cr_assert_eq(sp_diff_parse_sort("size", &s), -1);
    cr_assert_float_eq(sp_t95(1), 6.314, 1e-9);
    cr_assert_float_eq(sp_t95(0), 1.6448536, 1e-9);
    cr_assert_float_eq(sp_t95(100), 1.6448536, 1e-9);
}

Test(diff, missing_inputs_are_named)
{
    char path[700], err[512];
    sp_run_stats run;
    snprintf(path, sizeof path, "%s/none", dir);
    cr_assert_eq(sp_run_stats_load(path, NULL, 0, &run, err, sizeof err), -1);
    cr_assert(strstr(err, path) && strstr(err, "none_rank*.h5"), "%s", err);
    snprintf(path, sizeof path, "%s/*.h5", dir);
    cr_assert_eq(sp_run_stats_load(path, NULL, 0, &run, err, sizeof err), -1);
    cr_assert(strstr(err, "no file matches"), "%s", err);
    cr_assert_eq(sp_run_stats_load(dir, NULL, 0, &run, err, sizeof err), -1);
    cr_assert(strstr(err, "a directory without .h5 files"), "%s", err);
}
