/* cmd_recover.c - `scopeprof recover SPILLFILES... -o FILE.h5`: the spill
 * file a killed process left behind (<output>.spill.<pid>.<random>) becomes a
 * profile of every call spilled before the kill (format:
 * src/spill_format.h).  A torn last frame is skipped with a warning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/spill_capture.h"
#include "model/capture.h"
#include "cli_util.h"
#include "commands.h"
#include "scope_profiler.h"
#include "scopeprof/h5.h"
#include "scopeprof_config.h"
#include "model/spill_format.h"

static const char recover_help[] =
    "usage: scopeprof recover SPILLFILES... -o FILE.h5\n"
    "\n"
    "Turn the spill file of a process that ended without writing its profile\n"
    "(killed by SIGKILL, by a node failure, or after the signal grace time)\n"
    "into a profile holding every call spilled before the end.  Spill files\n"
    "are named <output>.spill.<pid>.<random> (the shim's message names\neach file it keeps); the shim writes them when the memory cap\n"
    "SCOPE_PROFILER_MAX_MEMORY is reached and every\n"
    "SCOPE_PROFILER_FLUSH_INTERVAL seconds.  A frame torn by the kill is\n"
    "skipped: the profile holds everything up to the last good frame.\n"
    "\n"
    "With several spill files (one per rank), FILE must contain %r, replaced\n"
    "by the rank of each (e.g. -o recovered_%r.h5 -> recovered_00003.h5).\n"
    "\n"
    "options:\n"
    "  -o, --output FILE   the profile to write (required)\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0 every profile written, 1 a file unreadable, not a spill\n"
    "file, or the output not writable, 2 usage error.\n";

#define CMD "recover"

static int recover_one(const char *path, const char *out)
{
    char err[1024] = "", warning[2048] = "";
    sp_spill_capture c;
    if (sp_spill_capture_load(&path, 1, &c, err, sizeof err) != 0) {
        int status = cli_file_error(CMD, path, "%s", err);
        sp_spill_capture_free(&c);
        return status;
    }
    int status = 0;
    if (c.torn_bytes)
        cli_warning(CMD, "%s: the last %llu bytes are a torn frame (the process died while "
                    "spilling); recovered up to the last good frame",
                    path, (unsigned long long)c.torn_bytes);

    char out_path[4096];
    const char *rank_at = strstr(out, "%r");
    if (rank_at)
        snprintf(out_path, sizeof out_path, "%.*s%05d%s", (int)(rank_at - out), out,
                 c.capture.rank, rank_at + 2);
    else
        snprintf(out_path, sizeof out_path, "%s", out);
    sp_spill_capture_meta_str(&c, "recovered_from", path);
    sp_spill_capture_meta_int(&c, "recovered_torn_bytes", (int64_t)c.torn_bytes);

    sp_capture cap = c.capture;
    cap.path = out_path;
    /* Streamed in bounded memory, as the shim writes a capped run; the
     * in-memory conversion only when the calls are not in end order.
     * Call sites stay unresolved: libdw is the writer process's. */
    uint64_t calls = 0;
    int rc = sp_capture_write_stream(&cap, 0, &calls, warning, sizeof warning, err, sizeof err);
    sp_profile *profile = NULL;
    if (rc == 1) {
        profile = sp_capture_to_profile(&cap, warning, sizeof warning, err, sizeof err);
        if (!profile) {
            status = cli_file_error(CMD, path, "%s", err);
            goto done;
        }
    }
    if (warning[0])
        cli_warning(CMD, "%s: %s", path, warning);
    if (profile) {
        rc = sp_h5_write(out_path, profile, err, sizeof err);
        calls = profile->num_events;
        sp_profile_free(profile);
    }
    if (rc != 0)
        /* write failures name the output, read failures the spill file */
        status = cli_file_error(CMD, strncmp(err, out_path, strlen(out_path)) ? path : out_path,
                                "%s", err);
    else
        printf("recovered %llu calls of rank %d from %s into %s\n",
               (unsigned long long)calls, c.capture.rank, path, out_path);
done:
    sp_spill_capture_free(&c);
    return status;
}

int cmd_recover(int argc, char **argv)
{
    const char *out = NULL;
    const char **inputs = calloc((size_t)argc, sizeof *inputs);
    size_t n = 0;
    if (!inputs) {
        fprintf(stderr, "scopeprof recover: error: out of memory\n");
        return 1;
    }
    int only_files = 0, rc = 0;
    for (int i = 1; i < argc;) {
        const char *value;
        if (only_files) {
            inputs[n++] = argv[i++];
            continue;
        }
        if (!strcmp(argv[i], "--")) {
            only_files = 1;
            i++;
            continue;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(recover_help, stdout);
            goto out;
        }
        int got = cli_option_value(CMD, argc, argv, &i, "--output", "-o", &value);
        if (got < 0) {
            rc = 2;
            goto out;
        }
        if (got) {
            out = value;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            rc = cli_usage_error(CMD, "unknown option '%s'", argv[i]);
            goto out;
        }
        inputs[n++] = argv[i++];
    }
    if (!n) {
        rc = cli_usage_error(CMD, "no spill file given");
        goto out;
    }
    if (!out || !*out) {
        rc = cli_usage_error(CMD, "the output file is required (-o FILE.h5)");
        goto out;
    }
    if (n > 1 && !strstr(out, "%r")) {
        rc = cli_usage_error(CMD, "%zu spill files need an output name with %%r (the rank), "
                             "e.g. -o recovered_%%r.h5", n);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (recover_one(inputs[i], out) != 0)
            rc = 1;
out:
    free(inputs);
    return rc;
}
