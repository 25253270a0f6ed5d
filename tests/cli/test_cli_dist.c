/* test_cli_dist.c - `mpirun -np N scopeprof merge|export ...` under Open MPI
 * and MPICH with 1, 2 and 4 processes: the output is the serial command's
 * (same HDF5 content by h5dump, same bytes for the exports), the parts are
 * gone, a damaged input fails with the serial message, and a launcher
 * without a loadable MPI library falls back to process 0 alone. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scopeprof/h5.h"
#include "scopeprof/profile.h"
#include "cli_dir.h"

static void make_dir(void) { cli_dir_make("dist"); }

TestSuite(dist, .init = make_dir, .fini = cli_dir_remove);

/* A file's text, or NULL when it does not exist. */
static char *slurp_or_null(const char *path) { return slurp_sized(path, NULL); }

/* A program in PATH, or NULL. */
static const char *in_path(const char *name)
{
    static char found[4][1024];
    static int k;
    const char *path = getenv("PATH");
    char *copy = strdup(path ? path : "/usr/bin:/bin");
    char *save = NULL;
    const char *hit = NULL;
    k = (k + 1) % 4;
    for (char *d = strtok_r(copy, ":", &save); d && !hit; d = strtok_r(NULL, ":", &save)) {
        snprintf(found[k], sizeof found[k], "%s/%s", d, name);
        if (access(found[k], X_OK) == 0)
            hit = found[k];
    }
    free(copy);
    return hit;
}


/* argv run in the test directory, with "KEY=VALUE" entries of env. */
static result run(const char *const *argv, const char *const *env)
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
        unsetenv("LD_PRELOAD");
        unsetenv("SCOPEPROF_DIST");
        unsetenv("SCOPEPROF_MPI_LIBRARY");
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
        for (size_t k = 0; env && env[k]; k++)
            putenv((char *)env[k]);
        execv(argv[0], (char *const *)argv);
        _exit(122);
    }
    int ws;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    result r;
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    r.out = slurp_or_null(in_dir("stdout.txt"));
    r.err = slurp_or_null(in_dir("stderr.txt"));
    remove(in_dir("stdout.txt"));
    remove(in_dir("stderr.txt"));
    return r;
}

/* `scopeprof args...` serially (no launcher), or under the launcher of
 * `family` with `np` processes. */
static result scopeprof(const char *family, int np, const char *const *args,
                        const char *const *env)
{
    const char *argv[48];
    char n[16];
    size_t k = 0;
    snprintf(n, sizeof n, "%d", np);
    if (family) {
        int openmpi = !strcmp(family, "openmpi");
        const char *launcher = in_path(openmpi ? "mpirun.openmpi" : "mpiexec.mpich");
        if (!launcher)
            cr_skip_test("%s is not installed", openmpi ? "mpirun.openmpi" : "mpiexec.mpich");
        argv[k++] = launcher;
        if (openmpi)
            argv[k++] = "--oversubscribe"; /* 4 processes on 2 cores */
        argv[k++] = "-n";
        argv[k++] = n;
    }
    argv[k++] = SCOPEPROF_EXE;
    for (size_t i = 0; args[i] && k < 47; i++)
        argv[k++] = args[i];
    argv[k] = NULL;
    return run(argv, env);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Rank r of a 5-rank run: main > (solve > assemble) x (r + 1), plus a
 * region of its own ("only_r<r>", so the region table's order depends on
 * the order ranks are merged in) and, on odd ranks, a worker thread. */
static long crossing_rank = -1; /* this rank's assemble outlives its solve */
/* Stored call and parent ids, and the worker's call forked from main
 * (events/fork_parent_ids, as the shim records a pthread's root). */
static int with_forks;
/* Each rank's file lists its region names rotated by its rank (rank 1:
 * solve, assemble, only_r1, main): every file numbers the regions its own
 * way, so a block's ids are not the run's unless renumbered. */
static int rotated_names;

static void write_rank(uint32_t rank)
{
    sp_profile *p = sp_profile_new();
    size_t cap = 64;
    p->start = malloc(cap * sizeof *p->start);
    p->end = malloc(cap * sizeof *p->end);
    p->thread_ids = malloc(cap * sizeof *p->thread_ids);
    p->rows = calloc(8, sizeof *p->rows);
    char own[32];
    snprintf(own, sizeof own, "only_r%u", rank);
    const char *regions[] = {"main", "solve", "assemble", own};
    int64_t t0 = 1000000 + rank * 17;
    for (int g = 0; rotated_names && g < 4; g++)
        cr_assert_geq(sp_profile_intern_name(p, regions[(g + (int)rank) % 4]), 0);
    for (int g = 0; g < 4; g++) {
        sp_row *row = &p->rows[p->num_rows++];
        row->region = (uint32_t)sp_profile_intern_name(p, regions[g]);
        row->rank = rank;
        row->offset = p->num_events;
        row->source_line = -1;
        row->exclusive_total = -1;
        row->source_file = strdup("");
        row->source_text = strdup("");
        row->tags = strdup("[]");
        row->event_metadata = strdup("[]");
        int reps = g == 0 ? 1 : g == 3 ? 1 : (int)rank + 1;
        for (int i = 0; i < reps; i++) {
            int64_t s, e, th = 0;
            if (g == 0)
                s = 0, e = 100000;
            else if (g == 1)
                s = 1000 + i * 10000, e = s + 8000;
            else if (g == 2)
                s = 2000 + i * 10000,
                e = s + ((long)rank == crossing_rank ? 9000 : 3000 + rank * 100);
            else
                s = 90000, e = 95000, th = rank % 2;
            p->start[p->num_events] = t0 + s;
            p->end[p->num_events] = t0 + e;
            p->thread_ids[p->num_events] = th;
            p->num_events++;
            row->count++;
        }
        sp_summary_compute(p->start + row->offset, p->end + row->offset, NULL, row->count,
                           &row->stats);
    }
    if (with_forks) {
        /* events: main, solve x reps, assemble x reps, own */
        size_t reps = rank + 1;
        p->call_ids = malloc(p->num_events * sizeof *p->call_ids);
        p->parent_ids = malloc(p->num_events * sizeof *p->parent_ids);
        p->fork_parent_ids = malloc(p->num_events * sizeof *p->fork_parent_ids);
        cr_assert(p->call_ids && p->parent_ids && p->fork_parent_ids);
        for (size_t e = 0; e < p->num_events; e++) {
            p->call_ids[e] = (int64_t)e;
            p->parent_ids[e] = e == 0 ? -1 : e <= reps ? 0 : e <= 2 * reps ? (int64_t)(e - reps)
                                                                              : 0;
            p->fork_parent_ids[e] = -1;
        }
        if (rank % 2) { /* own runs on the worker: a root there, forked from main */
            p->parent_ids[p->num_events - 1] = -1;
            p->fork_parent_ids[p->num_events - 1] = 0;
        }
    }
    p->has_thread_table = 1;
    size_t threads = rank % 2 ? 2 : 1;
    p->threads = calloc(threads, sizeof *p->threads);
    for (size_t t = 0; t < threads; t++)
        p->threads[t] = (sp_thread_row){.rank = rank, .index = (int64_t)t, .ident = 1,
                                        .native_id = 1, .start_ns = 0, .end_ns = 100000,
                                        .cpu_ns = 50000,
                                        .name = strdup(t ? "worker" : "MainThread")};
    p->num_threads = threads;
    p->num_ranks = rank + 1;
    sp_profile_set_meta_int(p, "start_time_ns", 1000000);
    sp_profile_set_meta_int(p, "mpi_size", 5);
    sp_profile_set_meta_int(p, "mpi_rank", rank);
    sp_profile_set_meta_string(p, "run_id", "dist-test");
    char name[64], err[512];
    snprintf(name, sizeof name, "ranks/run_rank%05u.h5", rank);
    cr_assert_eq(sp_h5_write(in_dir(name), p, err, sizeof err), 0, "%s", err);
    sp_profile_free(p);
}

static void write_run(void)
{
    cr_assert_eq(mkdir(in_dir("ranks"), 0755), 0);
    for (uint32_t r = 0; r < 5; r++)
        write_rank(r);
}

/* The content of an HDF5 file as h5dump prints it, without its first line
 * (which names the file). */
static char *dump(const char *name)
{
    const char *h5dump = in_path("h5dump");
    if (!h5dump)
        cr_skip_test("h5dump (hdf5-tools) is not installed");
    result r = run(ARGS(h5dump, in_dir(name)), NULL);
    cr_assert_eq(r.status, 0, "h5dump %s: %s", name, r.err);
    char *body = strdup(strchr(r.out, '\n'));
    result_free(&r);
    return body;
}

/* Nothing but the inputs, the expected outputs and the listed names. */
static void no_part_files_left(void)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        cr_expect_null(strstr(e->d_name, ".part"), "part file left behind: %s", e->d_name);
    closedir(d);
}

static void merge_matches_serial(const char *family)
{
    write_run();
    result serial = scopeprof(NULL, 0, ARGS("merge", "ranks", "-o", "serial.h5"), NULL);
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    char *want = dump("serial.h5");
    static const int counts[] = {1, 2, 4};
    for (int c = 0; c < 3; c++) {
        result r = scopeprof(family, counts[c], ARGS("merge", "ranks", "-o", "dist.h5"), NULL);
        cr_assert_eq(r.status, 0, "%d processes: %s", counts[c], r.err);
        cr_expect_str_eq(r.out, "merged 5 files into dist.h5\n", "%d processes", counts[c]);
        cr_expect_str_eq(r.err, "", "%d processes", counts[c]);
        char *got = dump("dist.h5");
        cr_expect_str_eq(got, want, "%s, %d processes: not the serial merge", family,
                         counts[c]);
        free(got);
        no_part_files_left();
        result_free(&r);
    }
    free(want);
    result_free(&serial);
}

Test(dist, merge_under_open_mpi_is_the_serial_merge, .timeout = 240)
{
    merge_matches_serial("openmpi");
}

Test(dist, merge_under_mpich_is_the_serial_merge, .timeout = 240)
{
    merge_matches_serial("mpich");
}

/* Ranks out of order across the blocks (a list naming rank 4 first): the
 * parts' ranks overlap, so process 0 merges serially - the same file. */
Test(dist, merge_of_a_list_out_of_rank_order_is_the_serial_merge, .timeout = 240)
{
    write_run();
    FILE *list = fopen(in_dir("ranks/list.txt"), "w");
    cr_assert_not_null(list);
    fprintf(list, "run_rank00004.h5\nrun_rank00001.h5\nrun_rank00002.h5\nrun_rank00000.h5\n"
                  "run_rank00003.h5\n");
    fclose(list);
    result serial = scopeprof(NULL, 0, ARGS("merge", "@ranks/list.txt", "-o", "serial.h5"), NULL);
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    result r = scopeprof("mpich", 2, ARGS("merge", "@ranks/list.txt", "-o", "dist.h5"), NULL);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *want = dump("serial.h5"), *got = dump("dist.h5");
    cr_expect_str_eq(got, want);
    no_part_files_left();
    free(want);
    free(got);
    result_free(&serial);
    result_free(&r);
}

/* A damaged file in the last process's block: the serial message, once,
 * exit status 1, no output and no part left. */
static void damaged_input_fails_like_serial(const char *family)
{
    write_run();
    FILE *f = fopen(in_dir("ranks/run_rank00004.h5"), "w");
    cr_assert_not_null(f);
    fputs("not HDF5", f);
    fclose(f);
    result serial = scopeprof(NULL, 0, ARGS("merge", "ranks", "-o", "out.h5"), NULL);
    cr_assert_eq(serial.status, 1);
    result r = scopeprof(family, 2, ARGS("merge", "ranks", "-o", "out.h5"), NULL);
    cr_expect_neq(r.status, 0);
    cr_expect_not_null(strstr(r.err, serial.err), "serial said:\n%s\nunder %s:\n%s", serial.err,
                       family, r.err);
    char *again = strstr(r.err, serial.err);
    cr_expect_null(again ? strstr(again + 1, serial.err) : NULL, "said twice:\n%s", r.err);
    cr_expect_neq(access(in_dir("out.h5"), F_OK), 0, "an output was written");
    no_part_files_left();
    result_free(&serial);
    result_free(&r);
}

Test(dist, damaged_input_under_open_mpi_fails_like_serial, .timeout = 240)
{
    damaged_input_fails_like_serial("openmpi");
}

Test(dist, damaged_input_under_mpich_fails_like_serial, .timeout = 240)
{
    damaged_input_fails_like_serial("mpich");
}

/* No MPI library: one line, process 0 does the serial merge, exit 0. */
Test(dist, no_mpi_library_falls_back_to_process_0, .timeout = 240)
{
    write_run();
    result serial = scopeprof(NULL, 0, ARGS("merge", "ranks", "-o", "serial.h5"), NULL);
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    result r = scopeprof("mpich", 2, ARGS("merge", "ranks", "-o", "dist.h5"),
                         ARGS("SCOPEPROF_MPI_LIBRARY=/nonexistent/libmpi.so"));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "merged 5 files into dist.h5\n");
    cr_expect_not_null(strstr(r.err, "scopeprof merge: started by an MPI launcher, but cannot "
                                     "load the MPI library SCOPEPROF_MPI_LIBRARY="),
                       "%s", r.err);
    cr_expect_not_null(strstr(r.err, "running serially on process 0\n"), "%s", r.err);
    cr_expect_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "more than one line:\n%s",
                 r.err);
    char *want = dump("serial.h5"), *got = dump("dist.h5");
    cr_expect_str_eq(got, want);
    free(want);
    free(got);
    result_free(&serial);
    result_free(&r);
}

/* ---- export ---------------------------------------------------------------- */

static char *read_output(const char *name)
{
    char *s = slurp_or_null(in_dir(name));
    cr_assert_not_null(s, "%s was not written", name);
    return s;
}

static size_t count_of(const char *text, const char *what);

/* SCOPEPROF_EXPORT_IN_MEMORY=1 for the distributed runs: the in-memory parts. */
static int force_in_memory;

/* The trace of a streamed folded or csv export: one line per process
 * saying its part streamed (not loaded in memory), and nothing else. */
static void expect_parts_streamed(const char *err, int np)
{
    if (np == 1) { /* no MPI at all: the serial export */
        cr_expect_str_eq(err, "scopeprof export: streamed\n");
        return;
    }
    size_t expected = 0;
    for (int k = 0; k < np; k++) {
        char line[96];
        snprintf(line, sizeof line, "scopeprof export: process %d of %d: part streamed\n", k,
                 np);
        cr_expect_not_null(strstr(err, line), "%d processes, no '%s' in:\n%s", np, line, err);
        expected += strlen(line);
    }
    cr_expect_eq(strlen(err), expected, "%d processes, more than the trace:\n%s", np, err);
}

/* Nothing left in a directory (the parts' temporary files are unlinked). */
static void expect_empty_dir(const char *name)
{
    DIR *d = opendir(in_dir(name));
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        cr_expect(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."), "%s left in %s",
                  e->d_name, name);
    closedir(d);
}

/* Byte for byte the serial export, for every process count; opt/value is
 * an option and its value (a selection), or NULL.  folded and csv run with
 * SCOPEPROF_EXPORT_TRACE=1 (every part streamed) and TMPDIR in the test
 * directory (left empty). */
static void export_matches_serial(const char *family, const char *format, const char *opt,
                                  const char *value)
{
    write_run();
    char out[64], dist_out[64];
    snprintf(out, sizeof out, "serial.%s", format);
    snprintf(dist_out, sizeof dist_out, "dist.%s", format);
    result serial = opt ? scopeprof(NULL, 0, ARGS("export", format, "ranks", "-o", out, opt, value),
                                    NULL)
                        : scopeprof(NULL, 0, ARGS("export", format, "ranks", "-o", out), NULL);
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    char *want = read_output(out);
    FILE *f = fopen(in_dir(out), "rb");
    fseek(f, 0, SEEK_END);
    long want_size = ftell(f);
    fclose(f);
    int parts = !strcmp(format, "folded") || !strcmp(format, "csv");
    static char tmpdir[4096 + 8];
    snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", in_dir("tmp"));
    cr_assert_eq(mkdir(in_dir("tmp"), 0755), 0);
    const char *const *env = !parts ? NULL
                             : force_in_memory
                                 ? ARGS("SCOPEPROF_EXPORT_TRACE=1", tmpdir,
                                        "SCOPEPROF_EXPORT_IN_MEMORY=1")
                                 : ARGS("SCOPEPROF_EXPORT_TRACE=1", tmpdir);
    static const int counts[] = {1, 2, 4};
    for (int c = 0; c < 3; c++) {
        result r = opt ? scopeprof(family, counts[c], ARGS("export", format, "ranks", "-o",
                                                           dist_out, opt, value), env)
                       : scopeprof(family, counts[c], ARGS("export", format, "ranks", "-o",
                                                           dist_out), env);
        cr_assert_eq(r.status, 0, "%d processes: %s", counts[c], r.err);
        char expected_out[96];
        snprintf(expected_out, sizeof expected_out, "wrote %s\n", dist_out);
        cr_expect_str_eq(r.out, expected_out, "%d processes", counts[c]);
        /* perfetto is written by process 0 alone (src/dist/dist_export.c) */
        if (!strcmp(format, "perfetto") && counts[c] > 1)
            cr_expect_not_null(strstr(r.err, "not written in parts"), "%d processes: %s",
                               counts[c], r.err);
        else if (parts && !force_in_memory)
            expect_parts_streamed(r.err, counts[c]);
        else
            cr_expect_str_eq(r.err, "", "%d processes", counts[c]);
        if (parts)
            expect_empty_dir("tmp");
        f = fopen(in_dir(dist_out), "rb");
        cr_assert_not_null(f);
        fseek(f, 0, SEEK_END);
        long got_size = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *got = malloc((size_t)got_size + 1);
        cr_assert_eq(fread(got, 1, (size_t)got_size, f), (size_t)got_size);
        fclose(f);
        cr_expect_eq(got_size, want_size, "%s %s, %d processes: %ld bytes, serial %ld", family,
                     format, counts[c], got_size, want_size);
        cr_expect(got_size == want_size && !memcmp(got, want, (size_t)want_size),
                  "%s %s, %d processes: not the serial bytes", family, format, counts[c]);
        free(got);
        remove(in_dir(dist_out));
        result_free(&r);
    }
    free(want);
    result_free(&serial);
}

Test(dist, perfetto_under_open_mpi_is_the_serial_trace, .timeout = 240)
{
    export_matches_serial("openmpi", "perfetto", NULL, NULL);
}

Test(dist, perfetto_under_mpich_is_the_serial_trace, .timeout = 240)
{
    export_matches_serial("mpich", "perfetto", NULL, NULL);
}

Test(dist, perfetto_of_a_selection_under_mpich, .timeout = 240)
{
    export_matches_serial("mpich", "perfetto", "--exclude", "assemble");
}

Test(dist, folded_under_open_mpi_is_the_serial_file, .timeout = 240)
{
    export_matches_serial("openmpi", "folded", NULL, NULL);
}

Test(dist, folded_under_mpich_is_the_serial_file, .timeout = 240)
{
    export_matches_serial("mpich", "folded", NULL, NULL);
}

Test(dist, csv_under_open_mpi_is_the_serial_file, .timeout = 240)
{
    export_matches_serial("openmpi", "csv", NULL, NULL);
}

Test(dist, csv_under_mpich_is_the_serial_file, .timeout = 240)
{
    export_matches_serial("mpich", "csv", "--include", "solve|assemble");
}

/* Fork edges: the worker's call is grafted under main (folded), each
 * rank's file read alone as the serial stream reads it. */
Test(dist, folded_with_fork_edges_under_mpich, .timeout = 240)
{
    with_forks = 1;
    export_matches_serial("mpich", "folded", NULL, NULL);
}

Test(dist, csv_with_fork_edges_under_open_mpi, .timeout = 240)
{
    with_forks = 1;
    export_matches_serial("openmpi", "csv", NULL, NULL);
}

Test(dist, folded_of_lanes_and_ranks_under_open_mpi, .timeout = 240)
{
    export_matches_serial("openmpi", "folded", "--ranks", "1,3");
}

/* The in-memory parts (each process's block loaded whole): what the
 * stream falls back on, the same bytes. */
Test(dist, folded_in_memory_under_mpich, .timeout = 240)
{
    force_in_memory = 1;
    export_matches_serial("mpich", "folded", NULL, NULL);
}

Test(dist, csv_in_memory_under_open_mpi, .timeout = 240)
{
    force_in_memory = 1;
    export_matches_serial("openmpi", "csv", "--exclude", "main");
}

/* A rank of `calls` calls: main and calls - 1 leaves under it. */
static void write_wide_rank(uint32_t rank, size_t calls)
{
    sp_profile *p = sp_profile_new();
    p->start = malloc(calls * sizeof *p->start);
    p->end = malloc(calls * sizeof *p->end);
    p->rows = calloc(2, sizeof *p->rows);
    cr_assert(p->start && p->end && p->rows);
    const char *regions[] = {"main", "leaf"};
    for (int g = 0; g < 2; g++) {
        sp_row *row = &p->rows[p->num_rows++];
        row->region = (uint32_t)sp_profile_intern_name(p, regions[g]);
        row->rank = rank;
        row->offset = p->num_events;
        row->source_line = -1;
        row->exclusive_total = -1;
        row->source_file = strdup("");
        row->source_text = strdup("");
        row->tags = strdup("[]");
        row->event_metadata = strdup("[]");
        size_t n = g == 0 ? 1 : calls - 1;
        for (size_t i = 0; i < n; i++, p->num_events++, row->count++) {
            p->start[p->num_events] = g == 0 ? 1000 : 2000 + (int64_t)i * 10;
            p->end[p->num_events] = g == 0 ? 2000 + (int64_t)calls * 10 : 2005 + (int64_t)i * 10;
        }
        sp_summary_compute(p->start + row->offset, p->end + row->offset, NULL, row->count,
                           &row->stats);
    }
    p->num_ranks = rank + 1;
    sp_profile_set_meta_int(p, "start_time_ns", 1000);
    char name[64], err[512];
    snprintf(name, sizeof name, "wide/run_rank%05u.h5", rank);
    cr_assert_eq(sp_h5_write(in_dir(name), p, err, sizeof err), 0, "%s", err);
    sp_profile_free(p);
}

/* The warning above a million rows counts every part's rows: two ranks of
 * 600,000 calls, one per process, warn once, as serially. */
Test(dist, csv_warning_counts_every_part, .timeout = 240)
{
    cr_assert_eq(mkdir(in_dir("wide"), 0755), 0);
    write_wide_rank(0, 600000);
    write_wide_rank(1, 600000);
    result serial = scopeprof(NULL, 0, ARGS("export", "csv", "wide", "-o", "s.csv"), NULL);
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    cr_assert_not_null(strstr(serial.err, "holds 1200000 events"), "%s", serial.err);
    size_t want_len, got_len;
    char *want = slurp_sized(in_dir("s.csv"), &want_len);
    cr_assert_not_null(want);
    for (int np = 2; np <= 4; np += 2) {
        result r = scopeprof("mpich", np, ARGS("export", "csv", "wide", "-o", "d.csv"), NULL);
        cr_expect_eq(r.status, 0, "%d processes: %s", np, r.err);
        cr_expect_str_eq(r.err, serial.err, "%d processes", np);
        char *got = slurp_sized(in_dir("d.csv"), &got_len);
        cr_assert_not_null(got);
        cr_expect(got_len == want_len && !memcmp(got, want, want_len),
                  "%d processes: not the serial bytes (%zu, serial %zu)", np, got_len, want_len);
        free(got);
        remove(in_dir("d.csv"));
        result_free(&r);
    }
    free(want);
    remove(in_dir("s.csv"));
    result_free(&serial);
}

/* Standard output: process 0 writes the parts there, in order. */
static void export_to_stdout_is_serial(const char *family, const char *format)
{
    write_run();
    result serial = scopeprof(NULL, 0, ARGS("export", format, "ranks", "-o", "-"), NULL);
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    for (int np = 2; np <= 4; np += 2) {
        result r = scopeprof(family, np, ARGS("export", format, "ranks", "-o", "-"),
                             ARGS("SCOPEPROF_EXPORT_TRACE=1"));
        cr_expect_eq(r.status, 0, "%d processes: %s", np, r.err);
        cr_expect_str_eq(r.out, serial.out, "%d processes", np);
        expect_parts_streamed(r.err, np);
        result_free(&r);
    }
    result_free(&serial);
}

Test(dist, folded_to_stdout_under_mpich, .timeout = 240)
{
    export_to_stdout_is_serial("mpich", "folded");
}

Test(dist, csv_to_stdout_under_open_mpi, .timeout = 240)
{
    export_to_stdout_is_serial("openmpi", "csv");
}

/* No temporary directory for the parts: every process falls back to the
 * in-memory parts, with the serial bytes, and the trace says why. */
Test(dist, folded_without_tmpdir_falls_back_to_memory, .timeout = 240)
{
    write_run();
    result serial = scopeprof(NULL, 0, ARGS("export", "folded", "ranks", "-o", "s.folded"),
                              NULL);
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    char *want = read_output("s.folded");
    result r = scopeprof("mpich", 2, ARGS("export", "folded", "ranks", "-o", "d.folded"),
                         ARGS("SCOPEPROF_EXPORT_TRACE=1", "TMPDIR=/nonexistent/scopeprof"));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "wrote d.folded\n");
    cr_expect_eq(count_of(r.err, "part in memory: process 1: no temporary file for the part "
                                 "(TMPDIR)\n"), 2, "%s", r.err);
    char *got = read_output("d.folded");
    cr_expect_str_eq(got, want);
    free(got);
    free(want);
    result_free(&serial);
    result_free(&r);
}

/* A rank whose calls do not nest: the serial stream gives up and the
 * in-memory path words it; so do the parts, which say so in the trace. */
static void crossing_export_fails_like_serial(const char *family, const char *format)
{
    crossing_rank = 3;
    write_run();
    crossing_rank = -1;
    char serial_out[32], dist_out[32];
    snprintf(serial_out, sizeof serial_out, "s.%s", format);
    snprintf(dist_out, sizeof dist_out, "d.%s", format);
    result serial = scopeprof(NULL, 0, ARGS("export", format, "ranks", "-o", serial_out), NULL);
    cr_assert_eq(serial.status, 1);
    cr_assert_not_null(strstr(serial.err, "not properly nested"), "%s", serial.err);
    for (int np = 2; np <= 4; np += 2) {
        result r = scopeprof(family, np, ARGS("export", format, "ranks", "-o", dist_out),
                             NULL);
        cr_expect_eq(r.status, 1, "%d processes: %s", np, r.err);
        /* (Open MPI adds its lines about a process that returned 1) */
        cr_expect_not_null(strstr(r.err, serial.err), "%d processes:\n%s\nserial:\n%s", np,
                           r.err, serial.err);
        cr_expect_eq(count_of(r.err, "scopeprof"), 1, "%d processes:\n%s", np, r.err);
        cr_expect_neq(access(in_dir(dist_out), F_OK), 0, "a partial file is left");
        result_free(&r);
        r = scopeprof(family, np, ARGS("export", format, "ranks", "-o", dist_out),
                      ARGS("SCOPEPROF_EXPORT_TRACE=1"));
        cr_expect_eq(count_of(r.err, "part in memory: "), (size_t)np, "%s", r.err);
        cr_expect_eq(count_of(r.err, "not properly nested"), (size_t)np + 1, "%s", r.err);
        result_free(&r);
    }
    result_free(&serial);
}

Test(dist, folded_with_a_crossing_rank_under_mpich, .timeout = 240)
{
    crossing_export_fails_like_serial("mpich", "folded");
}

Test(dist, csv_with_a_crossing_rank_under_open_mpi, .timeout = 240)
{
    crossing_export_fails_like_serial("openmpi", "csv");
}

/* A selection that leaves out a rank whose calls do not nest: process 0
 * alone checks the ranks outside the selection (the other processes' csv
 * parts no longer repeat it), and the export is still the serial one:
 * same status, message and bytes. */
static void selection_beside_a_crossing_rank(const char *family, const char *format)
{
    crossing_rank = 3;
    write_run();
    crossing_rank = -1;
    char serial_out[32], dist_out[32];
    snprintf(serial_out, sizeof serial_out, "s.%s", format);
    snprintf(dist_out, sizeof dist_out, "d.%s", format);
    result serial = scopeprof(NULL, 0,
                              ARGS("export", format, "ranks", "--ranks", "0,1", "-o", serial_out),
                              NULL);
    char *want = serial.status == 0 ? read_output(serial_out) : NULL;
    for (int np = 2; np <= 4; np += 2) {
        result r = scopeprof(family, np,
                             ARGS("export", format, "ranks", "--ranks", "0,1", "-o", dist_out),
                             NULL);
        cr_expect_eq(r.status, serial.status, "%d processes: %s", np, r.err);
        cr_expect_not_null(strstr(r.err, serial.err), "%d processes:\n%s\nserial:\n%s", np,
                           r.err, serial.err);
        if (want) {
            char *got = read_output(dist_out);
            cr_expect_str_eq(got, want, "%d processes", np);
            free(got);
            remove(in_dir(dist_out));
        }
        result_free(&r);
    }
    free(want);
    result_free(&serial);
}

Test(dist, csv_of_a_selection_beside_a_crossing_rank_under_mpich, .timeout = 240)
{
    selection_beside_a_crossing_rank("mpich", "csv");
}

Test(dist, folded_of_a_selection_beside_a_crossing_rank_under_open_mpi, .timeout = 240)
{
    selection_beside_a_crossing_rank("openmpi", "folded");
}

/* One rank selected: no "rank R" frames, although every process holds ranks. */
Test(dist, folded_of_one_rank_under_open_mpi, .timeout = 240)
{
    export_matches_serial("openmpi", "folded", "--ranks", "3");
}

/* Nothing selected: the serial message, once, and no file. */
Test(dist, export_of_nothing_fails_like_serial, .timeout = 240)
{
    write_run();
    result serial = scopeprof(NULL, 0, ARGS("export", "folded", "ranks", "-o", "s.folded",
                                            "--include", "nothing_like_this"), NULL);
    cr_assert_eq(serial.status, 1);
    result r = scopeprof("openmpi", 2, ARGS("export", "folded", "ranks", "-o", "d.folded",
                                            "--include", "nothing_like_this"), NULL);
    cr_expect_neq(r.status, 0);
    cr_expect_not_null(strstr(r.err, serial.err), "serial:\n%s\ndistributed:\n%s", serial.err,
                       r.err);
    cr_expect_neq(access(in_dir("d.folded"), F_OK), 0, "a partial file is left");
    result_free(&serial);
    result_free(&r);
}

/* Every process parses the same arguments: a usage error, help, and the
 * commands without a distributed form are printed once, by process 0
 * (src/cli/launcher_quiet.c), and the usage error keeps its status. */
static size_t count_of(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

static void messages_printed_once(const char *family)
{
    write_run();
    const char *const usage_errors[][4] = {
        {"report", "--no-such-option", "ranks", NULL},
        {"export", "no-such-format", "ranks", NULL},
        {"merge", "ranks", NULL, NULL},
    };
    for (size_t k = 0; k < sizeof usage_errors / sizeof *usage_errors; k++) {
        result serial = scopeprof(NULL, 0, usage_errors[k], NULL);
        cr_assert_eq(serial.status, 2, "%s", serial.err);
        cr_assert_neq(serial.err[0], '\0');
        result r = scopeprof(family, 2, usage_errors[k], NULL);
        cr_expect_neq(r.status, 0);
        cr_expect_eq(count_of(r.err, serial.err), 1, "serial:\n%s\nunder %s:\n%s", serial.err,
                     family, r.err);
        result_free(&serial);
        result_free(&r);
    }
    result help = scopeprof(family, 2, ARGS("report", "--help"), NULL);
    cr_expect_eq(help.status, 0);
    cr_expect_eq(count_of(help.out, "usage: scopeprof report"), 1, "%s", help.out);
    result_free(&help);
    /* validate has no distributed form: process 0 validates */
    result serial = scopeprof(NULL, 0, ARGS("validate", "ranks"), NULL);
    result v = scopeprof(family, 2, ARGS("validate", "ranks"), NULL);
    cr_expect_eq(v.status, serial.status);
    cr_expect_str_eq(v.out, serial.out);
    result_free(&serial);
    result_free(&v);
}

Test(dist, messages_printed_once_under_mpich, .timeout = 240)
{
    messages_printed_once("mpich");
}

Test(dist, messages_printed_once_under_open_mpi, .timeout = 240)
{
    messages_printed_once("openmpi");
}

/* A format written by one process: process 0 alone, with a warning line. */
Test(dist, chrome_under_a_launcher_is_written_by_process_0, .timeout = 240)
{
    write_run();
    result serial = scopeprof(NULL, 0, ARGS("export", "chrome", "ranks", "-o", "s.json"), NULL);
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    result r = scopeprof("mpich", 2, ARGS("export", "chrome", "ranks", "-o", "d.json"), NULL);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "wrote d.json\n");
    cr_expect_not_null(strstr(r.err, "not written in parts"), "%s", r.err);
    char *want = read_output("s.json"), *got = read_output("d.json");
    cr_expect_str_eq(got, want);
    free(want);
    free(got);
    result_free(&serial);
    result_free(&r);
}

/* ---- report ------------------------------------------------------------------ */

/* The process that opens file f of `count` with `np` processes (the
 * blocks of sp_dist_block: the first count % np processes one file more). */
static int block_owner(size_t f, size_t count, int np)
{
    int p = 0;
    for (size_t first = 0; p < np; p++) {
        size_t n = count / (size_t)np + ((size_t)p < count % (size_t)np);
        if (f < first + n)
            break;
        first += n;
    }
    return p;
}

/* Shared over the processes (a rank streamed by the process whose block
 * holds its file, the trees added in rank order by process 0): the serial
 * report, printed once; SCOPEPROF_REPORT_TRACE says the streamed path ran
 * and each other process lists the files whose indexes it read: exactly
 * its block (process 0 reads them all).  The files number their regions
 * each its own way (rotated_names): a tree sent with a block's ids would
 * show other names.  `ranks`: the selected ranks (1 each). */
static void report_is_the_serial_report(const char *family, const char *opt, const char *value,
                                        const int *ranks)
{
    rotated_names = 1;
    write_run();
    rotated_names = 0;
    result serial = opt ? scopeprof(NULL, 0, ARGS("report", "ranks", opt, value),
                                    ARGS("NO_COLOR=1", "SCOPEPROF_REPORT_TRACE=1"))
                        : scopeprof(NULL, 0, ARGS("report", "ranks"),
                                    ARGS("NO_COLOR=1", "SCOPEPROF_REPORT_TRACE=1"));
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    cr_assert_str_eq(serial.err, "scopeprof report: streamed\n");
    static const int counts[] = {1, 2, 4};
    for (int c = 0; c < 3; c++) {
        result r = opt ? scopeprof(family, counts[c], ARGS("report", "ranks", opt, value),
                                   ARGS("NO_COLOR=1", "SCOPEPROF_REPORT_TRACE=1"))
                       : scopeprof(family, counts[c], ARGS("report", "ranks"),
                                   ARGS("NO_COLOR=1", "SCOPEPROF_REPORT_TRACE=1"));
        cr_expect_eq(r.status, 0, "%d processes: %s", counts[c], r.err);
        cr_expect_str_eq(r.out, serial.out, "%d processes", counts[c]);
        /* process 0's line, and each other process's share of the selected
         * ranks and its files (the lines of several processes come in any
         * order) */
        cr_expect_not_null(strstr(r.err, "scopeprof report: streamed\n"), "%s", r.err);
        size_t lines = 0;
        for (const char *q = r.err; *q; q++)
            lines += *q == '\n';
        cr_expect_eq(lines, (size_t)counts[c], "%d processes: %s", counts[c], r.err);
        for (int p = 1; p < counts[c]; p++) {
            size_t share = 0, files = 0;
            for (size_t k = 0; ranks[k] >= 0; k++)
                share += block_owner((size_t)ranks[k], 5, counts[c]) == p;
            char line[512];
            int at = 0;
            for (size_t f = 0; f < 5; f++)
                files += block_owner(f, 5, counts[c]) == p;
            at = snprintf(line, sizeof line,
                          "scopeprof report: process %d streamed %zu ranks from %zu of 5 files:",
                          p, share, files);
            for (size_t f = 0; f < 5; f++)
                if (block_owner(f, 5, counts[c]) == p)
                    at += snprintf(line + at, sizeof line - (size_t)at, " ranks/run_rank%05zu.h5",
                                   f);
            snprintf(line + at, sizeof line - (size_t)at, "\n");
            cr_expect_not_null(strstr(r.err, line), "%d processes, no '%s' in: %s", counts[c],
                               line, r.err);
        }
        result_free(&r);
    }
    result_free(&serial);
}

Test(dist, report_under_open_mpi_is_the_serial_report, .timeout = 240)
{
    report_is_the_serial_report("openmpi", NULL, NULL, (const int[]){0, 1, 2, 3, 4, -1});
}

Test(dist, report_under_mpich_is_the_serial_report, .timeout = 240)
{
    report_is_the_serial_report("mpich", NULL, NULL, (const int[]){0, 1, 2, 3, 4, -1});
}

Test(dist, report_of_a_selection_under_mpich, .timeout = 240)
{
    report_is_the_serial_report("mpich", "--ranks", "1,3,4", (const int[]){1, 3, 4, -1});
}

/* --from/--to count from the run's first event: every process opens every
 * file (process 1 says so), and the report is the serial one. */
Test(dist, report_of_a_time_window_under_mpich_opens_every_file, .timeout = 240)
{
    rotated_names = 1;
    write_run();
    rotated_names = 0;
    result serial = scopeprof(NULL, 0, ARGS("report", "ranks", "--to", "0.00005"),
                              ARGS("NO_COLOR=1"));
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    result r = scopeprof("mpich", 2, ARGS("report", "ranks", "--to", "0.00005"),
                         ARGS("NO_COLOR=1", "SCOPEPROF_REPORT_TRACE=1"));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, serial.out);
    cr_expect_not_null(strstr(r.err, "scopeprof report: process 1 streamed 2 ranks from 5 of 5 "
                                     "files:"),
                       "%s", r.err);
    result_free(&serial);
    result_free(&r);
}

/* Fork edges: the worker's call forked from main, grafted on the stream of
 * each rank's block (the file's names renumbered before the graft). */
Test(dist, report_with_fork_edges_under_mpich, .timeout = 240)
{
    with_forks = 1;
    report_is_the_serial_report("mpich", NULL, NULL, (const int[]){0, 1, 2, 3, 4, -1});
    with_forks = 0;
}

Test(dist, report_as_json_under_open_mpi, .timeout = 240)
{
    report_is_the_serial_report("openmpi", "--format", "json", (const int[]){0, 1, 2, 3, 4, -1});
}

/* A rank that is not properly nested, streamed by another process: process
 * 0 learns it from that process's answer, falls back to the in-memory
 * path like the serial command (same report, same warning), and the
 * others end without a word. */
static void report_with_a_crossing_rank(const char *family)
{
    crossing_rank = 3;
    write_run();
    crossing_rank = -1;
    result serial = scopeprof(NULL, 0, ARGS("report", "ranks"), ARGS("NO_COLOR=1"));
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    cr_assert_not_null(strstr(serial.err, "not properly nested"), "%s", serial.err);
    static const int counts[] = {2, 4};
    for (int c = 0; c < 2; c++) {
        result r = scopeprof(family, counts[c], ARGS("report", "ranks"), ARGS("NO_COLOR=1"));
        cr_expect_eq(r.status, 0, "%d processes: %s", counts[c], r.err);
        cr_expect_str_eq(r.out, serial.out, "%d processes", counts[c]);
        cr_expect_str_eq(r.err, serial.err, "%d processes", counts[c]);
        result_free(&r);
    }
    result_free(&serial);
}

Test(dist, report_with_a_crossing_rank_under_mpich, .timeout = 240)
{
    report_with_a_crossing_rank("mpich");
}

Test(dist, report_with_a_crossing_rank_under_open_mpi, .timeout = 240)
{
    report_with_a_crossing_rank("openmpi");
}

/* A damaged file in another process's block (rank 3: process 1 of 2, 2 of
 * 4): process 0 opens every file, as the serial report does, so the report
 * fails with the serial message, printed once, and the same status; the
 * process that opens that file alone says nothing. */
static void report_of_a_damaged_file(const char *family)
{
    write_run();
    FILE *f = fopen(in_dir("ranks/run_rank00003.h5"), "w");
    cr_assert_not_null(f);
    fputs("not HDF5", f);
    fclose(f);
    result serial = scopeprof(NULL, 0, ARGS("report", "ranks"), ARGS("NO_COLOR=1"));
    cr_assert_neq(serial.status, 0);
    cr_assert_not_null(strstr(serial.err, "run_rank00003.h5"), "%s", serial.err);
    static const int counts[] = {2, 4};
    for (int c = 0; c < 2; c++) {
        result r = scopeprof(family, counts[c], ARGS("report", "ranks"),
                             ARGS("NO_COLOR=1", "SCOPEPROF_REPORT_TRACE=1"));
        cr_expect_neq(r.status, 0, "%d processes", counts[c]);
        cr_expect_str_eq(r.out, serial.out, "%d processes", counts[c]);
        /* (Open MPI's launcher adds its own lines about the exit status) */
        const char *said = strstr(r.err, serial.err);
        cr_expect_not_null(said, "%d processes: serial said:\n%s\nunder %s:\n%s", counts[c],
                           serial.err, family, r.err);
        cr_expect_null(said ? strstr(said + 1, serial.err) : NULL, "said twice:\n%s", r.err);
        cr_expect_null(strstr(r.err, "scopeprof report: process"), "%s", r.err);
        result_free(&r);
    }
    result_free(&serial);
}

Test(dist, report_of_a_damaged_file_under_mpich, .timeout = 240)
{
    report_of_a_damaged_file("mpich");
}

Test(dist, report_of_a_damaged_file_under_open_mpi, .timeout = 240)
{
    report_of_a_damaged_file("openmpi");
}

/* The in-memory path (forced here, as for a file the stream cannot take):
 * process 0 alone, the others give nothing and print nothing. */
Test(dist, report_in_memory_under_mpich_is_printed_once, .timeout = 240)
{
    write_run();
    result serial = scopeprof(NULL, 0, ARGS("report", "ranks"), ARGS("NO_COLOR=1"));
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    result r = scopeprof("mpich", 4, ARGS("report", "ranks"),
                         ARGS("NO_COLOR=1", "SCOPEPROF_REPORT_IN_MEMORY=1"));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, serial.out);
    cr_expect_str_eq(r.err, "");
    result_free(&serial);
    result_free(&r);
}

/* A list out of rank order: the streamed parts take the selected ranks in
 * rank order, as the serial export does - the same bytes. */
Test(dist, folded_of_a_list_out_of_rank_order, .timeout = 240)
{
    write_run();
    FILE *list = fopen(in_dir("ranks/list.txt"), "w");
    cr_assert_not_null(list);
    fprintf(list, "run_rank00003.h5\nrun_rank00001.h5\nrun_rank00002.h5\nrun_rank00000.h5\n"
                  "run_rank00004.h5\n");
    fclose(list);
    result serial = scopeprof(NULL, 0, ARGS("export", "folded", "@ranks/list.txt", "-o",
                                            "serial.folded"), NULL);
    cr_assert_eq(serial.status, 0, "%s", serial.err);
    result r = scopeprof("mpich", 2, ARGS("export", "folded", "@ranks/list.txt", "-o",
                                          "dist.folded"), ARGS("SCOPEPROF_EXPORT_TRACE=1"));
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "wrote dist.folded\n");
    expect_parts_streamed(r.err, 2);
    FILE *a = fopen(in_dir("serial.folded"), "rb"), *b = fopen(in_dir("dist.folded"), "rb");
    cr_assert(a && b);
    int ca, cb;
    long at = 0;
    do {
        ca = getc(a);
        cb = getc(b);
        at++;
    } while (ca == cb && ca != EOF);
    cr_expect_eq(ca, cb, "the outputs differ at byte %ld", at);
    fclose(a);
    fclose(b);
    result_free(&serial);
    result_free(&r);
}

/* An output directory that does not exist: the serial line, naming the
 * output (not a part), once. */
Test(dist, merge_into_a_missing_directory_says_what_serial_says, .timeout = 240)
{
    write_run();
    result serial = scopeprof(NULL, 0, ARGS("merge", "ranks", "-o", "missing/run.h5"), NULL);
    cr_assert_eq(serial.status, 1);
    result r = scopeprof("mpich", 2, ARGS("merge", "ranks", "-o", "missing/run.h5"), NULL);
    cr_expect_neq(r.status, 0);
    cr_expect_not_null(strstr(r.err, serial.err), "serial:\n%s\ndistributed:\n%s", serial.err,
                       r.err);
    cr_expect_null(strstr(r.err, ".part"), "%s", r.err);
    result_free(&serial);
    result_free(&r);
}
