/* cmd_merge.c - `scopeprof merge RANKFILES... -o run.h5`: one multi-rank
 * file from the rank files of one run (streaming, see src/h5_merge.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "dist/dist.h"
#include "scopeprof/h5.h"

static const char merge_help[] =
    "usage: scopeprof merge RANKFILES... -o OUTPUT.h5\n"
    "       (RANKFILES: files, directories of rank files, or @LIST files naming\n"
    "       one file per line)\n"
    "\n"
    "Merge the per-rank files of one run (or already merged files) into one\n"
    "multi-rank schema-3 file: the rows of every rank, the thread and task\n"
    "tables, and the metadata of the lowest rank with mpi_size set for the run.\n"
    "Memory does not grow with the number of ranks.  Two files claiming the\n"
    "same rank, or files of different runs, are refused.  The output is\n"
    "written atomically: on failure a previous OUTPUT is left untouched.\n"
    "Under an MPI launcher (mpirun -np N scopeprof merge ...) the files are\n"
    "split over the N processes and process 0 writes the same OUTPUT\n"
    "(docs/distributed.md).\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   the merged file to write (required)\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0 ok, 1 unreadable input or write failure, 2 usage error.\n";

static int usage_error(const char *why)
{
    fprintf(stderr, "scopeprof merge: %s (try 'scopeprof merge --help')\n", why);
    return 2;
}

int cmd_merge(int argc, char **argv)
{
    const char *output = NULL;
    const char **inputs = calloc((size_t)argc + 1, sizeof *inputs);
    size_t count = 0;
    int only_files = 0;
    if (!inputs) {
        fprintf(stderr, "scopeprof merge: out of memory\n");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (only_files || arg[0] != '-' || !arg[1]) {
            inputs[count++] = arg;
        } else if (!strcmp(arg, "--")) {
            only_files = 1;
        } else if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            fputs(merge_help, stdout);
            free(inputs);
            return 0;
        } else if (!strcmp(arg, "-o") || !strcmp(arg, "--output")) {
            if (i + 1 >= argc) {
                free(inputs);
                return usage_error("-o needs a file name");
            }
            output = argv[++i];
        } else if (!strncmp(arg, "--output=", 9)) {
            output = arg + 9;
        } else if (!strncmp(arg, "-o", 2)) {
            output = arg + 2;
        } else {
            fprintf(stderr, "scopeprof merge: unknown option '%s' (try 'scopeprof merge --help')\n",
                    arg);
            free(inputs);
            return 2;
        }
    }
    if (!output || !*output) {
        free(inputs);
        return usage_error("no output file given (-o OUTPUT.h5)");
    }
    if (count == 0) {
        free(inputs);
        return usage_error("no rank files given");
    }
    char err[1024];
    sp_dist_session dist;
    enum sp_dist_mode mode = sp_dist_session_begin(&dist, "merge");
    if (mode == SP_DIST_STANDBY) { /* MPI missing: process 0 merges alone */
        free(inputs);
        return 0;
    }
    /* Directories and @LIST files become their rank files here, so the
     * message counts files. */
    char **files = NULL;
    long num_files = sp_run_inputs_expand(inputs, count, &files, err, sizeof err);
    int rc;
    if (num_files < 0)
        rc = -1;
    else if (mode == SP_DIST_PARALLEL)
        rc = sp_dist_merge(&dist, files, (size_t)num_files, output, err, sizeof err);
    else
        rc = sp_h5_merge((const char *const *)files, (size_t)num_files, output, err,
                         sizeof err);
    if (num_files >= 0)
        count = (size_t)num_files;
    sp_run_inputs_free(files, num_files);
    int quiet = dist.rank != 0; /* process 0 speaks for all */
    sp_dist_session_end(&dist);
    if (quiet) { /* expansion errors are process 0's to say; MPI failures not */
        if (rc < 0 && num_files >= 0)
            fprintf(stderr, "scopeprof merge: %s\n", err);
        free(inputs);
        return rc < 0 ? 1 : 0;
    }
    if (rc < 0) {
        fprintf(stderr, "scopeprof merge: %s\n", err);
        /* HDF5 1.10 can crash in its exit handler after a file close that
         * failed on a full disk; the message is out, skip the handlers. */
        fflush(NULL);
        free(inputs);
        _exit(1);
    } else
        printf("merged %zu file%s into %s\n", count, count == 1 ? "" : "s", output);
    free(inputs);
    return rc < 0 ? 1 : 0;
}
