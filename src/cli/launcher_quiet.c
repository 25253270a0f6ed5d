/* launcher_quiet.c - under an MPI launcher (mpirun -np N scopeprof CMD),
 * the command's messages are printed once, by process 0 (docs/distributed.md).
 *
 * The distributed commands (report, merge, export) see to that from the
 * moment their session begins; before it, every process parses the same
 * arguments and would print the same usage error N times.  So a process
 * other than 0 keeps what it prints before the session aside, and drops it
 * when the command ends in a usage error (status 2: process 0 prints it) or
 * reaches the session; any other early ending prints it, since it may be
 * this process's own problem.  Its exit status is never changed: a launcher
 * tears a job down on a failed process, where a 0 could leave process 0
 * waiting for it in MPI_Init.  The other commands have no distributed form:
 * process 0 runs them, the others exit 0 without a word. */
#include "launcher_quiet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist/dist.h"

static int saved_out = -1, saved_err = -1;
static FILE *kept; /* what was printed meanwhile */

int sp_cli_launcher_follower(void)
{
    return sp_dist_launcher_size() != 0 && sp_dist_launcher_rank() > 0;
}

void sp_cli_quiet_begin(void)
{
    if (saved_err >= 0 || !(kept = tmpfile()))
        return; /* nothing to keep it in: print as before */
    fflush(stdout);
    fflush(stderr);
    saved_out = dup(1);
    saved_err = dup(2);
    if (saved_out < 0 || saved_err < 0 || dup2(fileno(kept), 1) < 0 ||
        dup2(fileno(kept), 2) < 0) {
        sp_cli_quiet_end(1);
        return;
    }
    sp_dist_session_starting = sp_cli_quiet_drop;
}

static void restore(void)
{
    fflush(stdout);
    fflush(stderr);
    if (saved_out >= 0) {
        dup2(saved_out, 1);
        close(saved_out);
    }
    if (saved_err >= 0) {
        dup2(saved_err, 2);
        close(saved_err);
    }
    saved_out = saved_err = -1;
}

void sp_cli_quiet_drop(void) { sp_cli_quiet_end(0); }

void sp_cli_quiet_end(int print)
{
    if (!kept)
        return;
    restore();
    if (print) {
        rewind(kept);
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, kept)) > 0)
            fwrite(buf, 1, n, stderr);
    }
    fclose(kept);
    kept = NULL;
    sp_dist_session_starting = NULL;
}
