/* report_clock.c - one time axis for all ranks of a run.
 *
 * CLOCK_MONOTONIC of two nodes have unrelated origins.  The MPI wrapper
 * stores, per rank, the clock reading right after a barrier in MPI_Init
 * (mpi_sync_init_ns): the same instant everywhere, so the difference of two
 * ranks' readings is the difference of their clocks (to the barrier's exit
 * skew, microseconds). */
#include <stdio.h>
#include <string.h>

#include "scopeprof/report.h"

/* The only rank of the profile's rows, or -1 when it has none or several. */
static int64_t only_rank(const sp_profile *profile)
{
    int64_t rank = -1;
    for (size_t r = 0; r < profile->num_rows; r++) {
        if (rank >= 0 && profile->rows[r].rank != (uint32_t)rank)
            return -1;
        rank = profile->rows[r].rank;
    }
    return rank;
}

static int meta_int(const sp_profile *profile, const char *key, int64_t *out)
{
    const sp_meta *m = sp_profile_meta(profile, key);
    if (!m)
        return -1;
    if (m->type == SP_META_INT) {
        *out = m->i;
        return 0;
    }
    if (m->type == SP_META_FLOAT) { /* a Python writer may store a float */
        *out = (int64_t)m->f;
        return 0;
    }
    return -1;
}

int sp_rank_sync_point(const sp_profile *profile, uint32_t rank, const char *key,
                       int64_t *out)
{
    char per_rank[128];
    snprintf(per_rank, sizeof per_rank, "%s.rank%u", key, rank);
    if (meta_int(profile, per_rank, out) == 0)
        return 0;
    int64_t own_rank;
    if (meta_int(profile, "mpi_rank", &own_rank) != 0)
        own_rank = only_rank(profile);
    if (own_rank == (int64_t)rank && meta_int(profile, key, out) == 0)
        return 0;
    return -1;
}

/* The host a rank ran on, or NULL when the profile does not say. */
static const char *rank_host(const sp_profile *profile, uint32_t rank)
{
    char per_rank[128];
    snprintf(per_rank, sizeof per_rank, "hostname.rank%u", rank);
    const char *host = sp_profile_meta_string(profile, per_rank);
    if (host)
        return host;
    int64_t own_rank;
    if (meta_int(profile, "mpi_rank", &own_rank) != 0)
        own_rank = only_rank(profile);
    return own_rank == (int64_t)rank ? sp_profile_meta_string(profile, "hostname") : NULL;
}

int64_t sp_rank_clock_offset(const sp_profile *profile, uint32_t rank)
{
    static const char key[] = "mpi_sync_init_ns";
    int64_t mine;
    if (sp_rank_sync_point(profile, rank, key, &mine) != 0)
        return 0;
    /* The reference is the lowest rank that has a reading (rank 0 normally). */
    for (uint32_t r = 0; r < profile->num_ranks && r < rank; r++) {
        int64_t reference;
        if (sp_rank_sync_point(profile, r, key, &reference) != 0)
            continue;
        /* On one host every rank reads the same clock: the raw times are
         * exact, and the sync points would only add the barrier's skew. */
        const char *a = rank_host(profile, rank), *b = rank_host(profile, r);
        if (a && b && !strcmp(a, b))
            return 0;
        return mine - reference;
    }
    return 0;
}
