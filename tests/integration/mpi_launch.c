/* mpi_launch.c - see mpi_launch.h. */
#include "mpi_launch.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *mpi_program(const char *dir, const char *program, const char *family)
{
    static char name[4][256];
    static int turn;
    char *out = name[turn++ & 3];
    snprintf(out, sizeof name[0], "%s/%s_%s", dir, program, family);
    const char *path = harness_program(out);
    if (access(path, X_OK) != 0)
        cr_skip_test("%s not built: %s is not installed (no %s at build time)", path,
                     !strcmp(family, "openmpi") ? "Open MPI" : "MPICH",
                     !strcmp(family, "openmpi") ? "mpicc.openmpi/mpirun.openmpi"
                                                : "mpicc.mpich/mpiexec.mpich");
    return path;
}

void mpi_launch(struct harness_run *run, const char *family, int ranks,
                const char *program, const char *arg, const char *const *env)
{
    char np[16];
    snprintf(np, sizeof np, "%d", ranks);
    const char *argv[8];
    int n = 0;
    if (!strcmp(family, "openmpi")) {
        argv[n++] = "mpirun.openmpi";
        argv[n++] = "--oversubscribe"; /* 4 ranks on 2 cores */
    } else {
        argv[n++] = "mpiexec.mpich";
    }
    argv[n++] = "-n";
    argv[n++] = np;
    argv[n++] = program;
    if (arg)
        argv[n++] = arg;
    argv[n] = NULL;

    /* Open MPI refuses to run as root without these (containers, CI). */
    const char *all_env[16] = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"};
    size_t k = 2;
    for (size_t i = 0; env && env[i] && k < 15; i++)
        all_env[k++] = env[i];
    all_env[k] = NULL;
    cr_assert_eq(harness_run(run, argv, all_env, 1), 0, "could not run %s", argv[0]);
}

int64_t mpi_meta_int(const sp_profile *p, const char *key)
{
    int64_t v = 0;
    cr_assert_eq(sp_profile_meta_int(p, key, &v), 0, "%s: no integer metadata %s", p->path, key);
    return v;
}

const char *mpi_meta_string(const sp_profile *p, const char *key)
{
    const char *s = sp_profile_meta_string(p, key);
    cr_assert_not_null(s, "%s: no string metadata %s", p->path, key);
    return s;
}

sp_profile *mpi_load_rank(const struct harness_run *run, int rank)
{
    char name[64];
    snprintf(name, sizeof name, "scope_profile_rank%05d.h5", rank);
    cr_assert(harness_exists(run, name), "rank %d wrote no %s\nstdout:\n%s\nstderr:\n%s", rank,
              name, run->out, run->err);
    return harness_load(run, name);
}
