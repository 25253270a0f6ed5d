/* compare_args.c - command line and loading shared by `diff`, `check` and
 * `flame --diff`. */
#include "compare_args.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"

const char compare_sides_help[] =
    "Each run is one argument: a profile file (rank file or merged), a directory\n"
    "of rank files, a quoted glob ('out/run_rank*.h5') or an output prefix P\n"
    "(P_rank*.h5).  Several runs per side (repetitions of the same program):\n"
    "      --baseline A1 A2 ...   the runs of side A\n"
    "      --candidate B1 B2 ...  the runs of side B\n";

void compare_args_free(compare_args *args)
{
    free(args->a);
    free(args->b);
    sp_selection_free(&args->sel);
}

int compare_parse(const char *cmd, int argc, char **argv, unsigned allowed, const char *help,
                  compare_args *args)
{
    memset(args, 0, sizeof *args);
    sp_selection_init(&args->sel);
    args->metric = SP_METRIC_TOTAL;
    args->sort = SP_DIFF_SORT_DELTA;
    args->format = "text";
    const char **positional = calloc((size_t)argc + 1, sizeof *positional);
    args->a = calloc((size_t)argc + 1, sizeof *args->a);
    args->b = calloc((size_t)argc + 1, sizeof *args->b);
    size_t num_positional = 0;
    int side = 0; /* 1 after --baseline, 2 after --candidate */
    int only_files = 0, rc = 2;
    if (!positional || !args->a || !args->b) {
        free(positional);
        return cli_file_error(cmd, NULL, "out of memory");
    }
    for (int i = 1; i < argc;) {
        const char *v;
        int got;
        if (only_files || argv[i][0] != '-' || !strcmp(argv[i], "-")) {
            const char *arg = argv[i++];
            if (side == 1)
                args->a[args->num_a++] = arg;
            else if (side == 2)
                args->b[args->num_b++] = arg;
            else
                positional[num_positional++] = arg;
            continue;
        }
        if (cli_flag(argv, &i, "--", NULL)) {
            only_files = 1;
        } else if (cli_flag(argv, &i, "--help", "-h")) {
            printf(help, compare_sides_help, sp_selection_help);
            args->help = 1;
            rc = 0;
            goto out;
        } else if (cli_flag(argv, &i, "--baseline", NULL)) {
            side = 1;
        } else if (cli_flag(argv, &i, "--candidate", NULL)) {
            side = 2;
        } else if ((allowed & COMPARE_TABLE) && cli_flag(argv, &i, "--by-name", NULL)) {
            args->by_name = 1;
        } else if ((allowed & COMPARE_TABLE) &&
                   (got = cli_option_value(cmd, argc, argv, &i, "--metric", "-m", &v))) {
            if (got < 0)
                goto out;
            if (sp_metric_parse(v, &args->metric) != 0) {
                cli_usage_error(cmd, "--metric: '%s' is not one of total, own, mean, calls, "
                                     "p50, p95, p99, min, max, imbalance", v);
                goto out;
            }
        } else if ((allowed & COMPARE_TABLE) &&
                   (got = cli_option_value(cmd, argc, argv, &i, "--sort", NULL, &v))) {
            if (got < 0)
                goto out;
            if (sp_diff_parse_sort(v, &args->sort) != 0) {
                cli_usage_error(cmd, "--sort: '%s' is not one of delta, pct, name", v);
                goto out;
            }
        } else if ((allowed & COMPARE_TABLE) &&
                   (got = cli_option_value(cmd, argc, argv, &i, "--threshold", NULL, &v))) {
            if (got < 0)
                goto out;
            if (cli_parse_double(v, 0, &args->threshold) != 0) {
                cli_usage_error(cmd, "--threshold: '%s' is not a percentage >= 0", v);
                goto out;
            }
        } else if ((allowed & COMPARE_TABLE) &&
                   (got = cli_option_value(cmd, argc, argv, &i, "--format", NULL, &v))) {
            if (got < 0)
                goto out;
            if (strcmp(v, "text") && strcmp(v, "json") && strcmp(v, "csv")) {
                cli_usage_error(cmd, "--format: '%s' is not one of text, json, csv", v);
                goto out;
            }
            args->format = v;
        } else if ((allowed & COMPARE_GATE) &&
                   (got = cli_option_value(cmd, argc, argv, &i, "--max-regression", NULL, &v))) {
            if (got < 0)
                goto out;
            if (cli_parse_double(v, 0, &args->max_pct) != 0) {
                cli_usage_error(cmd, "--max-regression: '%s' is not a percentage >= 0", v);
                goto out;
            }
            args->has_max = 1;
        } else if ((allowed & COMPARE_GATE) && cli_flag(argv, &i, "--fail-on-new", NULL)) {
            args->fail_on_new = 1;
        } else if ((allowed & COMPARE_GATE) && cli_flag(argv, &i, "--no-noise", NULL)) {
            args->no_noise = 1;
        } else if ((allowed & COMPARE_OUTPUT) &&
                   (got = cli_option_value(cmd, argc, argv, &i, "--output", "-o", &v))) {
            if (got < 0)
                goto out;
            args->output = v;
        } else if ((allowed & COMPARE_OUTPUT) &&
                   (got = cli_option_value(cmd, argc, argv, &i, "--label", NULL, &v))) {
            if (got < 0)
                goto out;
            args->label = v;
        } else if (cli_selection_option(cmd, &args->sel, argc, argv, &i) <= 0) {
            goto out; /* unknown or malformed option, message printed */
        }
    }
    if (args->num_a || args->num_b) {
        if (num_positional) {
            cli_usage_error(cmd, "'%s': give the runs either as A B or with --baseline and "
                                 "--candidate, not both", positional[0]);
            goto out;
        }
        if (!args->num_a || !args->num_b) {
            cli_usage_error(cmd, "%s needs at least one run", args->num_a ? "--candidate"
                                                                        : "--baseline");
            goto out;
        }
    } else if (num_positional != 2) {
        cli_usage_error(cmd, "needs two runs, A and B (got %zu)", num_positional);
        goto out;
    } else {
        args->a[args->num_a++] = positional[0];
        args->b[args->num_b++] = positional[1];
    }
    rc = 0;
out:
    free(positional);
    return rc;
}

void compare_runs_free(sp_run_stats *runs, size_t count)
{
    for (size_t k = 0; runs && k < count; k++)
        sp_run_stats_free(&runs[k]);
    free(runs);
}

static int load_side(const char *cmd, const compare_args *args, const char **inputs,
                     size_t count, sp_run_stats **out)
{
    *out = calloc(count, sizeof **out);
    if (!*out)
        return cli_file_error(cmd, NULL, "out of memory");
    /* Streamed when the run allows it (docs/stream.md); the tests force
     * the in-memory path to compare both, and trace which one ran. */
    const char *force = getenv("SCOPEPROF_DIFF_IN_MEMORY");
    const char *trace = getenv("SCOPEPROF_DIFF_TRACE");
    sp_run_stats_path how =
        force && !strcmp(force, "1") ? SP_RUN_STATS_IN_MEMORY : SP_RUN_STATS_STREAM;
    for (size_t k = 0; k < count; k++) {
        char err[1024];
        sp_run_stats *run = &(*out)[k];
        int failed = sp_run_stats_load_how(inputs[k], &args->sel, args->by_name, how, run,
                                           err, sizeof err) != 0;
        if (!failed && trace && !strcmp(trace, "1"))
            fprintf(stderr, "scopeprof %s: %s: %s%s\n", cmd, inputs[k],
                    run->streamed ? "streamed" : "in memory: ",
                    run->streamed ? "" : run->path_note);
        if (failed) {
            compare_runs_free(*out, k);
            *out = NULL;
            return cli_file_error(cmd, inputs[k], "%s", err);
        }
    }
    return 0;
}

int compare_load(const char *cmd, const compare_args *args, sp_run_stats **a, sp_run_stats **b)
{
    *a = *b = NULL;
    if (load_side(cmd, args, args->a, args->num_a, a) != 0)
        return 1;
    if (load_side(cmd, args, args->b, args->num_b, b) != 0) {
        compare_runs_free(*a, args->num_a);
        *a = NULL;
        return 1;
    }
    for (int side = 0; side < 2; side++) {
        const sp_run_stats *runs = side ? *b : *a;
        size_t count = side ? args->num_b : args->num_a;
        for (size_t k = 0; k < count; k++)
            if (runs[k].num_ranks == 0)
                cli_warning(cmd, "%s: --ranks selects none of its ranks", runs[k].description);
    }
    return 0;
}
