/* test_fortran.c - the Fortran module include/scope_profiler.f90: with the
 * no-op marker library alone nothing is recorded or written; under the
 * shim a Fortran program records like a C one, with 1-based ids, stat and
 * errmsg; and under mpirun (Open MPI, whose Fortran init bypasses the C
 * MPI_Init, and MPICH) each rank writes its own file. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "mpi_launch.h"

static const char *fortran_program(const char *name)
{
    const char *path = harness_program(name);
    if (access(path, X_OK) != 0)
        cr_skip_test("%s not built: no gfortran at build time", path);
    return path;
}

static unsigned long count(const sp_profile *p, unsigned rank, const char *region)
{
    const sp_row *row = harness_row(p, rank, region);
    return row ? row->count : 0;
}

static void assert_said(const struct harness_run *run, const char *line)
{
    cr_assert_not_null(strstr(run->out, line), "expected \"%s\" in the output:\n%s\nstderr:\n%s",
                       line, run->out, run->err);
}

Test(fortran, markers_without_shim_write_nothing)
{
    const char *argv[] = {fortran_program("fortran/fortran_markers"), NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, NULL, 0), 0);
    cr_assert_eq(run.exit_code, 0, "failed:\n%s", run.err);
    assert_said(&run, "ids 0 0 0");
    assert_said(&run, "calls 0 0 0");
    assert_said(&run, "unmatched 1 profiler is not active");
    assert_said(&run, "active F clock T");
    cr_assert_eq(harness_count_files(&run, "*.h5"), 0, "no profile without the shim");
    cr_assert_eq(harness_count_files(&run, "*scope_profile*"), 0, "no temporary file either");
    cr_assert_eq(run.err[0], '\0', "inactive markers print nothing:\n%s", run.err);
    harness_run_free(&run);
}

Test(fortran, markers_under_shim)
{
    const char *argv[] = {fortran_program("fortran/fortran_markers"), NULL};
    struct harness_run run;
    cr_assert_eq(harness_run(&run, argv, NULL, 1), 0);
    cr_assert_eq(run.exit_code, 0, "failed:\n%s", run.err);
    assert_said(&run, "ids 1 2 3");
    assert_said(&run, "calls 4 8 8");
    assert_said(&run, "unmatched 5 no open call to end");
    assert_said(&run, "bad id 7");
    assert_said(&run, "active T clock T");

    cr_assert_eq(harness_count_files(&run, "*.h5"), 1);
    sp_profile *p = harness_load(&run, "scope_profile_rank00000.h5");
    cr_assert_eq(count(p, 0, "outer"), 4, "trailing blanks must not be part of the name");
    cr_assert_eq(count(p, 0, "inner"), 8);
    cr_assert_eq(count(p, 0, "by_name"), 1);
    const sp_row *inner = harness_row(p, 0, "inner");
    cr_assert_str_eq(inner->source_file, "fortran_markers.f90");
    cr_assert_eq(inner->source_line, 12);
    sp_profile_free(p);
    harness_run_free(&run);
}

static void check_fortran_mpi(const char *family, const char *program)
{
    struct harness_run run;
    mpi_launch(&run, family, MPI_TEST_RANKS, mpi_program("fortran", program, family), NULL,
               NULL);
    cr_assert_eq(run.exit_code, 0, "%s run failed (%d):\n%s", family, run.exit_code, run.err);
    cr_assert_eq(harness_count_files(&run, "*.h5"), MPI_TEST_RANKS, "stderr:\n%s", run.err);
    for (int r = 0; r < MPI_TEST_RANKS; r++) {
        sp_profile *p = mpi_load_rank(&run, r);
        /* Set by the Fortran mpi_init_ wrapper: Open MPI's Fortran init
         * never passes through the C MPI_Init. */
        cr_assert_eq(mpi_meta_int(p, "mpi_rank"), r);
        cr_assert_eq(mpi_meta_int(p, "mpi_size"), MPI_TEST_RANKS);
        cr_assert_str_eq(mpi_meta_string(p, "mpi_implementation"), family);
        cr_assert_lt(mpi_meta_int(p, "mpi_sync_init_ns"), mpi_meta_int(p, "mpi_sync_finalize_ns"));
        cr_assert_eq(count(p, (unsigned)r, "solve"), (unsigned long)r + 1, "rank %d solve", r);
        cr_assert_eq(count(p, (unsigned)r, "kernel"), 3ul * ((unsigned long)r + 1),
                     "rank %d kernel", r);
        sp_profile_free(p);
    }
    harness_run_free(&run);
}

Test(fortran, mpi_openmpi, .timeout = 60) { check_fortran_mpi("openmpi", "fortran_mpi"); }
Test(fortran, mpi_mpich, .timeout = 60) { check_fortran_mpi("mpich", "fortran_mpi"); }
/* `use mpi_f08`: Open MPI goes through ompi_init_thread_f, MPICH through
 * mpi_init_thread_f08_ with a NULL ierror; both call PMPI_ directly. */
Test(fortran, mpi_f08_openmpi, .timeout = 60) { check_fortran_mpi("openmpi", "fortran_mpi_f08"); }
Test(fortran, mpi_f08_mpich, .timeout = 60) { check_fortran_mpi("mpich", "fortran_mpi_f08"); }
