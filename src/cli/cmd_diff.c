/* cmd_diff.c - `scopeprof diff A B`: the change of one metric per call path
 * (or region name) between two runs, as text, JSON or CSV. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "compare_args.h"

#define CMD "diff"

static const char diff_help[] =
    "usage: scopeprof diff A B [options]\n"
    "       scopeprof diff --baseline A1 A2... --candidate B1 B2... [options]\n"
    "\n"
    "Compare two runs region by region: regions are matched by call path\n"
    "(\"main > solve > assemble\", ranks and threads merged) or, with --by-name,\n"
    "by name; regions only in A are 'removed', only in B 'new'.  With several\n"
    "runs per side each side is the mean of its runs.  The 90%% interval of the\n"
    "change comes from the spread of the calls and of the runs (docs/compare.md).\n"
    "\n"
    "%s"
    "\n"
    "options:\n"
    "  -m, --metric M       total (default), own, mean, calls, p50, p95,\n"
    "                       imbalance; also p99, min, max\n"
    "      --sort KEY       delta (default: largest absolute change first), pct, name\n"
    "      --threshold PCT  hide regions that changed by less than PCT %%\n"
    "      --by-name        match regions by name, every call path summed\n"
    "      --format F       text (default), json or csv (docs/compare.md lists\n"
    "                       the keys and columns)\n"
    "  -h, --help           show this help\n"
    "\n"
    "selection (applied to both runs):\n"
    "%s"
    "\n"
    "Exit status: 0 ok, 1 unreadable file, 2 usage error.\n";

int cmd_diff(int argc, char **argv)
{
    compare_args args;
    int rc = compare_parse(CMD, argc, argv, COMPARE_TABLE, diff_help, &args);
    if (rc != 0 || args.help) {
        compare_args_free(&args);
        return rc;
    }
    sp_run_stats *a, *b;
    if (compare_load(CMD, &args, &a, &b) != 0) {
        compare_args_free(&args);
        return 1;
    }
    sp_diff diff;
    char err[512];
    rc = 0;
    if (sp_diff_build(a, args.num_a, b, args.num_b, args.metric, &diff, err, sizeof err) != 0) {
        rc = cli_file_error(CMD, NULL, "%s", err);
    } else {
        diff.by_name = args.by_name;
        sp_diff_sort_rows(&diff, args.sort);
        sp_diff_output opt = {.threshold = args.threshold, .command = CMD,
                              .color = cli_use_color(stdout)};
        int failed = !strcmp(args.format, "json")  ? sp_diff_write_json(stdout, &diff, &opt)
                     : !strcmp(args.format, "csv") ? sp_diff_write_csv(stdout, &diff, &opt)
                                                   : sp_diff_write_text(stdout, &diff, &opt);
        if (failed || fflush(stdout) != 0)
            rc = cli_file_error(CMD, NULL, "cannot write the comparison: %s", strerror(errno));
        sp_diff_free(&diff);
    }
    compare_runs_free(a, args.num_a);
    compare_runs_free(b, args.num_b);
    compare_args_free(&args);
    return rc;
}
