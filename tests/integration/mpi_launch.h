/* mpi_launch.h - running test programs under Open MPI's and MPICH's
 * launchers, shared by test_mpi.c and test_fortran.c. */
#ifndef SCOPEPROF_TEST_MPI_LAUNCH_H
#define SCOPEPROF_TEST_MPI_LAUNCH_H

#include <stdint.h>

#include "harness.h"

/* Number of ranks of the MPI tests: 4 on a 2-core machine, so small work. */
#define MPI_TEST_RANKS 4

/* Path of tests/programs/<dir>/<program>_<family>, or skip the test (with
 * the reason) when the family was not installed at build time. */
const char *mpi_program(const char *dir, const char *program, const char *family);

/* Run `program` (a path) under the family's launcher with `ranks` ranks and
 * the shim preloaded; extra "KEY=VALUE" entries in env (NULL-terminated, may
 * be NULL); one optional program argument (NULL for none). */
void mpi_launch(struct harness_run *run, const char *family, int ranks,
                const char *program, const char *arg, const char *const *env);

/* Metadata lookups that fail the test when the key is missing. */
int64_t mpi_meta_int(const sp_profile *p, const char *key);
const char *mpi_meta_string(const sp_profile *p, const char *key);

/* Load the file of `rank` (scope_profile_rank<NNNNN>.h5). */
sp_profile *mpi_load_rank(const struct harness_run *run, int rank);

#endif
