/* cmd_flame.c - `scopeprof flame FILES... -o flame.svg [--chart] [filters]`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "commands.h"
#include "scopeprof/export.h"
#include "scopeprof/stream.h"
#include "export_files_streamed.h"
#include "scopeprof/h5.h"

#define CMD "flame"

static const char flame_help[] =
    "usage: scopeprof flame FILES... [-o OUT.svg] [--chart] [options]\n"
    "\n"
    "Write a self-contained interactive SVG (open it in a browser).\n"
    "\n"
    "Default: a flame graph - calls aggregated by call path over the selected\n"
    "ranks and lanes, width = inclusive time, one frame per distinct call path.\n"
    "With --chart: a flame chart - time on x, one labelled band per rank and\n"
    "lane, one frame per call.  Hover a frame for calls, inclusive and exclusive\n"
    "time; click to zoom, 'Reset zoom' to go back, 'Search' to highlight regions\n"
    "matching a regular expression.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT      output file (default flame.svg; '-' = standard output)\n"
    "      --chart           draw a flame chart instead of a flame graph\n"
    "      --label TEXT      title (default: metadata label)\n"
    "      --diff A B        differential flame graph of two runs (--diff --help)\n"
    "  -h, --help            show this help\n"
    "\n"
    "selection (all ranks by default):\n"
    "%s"
    "\n"
    "Exit status: 0 ok, 1 unreadable file or failed drawing, 2 usage error.\n";

/* The flame graph or chart on the stream (docs/stream.md, "Exports"): the
 * exit status, or -1 when the run goes through the in-memory path (which
 * words every problem): the stream does not take it, a file has a problem,
 * or SCOPEPROF_EXPORT_IN_MEMORY=1.  The graph writes nothing before every
 * rank has streamed; the chart writes as it draws, after a measuring pass
 * over every rank, so it takes a file, not '-' (a late problem means
 * starting again). */
static int flame_streamed(const char **files, size_t num_files, const char *out, int chart,
                          const sp_export_options *options)
{
    const char *force = getenv("SCOPEPROF_EXPORT_IN_MEMORY");
    const char *trace = getenv("SCOPEPROF_EXPORT_TRACE");
    if (force && !strcmp(force, "1"))
        return -1;
    char why[1024] = "", out_buf[4096];
    out = cli_output_path(out, "flame.svg", out_buf, sizeof out_buf);
    int to_stdout = !strcmp(out, "-");
    if (chart && to_stdout)
        return -1;
    sp_run_source src;
    if (sp_run_source_open(&src, files, num_files, why, sizeof why) != 0)
        return -1;
    int replacing = !to_stdout && cli_regular_file_exists(out);
    FILE *f = to_stdout ? stdout : fopen(out, "wb");
    int rc = 1;
    if (f) {
        rc = (chart ? sp_flame_chart_stream : sp_flame_svg_stream)(f, &src, options, why,
                                                                   sizeof why);
        if (to_stdout ? ferror(f) | (fflush(f) != 0) : ferror(f) | (fclose(f) != 0))
            rc = 1;
        if (rc != 0 && !to_stdout && !replacing)
            unlink(out); /* the in-memory path says 'replaced' only when it was */
    }
    /* A rank whose calls do not nest: worded on the stream, as the
     * in-memory path words it (which removes the output, even one it
     * replaced), without loading the run for it; nothing was written. */
    int worded = rc == 1 && f && cli_export_nesting_error(&src, options, NULL, why, sizeof why);
    if (worded && !to_stdout)
        unlink(out);
    sp_run_source_close(&src);
    if (trace && !strcmp(trace, "1"))
        fprintf(stderr, "scopeprof flame: %s%s\n",
                rc == 0 ? "streamed" : worded ? "streamed, failed: " : "in memory: ",
                rc == 0 ? "" : why);
    if (worded)
        return cli_file_error(CMD, NULL, "%s", why);
    if (rc != 0)
        return -1;
    if (!to_stdout)
        cli_announce_written(out, replacing);
    return 0;
}

int cmd_flame(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--diff"))
            return cmd_flame_diff(argc, argv);
    const char *out = "flame.svg", *label = NULL;
    int chart = 0, rc = 2;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    size_t num_files = 0;
    sp_selection sel;
    sp_selection_init(&sel);
    if (!files)
        return cli_file_error(CMD, NULL, "out of memory");
    for (int i = 1; i < argc;) {
        const char *value;
        int got;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(flame_help, sp_selection_help);
            rc = 0;
            goto done;
        }
        if ((got = cli_option_value(CMD, argc, argv, &i, "--output", "-o", &value)) != 0) {
            if (got < 0)
                goto done;
            out = value;
            continue;
        }
        if ((got = cli_option_value(CMD, argc, argv, &i, "--label", NULL, &value)) != 0) {
            if (got < 0)
                goto done;
            label = value;
            continue;
        }
        if (cli_flag(argv, &i, "--chart", NULL)) {
            chart = 1;
            continue;
        }
        if ((got = cli_selection_option(CMD, &sel, argc, argv, &i)) != 0) {
            if (got < 0)
                goto done; /* rc is 2 */
            continue;
        }
        files[num_files++] = argv[i++];
    }
    if (num_files == 0) {
        rc = cli_usage_error(CMD, "no input FILES");
        goto done;
    }
    sp_export_options streamed = {.selection = &sel, .label = label, .warnings = stderr,
                                  .command = "flame"};
    if ((rc = flame_streamed(files, num_files, out, chart, &streamed)) >= 0)
        goto done;
    char err[1024] = "";
    sp_profile *profile = sp_load_run(files, num_files, err, sizeof err);
    if (!profile) {
        rc = cli_file_error(CMD, NULL, "%s", err);
        goto done;
    }
    char out_buf[4096];
    out = cli_output_path(out, "flame.svg", out_buf, sizeof out_buf);
    int to_stdout = !strcmp(out, "-");
    int replacing = !to_stdout && cli_regular_file_exists(out);
    FILE *f = to_stdout ? stdout : fopen(out, "wb");
    if (!f) {
        rc = cli_file_error(CMD, out, "cannot create: %s", strerror(errno));
        sp_profile_free(profile);
        goto done;
    }
    sp_export_options options = {.selection = &sel, .label = label, .warnings = stderr,
                                 .command = "flame"};
    int failed = sp_flame_svg(f, profile, &options, chart, err, sizeof err) < 0;
    int write_failed = ferror(f);
    write_failed |= to_stdout ? fflush(f) != 0 : fclose(f) != 0;
    if (failed || write_failed) {
        if (!to_stdout)
            unlink(out);
        rc = failed ? cli_file_error(CMD, profile->path, "%s", err)
                    : cli_file_error(CMD, out, "write failed: %s", strerror(errno));
    } else {
        rc = 0;
        if (!to_stdout)
            cli_announce_written(out, replacing);
    }
    sp_profile_free(profile);
done:
    sp_selection_free(&sel);
    free(files);
    return rc;
}
