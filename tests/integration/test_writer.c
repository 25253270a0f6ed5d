/* test_writer.c - how the profile gets written (issue 13, items 1, 3, 8, 9,
 * 12): the writer process, whatever allocator the program preloads; file
 * size limits with the default SIGXFSZ; a disk with room for the handover
 * but not for the file; final names near NAME_MAX; spill files that
 * refuse planted symlinks.  docs/faults.md names these tests. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "scopeprof/h5.h"

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Name of the one entry of dir matching glob (static), or NULL. */
static const char *entry_matching(const char *dir, const char *glob)
{
    static char name[512];
    DIR *d = opendir(dir);
    const char *found = NULL;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (fnmatch(glob, e->d_name, 0) == 0) {
            snprintf(name, sizeof name, "%s", e->d_name);
            found = name;
        }
    if (d)
        closedir(d);
    return found;
}

/* Calls counted but not kept as events, from dropped_calls_by_region. */
static unsigned long counted(const sp_profile *p, const char *region)
{
    const sp_meta *m = sp_profile_meta(p, "dropped_calls_by_region");
    if (!m || m->type != SP_META_STRINGS)
        return 0;
    for (size_t i = 0; i < m->list_len; i++) {
        char name[64];
        unsigned long count = 0;
        long long total = -1;
        if (sscanf(m->list[i], "%63[^=]=%lu:%lld", name, &count, &total) == 3 &&
            !strcmp(name, region))
            return count;
    }
    return 0;
}

/* ---- item 1: the writer process ------------------------------------------ */

static const char *allocator_path(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "/usr/lib/x86_64-linux-gnu/%s", name);
    return access(path, R_OK) == 0 ? path : NULL;
}

/* writer_isolation 7 N with `allocator` preloaded before or after the
 * shim: status 7, nothing on stderr, every call in the file. */
static void run_with_allocator(const char *library, int allocator_first)
{
    const char *allocator = allocator_path(library);
    if (!allocator)
        cr_skip_test("%s is not installed (scripts/setup installs it)", library);
    const char *prefix = getenv("SCOPEPROF_TEST_PRELOAD_PREFIX");
    if (prefix && *prefix)
        cr_skip_test("a sanitizer runtime is preloaded: it is the allocator");
    char preload[1024];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s:%s", allocator_first ? allocator : SHIM_PATH,
             allocator_first ? SHIM_PATH : allocator);
    const char *env[] = {preload, NULL};
    const char *argv[] = {harness_program("writer_isolation"), "7", "20000", NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, env, 0), 0);
    cr_assert_eq(run.signal, 0, "%s: killed by signal %d, stderr: %s", library, run.signal,
                 run.err);
    cr_assert_eq(run.exit_code, 7, "%s: status %d, stderr: %s", library, run.exit_code, run.err);
    cr_assert_str_eq(run.err, "", "%s", library);
    sp_profile *p = harness_load(&run, "iso_rank00000.h5");
    cr_assert_eq(harness_calls(p, "work"), 20000);
    cr_assert_eq(harness_calls(p, "worker"), 20000);
    cr_assert_eq(p->num_events, 40000);
    cr_assert(p->has_thread_table);
    cr_assert_eq(p->num_threads, 2);
    /* call sites: located by the shim, resolved by the writer process */
    const sp_row *work = harness_row(p, 0, "work");
    cr_assert_not_null(work);
    cr_assert(strstr(work->source_file, "writer_isolation.c"), "work at '%s'",
              work->source_file);
    cr_assert_not_null(sp_profile_meta_string(p, "run_id"));
    cr_assert(strstr(sp_profile_meta_string(p, "executable"), "writer_isolation"));
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(writer, jemalloc_preloaded_before_the_shim) { run_with_allocator("libjemalloc.so.2", 1); }
Test(writer, jemalloc_preloaded_after_the_shim) { run_with_allocator("libjemalloc.so.2", 0); }
Test(writer, tcmalloc_preloaded_before_the_shim) { run_with_allocator("libtcmalloc_minimal.so.4", 1); }
Test(writer, tcmalloc_preloaded_after_the_shim) { run_with_allocator("libtcmalloc_minimal.so.4", 0); }

Test(writer, nothing_of_hdf5_or_libdw_enters_the_program)
{
    struct harness_run run;
    const char *argv[] = {harness_program("writer_isolation"), "0", "1000", "finalize", NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "status %d, stderr: %s", run.exit_code, run.err);
    cr_assert(strstr(run.out, "mapped=none\n"), "stdout: %s", run.out);
    sp_profile *p = harness_load(&run, "iso_rank00000.h5");
    cr_assert_eq(harness_calls(p, "work"), 1000);
    sp_profile_free(p);
    harness_run_free(&run);
}

/* A program that reaps every child itself takes the writer's exit status:
 * the outcome comes through the pipe all the same. */
Test(writer, a_program_that_reaps_every_child)
{
    struct harness_run run;
    const char *argv[] = {harness_program("writer_isolation"), "6", "2000", "reaper", NULL};
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 6, "status %d, stderr: %s", run.exit_code, run.err);
    cr_assert_str_eq(run.err, "");
    sp_profile *p = harness_load(&run, "iso_rank00000.h5");
    cr_assert_eq(harness_calls(p, "work"), 2000);
    cr_assert_eq(harness_calls(p, "worker"), 2000);
    sp_profile_free(p);
    cr_assert_eq(harness_count_files(&run, "*.spill.*"), 0);
    harness_run_free(&run);
}

/* Without the writer process and with a foreign malloc, the module is not
 * safe: the run is kept in its spill file for `scopeprof recover`. */
Test(writer, no_writer_process_and_a_foreign_malloc_keeps_the_spill)
{
    const char *allocator = allocator_path("libjemalloc.so.2");
    if (!allocator)
        cr_skip_test("libjemalloc.so.2 is not installed (scripts/setup installs it)");
    const char *prefix = getenv("SCOPEPROF_TEST_PRELOAD_PREFIX");
    if (prefix && *prefix)
        cr_skip_test("a sanitizer runtime is preloaded: it is the allocator");
    char preload[1024];
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s:%s", allocator, SHIM_PATH);
    const char *env[] = {preload, "SCOPE_PROFILER_WRITER=/nonexistent/scopeprof-writer", NULL};
    const char *argv[] = {harness_program("writer_isolation"), "5", "3000", NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, env, 0), 0);
    cr_assert_eq(run.signal, 0, "killed by signal %d, stderr: %s", run.signal, run.err);
    cr_assert_eq(run.exit_code, 5, "status %d, stderr: %s", run.exit_code, run.err);
    cr_assert(strstr(run.err, "not safe with the program's own malloc"), "stderr: %s", run.err);
    cr_assert_eq(lines(run.err), 2, "stderr: %s", run.err);
    const char *spill = entry_matching(run.dir, "iso_rank00000.h5.spill.*");
    cr_assert_not_null(spill, "no spill file kept; stderr: %s", run.err);
    cr_assert(strstr(run.err, spill), "the message does not name %s: %s", spill, run.err);

    char in[1024], out[1024];
    snprintf(in, sizeof in, "%s", harness_path(&run, spill));
    snprintf(out, sizeof out, "%s", harness_path(&run, "recovered.h5"));
    struct harness_run rec;
    const char *recover[] = {SCOPEPROF_EXE, "recover", in, "-o", out, NULL};
    cr_assert_eq(harness_run(&rec, recover, NULL, 0), 0);
    cr_assert_eq(rec.exit_code, 0, "stderr: %s", rec.err);
    sp_profile *p = harness_load(&run, "recovered.h5");
    cr_assert_eq(harness_calls(p, "work"), 3000);
    cr_assert_eq(harness_calls(p, "worker"), 3000);
    cr_assert_eq(p->num_threads, 2);
    cr_assert_not_null(sp_profile_meta_string(p, "run_id"));
    sp_profile_free(p);
    harness_run_free(&rec);
    harness_run_free(&run);
}

/* Run writer_isolation with `writer_env` (SCOPE_PROFILER_WRITER=...): the
 * module writes the whole file, silently, and no spill file is left. */
static void expect_the_module_to_write(const char *writer_env)
{
    const char *prefix = getenv("SCOPEPROF_TEST_PRELOAD_PREFIX");
    if (prefix && *prefix)
        cr_skip_test("a sanitizer runtime is preloaded: its malloc is not the C library's");
    const char *env[] = {writer_env, NULL};
    const char *argv[] = {harness_program("writer_isolation"), "3", "3000", NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 3, "status %d, stderr: %s", run.exit_code, run.err);
    cr_assert_str_eq(run.err, "");
    sp_profile *p = harness_load(&run, "iso_rank00000.h5");
    cr_assert_eq(harness_calls(p, "work"), 3000);
    cr_assert_eq(harness_count_files(&run, "*.spill.*"), 0);
    sp_profile_free(p);
    harness_run_free(&run);
}

/* Without the writer process, the module writes where malloc is libc's. */
Test(writer, no_writer_process_falls_back_to_the_module)
{
    expect_the_module_to_write("SCOPE_PROFILER_WRITER=/nonexistent/scopeprof-writer");
}

/* SCOPE_PROFILER_WRITER naming the writer module (a shared library) instead
 * of the program: it is not run (exec'ing it crashed in the child, and the
 * run was left in its spill file); the module writes the file instead. */
Test(writer, writer_set_to_the_module_library_falls_back_to_the_module)
{
    char module[1024], forced[1100];
    snprintf(module, sizeof module, "%s", SHIM_PATH);
    char *slash = strrchr(module, '/');
    cr_assert_not_null(slash);
    snprintf(slash + 1, sizeof module - (size_t)(slash + 1 - module), "libscopeprof-writer.so");
    cr_assert_eq(access(module, X_OK), 0, "%s is not there", module);
    snprintf(forced, sizeof forced, "SCOPE_PROFILER_WRITER=%s", module);
    expect_the_module_to_write(forced);
}

/* ---- item 3: ulimit -f with the default SIGXFSZ ------------------------------ */

/* basic CALLS under `ulimit -f 64` (SIGXFSZ left at its default): status
 * 0, the file holds every call, counted where the timeline did not fit. */
static void run_under_file_size_limit(const char *const *env, int max_lines)
{
    const char *argv[] = {"/bin/sh", "-c", "ulimit -f 64; exec \"$0\" 200000",
                          harness_program("basic"), NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.signal, 0, "killed by signal %d; stderr: %s", run.signal, run.err);
    cr_assert_eq(run.exit_code, 0, "status %d; stderr: %s", run.exit_code, run.err);
    cr_assert(strstr(run.out, "tick=200000"), "the program did not run to its end: %s", run.out);
    cr_assert(strstr(run.err, "basic_rank00000.h5"), "stderr: %s", run.err);
    cr_assert_leq(lines(run.err), max_lines, "stderr: %s", run.err);
    cr_assert_eq(harness_count_files(&run, ".*.tmp"), 0, "a temporary file was left");
    sp_profile *p = harness_load(&run, "basic_rank00000.h5");
    cr_assert_eq(harness_calls(p, "tick") + counted(p, "tick"), 200000);
    cr_assert_eq(harness_calls(p, "fib") + counted(p, "fib"), 177);
    sp_profile_free(p);
    cr_assert_eq(harness_count_files(&run, "*.spill.*"), 0, "a spill file was left");
    harness_run_free(&run);
}

Test(writer, file_size_limit_with_the_default_sigxfsz, .timeout = 120)
{
    run_under_file_size_limit(NULL, 1);
}

Test(writer, file_size_limit_while_spilling, .timeout = 120)
{
    /* spill writes fail on the recording thread, mid-run: that line, the
     * memory cap's, and the final write's */
    const char *env[] = {"SCOPE_PROFILER_MAX_MEMORY=1M", NULL};
    run_under_file_size_limit(env, 3);
}

/* ---- item 8: room for the handover, not for the file ------------------------ */

/* The small tmpfs, unmounted and removed even when an assertion failed. */
static char full_dir[64];

static void remove_full_dir(void)
{
    if (!full_dir[0])
        return;
    umount2(full_dir, MNT_DETACH);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", full_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", full_dir);
    full_dir[0] = '\0';
}

Test(writer, nearly_full_disk_writes_the_counts_and_keeps_the_spill, .timeout = 120,
     .fini = remove_full_dir)
{
    char *dir = full_dir;
    snprintf(full_dir, sizeof full_dir, "/tmp/scopeprof-full-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    /* 6 MiB: the 4.8 MB spill of 200 000 calls fits, the space the
     * streaming writer reserves for the file (12 MB) does not */
    if (mount("tmpfs", dir, "tmpfs", 0, "size=6m") != 0) {
        rmdir(dir);
        full_dir[0] = '\0';
        cr_skip_test("cannot mount a small tmpfs here (%s)", strerror(errno));
    }
    char prefix[128];
    snprintf(prefix, sizeof prefix, "SCOPE_PROFILER_OUTPUT=%s/prof", dir);
    const char *env[] = {prefix, "SCOPE_PROFILER_MAX_MEMORY=1M", NULL};
    const char *argv[] = {harness_program("basic"), "200000", NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "status %d; stderr: %s", run.exit_code, run.err);
    cr_assert(strstr(run.err, "counts and totals per region only"), "stderr: %s", run.err);
    cr_assert(strstr(run.err, "scopeprof recover"), "stderr: %s", run.err);
    cr_assert_eq(lines(run.err), 2, "stderr: %s", run.err);

    /* the counts are exact */
    char file[160];
    snprintf(file, sizeof file, "%s/prof_rank00000.h5", dir);
    char err[512] = "";
    sp_profile *p = sp_h5_read(file, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    cr_assert_eq(harness_calls(p, "tick") + counted(p, "tick"), 200000);
    cr_assert_eq(harness_calls(p, "fib") + counted(p, "fib"), 177);
    cr_assert_eq(counted(p, "inner"), 5);
    sp_profile_free(p);

    /* the spill file keeps the timeline: recovered elsewhere, every call */
    const char *spill = entry_matching(dir, "prof_rank00000.h5.spill.*");
    cr_assert_not_null(spill, "no spill file kept in %s", dir);
    cr_assert(strstr(run.err, spill), "the message does not name %s: %s", spill, run.err);
    char in[256], out[1024];
    snprintf(in, sizeof in, "%s/%s", dir, spill);
    snprintf(out, sizeof out, "%s", harness_path(&run, "recovered.h5"));
    struct harness_run rec;
    const char *recover[] = {SCOPEPROF_EXE, "recover", in, "-o", out, NULL};
    cr_assert_eq(harness_run(&rec, recover, NULL, 0), 0);
    cr_assert_eq(rec.exit_code, 0, "stderr: %s", rec.err);
    p = harness_load(&run, "recovered.h5");
    cr_assert_eq(harness_calls(p, "tick"), 200000);
    cr_assert_eq(harness_calls(p, "fib"), 177);
    cr_assert_eq(p->num_threads, 1);
    sp_profile_free(p);
    harness_run_free(&rec);
    harness_run_free(&run);
}

/* ---- item 9: final names near NAME_MAX ----------------------------------------- */

static void run_with_long_name(const char *const *extra)
{
    /* 237 + "_rank00000.h5" = 250 characters */
    char prefix[300] = "SCOPE_PROFILER_OUTPUT=";
    size_t at = strlen(prefix);
    memset(prefix + at, 'n', 237);
    prefix[at + 237] = '\0';
    char name[300];
    snprintf(name, sizeof name, "%s_rank00000.h5", prefix + at);
    cr_assert_eq(strlen(name), 250);
    const char *env[] = {prefix, extra ? extra[0] : NULL, NULL};
    const char *argv[] = {harness_program("basic"), "200000", NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "status %d; stderr: %s", run.exit_code, run.err);
    cr_assert_str_eq(run.err, "");
    sp_profile *p = harness_load(&run, name);
    cr_assert_eq(harness_calls(p, "tick"), 200000);
    sp_profile_free(p);
    cr_assert_eq(harness_count_files(&run, "*"), 1, "more than the profile was left");
    harness_run_free(&run);
}

Test(writer, final_name_of_250_characters) { run_with_long_name(NULL); }

Test(writer, final_name_of_250_characters_with_spilling)
{
    const char *extra[] = {"SCOPE_PROFILER_MAX_MEMORY=1M"};
    run_with_long_name(extra);
}

/* ---- item 12: spill files and planted symlinks ---------------------------------- */

Test(writer, spill_file_refuses_a_planted_symlink)
{
    /* The old name was predictable: <out>.spill.<pid>.  The shell plants a
     * symlink there and becomes the program (same pid). */
    const char *script = "echo precious > victim; ln -s victim \"out_rank00000.h5.spill.$$\"; "
                         "exec \"$0\" 200000";
    const char *argv[] = {"/bin/sh", "-c", script, harness_program("basic"), NULL};
    const char *env[] = {"SCOPE_PROFILER_OUTPUT=out", "SCOPE_PROFILER_MAX_MEMORY=1M", NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "status %d; stderr: %s", run.exit_code, run.err);
    cr_assert_str_eq(run.err, "");
    FILE *f = fopen(harness_path(&run, "victim"), "r");
    cr_assert_not_null(f);
    char content[64] = "";
    cr_assert_not_null(fgets(content, sizeof content, f));
    fclose(f);
    cr_assert_str_eq(content, "precious\n", "the symlink's target was overwritten");
    sp_profile *p = harness_load(&run, "out_rank00000.h5");
    cr_assert_eq(harness_calls(p, "tick"), 200000);
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(writer, spill_file_is_private_and_unpredictable)
{
    /* killed while blocked after spilling: the spill file stays */
    const char *script =
        "\"$0\" block 100000 marker & pid=$!; i=0;"
        "while [ ! -e marker ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done;"
        "kill -KILL $pid; wait $pid; echo pid=$pid";
    const char *argv[] = {"/bin/sh", "-c", script, harness_program("spill_calls"), NULL};
    const char *env[] = {"SCOPE_PROFILER_MAX_MEMORY=1M", NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    int pid = 0;
    const char *at = strstr(run.out, "pid=");
    cr_assert(at && sscanf(at, "pid=%d", &pid) == 1, "stdout: %s", run.out);
    char glob[128];
    snprintf(glob, sizeof glob, "spill_rank00000.h5.spill.%d.??????", pid);
    const char *spill = entry_matching(run.dir, glob);
    cr_assert_not_null(spill, "no spill file named %s", glob);
    struct stat st;
    cr_assert_eq(lstat(harness_path(&run, spill), &st), 0);
    cr_assert(S_ISREG(st.st_mode));
    cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
    harness_run_free(&run);
}
