/* mpi_launcher.c - the rank as launchers announce it in the environment.
 *
 * Only an early guess, used before MPI_Init (or by a program that never
 * calls it, e.g. a serial tool started by mpirun); mpi.c replaces it with
 * the rank MPI reports and warns when they differ. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include "mpi_launcher.h"
#include "base/shim.h"

/* In order of trust.  MPI_LOCALRANKID (Intel MPI) is a node-local rank, so
 * it only counts when nothing better is set; SLURM_PROCID is left out on
 * purpose, as upstream does: it names the task even when it is not MPI. */
static const char *const rank_variables[] = {
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "MV2_COMM_WORLD_RANK",
    "ALPS_APP_PE",
    "PALS_RANKID",
    "MPI_LOCALRANKID",
};

static const char *guess_source;

static int parse_rank(const char *text)
{
    if (!text || !*text)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v < 0 || v > INT_MAX)
        return -1;
    return (int)v;
}

int sp_mpi_rank_guess(void)
{
    if (sp_cfg.mpi == 0)
        return -1;
    for (size_t i = 0; i < sizeof rank_variables / sizeof rank_variables[0]; i++) {
        const char *value = getenv(rank_variables[i]);
        int rank = parse_rank(value);
        if (rank >= 0) {
            guess_source = rank_variables[i];
            return rank;
        }
        if (value && *value)
            sp_log("ignoring %s=\"%s\": not a rank", rank_variables[i], value);
    }
    return -1;
}

const char *sp_mpi_rank_guess_source(void)
{
    return guess_source ? guess_source : "the environment";
}
