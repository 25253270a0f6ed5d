/* test_recording_faults.c - faults of the recording side (issue 13):
 *
 *  - a relative output prefix is resolved when recording starts, so a
 *    program that chdir()s before it exits still writes where it was told;
 *  - a missing output directory is created at the start (mkdir -p, with the
 *    umask); one that cannot be created is said at the start and the file
 *    goes to the working directory;
 *  - SCOPE_PROFILER_FLUSH_INTERVAL values that are not finite, overflow or
 *    are absurdly small get one line;
 * The fault table in docs/faults.md names these tests. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* Under ASan or TSan the shadow memory of each thread's allocations dwarfs
 * what the shim keeps: the memory bound is checked in the plain build. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#endif

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void run_prefix(struct harness_run *run, const char *init, const char *dir,
                       const char *const *env)
{
    const char *argv[] = {harness_program("output_prefix"), init, dir, NULL};
    cr_assert_eq(harness_run(run, argv, env, 1), 0);
    cr_assert_eq(run->exit_code, 0, "status %d, stderr: %.2000s", run->exit_code, run->err);
}

static void expect_three_calls(const struct harness_run *run, const char *name)
{
    sp_profile *p = harness_load(run, name);
    cr_assert_eq(harness_calls(p, "work"), 3);
    sp_profile_free(p);
}

/* ---- item 6: the prefix is resolved at the start -------------------------- */

Test(output_prefix, relative_env_prefix_survives_chdir)
{
    struct harness_run run;
    const char *env[] = {"SCOPE_PROFILER_OUTPUT=prof", NULL};
    run_prefix(&run, "-", "moved", env);
    cr_assert(harness_exists(&run, "prof_rank00000.h5"), "stderr: %s", run.err);
    cr_assert_eq(harness_count_files(&run, "moved/*.h5"), 0, "the file followed the chdir");
    expect_three_calls(&run, "prof_rank00000.h5");
    harness_run_free(&run);
}

Test(output_prefix, relative_sp_init_prefix_survives_chdir)
{
    struct harness_run run;
    run_prefix(&run, "mine", "moved", NULL);
    cr_assert(harness_exists(&run, "mine_rank00000.h5"), "stderr: %s", run.err);
    cr_assert_eq(harness_count_files(&run, "moved/*.h5"), 0, "the file followed the chdir");
    expect_three_calls(&run, "mine_rank00000.h5");
    harness_run_free(&run);
}

/* ---- item 7: a missing output directory ------------------------------------ */

Test(output_prefix, missing_directory_is_created_with_the_umask)
{
    mode_t mask = umask(027);
    struct harness_run run;
    const char *env[] = {"SCOPE_PROFILER_OUTPUT=new/dir/x", NULL};
    run_prefix(&run, "-", "-", env);
    umask(mask);
    cr_assert(harness_exists(&run, "new/dir/x_rank00000.h5"), "stderr: %s", run.err);
    struct stat st;
    cr_assert_eq(stat(harness_path(&run, "new/dir"), &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0750, "mode %o", (unsigned)(st.st_mode & 0777));
    cr_assert_eq(stat(harness_path(&run, "new"), &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0750, "mode %o", (unsigned)(st.st_mode & 0777));
    expect_three_calls(&run, "new/dir/x_rank00000.h5");
    cr_assert_eq(run.err[0] ? strcmp(run.err, "recorded\n") : 0, 0, "stderr: %s", run.err);
    harness_run_free(&run);
}

Test(output_prefix, missing_directory_of_sp_init_is_created)
{
    struct harness_run run;
    run_prefix(&run, "out/heat", "moved", NULL);
    cr_assert(harness_exists(&run, "out/heat_rank00000.h5"), "stderr: %s", run.err);
    expect_three_calls(&run, "out/heat_rank00000.h5");
    harness_run_free(&run);
}

Test(output_prefix, uncreatable_directory_is_said_at_start_and_falls_back)
{
    struct harness_run run;
    /* "blocker" is a file: blocker/x cannot be a directory.  The run's
     * directory exists only inside harness_run, so the program makes the
     * file itself... through the environment of a shell. */
    const char *argv[] = {"/bin/sh", "-c",
                          "echo > blocker && exec \"$0\" - -", harness_program("output_prefix"),
                          NULL};
    const char *env[] = {"SCOPE_PROFILER_OUTPUT=blocker/sub/x", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "status %d, stderr: %.2000s", run.exit_code, run.err);
    const char *line = strstr(run.err, "cannot create the output directory");
    const char *recorded = strstr(run.err, "recorded\n");
    cr_assert(line, "stderr: %s", run.err);
    cr_assert(strstr(line, "blocker/sub"), "stderr: %s", run.err);
    cr_assert(recorded && line < recorded, "not said at the start: %s", run.err);
    cr_assert_eq(count_lines(run.err), 2, "stderr: %s", run.err);
    cr_assert(harness_exists(&run, "x_rank00000.h5"), "stderr: %s", run.err);
    expect_three_calls(&run, "x_rank00000.h5");
    harness_run_free(&run);
}

/* ---- item 16: SCOPE_PROFILER_FLUSH_INTERVAL -------------------------------- */

static void run_interval(const char *value, const char *expect)
{
    char var[128];
    snprintf(var, sizeof var, "SCOPE_PROFILER_FLUSH_INTERVAL=%s", value);
    const char *env[] = {var, "SCOPE_PROFILER_OUTPUT=prof", NULL};
    struct harness_run run;
    run_prefix(&run, "-", "-", env);
    cr_assert(strstr(run.err, expect), "%s: stderr: %s", value, run.err);
    cr_assert(strstr(run.err, value), "%s: the line does not name the value: %s", value, run.err);
    /* one line from us, one from the program */
    cr_assert_eq(count_lines(run.err), 2, "%s: stderr: %s", value, run.err);
    expect_three_calls(&run, "prof_rank00000.h5");
    harness_run_free(&run);
}

Test(flush_interval, non_finite_and_overflowing_values_are_refused)
{
    run_interval("nan", "is not a number of seconds");
    run_interval("inf", "is not a number of seconds");
    run_interval("1e308", "is not a number of seconds");
    run_interval("99999999999999999999", "is not a number of seconds");
}

Test(flush_interval, tiny_values_are_raised_to_the_minimum)
{
    run_interval("0.000000001", "below the minimum");
}

Test(flush_interval, sane_values_are_silent)
{
    const char *env[] = {"SCOPE_PROFILER_FLUSH_INTERVAL=0.5", "SCOPE_PROFILER_OUTPUT=prof", NULL};
    struct harness_run run;
    run_prefix(&run, "-", "-", env);
    cr_assert_str_eq(run.err, "recorded\n");
    harness_run_free(&run);
}

/* ---- item 2: markers in signal handlers ------------------------------------ */

/* Calls a handler made while the profiler was busy on its thread: the
 * number in the shim's line at exit, 0 without it. */
static long nested_dropped(const char *err)
{
    const char *line = strstr(err, " marker calls made by signal handlers");
    if (!line)
        return 0;
    const char *s = line;
    while (s > err && s[-1] >= '0' && s[-1] <= '9')
        s--;
    return atol(s);
}

static void run_signals(const char *timer)
{
    struct harness_run run;
    const char *argv[] = {harness_program("signal_markers"), "3000", NULL};
    char var[64];
    snprintf(var, sizeof var, "SCOPE_PROFILER_TIMER=%s", timer);
    const char *env[] = {var, "SCOPE_PROFILER_OUTPUT=sig", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.signal, 0, "killed by signal %d: %s", run.signal, run.err);
    cr_assert_eq(run.exit_code, 0, "status %d, stderr: %.2000s", run.exit_code, run.err);
    long main_calls = 0, handler_calls = 0;
    cr_assert_eq(sscanf(run.out, "main=%ld handler=%ld", &main_calls, &handler_calls), 2,
                 "stdout: %s", run.out);
    cr_assert(!strstr(run.err, "without a matching"), "stderr: %s", run.err);
    sp_profile *p = harness_load(&run, "sig_rank00000.h5");
    /* The main flow: exact. */
    cr_assert_eq(harness_calls(p, "main"), (unsigned long)main_calls);
    cr_assert_eq(harness_calls(p, "inner"), (unsigned long)main_calls);
    /* The handler: each call kept (nested on the interrupted lane) or
     * counted and dropped. */
    long kept = (long)harness_calls(p, "handler");
    cr_assert_eq(kept + nested_dropped(run.err), handler_calls, "kept %ld, stderr: %s", kept,
                 run.err);
    cr_assert_gt(kept, 0);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(signals, markers_in_a_10khz_handler_keep_the_main_flow_exact)
{
    run_signals("auto");
}

Test(signals, markers_in_a_handler_with_the_clock_timer)
{
    run_signals("clock");
}

/* ---- item 11: finished threads give their memory back ---------------------- */

Test(threads, finished_threads_keep_their_rows_and_events_not_their_pages)
{
    struct harness_run run;
    const char *argv[] = {harness_program("threads_churn"), "20000", NULL};
    const char *env[] = {"SCOPE_PROFILER_OUTPUT=churn", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "status %d, stderr: %.2000s", run.exit_code, run.err);
    long threads = 0, growth = 0;
    cr_assert_eq(sscanf(run.out, "threads=%ld rss_growth_kib=%ld", &threads, &growth), 2,
                 "stdout: %s", run.out);
    /* A page of stack and a page of chunk per thread were 8 KiB and more;
     * what stays is the row, the lane and the event: under 2 KiB. */
#ifndef SANITIZED
    cr_assert_lt(growth, threads * 2, "%ld KiB for %ld threads", growth, threads);
#endif
    sp_profile *p = harness_load(&run, "churn_rank00000.h5");
    cr_assert_eq(harness_calls(p, "tick"), 20000 + 8 + 1);
    cr_assert_eq(p->num_threads, 20000 + 8 + 1);
    sp_profile_free(p);
    harness_run_free(&run);
}
