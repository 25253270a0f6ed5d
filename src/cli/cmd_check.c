/* cmd_check.c - `scopeprof check A B --max-regression PCT`: the regression
 * gate.  Exit 1 naming every region whose metric grew by more than PCT and
 * by more than the run-to-run noise (its 90 % interval lies above PCT); 0
 * otherwise.  File validation, which `check` did before, is `validate`. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"
#include "compare_args.h"
#include "scopeprof/report.h"

#define CMD "check"

static const char check_help[] =
    "usage: scopeprof check A B --max-regression PCT [options]\n"
    "       scopeprof check --baseline A1 A2... --candidate B1 B2... --max-regression PCT\n"
    "\n"
    "Regression gate: exit 1 naming each region (call path) whose metric grew\n"
    "by more than PCT %% in B compared with A, 0 otherwise.  A change counts only\n"
    "when it also exceeds the noise: the whole 90%% interval of the change must\n"
    "lie above PCT.  The interval comes from the spread of the region's calls,\n"
    "the run's delay noise (interruptions per ns, measured on its calls) and,\n"
    "with several runs per side, the spread of the runs (docs/compare.md gives\n"
    "the method and the false-positive rate measured).  A region whose noise\n"
    "cannot be estimated is reported, not failed; give repetitions, or\n"
    "--no-noise to judge on the change alone.\n"
    "To validate profile files (what 'check' did before): scopeprof validate FILES.\n"
    "\n"
    "%s"
    "\n"
    "options:\n"
    "      --max-regression PCT  largest allowed growth, in %% (required)\n"
    "      --fail-on-new         also fail when B has regions A does not\n"
    "  -m, --metric M            total (default), own, mean, calls, p50, p95,\n"
    "                            imbalance; also p99, min, max\n"
    "      --no-noise            judge on the change alone (no interval)\n"
    "      --by-name             match regions by name, every call path summed\n"
    "      --format F            text (default), json or csv: the diff document\n"
    "                            with the verdict of each region (docs/compare.md)\n"
    "  -h, --help                show this help\n"
    "\n"
    "selection (applied to both runs):\n"
    "%s"
    "\n"
    "Exit status: 0 no regression, 1 regression (or unreadable file), 2 usage error.\n";

static void print_note(void *ctx, const char *line)
{
    (void)ctx;
    printf("note: %s\n", line);
}

static void print_change(const sp_diff *diff, const sp_diff_row *row)
{
    char a[32], b[32];
    if (sp_metric_is_time(diff->metric)) {
        sp_format_duration((int64_t)(row->a + 0.5), a, sizeof a);
        sp_format_duration((int64_t)(row->b + 0.5), b, sizeof b);
    } else {
        snprintf(a, sizeof a, "%.6g", row->a);
        snprintf(b, sizeof b, "%.6g", row->b);
    }
    printf("%s %+.1f %%", sp_metric_name(diff->metric), row->pct);
    if (isfinite(row->pct_low))
        printf(" (90 %% interval %+.1f .. %+.1f %%, noise from the %s)", row->pct_low,
               row->pct_high, row->noise == SP_NOISE_RUNS ? "runs" : "calls");
    printf(", %s -> %s\n", a, b);
}

/* Text verdict: regressions, then what was above PCT but not judged one. */
static void print_verdict(const sp_diff *diff, const compare_args *args, size_t flagged)
{
    sp_diff_notes(diff, print_note, NULL);
    size_t compared = 0;
    for (size_t k = 0; k < diff->num_rows; k++) {
        const sp_diff_row *row = &diff->rows[k];
        compared += row->status == SP_DIFF_BOTH;
        if (row->flagged && row->status == SP_DIFF_NEW) {
            printf("NEW REGION  %s (%llu calls in B)\n", row->key,
                   (unsigned long long)row->calls_b);
        } else if (row->flagged) {
            printf("REGRESSION  %s: ", row->key);
            print_change(diff, row);
        } else if (row->status == SP_DIFF_BOTH && isfinite(row->pct) &&
                   row->pct > args->max_pct) {
            printf("%s  %s: ", isfinite(row->pct_low) ? "within noise" : "not judged",
                   row->key);
            print_change(diff, row);
            if (!isfinite(row->pct_low))
                printf("            (its noise cannot be estimated from one run per side: "
                       "give repetitions with --baseline/--candidate)\n");
        } else if (row->status == SP_DIFF_NEW) {
            printf("new region  %s (not failing without --fail-on-new)\n", row->key);
        }
    }
    if (flagged)
        printf("check: %zu region%s regressed by more than %g %% (%s, %zu compared)\n", flagged,
               flagged == 1 ? "" : "s", args->max_pct, sp_metric_name(diff->metric), compared);
    else
        printf("check: no region regressed by more than %g %% (%s, %zu compared)\n",
               args->max_pct, sp_metric_name(diff->metric), compared);
}

int cmd_check(int argc, char **argv)
{
    /* `check FILES` was file validation: say where it went, in one line. */
    int gate = 0;
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        gate |= !strncmp(argv[i], "--max-regression", 16) || !strcmp(argv[i], "--help") ||
                !strcmp(argv[i], "-h") || !strcmp(argv[i], "--baseline");
    if (!gate && argc >= 2) {
        fprintf(stderr, "scopeprof check: 'check' now compares two runs (check A B "
                        "--max-regression PCT); to validate files use 'scopeprof validate "
                        "FILES'\n");
        return 2;
    }
    compare_args args;
    int rc = compare_parse(CMD, argc, argv, COMPARE_TABLE | COMPARE_GATE, check_help, &args);
    if (rc != 0 || args.help) {
        compare_args_free(&args);
        return rc;
    }
    if (!args.has_max) {
        compare_args_free(&args);
        return cli_usage_error(CMD, "--max-regression PCT is required ('check' compares runs; "
                                    "'scopeprof validate FILES' validates files)");
    }
    sp_run_stats *a, *b;
    if (compare_load(CMD, &args, &a, &b) != 0) {
        compare_args_free(&args);
        return 1;
    }
    sp_diff diff;
    char err[512];
    if (sp_diff_build(a, args.num_a, b, args.num_b, args.metric, &diff, err, sizeof err) != 0) {
        rc = cli_file_error(CMD, NULL, "%s", err);
    } else {
        diff.by_name = args.by_name;
        sp_diff_sort_rows(&diff, args.sort);
        size_t flagged = sp_diff_judge(&diff, args.max_pct, args.fail_on_new, args.no_noise);
        sp_diff_output opt = {.threshold = args.threshold, .command = CMD, .gate = 1,
                              .max_pct = args.max_pct, .color = cli_use_color(stdout)};
        int failed = 0;
        if (!strcmp(args.format, "json"))
            failed = sp_diff_write_json(stdout, &diff, &opt);
        else if (!strcmp(args.format, "csv"))
            failed = sp_diff_write_csv(stdout, &diff, &opt);
        else
            print_verdict(&diff, &args, flagged);
        if (failed || fflush(stdout) != 0)
            rc = cli_file_error(CMD, NULL, "cannot write the verdict: %s", strerror(errno));
        else
            rc = flagged ? 1 : 0;
        sp_diff_free(&diff);
    }
    compare_runs_free(a, args.num_a);
    compare_runs_free(b, args.num_b);
    compare_args_free(&args);
    return rc;
}
