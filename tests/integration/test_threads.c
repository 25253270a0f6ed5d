/* test_threads.c - threads, OpenMP, fibers and explicit tasks as lanes:
 * programs run under the shim, their files opened and checked exactly
 * (counts per thread and task, parents per lane, thread and task tables). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* scripts/test.d/tsan runs these tests with programs and shim from a
 * ThreadSanitizer build (the runner itself stays uninstrumented: Criterion
 * does not start under TSAN):
 *   SCOPEPROF_TEST_PROGRAMS   directory of the test programs
 *   SCOPEPROF_TEST_SHIM       libscopeprof.so to preload
 *   SCOPEPROF_TEST_WRITER_NAMESPACE   SCOPE_PROFILER_WRITER_NAMESPACE of the runs
 *   SCOPEPROF_TEST_SANITIZER  set (e.g. "thread"): skip what cannot run under it */
static const char *program_path(const char *name)
{
    const char *dir = getenv("SCOPEPROF_TEST_PROGRAMS");
    if (!dir || !*dir)
        return harness_program(name);
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* Run a test program under the shim (its environment plus `extra`) and
 * load the file it wrote; stderr is left to the caller to check. */
static sp_profile *run_and_load(struct harness_run *run, const char *program,
                                const char *const *extra, const char *file)
{
    static char preload[1100], writer_ns[200];
    const char *env[16];
    int n = 0, use_harness_shim = 1;
    const char *shim = getenv("SCOPEPROF_TEST_SHIM");
    if (shim && *shim) {
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", shim);
        env[n++] = preload;
        use_harness_shim = 0;
    }
    const char *ns = getenv("SCOPEPROF_TEST_WRITER_NAMESPACE");
    if (ns && *ns) {
        snprintf(writer_ns, sizeof writer_ns, "SCOPE_PROFILER_WRITER_NAMESPACE=%s", ns);
        env[n++] = writer_ns;
    }
    for (int i = 0; extra && extra[i] && n < 15; i++)
        env[n++] = extra[i];
    env[n] = NULL;
    const char *argv[] = {program_path(program), NULL};
    cr_assert_eq(harness_run(run, argv, env, use_harness_shim), 0, "cannot run %s", program);
    cr_assert_eq(run->exit_code, 0, "%s exited with %d; stderr: %s", program, run->exit_code,
                 run->err);
    return harness_load(run, file);
}

/* Under the ASan pass (scripts/test.d/asan preloads the ASan runtime) the
 * runtime's swapcontext interceptor warns once per process, whatever its
 * options.  Drop exactly that one line "==<pid>==WARNING: ASan doesn't fully
 * support makecontext/swapcontext ..." from err; anything else stays. */
static void drop_asan_swapcontext_warning(char *err)
{
    const char *prefix = getenv("SCOPEPROF_TEST_PRELOAD_PREFIX");
    if (!prefix || !strstr(prefix, "asan"))
        return;
    static const char warning[] = "==WARNING: ASan doesn't fully support makecontext/swapcontext "
                                  "functions and may produce false positives in some cases!\n";
    for (char *line = err; *line;) {
        char *p = line;
        if (p[0] == '=' && p[1] == '=') {
            p += 2;
            while (*p >= '0' && *p <= '9')
                p++;
            if (p > line + 2 && !strncmp(p, warning, sizeof warning - 1)) {
                char *next = p + sizeof warning - 1;
                memmove(line, next, strlen(next) + 1);
                return;
            }
        }
        char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
}

static const sp_row *row_of(const sp_profile *p, const char *name)
{
    const sp_row *r = harness_row(p, 0, name);
    cr_assert_not_null(r, "no region '%s' in the file", name);
    return r;
}

static int64_t duration(const sp_profile *p, uint64_t at)
{
    return p->end[at] - p->start[at];
}

/* Event position of call id `id`, or -1. */
static int64_t event_of_call(const sp_profile *p, int64_t id)
{
    for (size_t i = 0; i < p->num_events; i++)
        if (p->call_ids[i] == id)
            return (int64_t)i;
    return -1;
}

static const sp_thread_row *thread_named(const sp_profile *p, const char *name)
{
    for (size_t i = 0; i < p->num_threads; i++)
        if (!strcmp(p->threads[i].name, name))
            return &p->threads[i];
    cr_assert_fail("no thread named '%s' in the thread table", name);
    return NULL;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(threads, four_workers_are_four_lanes)
{
    struct harness_run run;
    sp_profile *p = run_and_load(&run, "threads", NULL, "threads_rank00000.h5");
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    const sp_row *session = row_of(p, "session"), *outer = row_of(p, "outer"),
                 *inner = row_of(p, "inner");
    cr_assert_eq(session->count, 1);
    cr_assert_eq(outer->count, 12);
    cr_assert_eq(inner->count, 12);
    cr_assert_not_null(p->thread_ids);
    cr_assert_not_null(p->parent_ids);
    cr_assert_null(p->task_ids, "no task ran, yet a task_ids column was written");
    cr_assert_not(p->has_task_table);

    /* main (thread 0) owns the session; workers 1..4 make 3 + 3 calls each */
    cr_assert_eq(p->thread_ids[session->offset], 0);
    int outer_per[5] = {0}, inner_per[5] = {0}, lanes[5] = {0};
    for (uint64_t k = 0; k < outer->count; k++) {
        int64_t th = p->thread_ids[outer->offset + k];
        cr_assert(th >= 1 && th <= 4, "outer call on thread %lld", (long long)th);
        outer_per[th]++;
    }
    for (uint64_t k = 0; k < inner->count; k++) {
        uint64_t at = inner->offset + k;
        int64_t th = p->thread_ids[at];
        cr_assert(th >= 1 && th <= 4, "inner call on thread %lld", (long long)th);
        inner_per[th]++;
        /* never a root: its parent is an outer call of the same thread */
        cr_assert_neq(p->parent_ids[at], -1, "an inner call is a root");
        int64_t parent = event_of_call(p, p->parent_ids[at]);
        cr_assert_geq(parent, (int64_t)outer->offset);
        cr_assert_lt(parent, (int64_t)(outer->offset + outer->count));
        cr_assert_eq(p->thread_ids[parent], th);
    }
    for (int th = 1; th <= 4; th++) {
        cr_assert_eq(outer_per[th], 3, "thread %d: %d outer calls", th, outer_per[th]);
        cr_assert_eq(inner_per[th], 3, "thread %d: %d inner calls", th, inner_per[th]);
    }
    for (size_t i = 0; i < p->num_events; i++)
        lanes[p->thread_ids[i]] = 1;
    cr_assert_eq(lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4], 5);
    /* the session is another lane: outer calls are roots of their own lanes */
    for (uint64_t k = 0; k < outer->count; k++)
        cr_assert_eq(p->parent_ids[outer->offset + k], -1);

    int64_t outer_total = 0, inner_total = 0;
    for (uint64_t k = 0; k < outer->count; k++)
        outer_total += duration(p, outer->offset + k);
    for (uint64_t k = 0; k < inner->count; k++)
        inner_total += duration(p, inner->offset + k);
    cr_assert_eq(outer->exclusive_total, outer_total - inner_total);
    cr_assert_eq(inner->exclusive_total, inner_total);
    cr_assert_eq(session->exclusive_total, duration(p, session->offset));

    /* thread table: creation order, names, lifetimes, CPU, identities */
    cr_assert(p->has_thread_table);
    cr_assert_eq(p->num_threads, 5);
    const char *names[] = {"MainThread", "solver0", "solver1", "solver2", "solver3"};
    for (size_t i = 0; i < 5; i++) {
        const sp_thread_row *t = &p->threads[i];
        cr_assert_eq(t->index, (int64_t)i);
        cr_assert_str_eq(t->name, names[i]);
        cr_assert_eq(t->daemon, 0);
        cr_assert_gt(t->cpu_ns, 0, "%s: cpu_ns %lld", t->name, (long long)t->cpu_ns);
        cr_assert_gt(t->native_id, 0);
        /* all were alive together (joined only after the last started) */
        for (size_t j = 0; j < i; j++) {
            cr_assert_neq(p->threads[j].native_id, t->native_id);
            cr_assert_neq(p->threads[j].ident, t->ident);
        }
        if (i == 0) {
            cr_assert_eq(t->end_ns, -1, "main is alive at exit");
        } else {
            cr_assert_gt(t->end_ns, t->start_ns);
            cr_assert_geq(t->start_ns, 0);
        }
    }
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(threads, detached_threads_are_daemons)
{
    struct harness_run run;
    sp_profile *p = run_and_load(&run, "threads_detach", NULL, "scope_profile_rank00000.h5");
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    cr_assert_eq(harness_calls(p, "work"), 3);
    cr_assert_eq(p->num_threads, 4);
    /* creation order */
    cr_assert_str_eq(p->threads[1].name, "by_attr");
    cr_assert_str_eq(p->threads[2].name, "late");
    cr_assert_str_eq(p->threads[3].name, "joined");
    cr_assert_eq(thread_named(p, "MainThread")->daemon, 0);
    cr_assert_eq(thread_named(p, "by_attr")->daemon, 1);
    cr_assert_eq(thread_named(p, "late")->daemon, 1, "pthread_detach after creation");
    cr_assert_eq(thread_named(p, "joined")->daemon, 0);
    cr_assert_gt(thread_named(p, "joined")->end_ns, thread_named(p, "joined")->start_ns);
    const sp_row *work = row_of(p, "work");
    int seen[4] = {0};
    for (uint64_t k = 0; k < work->count; k++) {
        int64_t th = p->thread_ids[work->offset + k];
        cr_assert(th >= 1 && th <= 3);
        seen[th]++;
    }
    cr_assert(seen[1] == 1 && seen[2] == 1 && seen[3] == 1);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(threads, pthread_exit_and_cancellation_drop_open_calls)
{
    struct harness_run run;
    sp_profile *p = run_and_load(&run, "threads_exit", NULL, "scope_profile_rank00000.h5");
    cr_assert(strstr(run.out, "cancelled=1"), "stdout: %s", run.out);
    /* one line per exiting thread, naming the innermost open region */
    cr_assert(strstr(run.err, "thread 1 (quitter) exited inside region 'nested_open' and 1 "
                              "enclosing calls; those 2 calls are dropped"), "stderr: %s", run.err);
    cr_assert(strstr(run.err, "thread 2 (cancelled) exited inside region 'blocked'; "
                              "that call is dropped"), "stderr: %s", run.err);
    cr_assert_eq(count_lines(run.err), 2, "stderr: %s", run.err);

    /* the completed calls of every thread are kept, the open ones dropped */
    const sp_row *done = row_of(p, "done_before");
    cr_assert_eq(done->count, 3);
    int seen[3] = {0};
    for (uint64_t k = 0; k < done->count; k++)
        seen[p->thread_ids[done->offset + k]]++;
    cr_assert(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
    cr_assert_null(harness_row(p, 0, "open_at_exit"));
    cr_assert_null(harness_row(p, 0, "nested_open"));
    cr_assert_null(harness_row(p, 0, "blocked"));

    /* both exits were seen by the thread table */
    cr_assert_eq(p->num_threads, 3);
    for (int i = 1; i <= 2; i++) {
        cr_assert_neq(p->threads[i].end_ns, -1, "%s has no end", p->threads[i].name);
        cr_assert_geq(p->threads[i].end_ns, p->threads[i].start_ns);
        cr_assert_gt(p->threads[i].cpu_ns, 0);
    }
    cr_assert_str_eq(p->threads[1].name, "quitter");
    cr_assert_str_eq(p->threads[2].name, "cancelled");
    sp_profile_free(p);
    harness_run_free(&run);
}

/* CPU time is read exactly when it is collected (a live thread at
 * finalize, a thread at its exit), not only sampled: each thread burns
 * 120 ms of CPU in 300 calls, fewer than the 4096 exits between samples. */
Test(threads, cpu_time_is_exact_without_a_sample)
{
    struct harness_run run;
    sp_profile *p = run_and_load(&run, "threads_cpu", NULL, "scope_profile_rank00000.h5");
    cr_assert_eq(p->num_threads, 3);
    const char *names[] = {"MainThread", "leaver", "sleeper"};
    const char *said[] = {"main", "leaver", "sleeper"};
    for (int i = 0; i < 3; i++) {
        const sp_thread_row *t = &p->threads[i];
        cr_assert_str_eq(t->name, names[i]);
        char key[32];
        snprintf(key, sizeof key, "%s ", said[i]);
        const char *line = strstr(run.out, key);
        cr_assert(line, "stdout: %s", run.out);
        long long measured = atoll(line + strlen(key));
        cr_assert_geq(measured, 120000000LL, "%s burnt %lld ns", said[i], measured);
        /* at least what the thread measured at its last call, and not far
         * beyond: the leaver exits, main and the sleeper are alive */
        cr_assert_geq(t->cpu_ns, measured, "%s: cpu_ns %lld < %lld", names[i],
                      (long long)t->cpu_ns, measured);
        cr_assert_lt(t->cpu_ns, measured + 100000000LL, "%s: cpu_ns %lld, measured %lld",
                     names[i], (long long)t->cpu_ns, measured);
        cr_assert_eq(t->end_ns == -1, i != 1, "%s: end_ns %lld", names[i],
                     (long long)t->end_ns);
    }
    cr_assert_eq(harness_calls(p, "burn"), 900);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(threads, thread_started_past_the_wrapper_registers_on_first_call)
{
    /* Bypassing the sanitizer's own pthread_create interceptor breaks it. */
    const char *sanitizer = getenv("SCOPEPROF_TEST_SANITIZER");
    if (sanitizer && *sanitizer)
        cr_skip_test("threads started past libc interposition cannot run under %s", sanitizer);
    struct harness_run run;
    sp_profile *p = run_and_load(&run, "threads_direct", NULL, "scope_profile_rank00000.h5");
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    cr_assert_eq(p->num_threads, 2);
    const sp_thread_row *t = &p->threads[1];
    cr_assert_str_eq(t->name, "direct");
    cr_assert_eq(t->daemon, 0);
    cr_assert_gt(t->end_ns, t->start_ns, "its exit was seen");
    const sp_row *work = row_of(p, "work");
    cr_assert_eq(work->count, 2);
    int seen[2] = {0};
    for (uint64_t k = 0; k < work->count; k++)
        seen[p->thread_ids[work->offset + k]]++;
    cr_assert(seen[0] == 1 && seen[1] == 1);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(threads, sixty_four_short_lived_threads)
{
    struct harness_run run;
    sp_profile *p = run_and_load(&run, "threads_many", NULL, "scope_profile_rank00000.h5");
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    cr_assert_eq(p->num_threads, 65);
    char name[16];
    for (size_t i = 0; i < p->num_threads; i++) {
        cr_assert_eq(p->threads[i].index, (int64_t)i, "indexes are dense");
        if (i == 0)
            continue;
        snprintf(name, sizeof name, "w%d", (int)i - 1);
        cr_assert_str_eq(p->threads[i].name, name);
        cr_assert_neq(p->threads[i].end_ns, -1);
    }
    const sp_row *tick = row_of(p, "tick");
    cr_assert_eq(tick->count, 64);
    int seen[65] = {0};
    for (uint64_t k = 0; k < tick->count; k++) {
        int64_t th = p->thread_ids[tick->offset + k];
        cr_assert(th >= 1 && th <= 64);
        seen[th]++;
    }
    for (int th = 1; th <= 64; th++)
        cr_assert_eq(seen[th], 1, "thread %d made %d calls", th, seen[th]);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(threads, openmp_pool_threads_keep_one_lane_each)
{
    struct harness_run run;
    const char *env[] = {"OMP_DYNAMIC=false", NULL};
    sp_profile *p = run_and_load(&run, "omp_for", env, "scope_profile_rank00000.h5");
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    const sp_row *step = row_of(p, "step"), *team = row_of(p, "team"), *iter = row_of(p, "iter");
    cr_assert_eq(step->count, 5);
    cr_assert_eq(team->count, 20);
    cr_assert_eq(iter->count, 2000);
    /* one pool of 3 libgomp threads, reused by all 5 parallel regions */
    cr_assert_eq(p->num_threads, 4, "%zu threads in the table", p->num_threads);

    int team_per[4] = {0}, iter_per[4] = {0};
    for (uint64_t k = 0; k < step->count; k++) {
        cr_assert_eq(p->thread_ids[step->offset + k], 0);
        cr_assert_eq(p->parent_ids[step->offset + k], -1);
    }
    for (uint64_t k = 0; k < team->count; k++) {
        uint64_t at = team->offset + k;
        int64_t th = p->thread_ids[at];
        cr_assert(th >= 0 && th <= 3);
        team_per[th]++;
        /* every share nests in its thread's "omp parallel" call (the
         * master's inside its step call; test_openmp.c checks the rest) */
        const sp_row *par = row_of(p, "omp parallel");
        int64_t parent = event_of_call(p, p->parent_ids[at]);
        cr_assert_geq(parent, (int64_t)par->offset);
        cr_assert_lt(parent, (int64_t)(par->offset + par->count));
        cr_assert_eq(p->thread_ids[parent], th);
        if (th == 0) {
            int64_t up = event_of_call(p, p->parent_ids[parent]);
            cr_assert_geq(up, (int64_t)step->offset);
            cr_assert_lt(up, (int64_t)(step->offset + step->count));
        } else {
            cr_assert_eq(p->parent_ids[parent], -1);
        }
    }
    for (uint64_t k = 0; k < iter->count; k++) {
        uint64_t at = iter->offset + k;
        int64_t th = p->thread_ids[at];
        cr_assert(th >= 0 && th <= 3);
        iter_per[th]++;
        cr_assert_neq(p->parent_ids[at], -1, "an iteration is a root");
        int64_t parent = event_of_call(p, p->parent_ids[at]);
        cr_assert_geq(parent, (int64_t)team->offset);
        cr_assert_lt(parent, (int64_t)(team->offset + team->count));
        cr_assert_eq(p->thread_ids[parent], th);
    }
    for (int th = 0; th < 4; th++) {
        cr_assert_eq(team_per[th], 5, "thread %d: %d team calls", th, team_per[th]);
        cr_assert_eq(iter_per[th], 500, "thread %d: %d iterations", th, iter_per[th]);
    }
    sp_profile_free(p);
    harness_run_free(&run);
}

/* Task calls of a region on one lane each: checks shared by the fiber and
 * task API tests. */
static const sp_task_row *task_row(const sp_profile *p, int64_t task)
{
    cr_assert(task >= 0 && (size_t)task < p->num_tasks, "task %lld not in the table",
              (long long)task);
    cr_assert_eq(p->tasks[task].index, task);
    return &p->tasks[task];
}

Test(threads, fibers_interleave_on_one_thread)
{
    struct harness_run run;
    sp_profile *p = run_and_load(&run, "fibers", NULL, "scope_profile_rank00000.h5");
    drop_asan_swapcontext_warning(run.err);
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    cr_assert_not_null(p->task_ids);
    cr_assert_not_null(p->await_ns);
    cr_assert_not_null(p->parent_ids, "the fibers' calls did not nest per lane");
    const sp_row *session = row_of(p, "session"), *work = row_of(p, "work"),
                 *step = row_of(p, "step");
    cr_assert_eq(session->count, 1);
    cr_assert_eq(work->count, 2);
    cr_assert_eq(step->count, 6);
    cr_assert_eq(p->task_ids[session->offset], -1);
    cr_assert_eq(p->await_ns[session->offset], 0);
    cr_assert_eq(p->parent_ids[session->offset], -1);
    for (size_t i = 0; i < p->num_events; i++)
        cr_assert_eq(p->thread_ids[i], 0);

    cr_assert(p->has_task_table);
    cr_assert_eq(p->num_tasks, 2);
    int64_t a = p->task_ids[work->offset], b = p->task_ids[work->offset + 1];
    cr_assert(a >= 0 && b >= 0 && a != b, "work tasks %lld, %lld", (long long)a, (long long)b);
    for (uint64_t k = 0; k < work->count; k++) {
        uint64_t at = work->offset + k;
        const sp_task_row *t = task_row(p, p->task_ids[at]);
        cr_assert_str_eq(t->kind, "fiber");
        cr_assert_str_eq(t->coro_name, "");
        cr_assert_eq(t->steps, 5, "task %lld: %lld steps", (long long)t->index, (long long)t->steps);
        cr_assert_eq(t->thread_index, 0);
        cr_assert_neq(t->done_ns, -1, "a fiber that returned is done");
        cr_assert_geq(t->done_ns, t->created_ns);
        cr_assert_gt(t->running_ns, 0);
        /* work spans every suspension of its fiber (it opens in the first
         * step, where nothing was suspended yet) */
        cr_assert_gt(p->await_ns[at], 0);
        cr_assert_eq(p->await_ns[at], t->suspended_ns);
        cr_assert_leq(p->await_ns[at], duration(p, at));
        cr_assert_eq(p->parent_ids[at], -1, "a fiber's outermost call is a root of its lane");
    }
    int per_task[2] = {0};
    int64_t step_total = 0;
    for (uint64_t k = 0; k < step->count; k++) {
        uint64_t at = step->offset + k;
        int64_t task = p->task_ids[at];
        cr_assert(task == a || task == b);
        per_task[task == b]++;
        /* each step yields inside itself */
        cr_assert_gt(p->await_ns[at], 0);
        cr_assert_leq(p->await_ns[at], duration(p, at));
        int64_t parent = event_of_call(p, p->parent_ids[at]);
        cr_assert_geq(parent, (int64_t)work->offset);
        cr_assert_lt(parent, (int64_t)(work->offset + work->count));
        cr_assert_eq(p->task_ids[parent], task, "a step closed in another fiber's call");
        step_total += duration(p, at);
    }
    cr_assert(per_task[0] == 3 && per_task[1] == 3);
    int64_t work_total = duration(p, work->offset) + duration(p, work->offset + 1);
    cr_assert_eq(work->exclusive_total, work_total - step_total);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(threads, explicit_task_api)
{
    struct harness_run run;
    sp_profile *p = run_and_load(&run, "threads_tasks", NULL, "scope_profile_rank00000.h5");
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    cr_assert(strstr(run.out, "tasks=0,1,2"), "stdout: %s", run.out);
    cr_assert_eq(p->num_tasks, 4);
    const char *names[] = {"job0", "job1", "job2", "remote"};
    for (int i = 0; i < 4; i++) {
        const sp_task_row *t = task_row(p, i);
        cr_assert_str_eq(t->name, names[i]);
        cr_assert_str_eq(t->kind, "task");
        cr_assert_eq(t->steps, i < 3 ? 3 : 1);
        cr_assert_eq(t->thread_index, i < 3 ? 0 : 1, "task %d ran on thread %lld", i,
                     (long long)t->thread_index);
        cr_assert_neq(t->done_ns, -1);
        cr_assert_geq(t->done_ns, t->created_ns);
        cr_assert_geq(t->created_ns, 0);
        if (i < 3)
            cr_assert_gt(t->suspended_ns, 0);
        else
            cr_assert_eq(t->suspended_ns, 0, "one step: never suspended");
    }
    const sp_row *loop = row_of(p, "loop"), *job = row_of(p, "job"), *sub = row_of(p, "sub");
    cr_assert_eq(loop->count, 1);
    cr_assert_eq(job->count, 4);
    cr_assert_eq(sub->count, 3);
    cr_assert_eq(p->task_ids[loop->offset], -1);
    cr_assert_eq(p->await_ns[loop->offset], 0);
    int seen[4] = {0};
    for (uint64_t k = 0; k < job->count; k++) {
        uint64_t at = job->offset + k;
        int64_t task = p->task_ids[at];
        const sp_task_row *t = task_row(p, task);
        seen[task]++;
        cr_assert_eq(p->thread_ids[at], task < 3 ? 0 : 1);
        /* a job spans all the suspensions of its task */
        cr_assert_eq(p->await_ns[at], t->suspended_ns);
        cr_assert_eq(p->parent_ids[at], -1);
    }
    cr_assert(seen[0] == 1 && seen[1] == 1 && seen[2] == 1 && seen[3] == 1);
    for (uint64_t k = 0; k < sub->count; k++) {
        uint64_t at = sub->offset + k;
        cr_assert_eq(p->await_ns[at], 0, "sub runs within one step");
        int64_t parent = event_of_call(p, p->parent_ids[at]);
        cr_assert_geq(parent, (int64_t)job->offset);
        cr_assert_lt(parent, (int64_t)(job->offset + job->count));
        cr_assert_eq(p->task_ids[parent], p->task_ids[at]);
    }
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(threads, overlapping_threads_nest_per_lane)
{
    struct harness_run run;
    sp_profile *p = run_and_load(&run, "threads_overlap", NULL, "scope_profile_rank00000.h5");
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    const sp_row *span = row_of(p, "span");
    cr_assert_eq(span->count, 2);
    cr_assert_not_null(p->parent_ids);
    cr_assert_eq(p->parent_ids[span->offset], -1);
    cr_assert_eq(p->parent_ids[span->offset + 1], -1);
    cr_assert_neq(p->thread_ids[span->offset], p->thread_ids[span->offset + 1]);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(threads, untracked_threads_share_one_timeline)
{
    struct harness_run run;
    const char *env[] = {"SCOPE_PROFILER_TRACK_THREADS=0", NULL};
    sp_profile *p = run_and_load(&run, "threads_overlap", env, "scope_profile_rank00000.h5");
    cr_assert(strstr(run.err, "call graph not recorded"), "stderr: %s", run.err);
    cr_assert_eq(count_lines(run.err), 1, "stderr: %s", run.err);
    cr_assert_null(p->thread_ids);
    cr_assert_not(p->has_thread_table);
    cr_assert_null(p->call_ids);
    cr_assert_null(p->parent_ids);
    const sp_row *span = row_of(p, "span");
    cr_assert_eq(span->count, 2);
    cr_assert_eq(span->exclusive_total, -1);
    for (uint64_t k = 0; k < span->count; k++)
        cr_assert_gt(duration(p, span->offset + k), 0, "timings are still written");
    sp_profile_free(p);
    harness_run_free(&run);
}

/* Chunks after a lane's first come from shared 2 MiB arenas, faulted in
 * ahead, with or without huge pages (preload/record/chunk_pages.c): three
 * threads taking them at once keep every call, on its own lane, nested. */
static void run_chunks(const char *mode, const char *expect_err)
{
    struct harness_run run;
    char var[96], preload[1100], writer_ns[200];
    snprintf(var, sizeof var, "SCOPE_PROFILER_HUGE_PAGES=%s", mode);
    const char *env[6] = {var, "SCOPE_PROFILER_OUTPUT=chunks"};
    int n = 2, use_harness_shim = 1;
    /* The sanitizer passes point the tests at their instrumented shim. */
    const char *shim = getenv("SCOPEPROF_TEST_SHIM");
    if (shim && *shim) {
        snprintf(preload, sizeof preload, "LD_PRELOAD=%s", shim);
        env[n++] = preload;
        use_harness_shim = 0;
    }
    const char *ns = getenv("SCOPEPROF_TEST_WRITER_NAMESPACE");
    if (ns && *ns) {
        snprintf(writer_ns, sizeof writer_ns, "SCOPE_PROFILER_WRITER_NAMESPACE=%s", ns);
        env[n++] = writer_ns;
    }
    env[n] = NULL;
    const char *argv[] = {program_path("threads_chunks"), "3", "150000", NULL};
    cr_assert_eq(harness_run(&run, argv, env, use_harness_shim), 0);
    cr_assert_eq(run.exit_code, 0, "status %d, stderr: %s", run.exit_code, run.err);
    if (expect_err)
        cr_assert(strstr(run.err, expect_err), "stderr: %s", run.err);
    else
        cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    sp_profile *p = harness_load(&run, "chunks_rank00000.h5");
    const sp_row *outer = row_of(p, "outer"), *inner = row_of(p, "inner");
    cr_assert_eq(outer->count, 450000);
    cr_assert_eq(inner->count, 450000);
    long per_thread[5] = {0};
    for (uint64_t k = 0; k < outer->count; k++) {
        uint64_t at = outer->offset + k;
        cr_assert_eq(p->parent_ids[at], -1, "an outer call has a parent");
        int64_t th = p->thread_ids[at];
        cr_assert(th >= 1 && th <= 3, "outer call on thread %lld", (long long)th);
        per_thread[th]++;
    }
    for (int th = 1; th <= 3; th++)
        cr_assert_eq(per_thread[th], 150000, "thread %d: %ld outer calls", th, per_thread[th]);
    for (uint64_t k = 0; k < inner->count; k++)
        cr_assert_neq(p->parent_ids[inner->offset + k], -1, "an inner call is a root");
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(threads, chunk_arenas_with_huge_pages_auto)
{
    run_chunks("auto", NULL);
}

Test(threads, chunk_arenas_with_huge_pages_on)
{
    run_chunks("on", NULL);
}

Test(threads, chunk_arenas_without_huge_pages)
{
    run_chunks("off", NULL);
}

Test(threads, chunk_arenas_bad_setting_is_named)
{
    run_chunks("sometimes", "SCOPE_PROFILER_HUGE_PAGES='sometimes' is not 'auto', 'on' or 'off'");
}
