/* test_openmp.c - OpenMP parallel regions in their caller's context
 * (issue 15): the "omp parallel" calls, fork edges (events/fork_parent_ids)
 * and the grafted merged views, with libgomp (gcc) and libomp (clang,
 * through OMPT), plus a pthread created inside a call. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "mpi_launch.h"
#include "scopeprof/analysis.h"

static sp_profile *run_omp_n(struct harness_run *run, const char *runtime, const char *mode,
                             const char *n, const char *const *env)
{
    char program[64];
    snprintf(program, sizeof program, "omp_fork_%s", runtime);
    const char *argv[] = {harness_program(program), mode, n, NULL};
    cr_assert_eq(harness_run(run, argv, env, 1), 0, "cannot run %s", program);
    cr_assert_eq(run->exit_code, 0, "%s %s exited with %d; stderr: %s", program, mode,
                 run->exit_code, run->err);
    cr_assert_str_eq(run->err, "", "the shim printed: %s", run->err);
    return harness_load(run, "scope_profile_rank00000.h5");
}

static sp_profile *run_omp(struct harness_run *run, const char *runtime, const char *mode,
                           const char *const *env)
{
    return run_omp_n(run, runtime, mode, NULL, env);
}

/* stdout of `scopeprof export folded` (plus extra options) on the run's file. */
static char *folded(const struct harness_run *run, const char *extra)
{
    struct harness_run cli;
    const char *argv[] = {SCOPEPROF_EXE, "export", "folded", "-o", "-",
                          harness_path(run, "scope_profile_rank00000.h5"), extra, NULL};
    cr_assert_eq(harness_run(&cli, argv, NULL, 0), 0);
    cr_assert_eq(cli.exit_code, 0, "export folded failed: %s", cli.err);
    char *out = strdup(cli.out);
    harness_run_free(&cli);
    return out;
}

/* The call paths of folded output, values dropped, one per line. */
static void folded_paths(const char *text, char *paths, size_t len)
{
    paths[0] = '\0';
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        const char *space = line + n;
        while (space > line && *space != ' ')
            space--;
        size_t used = strlen(paths);
        snprintf(paths + used, len - used, "%.*s\n", (int)(space - line), line);
        line += n + (nl != NULL);
    }
}

/* Line of the first parallel construct in omp_fork.c (the "region" one). */
static long first_construct_line(void)
{
    FILE *f = fopen(TEST_SOURCE_DIR "/programs/omp_fork.c", "r");
    cr_assert_not_null(f);
    char line[256];
    long n = 0, found = -1;
    while (found < 0 && fgets(line, sizeof line, f)) {
        n++;
        if (strstr(line, "#pragma omp parallel"))
            found = n;
    }
    fclose(f);
    return found;
}

static int64_t event_of_call(const sp_profile *p, int64_t id)
{
    for (size_t i = 0; i < p->num_events; i++)
        if (p->call_ids[i] == id)
            return (int64_t)i;
    return -1;
}

/* Checks shared by every team: the encountering thread's "omp parallel"
 * calls are the fork parents of exactly workers_each worker calls of the
 * same region on other threads, which are roots of their lanes. */
static void check_team_edges(const sp_profile *p, size_t instances, int workers_each)
{
    const sp_row *par = harness_row(p, 0, "omp parallel");
    cr_assert_not_null(par);
    cr_assert_not_null(p->fork_parent_ids, "no events/fork_parent_ids column");
    /* position of each call id, and the number of calls forked from it */
    size_t n = p->num_events;
    int64_t *at = malloc(n * sizeof *at);
    int *children = calloc(n, sizeof *children);
    cr_assert(at && children);
    for (size_t i = 0; i < n; i++)
        at[i] = -1;
    for (size_t i = 0; i < n; i++) {
        cr_assert(p->call_ids[i] >= 0 && (size_t)p->call_ids[i] < n);
        at[p->call_ids[i]] = (int64_t)i;
    }
    size_t edges = 0;
    for (size_t i = 0; i < n; i++) {
        if (p->fork_parent_ids[i] < 0)
            continue;
        edges++;
        cr_assert(i >= par->offset && i < par->offset + par->count,
                  "a fork edge on a call that is not 'omp parallel'");
        cr_assert_lt(p->fork_parent_ids[i], (int64_t)n);
        int64_t parent = at[p->fork_parent_ids[i]];
        cr_assert(parent >= (int64_t)par->offset && parent < (int64_t)(par->offset + par->count));
        cr_assert_neq(p->thread_ids[parent], p->thread_ids[i]);
        cr_assert_eq(p->parent_ids[i], -1, "a worker's call is a root of its lane");
        children[parent]++;
    }
    cr_assert_eq(edges, instances * (size_t)workers_each, "%zu fork edges", edges);
    size_t forked = 0;
    for (uint64_t k = 0; k < par->count; k++) {
        int c = children[par->offset + k];
        if (c) {
            cr_assert_eq(c, workers_each, "an instance with %d workers", c);
            forked++;
        }
    }
    cr_assert_eq(forked, instances);
    free(at);
    free(children);
}

/* Host teams (`#pragma omp teams`): region "omp teams" with both runtimes.
 * libgomp runs the teams one after the other on the encountering thread;
 * libomp (OMPT: a league, each team's initial task on its own thread)
 * records the league on the encountering thread, each other team's
 * initial thread as a worker call of "omp teams" with a fork edge to it,
 * and, as libomp reports it, a one-thread "omp parallel" inside each team.
 * The libomp league used to be recorded as "omp parallel" with the other
 * team's work ungrafted. */
static void host_teams(const char *runtime)
{
    struct harness_run run;
    sp_profile *p = run_omp(&run, runtime, "teams", NULL);
    const sp_row *teams = harness_row(p, 0, "omp teams"), *work = harness_row(p, 0, "work");
    cr_assert_not_null(teams, "no 'omp teams' row");
    cr_assert_eq(work->count, 2);
    int llvm = !strcmp(runtime, "llvm");
    cr_assert_eq(teams->count, llvm ? 2 : 1);
    size_t edges = 0;
    for (uint64_t k = 0; k < teams->count; k++) {
        uint64_t at = teams->offset + k;
        int64_t fork = p->fork_parent_ids ? p->fork_parent_ids[at] : -1;
        if (fork < 0)
            continue;
        edges++;
        int64_t parent = event_of_call(p, fork);
        cr_assert(parent >= (int64_t)teams->offset &&
                      parent < (int64_t)(teams->offset + teams->count),
                  "the worker's fork parent is not an 'omp teams' call");
        cr_assert_neq(p->thread_ids[parent], p->thread_ids[at]);
    }
    cr_assert_eq(edges, llvm ? 1 : 0);
    char *text = folded(&run, NULL), paths[4096];
    folded_paths(text, paths, sizeof paths);
    cr_assert_str_eq(paths,
                     llvm ? "outer\nouter;omp teams\nouter;omp teams;omp parallel\n"
                            "outer;omp teams;omp parallel;work\n"
                          : "outer\nouter;omp teams\nouter;omp teams;work\n",
                     "%s", text);
    free(text);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(openmp, gomp_host_teams) { host_teams("gomp"); }
Test(openmp, llvm_host_teams) { host_teams("llvm"); }

static void parallel_in_region(const char *runtime)
{
    struct harness_run run;
    sp_profile *p = run_omp(&run, runtime, "region", NULL);
    const sp_row *par = harness_row(p, 0, "omp parallel"), *work = harness_row(p, 0, "work"),
                 *outer = harness_row(p, 0, "outer");
    cr_assert_eq(outer->count, 1);
    cr_assert_eq(par->count, 12, "3 regions x 4 threads, got %llu",
                 (unsigned long long)par->count);
    cr_assert_eq(work->count, 60);
    cr_assert_str_eq(par->source_file + strlen(par->source_file) - strlen("omp_fork.c"),
                     "omp_fork.c");
    cr_assert_eq(par->source_line, first_construct_line(), "the construct's line, got %lld",
                 (long long)par->source_line);
    int64_t outer_id = p->call_ids[outer->offset];
    for (uint64_t k = 0; k < par->count; k++) {
        uint64_t at = par->offset + k;
        if (p->thread_ids[at] == 0)
            cr_assert_eq(p->parent_ids[at], outer_id);
        else
            cr_assert_eq(p->parent_ids[at], -1);
    }
    int per_thread[8] = {0};
    for (uint64_t k = 0; k < work->count; k++) {
        uint64_t at = work->offset + k;
        int64_t th = p->thread_ids[at];
        cr_assert(th >= 0 && th < 8);
        per_thread[th]++;
        int64_t parent = event_of_call(p, p->parent_ids[at]);
        cr_assert(parent >= (int64_t)par->offset && parent < (int64_t)(par->offset + par->count),
                  "work is not in an 'omp parallel' call");
        cr_assert_eq(p->thread_ids[parent], th);
    }
    for (int th = 0; th < 4; th++)
        cr_assert_eq(per_thread[th], 15, "thread %d made %d work calls", th, per_thread[th]);
    check_team_edges(p, 3, 3);

    /* thread table: the main thread and three workers numbered 1..3 */
    cr_assert_eq(p->num_threads, 4);
    cr_assert_str_eq(p->threads[0].kind, "main");
    cr_assert_eq(p->threads[0].omp_thread_num, -1);
    int numbers = 0;
    for (size_t i = 1; i < 4; i++) {
        cr_assert_str_eq(p->threads[i].kind, "openmp", "thread %zu", i);
        int64_t num = p->threads[i].omp_thread_num;
        cr_assert(num >= 1 && num <= 3, "omp_thread_num %lld", (long long)num);
        numbers |= 1 << num;
        char label[64], want[16];
        sp_lane_label(p, 0, sp_lane_id((int64_t)i, -1), label, sizeof label);
        snprintf(want, sizeof want, "omp %lld", (long long)num);
        cr_assert_str_eq(label, want);
    }
    cr_assert_eq(numbers, 0xE, "worker numbers are not 1, 2, 3");

    char *text = folded(&run, NULL), paths[4096];
    folded_paths(text, paths, sizeof paths);
    cr_assert_str_eq(paths, "outer\nouter;omp parallel\nouter;omp parallel;work\n",
                     "grafted folded stacks:\n%s", text);
    free(text);
    text = folded(&run, "--no-graft");
    cr_assert(strstr(text, "omp 1;omp parallel;work "), "--no-graft:\n%s", text);
    free(text);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(openmp, gomp_parallel_inside_a_region) { parallel_in_region("gomp"); }
Test(openmp, llvm_parallel_inside_a_region) { parallel_in_region("llvm"); }

static void dynamic_loop(const char *runtime)
{
    struct harness_run run;
    sp_profile *p = run_omp(&run, runtime, "dynamic", NULL);
    const sp_row *par = harness_row(p, 0, "omp parallel"), *work = harness_row(p, 0, "work");
    cr_assert_eq(par->count, 4);
    cr_assert_eq(work->count, 100);
    for (uint64_t k = 0; k < work->count; k++) {
        uint64_t at = work->offset + k;
        int64_t parent = event_of_call(p, p->parent_ids[at]);
        cr_assert(parent >= (int64_t)par->offset && parent < (int64_t)(par->offset + par->count));
        cr_assert_eq(p->thread_ids[parent], p->thread_ids[at]);
    }
    check_team_edges(p, 1, 3);
    char *text = folded(&run, NULL), paths[4096];
    folded_paths(text, paths, sizeof paths);
    cr_assert_str_eq(paths, "outer\nouter;omp parallel\nouter;omp parallel;work\n", "%s", text);
    free(text);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(openmp, gomp_parallel_for_dynamic) { dynamic_loop("gomp"); }
Test(openmp, llvm_parallel_for_dynamic) { dynamic_loop("llvm"); }

static void nested(const char *runtime)
{
    struct harness_run run;
    const char *env[] = {"OMP_MAX_ACTIVE_LEVELS=2", "OMP_DYNAMIC=false", NULL};
    sp_profile *p = run_omp(&run, runtime, "nested", env);
    const sp_row *par = harness_row(p, 0, "omp parallel"), *inner = harness_row(p, 0, "inner");
    /* outer team: 2 calls; two inner teams of 2: 4 calls */
    cr_assert_eq(par->count, 6);
    cr_assert_eq(inner->count, 4);
    check_team_edges(p, 3, 1);
    char *text = folded(&run, NULL), paths[4096];
    folded_paths(text, paths, sizeof paths);
    cr_assert_str_eq(paths,
                     "outer\nouter;omp parallel\nouter;omp parallel;omp parallel\n"
                     "outer;omp parallel;omp parallel;inner\n", "%s", text);
    free(text);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(openmp, gomp_nested_teams) { nested("gomp"); }
Test(openmp, llvm_nested_teams) { nested("llvm"); }

/* One file of `omp_fork reuse`: every worker call of every team was
 * recorded, ended (no call left open at exit) and forked from its team's
 * encountering call, and every "inner" call nests in its thread's
 * "omp parallel" call. */
static void check_reuse_file(const sp_profile *p, int rounds, int run_index)
{
    const sp_row *par = harness_row(p, 0, "omp parallel"), *inner = harness_row(p, 0, "inner");
    cr_assert_not_null(par);
    cr_assert_not_null(inner);
    cr_assert_eq(par->count, 6 * (uint64_t)rounds, "run %d: %llu 'omp parallel' calls",
                 run_index, (unsigned long long)par->count);
    cr_assert_eq(inner->count, 4 * (uint64_t)rounds, "run %d: %llu 'inner' calls", run_index,
                 (unsigned long long)inner->count);
    for (uint64_t k = 0; k < inner->count; k++) {
        uint64_t at = inner->offset + k;
        cr_assert_neq(p->parent_ids[at], -1, "run %d: an 'inner' call with no parent",
                      run_index);
        int64_t parent = event_of_call(p, p->parent_ids[at]);
        cr_assert(parent >= (int64_t)par->offset && parent < (int64_t)(par->offset + par->count),
                  "run %d: an 'inner' call outside 'omp parallel'", run_index);
        cr_assert_eq(p->thread_ids[parent], p->thread_ids[at]);
    }
    /* outer team: one worker; each inner team: one worker */
    check_team_edges(p, 3 * (size_t)rounds, 1);
}

/* Worker reuse across inner teams (libomp hands the worker of a finished
 * inner team to the next one): SCOPEPROF_TEST_OMP_REUSE_RUNS runs (default
 * 5) of SCOPEPROF_TEST_OMP_REUSE_ROUNDS rounds each (default 20).  A lost
 * worker call shows under load, so larger knobs with busy cores find it. */
static void workers_reused(const char *runtime)
{
    const char *runs_knob = getenv("SCOPEPROF_TEST_OMP_REUSE_RUNS");
    const char *rounds_knob = getenv("SCOPEPROF_TEST_OMP_REUSE_ROUNDS");
    int runs = runs_knob ? atoi(runs_knob) : 5;
    const char *rounds_arg = rounds_knob ? rounds_knob : "20";
    int rounds = atoi(rounds_arg);
    cr_assert(runs > 0 && rounds > 0, "bad SCOPEPROF_TEST_OMP_REUSE_RUNS/_ROUNDS");
    const char *env[] = {"OMP_MAX_ACTIVE_LEVELS=2", "OMP_DYNAMIC=false", NULL};
    for (int i = 0; i < runs; i++) {
        struct harness_run run;
        sp_profile *p = run_omp_n(&run, runtime, "reuse", rounds_arg, env);
        check_reuse_file(p, rounds, i);
        sp_profile_free(p);
        harness_run_free(&run);
    }
}

Test(openmp, gomp_workers_reused_across_inner_teams, .timeout = 600) { workers_reused("gomp"); }
Test(openmp, llvm_workers_reused_across_inner_teams, .timeout = 600) { workers_reused("llvm"); }

/* Callback orders libomp may use but seldom does, played to the shim's
 * OMPT tool by tests/programs/ompt_replay.c: the worker's call still ends
 * on its own thread and keeps its edge to the encountering call, even when
 * it ends after that call (the instance outlives it). */
static void replay(const char *order, int teams)
{
    struct harness_run run;
    const char *argv[] = {harness_program("ompt_replay"), order, NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "ompt_replay %s exited with %d: %s", order, run.exit_code,
                 run.err);
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    sp_profile *p = harness_load(&run, "scope_profile_rank00000.h5");
    const sp_row *par = harness_row(p, 0, "omp parallel"), *inner = harness_row(p, 0, "inner");
    cr_assert_not_null(par);
    cr_assert_eq(par->count, 2 * (uint64_t)teams);
    cr_assert_eq(inner->count, (uint64_t)teams);
    for (uint64_t k = 0; k < inner->count; k++) {
        uint64_t at = inner->offset + k;
        int64_t parent = event_of_call(p, p->parent_ids[at]);
        cr_assert(parent >= (int64_t)par->offset && parent < (int64_t)(par->offset + par->count),
                  "an 'inner' call outside its worker call");
        cr_assert_eq(p->thread_ids[parent], p->thread_ids[at]);
    }
    check_team_edges(p, (size_t)teams, 1);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(openmp, ompt_worker_task_ending_after_its_region) { replay("late_end", 1); }
Test(openmp, ompt_worker_task_never_ended_before_the_next_team) { replay("stale_begin", 2); }
Test(openmp, ompt_worker_thread_exiting_in_its_task) { replay("thread_exit", 1); }
Test(openmp, ompt_parallel_end_with_the_team_reused) { replay("team_reused", 1); }

static void pool(const char *runtime)
{
    struct harness_run run;
    const char *env[] = {"OMP_DYNAMIC=false", NULL};
    sp_profile *p = run_omp(&run, runtime, "pool", env);
    const sp_row *par = harness_row(p, 0, "omp parallel"), *tick = harness_row(p, 0, "tick");
    cr_assert_eq(par->count, 4000);
    cr_assert_eq(tick->count, 4000);
    /* one lane per pool thread, whatever the number of regions */
    size_t alive = 0;
    for (size_t i = 0; i < p->num_threads; i++) {
        int has = 0;
        for (uint64_t k = 0; k < tick->count && !has; k++)
            has = p->thread_ids[tick->offset + k] == p->threads[i].index;
        alive += has;
    }
    cr_assert_eq(alive, 4, "%zu threads made calls", alive);
    size_t edges = 0;
    for (size_t i = 0; i < p->num_events; i++)
        edges += p->fork_parent_ids[i] >= 0;
    cr_assert_eq(edges, 3000, "%zu fork edges", edges);
    char *text = folded(&run, NULL), paths[4096];
    folded_paths(text, paths, sizeof paths);
    cr_assert_str_eq(paths, "outer\nouter;omp parallel\nouter;omp parallel;tick\n", "%s", text);
    free(text);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(openmp, gomp_pool_reused_by_1000_regions, .timeout = 120) { pool("gomp"); }
Test(openmp, llvm_pool_reused_by_1000_regions, .timeout = 120) { pool("llvm"); }

static void tasks(const char *runtime)
{
    struct harness_run run;
    sp_profile *p = run_omp(&run, runtime, "task", NULL);
    cr_assert_eq(harness_row(p, 0, "job")->count, 8);
    char *text = folded(&run, NULL), paths[4096];
    folded_paths(text, paths, sizeof paths);
    cr_assert_str_eq(paths, "outer\nouter;omp parallel\nouter;omp parallel;job\n", "%s", text);
    free(text);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(openmp, gomp_tasks_under_their_region) { tasks("gomp"); }
Test(openmp, llvm_tasks_under_their_region) { tasks("llvm"); }

Test(openmp, pthread_root_calls_hang_under_the_creating_call)
{
    struct harness_run run;
    sp_profile *p = run_omp(&run, "gomp", "pthread", NULL);
    const sp_row *outer = harness_row(p, 0, "outer"), *child = harness_row(p, 0, "child");
    cr_assert_eq(child->count, 1);
    cr_assert_eq(p->thread_ids[child->offset], 1);
    cr_assert_eq(p->parent_ids[child->offset], -1, "a root of its own lane");
    cr_assert_not_null(p->fork_parent_ids);
    cr_assert_eq(p->fork_parent_ids[child->offset], p->call_ids[outer->offset]);
    cr_assert_eq(p->fork_parent_ids[outer->offset], -1);
    char *text = folded(&run, NULL), paths[4096];
    folded_paths(text, paths, sizeof paths);
    cr_assert_str_eq(paths, "outer\nouter;child\n", "%s", text);
    free(text);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(openmp, track_threads_off_records_no_regions_or_edges)
{
    struct harness_run run;
    const char *env[] = {"SCOPE_PROFILER_TRACK_THREADS=0", NULL};
    const char *argv[] = {harness_program("omp_fork_gomp"), "region", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0);
    sp_profile *p = harness_load(&run, "scope_profile_rank00000.h5");
    cr_assert_eq(harness_region(p, "omp parallel"), -1);
    cr_assert_null(p->fork_parent_ids);
    cr_assert_null(p->thread_ids);
    cr_assert_eq(harness_calls(p, "work"), 60);
    sp_profile_free(p);
    harness_run_free(&run);
}

/* The report of the run: the merged tree's fork statistics. */
Test(openmp, report_shows_threads_imbalance_and_barrier)
{
    struct harness_run run;
    sp_profile *p = run_omp(&run, "gomp", "region", NULL);
    struct harness_run cli;
    const char *argv[] = {SCOPEPROF_EXE, "report", "--tree",
                          harness_path(&run, "scope_profile_rank00000.h5"), NULL};
    cr_assert_eq(harness_run(&cli, argv, NULL, 0), 0);
    cr_assert_eq(cli.exit_code, 0, "%s", cli.err);
    const char *line = strstr(cli.out, "  omp parallel");
    cr_assert_not_null(line, "%s", cli.out);
    cr_assert_not_null(strstr(line, "4 threads, imbalance "), "%s", cli.out);
    cr_assert_not_null(strstr(line, ", barrier "), "%s", cli.out);
    cr_assert_null(strstr(cli.out, "\nomp parallel"), "a top-level omp parallel:\n%s", cli.out);
    harness_run_free(&cli);
    sp_profile_free(p);
    harness_run_free(&run);
}

/* validate streams a file with fork edges: every fork parent id is checked
 * against the rank's calls as the checker checks it, so a wrong one hands
 * the file to the checker, which names it. */
static void validate_run(const char *path, const char *env, struct harness_run *out)
{
    const char *argv[] = {SCOPEPROF_EXE, "validate", path, NULL};
    const char *envs[] = {env, NULL};
    cr_assert_eq(harness_run(out, argv, envs, 0), 0);
}

Test(openmp, validate_checks_fork_edges_on_the_stream)
{
    struct harness_run run;
    sp_profile *p = run_omp(&run, "gomp", "region", NULL);
    cr_assert_not_null(p->fork_parent_ids);
    sp_profile_free(p);
    const char *path = harness_path(&run, "scope_profile_rank00000.h5");
    struct harness_run s, m;
    validate_run(path, "SCOPEPROF_VALIDATE_TRACE=1", &s);
    validate_run(path, "SCOPEPROF_VALIDATE_IN_MEMORY=1", &m);
    cr_expect_eq(s.exit_code, 0, "%s", s.err);
    cr_expect_str_eq(s.out, m.out);
    cr_expect_not_null(strstr(s.err, ": streamed\n"), "%s", s.err);
    harness_run_free(&s);
    harness_run_free(&m);

    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import h5py, numpy\n"
             "f = h5py.File('%s', 'r+'); d = f['events/fork_parent_ids']; a = d[:]\n"
             "a[int(numpy.argmax(a >= 0))] = 987654; d[...] = a\"",
             path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    validate_run(path, "SCOPEPROF_VALIDATE_TRACE=1", &s);
    validate_run(path, "SCOPEPROF_VALIDATE_IN_MEMORY=1", &m);
    cr_expect_eq(s.exit_code, 1);
    cr_expect_str_eq(s.out, m.out);
    cr_expect_not_null(strstr(s.out, "fork parent id 987654"), "%s", s.out);
    cr_expect_not_null(strstr(s.err, "checker: a fork parent id is no call of its rank"), "%s",
                       s.err);
    harness_run_free(&s);
    harness_run_free(&m);
    harness_run_free(&run);
}

/* MPI + OpenMP: the workers are "omp 1" whichever threads the MPI library
 * started before them; the library's own threads are kind "mpi". */
static void mpi_openmp(const char *family)
{
    struct harness_run run;
    const char *env[] = {"OMP_NUM_THREADS=2", "OMPI_MCA_hwloc_base_binding_policy=none", NULL};
    mpi_launch(&run, family, 2, mpi_program("mpi", "mpi_openmp", family), NULL, env);
    cr_assert_eq(run.exit_code, 0, "%s run failed (%d):\n%s", family, run.exit_code, run.err);
    for (int r = 0; r < 2; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        cr_assert_eq(harness_row(p, (unsigned)r, "work")->count, 4);
        cr_assert_eq(harness_row(p, (unsigned)r, "omp parallel")->count, 4);
        size_t workers = 0, mpi = 0, other = 0;
        for (size_t i = 0; i < p->num_threads; i++) {
            const sp_thread_row *t = &p->threads[i];
            char label[64];
            sp_lane_label(p, (unsigned)r, sp_lane_id(t->index, -1), label, sizeof label);
            if (!strcmp(t->kind, "openmp")) {
                workers++;
                cr_assert_eq(t->omp_thread_num, 1);
                cr_assert_str_eq(label, "omp 1");
            } else if (!strcmp(t->kind, "mpi")) {
                mpi++;
            } else if (strcmp(t->kind, "main") != 0) {
                other++;
            }
        }
        cr_assert_eq(workers, 1, "rank %d: %zu OpenMP workers", r, workers);
        cr_assert_eq(other, 0, "rank %d: %zu threads neither main, openmp nor mpi", r, other);
        if (!strcmp(family, "openmpi"))
            cr_assert_geq(mpi, 1, "Open MPI starts threads of its own (kind mpi)");
        /* every worker call grafted under its rank's step */
        cr_assert_not_null(p->fork_parent_ids);
        sp_profile_free(p);
    }
    harness_run_free(&run);
}

Test(openmp, mpi_openmp_openmpi, .timeout = 120) { mpi_openmp("openmpi"); }
Test(openmp, mpi_openmp_mpich, .timeout = 120) { mpi_openmp("mpich"); }

/* Under a 1 MiB memory cap the 160,000 calls are spilled: every fork edge
 * still names the right calls (the writer resolves them from the spilled
 * events). */
Test(openmp, fork_edges_survive_the_memory_cap, .timeout = 300)
{
    struct harness_run run;
    const char *env[] = {"OMP_DYNAMIC=false", "SCOPE_PROFILER_MAX_MEMORY=1M", NULL};
    sp_profile *p = run_omp_n(&run, "gomp", "pool", "20000", env);
    cr_assert_eq(harness_row(p, 0, "omp parallel")->count, 80000);
    cr_assert_eq(harness_row(p, 0, "tick")->count, 80000);
    check_team_edges(p, 20000, 3);
    char *text = folded(&run, NULL), paths[4096];
    folded_paths(text, paths, sizeof paths);
    cr_assert_str_eq(paths, "outer\nouter;omp parallel\nouter;omp parallel;tick\n", "%s", text);
    free(text);
    sp_profile_free(p);
    harness_run_free(&run);
}

/* Killed: the spill file holds the fork edges, and `scopeprof recover`
 * writes them. */
Test(openmp, recover_keeps_the_fork_edges_of_a_killed_run, .timeout = 300)
{
    struct harness_run run;
    const char *env[] = {"OMP_DYNAMIC=false", "SCOPE_PROFILER_MAX_MEMORY=1M", NULL};
    const char *argv[] = {harness_program("omp_fork_gomp"), "pool_kill", "20000", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 128 + 9, "exit %d: %s", run.exit_code, run.err);
    char spill[512] = "";
    DIR *d = opendir(run.dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (fnmatch("*.spill.*", e->d_name, 0) == 0)
            snprintf(spill, sizeof spill, "%s", e->d_name);
    if (d)
        closedir(d);
    cr_assert_neq(spill[0], '\0', "no spill file");
    char in_path[1024], out_path[1024];
    snprintf(in_path, sizeof in_path, "%s", harness_path(&run, spill));
    snprintf(out_path, sizeof out_path, "%s", harness_path(&run, "recovered.h5"));
    struct harness_run rec;
    const char *rargv[] = {SCOPEPROF_EXE, "recover", in_path, "-o", out_path, NULL};
    cr_assert_eq(harness_run(&rec, rargv, NULL, 0), 0);
    cr_assert_eq(rec.exit_code, 0, "%s", rec.err);
    sp_profile *p = harness_load(&run, "recovered.h5");
    cr_assert_not_null(p->fork_parent_ids, "the recovered file has no fork edges");
    const sp_row *par = harness_row(p, 0, "omp parallel");
    size_t edges = 0;
    for (size_t i = 0; i < p->num_events; i++) {
        if (p->fork_parent_ids[i] < 0)
            continue;
        edges++;
        cr_assert(i >= par->offset && i < par->offset + par->count);
        int64_t parent = event_of_call(p, p->fork_parent_ids[i]);
        cr_assert(parent >= (int64_t)par->offset && parent < (int64_t)(par->offset + par->count));
        cr_assert_eq(p->thread_ids[parent], 0);
    }
    cr_assert_gt(edges, 0);
    sp_profile_free(p);
    harness_run_free(&rec);
    harness_run_free(&run);
}
