/* test_mpi.c - MPI programs under the shim, with Open MPI and with MPICH:
 * one file per rank with the rank MPI gave, exact per-rank counts, the MPI
 * metadata, regions closed after MPI_Finalize, threads, an application
 * using parallel HDF5 itself, a rank without MPI_Finalize, and programs
 * without MPI. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "scopeprof/h5.h"
#include "mpi_launch.h"

static unsigned long count(const sp_profile *p, unsigned rank, const char *region)
{
    const sp_row *row = harness_row(p, rank, region);
    return row ? row->count : 0;
}

/* Every event of `child` has an event of `parent` as its parent call. */
static void assert_nested(const sp_profile *p, unsigned rank, const char *child,
                          const char *parent)
{
    const sp_row *c = harness_row(p, rank, child), *q = harness_row(p, rank, parent);
    cr_assert(c && q, "rank %u: %s or %s missing", rank, child, parent);
    cr_assert_not_null(p->call_ids, "no call_ids column");
    cr_assert_not_null(p->parent_ids, "no parent_ids column");
    for (uint64_t i = c->offset; i < c->offset + c->count; i++) {
        int found = 0;
        for (uint64_t j = q->offset; j < q->offset + q->count && !found; j++)
            found = p->parent_ids[i] == p->call_ids[j];
        cr_assert(found, "rank %u: a %s call is not nested in %s", rank, child, parent);
    }
}

static void check_regions_run(const char *family)
{
    struct harness_run run;
    mpi_launch(&run, family, MPI_TEST_RANKS, mpi_program("mpi", "mpi_regions", family), NULL,
               NULL);
    cr_assert_eq(run.exit_code, 0, "%s run failed (%d):\n%s", family, run.exit_code, run.err);
    cr_assert_eq(harness_count_files(&run, "scope_profile_rank*.h5"), MPI_TEST_RANKS,
                 "expected one file per rank\nstderr:\n%s", run.err);
    /* Nobody else (mpirun, orted, hydra proxies) may leave a file. */
    cr_assert_eq(harness_count_files(&run, "*.h5"), MPI_TEST_RANKS);

    for (int r = 0; r < MPI_TEST_RANKS; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        cr_assert_eq(mpi_meta_int(p, "mpi_rank"), r);
        cr_assert_eq(mpi_meta_int(p, "mpi_size"), MPI_TEST_RANKS);
        cr_assert_str_eq(mpi_meta_string(p, "mpi_implementation"), family);
        cr_assert_neq(mpi_meta_string(p, "mpi_library_version")[0], '\0');
        int64_t level = mpi_meta_int(p, "mpi_thread_level");
        cr_assert(level >= 0 && level <= 3, "thread level %lld", (long long)level);
        int64_t sync_init = mpi_meta_int(p, "mpi_sync_init_ns");
        int64_t sync_final = mpi_meta_int(p, "mpi_sync_finalize_ns");
        cr_assert_lt(sync_init, sync_final);

        cr_assert_eq(count(p, (unsigned)r, "outer"), (unsigned long)r + 1, "rank %d outer", r);
        cr_assert_eq(count(p, (unsigned)r, "inner"), 2ul * ((unsigned long)r + 1),
                     "rank %d inner", r);
        assert_nested(p, (unsigned)r, "inner", "outer");
        /* "main" closes after MPI_Finalize: kept, and it spans both syncs. */
        const sp_row *m = harness_row(p, (unsigned)r, "main");
        cr_assert_not_null(m, "rank %d: region closed after MPI_Finalize is lost", r);
        cr_assert_eq(m->count, 1);
        cr_assert_lt(p->start[m->offset], sync_init);
        cr_assert_gt(p->end[m->offset], sync_final);
        sp_profile_free(p);
    }
    harness_run_free(&run);
}

Test(mpi, regions_openmpi, .timeout = 60) { check_regions_run("openmpi"); }
Test(mpi, regions_mpich, .timeout = 60) { check_regions_run("mpich"); }

static void check_threads_run(const char *family)
{
    struct harness_run run;
    mpi_launch(&run, family, MPI_TEST_RANKS, mpi_program("mpi", "mpi_threads", family), NULL,
               NULL);
    cr_assert_eq(run.exit_code, 0, "%s run failed (%d):\n%s", family, run.exit_code, run.err);
    cr_assert_eq(harness_count_files(&run, "*.h5"), MPI_TEST_RANKS);
    for (int r = 0; r < MPI_TEST_RANKS; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        cr_assert_eq(mpi_meta_int(p, "mpi_rank"), r);
        char line[64];
        snprintf(line, sizeof line, "rank %d provided ", r);
        const char *said = strstr(run.out, line);
        cr_assert_not_null(said, "rank %d did not report its thread level:\n%s", r, run.out);
        cr_assert_eq(mpi_meta_int(p, "mpi_thread_level"), atoi(said + strlen(line)));

        cr_assert_eq(count(p, (unsigned)r, "wait"), 1);
        const sp_row *work = harness_row(p, (unsigned)r, "work");
        cr_assert_not_null(work);
        cr_assert_eq(work->count, 2ul * ((unsigned long)r + 2), "rank %d work", r);
        /* Each worker thread is a lane of its own. */
        cr_assert_not_null(p->thread_ids, "no thread_ids column");
        int64_t first = p->thread_ids[work->offset];
        int lanes = 1;
        for (uint64_t i = work->offset; i < work->offset + work->count; i++)
            if (p->thread_ids[i] != first) {
                lanes = 2;
                break;
            }
        cr_assert_eq(lanes, 2, "rank %d: both workers' calls are on one thread", r);
        sp_profile_free(p);
    }
    harness_run_free(&run);
}

Test(mpi, threads_openmpi, .timeout = 60) { check_threads_run("openmpi"); }
Test(mpi, threads_mpich, .timeout = 60) { check_threads_run("mpich"); }

/* The last rank returns from main without MPI_Finalize: its file is still
 * written at exit (what the launcher then does to the others is its
 * business, so only that rank is checked). */
static void check_no_finalize(const char *family)
{
    struct harness_run run;
    mpi_launch(&run, family, MPI_TEST_RANKS, mpi_program("mpi", "mpi_regions", family),
               "skip-finalize", NULL);
    int last = MPI_TEST_RANKS - 1;
    sp_profile *p = mpi_load_rank(&run, last);
    cr_assert_eq(mpi_meta_int(p, "mpi_rank"), last);
    cr_assert_eq(count(p, (unsigned)last, "outer"), (unsigned long)last + 1);
    cr_assert_eq(count(p, (unsigned)last, "inner"), 2ul * ((unsigned long)last + 1));
    cr_assert_eq(count(p, (unsigned)last, "main"), 1);
    cr_assert_null(sp_profile_meta(p, "mpi_sync_finalize_ns"), "no finalize, no sync point");
    sp_profile_free(p);
    harness_run_free(&run);
}

Test(mpi, no_finalize_openmpi, .timeout = 60) { check_no_finalize("openmpi"); }
Test(mpi, no_finalize_mpich, .timeout = 60) { check_no_finalize("mpich"); }

/* An application writing its own file with parallel HDF5 (MPI-IO) while
 * the shim writes ours with its isolated serial HDF5: both must be valid. */
Test(mpi, parallel_hdf5_application, .timeout = 90)
{
    const char *prog = mpi_program("mpi", "mpi_parallel_hdf5", "openmpi");
    struct harness_run run;
    mpi_launch(&run, "openmpi", MPI_TEST_RANKS, prog, NULL, NULL);
    cr_assert_eq(run.exit_code, 0, "run failed (%d):\n%s\n%s", run.exit_code, run.out, run.err);
    for (int r = 0; r < MPI_TEST_RANKS; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        cr_assert_eq(count(p, (unsigned)r, "write"), 1);
        sp_profile_free(p);
    }
    if (access("/usr/bin/python3", X_OK) != 0)
        cr_skip_test("/usr/bin/python3 missing: the application's file is not checked");
    char script[512];
    snprintf(script, sizeof script,
             "import h5py; d = list(h5py.File('%s', 'r')['ranks'][()]); "
             "assert d == list(range(%d)), d",
             harness_path(&run, "app.h5"), MPI_TEST_RANKS);
    const char *argv[] = {"/usr/bin/python3", "-c", script, NULL};
    struct harness_run check;
    cr_assert_eq(harness_run(&check, argv, NULL, 0), 0);
    cr_assert_eq(check.exit_code, 0, "the application's app.h5 is damaged:\n%s", check.err);
    harness_run_free(&check);
    harness_run_free(&run);
}

/* ---- without MPI ---------------------------------------------------------- */

static sp_profile *run_no_mpi(struct harness_run *run, const char *const *env, int rank)
{
    const char *argv[] = {harness_program("mpi/no_mpi"), NULL};
    cr_assert_eq(harness_run(run, argv, env, 1), 0);
    cr_assert_eq(run->exit_code, 0, "no_mpi failed:\n%s", run->err);
    cr_assert_eq(harness_count_files(run, "*.h5"), 1, "stderr:\n%s", run->err);
    sp_profile *p = mpi_load_rank(run, rank);
    cr_assert_eq(count(p, (unsigned)rank, "step"), 3);
    cr_assert_null(sp_profile_meta(p, "mpi_implementation"), "no MPI, no MPI metadata");
    return p;
}

Test(no_mpi, rank_zero)
{
    struct harness_run run;
    sp_profile *p = run_no_mpi(&run, NULL, 0);
    sp_profile_free(p);
    cr_assert_eq(run.err[0], '\0', "a program without MPI gets no message:\n%s", run.err);
    harness_run_free(&run);
}

/* A serial program started by a launcher takes the launcher's rank. */
Test(no_mpi, launcher_rank_guess)
{
    struct harness_run run;
    const char *env[] = {"PMI_RANK=3", NULL};
    sp_profile_free(run_no_mpi(&run, env, 3));
    harness_run_free(&run);
}

Test(no_mpi, mpi_detection_off)
{
    struct harness_run run;
    const char *env[] = {"PMI_RANK=3", "SCOPE_PROFILER_MPI=0", NULL};
    sp_profile_free(run_no_mpi(&run, env, 0));
    harness_run_free(&run);
}

Test(no_mpi, bad_launcher_variable)
{
    struct harness_run run;
    const char *env[] = {"PMI_RANK=three", NULL};
    sp_profile_free(run_no_mpi(&run, env, 0));
    cr_assert_not_null(strstr(run.err, "PMI_RANK"), "no message about PMI_RANK:\n%s", run.err);
    harness_run_free(&run);
}

/* ---- the rank MPI gives wins over the environment -------------------------- */

/* A singleton MPICH process (no launcher) with a stale PMIX_RANK, which
 * MPICH ignores: MPI says rank 0 of 1, so the file is rank 0 and the
 * disagreement is reported. */
Test(mpi, library_rank_beats_guess, .timeout = 60)
{
    const char *argv[] = {mpi_program("mpi", "mpi_regions", "mpich"), NULL};
    const char *env[] = {"PMIX_RANK=2", NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, env, 1), 0);
    cr_assert_eq(run.exit_code, 0, "singleton failed:\n%s", run.err);
    cr_assert_eq(harness_count_files(&run, "*.h5"), 1);
    sp_profile *p = mpi_load_rank(&run, 0);
    cr_assert_eq(mpi_meta_int(p, "mpi_rank"), 0);
    cr_assert_eq(mpi_meta_int(p, "mpi_size"), 1);
    cr_assert_eq(count(p, 0, "outer"), 1);
    cr_assert_not_null(strstr(run.err, "PMIX_RANK said rank 2 but MPI says 0"),
                       "no warning:\n%s", run.err);
    sp_profile_free(p);
    harness_run_free(&run);
}

/* SCOPE_PROFILER_MPI=0: the wrappers only chain; nothing MPI is recorded. */
Test(mpi, detection_off_chains_through, .timeout = 60)
{
    const char *prog = mpi_program("mpi", "mpi_regions", "mpich");
    const char *env[] = {"SCOPE_PROFILER_MPI=0", NULL};
    struct harness_run run;
    mpi_launch(&run, "mpich", 1, prog, NULL, env);
    cr_assert_eq(run.exit_code, 0, "run failed:\n%s", run.err);
    sp_profile *p = mpi_load_rank(&run, 0);
    cr_assert_null(sp_profile_meta(p, "mpi_implementation"));
    cr_assert_null(sp_profile_meta(p, "mpi_sync_init_ns"));
    cr_assert_eq(count(p, 0, "main"), 1);
    sp_profile_free(p);
    harness_run_free(&run);
}

/* ---- the rank files of a run, merged -------------------------------------- */

/* `scopeprof merge` of the 4 rank files gives one file with every rank's
 * rows, and `scopeprof report` reads it. */
Test(mpi, merge_rank_files, .timeout = 90)
{
    const char *prog = mpi_program("mpi", "mpi_regions", "mpich");
    struct harness_run run;
    mpi_launch(&run, "mpich", MPI_TEST_RANKS, prog, NULL, NULL);
    cr_assert_eq(run.exit_code, 0, "run failed:\n%s", run.err);

    char inputs[MPI_TEST_RANKS][600], output[600];
    const char *argv[MPI_TEST_RANKS + 5] = {SCOPEPROF_EXE, "merge"};
    for (int r = 0; r < MPI_TEST_RANKS; r++) {
        char name[64];
        snprintf(name, sizeof name, "scope_profile_rank%05d.h5", r);
        snprintf(inputs[r], sizeof inputs[r], "%s", harness_path(&run, name));
        argv[2 + r] = inputs[r];
    }
    snprintf(output, sizeof output, "%s", harness_path(&run, "run.h5"));
    argv[2 + MPI_TEST_RANKS] = "-o";
    argv[3 + MPI_TEST_RANKS] = output;
    argv[4 + MPI_TEST_RANKS] = NULL;
    struct harness_run merge;
    cr_assert_eq(harness_run(&merge, argv, NULL, 0), 0);
    cr_assert_eq(merge.exit_code, 0, "merge failed:\n%s", merge.err);

    char err[1024] = "";
    sp_profile *p = sp_h5_read(output, err, sizeof err);
    cr_assert_not_null(p, "merged file unreadable: %s", err);
    cr_assert_eq(p->num_ranks, MPI_TEST_RANKS);
    for (int r = 0; r < MPI_TEST_RANKS; r++) {
        cr_assert_eq(count(p, (unsigned)r, "outer"), (unsigned long)r + 1, "rank %d outer", r);
        cr_assert_eq(count(p, (unsigned)r, "inner"), 2ul * ((unsigned long)r + 1));
        cr_assert_eq(count(p, (unsigned)r, "main"), 1);
    }
    /* 1+2+3+4 outer calls over the run. */
    cr_assert_eq(harness_calls(p, "outer"), 10);
    cr_assert_eq(mpi_meta_int(p, "mpi_size"), MPI_TEST_RANKS);
    sp_profile_free(p);

    const char *report[] = {SCOPEPROF_EXE, "report", output, NULL};
    struct harness_run rep;
    cr_assert_eq(harness_run(&rep, report, NULL, 0), 0);
    cr_assert_eq(rep.exit_code, 0, "report failed:\n%s", rep.err);
    cr_assert_not_null(strstr(rep.out, "outer"), "report lacks the region:\n%s", rep.out);
    harness_run_free(&rep);
    harness_run_free(&merge);
    harness_run_free(&run);
}
