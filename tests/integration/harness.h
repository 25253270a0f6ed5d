/* harness.h - run a real program under the shim and open what it wrote.
 *
 * Every run gets a fresh temporary working directory, so output files of one
 * test never meet another's. */
#ifndef SCOPEPROF_TEST_HARNESS_H
#define SCOPEPROF_TEST_HARNESS_H

#include <stddef.h>
#include "scopeprof/profile.h"

struct harness_run {
    int exit_code;        /* exit status, or 128 + signal */
    int signal;           /* terminating signal, 0 if it exited */
    char dir[512];        /* working directory of the run */
    char *out;            /* captured stdout (NUL-terminated) */
    char *err;            /* captured stderr (NUL-terminated) */
};

/* Path of a test program built in tests/programs (e.g. "basic"). */
const char *harness_program(const char *name);

/* Run argv (argv[0] searched in PATH when it has no '/') with LD_PRELOAD set
 * to the shim unless preload is 0, plus "KEY=VALUE" entries from env
 * (NULL-terminated, may be NULL).  Returns 0 when the program could be run. */
int harness_run(struct harness_run *run, const char *const *argv,
                const char *const *env, int preload);
void harness_run_free(struct harness_run *run);

/* Path of a file inside the run's directory (static buffer, rotated). */
const char *harness_path(const struct harness_run *run, const char *name);
int harness_exists(const struct harness_run *run, const char *name);
/* Number of entries in the run's directory whose name matches the glob. */
int harness_count_files(const struct harness_run *run, const char *glob);

/* Read an output file with our reader; aborts the test with the reader's
 * message when it fails. */
sp_profile *harness_load(const struct harness_run *run, const char *name);

/* Lookups in a loaded profile. */
long harness_region(const sp_profile *p, const char *name);  /* -1 if absent */
/* Row of (rank, region name), or NULL. */
const sp_row *harness_row(const sp_profile *p, unsigned rank, const char *name);
/* Total number of events of a region over all ranks. */
unsigned long harness_calls(const sp_profile *p, const char *name);

#endif
