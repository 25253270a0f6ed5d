/* compare_args.h - the command line shared by the commands that compare runs
 * (`diff`, `check`, `flame --diff`): the runs of each side, the metric, the
 * selection, the output format; option names as in the Python package. */
#ifndef SCOPEPROF_CLI_COMPARE_ARGS_H
#define SCOPEPROF_CLI_COMPARE_ARGS_H

#include <stddef.h>

#include "scopeprof/analysis.h"
#include "scopeprof/diff.h"

enum {
    COMPARE_TABLE = 1,  /* --metric --sort --threshold --format --by-name */
    COMPARE_GATE = 2,   /* --max-regression --fail-on-new --no-noise */
    COMPARE_OUTPUT = 4, /* -o/--output --label */
};

typedef struct compare_args {
    const char **a, **b;      /* one argument per run */
    size_t num_a, num_b;
    sp_metric metric;
    sp_diff_sort sort;
    double threshold;
    int by_name;
    const char *format;       /* "text", "json", "csv" */
    sp_selection sel;
    int has_max;
    double max_pct;
    int fail_on_new, no_noise;
    const char *output, *label;
    int help;                 /* --help was given (printed) */
} compare_args;

/* Parse argv (argv[0] = command name).  `help` is a printf format with two
 * %s: compare_sides_help, then the selection options.  0 ok (or help printed: args->help), 2
 * usage error (message printed). */
int compare_parse(const char *cmd, int argc, char **argv, unsigned allowed, const char *help,
                  compare_args *args);
void compare_args_free(compare_args *args);

/* Load every run of both sides.  0, or 1 with the error printed. */
int compare_load(const char *cmd, const compare_args *args, sp_run_stats **a,
                 sp_run_stats **b);
void compare_runs_free(sp_run_stats *runs, size_t count);

/* The help lines describing A/B and --baseline/--candidate. */
extern const char compare_sides_help[];

#endif
