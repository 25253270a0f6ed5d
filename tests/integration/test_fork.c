/* test_fork.c - fork, exec, posix_spawn and system() under the shim: a
 * forked child writes its own calls only, under a name with its pid; exec
 * leaks nothing; children that record nothing write nothing. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
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

/* Every event of p is on thread 0 and inside [start_time_ns, finalize]. */
static void assert_single_thread_child(const sp_profile *p)
{
    cr_assert(p->has_thread_table);
    cr_assert_eq(p->num_threads, 1, "the child has %zu threads", p->num_threads);
    cr_assert_eq(p->threads[0].index, 0);
    cr_assert_str_eq(p->threads[0].name, "MainThread");
    cr_assert_eq(p->threads[0].end_ns, -1, "the child's thread is alive at exit");
    int64_t start = meta_int(p, "start_time_ns");
    for (size_t i = 0; i < p->num_events; i++) {
        cr_assert_eq(p->thread_ids[i], 0);
        cr_assert_geq(p->start[i], start, "a child call starts before the fork");
    }
}

static void check_fork_child(const char *mode)
{
    struct harness_run run;
    const char *argv[] = {harness_program("fork_child"), mode, NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    int parent = 0, child = 0, status = -1;
    cr_assert_eq(sscanf(run.out, "parent=%d child=%d status=%d", &parent, &child, &status), 3,
                 "stdout: %s", run.out);
    cr_assert_eq(status, 0);
    cr_assert_eq(harness_count_files(&run, "*.h5"), 2);

    /* the parent: its own calls, once, both threads */
    sp_profile *p = harness_load(&run, "fork_child_rank00000.h5");
    cr_assert_eq(harness_calls(p, "before"), 3);
    cr_assert_eq(harness_calls(p, "worker"), 5);
    cr_assert_eq(harness_calls(p, "outer"), 1);
    cr_assert_eq(harness_calls(p, "parent_only"), 2);
    cr_assert_eq(harness_calls(p, "child_only"), 0);
    cr_assert_eq(p->num_events, 3 + 5 + 1 + 2);
    cr_assert_eq(p->num_threads, 2);
    cr_assert_eq(meta_int(p, "pid"), parent);
    int64_t ignored;
    cr_assert_neq(sp_profile_meta_int(p, "forked_from_pid", &ignored), 0,
                  "the parent is not a forked child");
    sp_profile_free(p);

    /* the child: its calls only, with "outer" carried over from the fork */
    char name[128];
    snprintf(name, sizeof name, "fork_child_rank00000.pid%d.h5", child);
    sp_profile *c = harness_load(&run, name);
    cr_assert_eq(harness_calls(c, "child_only"), 7);
    cr_assert_eq(harness_calls(c, "outer"), 1);
    cr_assert_eq(harness_calls(c, "before"), 0);
    cr_assert_eq(harness_calls(c, "worker"), 0);
    cr_assert_eq(harness_calls(c, "parent_only"), 0);
    cr_assert_eq(c->num_events, 8);
    cr_assert_eq(meta_int(c, "pid"), child);
    cr_assert_eq(meta_int(c, "forked_from_pid"), parent);
    cr_assert_eq(meta_int(c, "mpi_rank"), 0);
    assert_single_thread_child(c);
    /* region ids taken before the fork name the same regions in the child,
     * and child_only nests inside the carried "outer" */
    const sp_row *outer = harness_row(c, 0, "outer");
    const sp_row *inner = harness_row(c, 0, "child_only");
    cr_assert_not_null(outer);
    cr_assert_not_null(inner);
    for (uint64_t k = 0; k < inner->count; k++)
        cr_assert_eq(c->parent_ids[inner->offset + k], c->call_ids[outer->offset]);
    sp_profile_free(c);
    harness_run_free(&run);
}

Test(fork, child_writes_only_its_own_calls)
{
    check_fork_child("main");
}

Test(fork, forking_thread_becomes_the_childs_thread_0)
{
    check_fork_child("thread");
}

Test(fork, prefix_with_pid_needs_no_suffix)
{
    struct harness_run run;
    const char *argv[] = {harness_program("fork_child"), NULL};
    const char *env[] = {"SCOPE_PROFILER_OUTPUT=prof_%p", NULL};
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    int parent = 0, child = 0;
    cr_assert_eq(sscanf(run.out, "parent=%d child=%d", &parent, &child), 2);
    char name[128];
    snprintf(name, sizeof name, "prof_%d_rank00000.h5", parent);
    sp_profile *p = harness_load(&run, name);
    cr_assert_eq(harness_calls(p, "before"), 3);
    sp_profile_free(p);
    snprintf(name, sizeof name, "prof_%d_rank00000.h5", child);
    sp_profile *c = harness_load(&run, name);
    cr_assert_eq(harness_calls(c, "child_only"), 7);
    sp_profile_free(c);
    cr_assert_eq(harness_count_files(&run, "*.h5"), 2);
    harness_run_free(&run);
}

/* Fault table row "fork storm": 50 children forked while a thread records
 * without pause; no deadlock, 50 + 1 files, exact counts everywhere. */
Test(fork, storm_of_50_children, .timeout = 120)
{
    /* The ASan pass preloads GCC 12's ASan runtime, whose allocator takes no
     * lock around fork(): a child forked while the recording thread is
     * inside malloc inherits an allocator lock nobody releases and hangs
     * in __sanitizer::SizeClassAllocator64::GetFromAllocator (about one run
     * in four), while the parent's thread records on.  glibc's malloc is
     * fork-safe: the normal and TSAN passes run the storm. */
    const char *prefix = getenv("SCOPEPROF_TEST_PRELOAD_PREFIX");
    if (prefix && strstr(prefix, "asan")) {
        static const char why[] = "fork::storm_of_50_children skipped under ASan: its allocator "
                                  "is not fork-safe with a thread allocating during fork() "
                                  "(the child deadlocks in the runtime)";
        fprintf(stderr, "%s\n", why);
        cr_skip_test("%s", why);
    }
    struct harness_run run;
    const char *argv[] = {harness_program("fork_storm"), "50", NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    long background = -1;
    int children = 0, failed = -1;
    cr_assert_eq(sscanf(run.out, "background=%ld children=%d failed=%d", &background,
                        &children, &failed), 3, "stdout: %s", run.out);
    cr_assert_eq(failed, 0);
    cr_assert_eq(harness_count_files(&run, "fork_storm_rank00000.h5"), 1);
    cr_assert_eq(harness_count_files(&run, "fork_storm_rank00000.pid*.h5"), 50);
    cr_assert_eq(harness_count_files(&run, "*"), 51, "stray files (temporaries?)");
    cr_assert_eq(harness_count_files(&run, ".*.tmp"), 0);

    sp_profile *p = harness_load(&run, "fork_storm_rank00000.h5");
    cr_assert_eq(harness_calls(p, "spawn"), 50);
    cr_assert_eq(harness_calls(p, "busy"), (unsigned long)background);
    cr_assert_eq(harness_calls(p, "child"), 0);
    sp_profile_free(p);

    /* child k recorded k + 1 calls and closed the carried "spawn": the
     * counts over all children are exactly 1..50, each once */
    char seen[51] = {0};
    int files = 0;
    DIR *d = opendir(run.dir);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (!strstr(e->d_name, ".pid"))
            continue;
        sp_profile *c = harness_load(&run, e->d_name);
        unsigned long n = harness_calls(c, "child");
        cr_assert(n >= 1 && n <= 50, "%s has %lu calls", e->d_name, n);
        cr_assert_eq(seen[n], 0, "two children with %lu calls", n);
        seen[n] = 1;
        cr_assert_eq(harness_calls(c, "spawn"), 1);
        cr_assert_eq(c->num_events, n + 1, "%s holds calls of its parent", e->d_name);
        cr_assert_eq(harness_calls(c, "busy"), 0);
        assert_single_thread_child(c);
        sp_profile_free(c);
        files++;
    }
    closedir(d);
    cr_assert_eq(files, 50);
    harness_run_free(&run);
}

Test(fork, exec_leaks_no_descriptor_and_no_file)
{
    struct harness_run run;
    const char *argv[] = {harness_program("fork_exec"), "exec", NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    /* the harness's own descriptors are inherited by the program: the
     * list after exec must be the list at the start */
    char *at_start = strstr(run.out, "fds at start:");
    char *at_exec = strstr(run.out, "fds after exec:");
    cr_assert(at_start && at_exec, "stdout: %s", run.out);
    at_start += strlen("fds at start:");
    at_exec += strlen("fds after exec:");
    cr_assert_eq(strcspn(at_start, "\n"), strcspn(at_exec, "\n"), "stdout: %s", run.out);
    cr_assert_eq(strncmp(at_start, at_exec, strcspn(at_start, "\n")), 0, "stdout: %s", run.out);
    /* the flushed profile of the image before exec, the new image's own */
    sp_profile *before = harness_load(&run, "pre_exec_rank00000.h5");
    cr_assert_eq(harness_calls(before, "pre_exec"), 4);
    sp_profile_free(before);
    sp_profile *after = harness_load(&run, "fork_exec_rank00000.h5");
    cr_assert_eq(harness_calls(after, "post_exec"), 2);
    cr_assert_eq(harness_calls(after, "pre_exec"), 0);
    cr_assert_eq(after->num_events, 2);
    sp_profile_free(after);
    cr_assert_eq(harness_count_files(&run, "*"), 2, "stray files next to the profiles");
    cr_assert_eq(harness_count_files(&run, ".*.tmp"), 0);
    cr_assert_eq(harness_count_files(&run, "*spill*"), 0);
    harness_run_free(&run);
}

Test(fork, spawned_children_that_record_nothing_write_nothing)
{
    struct harness_run run;
    const char *argv[] = {harness_program("fork_exec"), "spawn", NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "stderr: %s", run.err);
    cr_assert_str_eq(run.err, "", "the shim printed: %s", run.err);
    cr_assert(strstr(run.out, "system=0 spawn=0 forkexec=0\n"), "stdout: %s", run.out);
    cr_assert_eq(harness_count_files(&run, "*"), 1);
    sp_profile *p = harness_load(&run, "fork_exec_rank00000.h5");
    cr_assert_eq(harness_calls(p, "spawner"), 3);
    cr_assert_eq(p->num_events, 3);
    sp_profile_free(p);
    harness_run_free(&run);
}
