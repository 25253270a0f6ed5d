/* test_basic.c - single-process programs under the shim: exact counts,
 * nesting, timestamps, file naming, silence without calls, misuse. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "scopeprof/h5.h"

static int64_t meta_int(const sp_profile *p, const char *key)
{
    int64_t v = -12345;
    cr_assert_eq(sp_profile_meta_int(p, key, &v), 0, "metadata %s missing", key);
    return v;
}

Test(basic, exact_counts_nesting_and_timestamps)
{
    struct harness_run run;
    const char *argv[] = {harness_program("basic"), NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    cr_assert(strstr(run.out, "fib=55 inner=5 tick=5000 active=1 path=basic_rank00000.h5"),
              "stdout: %s", run.out);

    sp_profile *p = harness_load(&run, "basic_rank00000.h5");
    cr_assert_eq(p->schema_version, 3);
    cr_assert_eq(p->num_ranks, 1);
    cr_assert_eq(harness_calls(p, "outer"), 1);
    cr_assert_eq(harness_calls(p, "inner"), 5);
    cr_assert_eq(harness_calls(p, "fib"), 177);
    cr_assert_eq(harness_calls(p, "tick"), 5000);
    cr_assert_eq(p->num_events, 1 + 5 + 177 + 5000);

    /* every call well-formed, inner inside outer */
    const sp_row *outer = harness_row(p, 0, "outer");
    const sp_row *inner = harness_row(p, 0, "inner");
    cr_assert_not_null(outer);
    cr_assert_not_null(inner);
    for (size_t i = 0; i < p->num_events; i++)
        cr_assert_leq(p->start[i], p->end[i]);
    for (uint64_t k = 0; k < inner->count; k++) {
        cr_assert_geq(p->start[inner->offset + k], p->start[outer->offset]);
        cr_assert_leq(p->end[inner->offset + k], p->end[outer->offset]);
    }

    /* the call tree is stored: inner's parent is outer's call id */
    cr_assert_not_null(p->call_ids);
    cr_assert_not_null(p->parent_ids);
    int64_t outer_id = p->call_ids[outer->offset];
    cr_assert_eq(p->parent_ids[outer->offset], -1);
    for (uint64_t k = 0; k < inner->count; k++)
        cr_assert_eq(p->parent_ids[inner->offset + k], outer_id);

    /* exclusive totals: outer = its duration minus the inner calls */
    int64_t inner_total = 0;
    for (uint64_t k = 0; k < inner->count; k++)
        inner_total += p->end[inner->offset + k] - p->start[inner->offset + k];
    cr_assert_eq(outer->exclusive_total,
                 p->end[outer->offset] - p->start[outer->offset] - inner_total);
    cr_assert_eq(inner->exclusive_total, inner_total);

    /* fib: the first call encloses every other one */
    const sp_row *fib = harness_row(p, 0, "fib");
    int64_t first_start = INT64_MAX, last_end = INT64_MIN;
    for (uint64_t k = 0; k < fib->count; k++) {
        first_start = p->start[fib->offset + k] < first_start ? p->start[fib->offset + k] : first_start;
        last_end = p->end[fib->offset + k] > last_end ? p->end[fib->offset + k] : last_end;
    }
    int roots = 0;
    for (uint64_t k = 0; k < fib->count; k++)
        roots += p->parent_ids[fib->offset + k] == -1;
    cr_assert_eq(roots, 1);

    /* metadata of a C process */
    cr_assert_str_eq(sp_profile_meta_string(p, "source"), "native");
    cr_assert_str_eq(sp_profile_meta_string(p, "source_language"), "c");
    cr_assert_eq(meta_int(p, "mpi_rank"), 0);
    cr_assert_eq(meta_int(p, "mpi_size"), 1);
    cr_assert_leq(meta_int(p, "start_time_ns"), first_start);
    cr_assert_geq(meta_int(p, "finalize_time_ns"), last_end);
    cr_assert_not_null(sp_profile_meta_string(p, "hostname"));
    cr_assert_not_null(strstr(sp_profile_meta_string(p, "executable"), "basic"));

    /* main thread is thread 0 */
    cr_assert_not_null(p->thread_ids);
    cr_assert(p->has_thread_table);
    cr_assert_eq(p->num_threads, 1);
    cr_assert_str_eq(p->threads[0].name, "MainThread");
    for (size_t i = 0; i < p->num_events; i++)
        cr_assert_eq(p->thread_ids[i], 0);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(basic, no_preload_records_nothing)
{
    struct harness_run run;
    const char *argv[] = {harness_program("basic"), NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 0), 0);
    cr_assert_eq(run.exit_code, 0);
    cr_assert(strstr(run.out, "fib=55 inner=0 tick=0 active=0 path=(none)"), "stdout: %s", run.out);
    cr_assert_eq(harness_count_files(&run, "*.h5"), 0);
    harness_run_free(&run);
}

Test(basic, processes_without_calls_are_silent)
{
    struct harness_run run;
    const char *argv[] = {"/bin/sh", "-c", "ls >/dev/null; echo hello", NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0);
    cr_assert_str_eq(run.out, "hello\n");
    cr_assert_str_eq(run.err, "");
    cr_assert_eq(harness_count_files(&run, "*"), 0);
    harness_run_free(&run);
}

Test(basic, output_prefix_from_environment)
{
    struct harness_run run;
    const char *argv[] = {harness_program("basic"), "10", NULL};
    const char *env[] = {"SCOPE_PROFILER_OUTPUT=out/run_%r", "SCOPE_PROFILER_LABEL=nightly", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    /* the directory does not exist: made at the start (issue 13 item 7) */
    cr_assert_eq(run.exit_code, 0);
    cr_assert_str_eq(run.err, "", "stderr: %s", run.err);
    cr_assert(harness_exists(&run, "out/run_00000_rank00000.h5"));
    harness_run_free(&run);

    cr_assert_eq(harness_run(&run, (const char *[]){"/bin/sh", "-c",
                 "mkdir out && exec \"$0\" 10", harness_program("basic"), NULL}, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    sp_profile *p = harness_load(&run, "out/run_00000_rank00000.h5");
    cr_assert_str_eq(sp_profile_meta_string(p, "label"), "nightly");
    cr_assert_eq(harness_calls(p, "tick"), 10);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(basic, disable_and_filters)
{
    struct harness_run run;
    const char *argv[] = {harness_program("basic"), "10", NULL};
    const char *off[] = {"SCOPE_PROFILER_DISABLE=1", NULL};
    cr_assert_eq(harness_run(&run, argv, off, 1), 0);
    cr_assert_eq(run.exit_code, 0);
    cr_assert_eq(harness_count_files(&run, "*.h5"), 0);
    harness_run_free(&run);

    const char *filt[] = {"SCOPE_PROFILER_INCLUDE=in*,outer,tick", "SCOPE_PROFILER_EXCLUDE=tick",
                          "SCOPE_PROFILER_TRACK_THREADS=maybe", NULL};
    cr_assert_eq(harness_run(&run, argv, filt, 1), 0);
    cr_assert_eq(run.exit_code, 0);
    cr_assert(strstr(run.err, "SCOPE_PROFILER_TRACK_THREADS='maybe' is not a boolean"), "%s", run.err);
    sp_profile *p = harness_load(&run, "basic_rank00000.h5");
    cr_assert_eq(harness_calls(p, "inner"), 5);
    cr_assert_eq(harness_calls(p, "outer"), 1);
    cr_assert_eq(harness_region(p, "tick"), -1);
    cr_assert_eq(harness_region(p, "fib"), -1);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(basic, untracked_threads_mode)
{
    struct harness_run run;
    const char *argv[] = {harness_program("basic"), "10", NULL};
    const char *env[] = {"SCOPE_PROFILER_TRACK_THREADS=0", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    sp_profile *p = harness_load(&run, "basic_rank00000.h5");
    cr_assert_null(p->thread_ids);
    cr_assert_eq(p->has_thread_table, 0);
    cr_assert_not_null(p->call_ids);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(misuse, reported_not_fatal)
{
    struct harness_run run;
    const char *argv[] = {harness_program("misuse"), NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert(strstr(run.out, "early=0 unmatched=5 (no open call to end) null_id=-1"), "%s", run.out);
    cr_assert(strstr(run.err, "sp_end('good') without a matching sp_begin"), "%s", run.err);
    cr_assert(strstr(run.err, "region 'left_open' still open at exit (depth 1); its last call(s) are dropped"),
              "%s", run.err);
    sp_profile *p = harness_load(&run, "misuse_rank00000.h5");
    cr_assert_eq(harness_calls(p, "early"), 1);
    cr_assert_eq(harness_calls(p, "good"), 3);
    cr_assert_eq(harness_region(p, "left_open"), -1);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(misuse, names_given_by_length)
{
    struct harness_run run;
    const char *argv[] = {harness_program("by_name"), NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert(strstr(run.out, "ok 3 3 mixed=0 nul=0,0 long=0,0 unmatched=5 id_same=1\n"), "%s",
              run.out);
    cr_assert(strstr(run.out, "after finalize 1\n"), "%s", run.out);
    cr_assert(strstr(run.err, "sp_end('solve') without a matching sp_begin"), "%s", run.err);
    sp_profile *p = harness_load(&run, "byname_rank00000.h5");
    cr_assert_eq(harness_calls(p, "solve"), 4);
    cr_assert_eq(harness_calls(p, "inner"), 1);
    char long_name[251];
    memset(long_name, 'x', 250);
    long_name[250] = '\0';
    cr_assert_eq(harness_calls(p, long_name), 1);
    cr_assert_eq(p->num_names, 3, "no region for 'solver', 'solve and more' or 'inner\\0junk'");
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(contexts, explicit_profilers)
{
    struct harness_run run;
    const char *argv[] = {harness_program("contexts"), NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert(strstr(run.out, "scopes 5 0 0 5\n"), "%s", run.out);
    cr_assert(strstr(run.out, "end_last 0 1 0 5\n"), "%s", run.out);
    cr_assert(strstr(run.out, "reset 6 0 regions=1 calls=0 reuse=1\n"), "%s", run.out);
    cr_assert(strstr(run.out, "stats calls=2 total_ok=1 minmax_ok=1\n"), "%s", run.out);
    cr_assert(strstr(run.out, "flush 0 1 0 0 0 trace=7\n"), "%s", run.out);

    sp_profile *a = harness_load(&run, "a_rank00000.h5");
    sp_profile *b = harness_load(&run, "b_rank00001.h5");
    sp_profile *f = harness_load(&run, "flush_rank00000.h5");
    sp_profile *r = harness_load(&run, "reset_rank00000.h5");
    cr_assert_eq(harness_calls(a, "work"), 1);
    cr_assert_eq(harness_calls(b, "work"), 2);
    cr_assert_not_null(harness_row(b, 1, "work"));
    cr_assert_eq(harness_calls(f, "q"), 2);
    cr_assert_eq(harness_calls(r, "x"), 1);
    sp_profile_free(a);
    sp_profile_free(b);
    sp_profile_free(f);
    sp_profile_free(r);
    cr_assert_eq(harness_count_files(&run, "*.tmp"), 0);
    cr_assert_eq(harness_count_files(&run, ".*.tmp"), 0);
    harness_run_free(&run);
}
