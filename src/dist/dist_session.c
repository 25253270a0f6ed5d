/* dist_session.c - what one process of `mpirun -np N scopeprof CMD` does:
 * the serial command (no launcher, or one process), its share of the work,
 * or - when the MPI library cannot be loaded - process 0 alone runs the
 * command serially after one line saying why, and the others exit 0. */
#include <stdio.h>

#include "dist/dist.h"

void (*sp_dist_session_starting)(void);

enum sp_dist_mode sp_dist_session_begin(sp_dist_session *s, const char *cmd)
{
    s->rank = 0;
    s->size = 1;
    s->mpi = 0;
    if (sp_dist_session_starting)
        sp_dist_session_starting();
    int announced = sp_dist_launcher_size();
    if (announced == 0 || announced == 1)
        return SP_DIST_SERIAL;
    char err[768];
    if (sp_dist_mpi_start(err, sizeof err) < 0) {
        int rank = sp_dist_launcher_rank();
        if (rank > 0)
            return SP_DIST_STANDBY;
        fprintf(stderr, "scopeprof %s: started by an MPI launcher, but %s; running serially "
                "on process 0\n", cmd, err);
        return SP_DIST_SERIAL;
    }
    s->mpi = 1;
    s->rank = sp_dist_mpi_rank();
    s->size = sp_dist_mpi_size();
    if (s->size == 1) /* a PMIx launch of one process */
        return SP_DIST_SERIAL;
    return SP_DIST_PARALLEL;
}

/* MPI_Finalize waits for every process, spinning: the others would take
 * CPU from process 0 for as long as it merges or writes alone.  So they
 * wait for its token first, asleep between probes. */
void sp_dist_session_end(sp_dist_session *s)
{
    if (s->mpi && s->size > 1) {
        if (s->rank == 0)
            for (int k = 1; k < s->size; k++)
                sp_dist_signal(k);
        else
            sp_dist_wait(0);
    }
    if (s->mpi)
        sp_dist_mpi_finish();
    s->mpi = 0;
}
