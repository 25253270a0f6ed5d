/* cmd_flame_diff.c - `scopeprof flame --diff A B -o diff.svg`: the
 * differential flame graph (src/diff/flame_diff_svg.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "commands.h"
#include "compare_args.h"

#define CMD "flame"

static const char flame_diff_help[] =
    "usage: scopeprof flame --diff A B [-o diff.svg] [options]\n"
    "       scopeprof flame --diff --baseline A1 A2... --candidate B1 B2... [-o diff.svg]\n"
    "\n"
    "Write a differential flame graph: the flame graph of B (width = B's\n"
    "inclusive time per call path, ranks and threads merged), each frame\n"
    "coloured by the change of its own time from A to B: red slower, blue\n"
    "faster, white unchanged, full colour at +-50 %% (paler when the own time\n"
    "is under 1 %% of the graph); paths new in B are full red, paths only in A\n"
    "are listed under the title.  Hover a frame for both\n"
    "runs' calls, inclusive and own time and the change; click to zoom.\n"
    "\n"
    "%s"
    "\n"
    "options:\n"
    "  -o, --output OUT   output file (default diff.svg; '-' = standard output)\n"
    "      --label TEXT   title (default: 'A -> B')\n"
    "  -h, --help         show this help\n"
    "\n"
    "selection (applied to both runs):\n"
    "%s"
    "\n"
    "Exit status: 0 ok, 1 unreadable file or failed drawing, 2 usage error.\n";

/* Last component of a run's name, for the title ("out/run1/" -> "run1"). */
static void short_name(char *buf, size_t len, const char *input)
{
    size_t n = strlen(input);
    while (n > 1 && input[n - 1] == '/')
        n--;
    size_t start = n;
    while (start > 0 && input[start - 1] != '/')
        start--;
    snprintf(buf, len, "%.*s", (int)(n - start), input + start);
}

int cmd_flame_diff(int argc, char **argv)
{
    /* drop --diff itself; the rest is the comparing commands' syntax */
    char **args_v = malloc(((size_t)argc + 1) * sizeof *args_v);
    if (!args_v)
        return cli_file_error(CMD, NULL, "out of memory");
    int n = 0;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--diff") != 0)
            args_v[n++] = argv[i];
    args_v[n] = NULL;
    compare_args args;
    int rc = compare_parse(CMD, n, args_v, COMPARE_OUTPUT, flame_diff_help, &args);
    free(args_v); /* args points into argv itself, not into args_v */
    if (rc != 0 || args.help) {
        compare_args_free(&args);
        return rc;
    }
    sp_run_stats *a, *b;
    if (compare_load(CMD, &args, &a, &b) != 0) {
        compare_args_free(&args);
        return 1;
    }
    const char *out = args.output ? args.output : "diff.svg";
    char title[1200];
    if (args.label)
        snprintf(title, sizeof title, "%s", args.label);
    else {
        char name_a[256], name_b[256];
        short_name(name_a, sizeof name_a, a[0].description);
        short_name(name_b, sizeof name_b, b[0].description);
        snprintf(title, sizeof title, "Differential flame graph: %s%s -> %s%s", name_a,
                 args.num_a > 1 ? " ..." : "", name_b, args.num_b > 1 ? " ..." : "");
    }
    int to_stdout = !strcmp(out, "-");
    FILE *f = to_stdout ? stdout : fopen(out, "wb");
    if (!f) {
        rc = cli_file_error(CMD, out, "cannot create: %s", strerror(errno));
    } else {
        char err[1024] = "";
        int failed = sp_flame_diff_svg(f, a, args.num_a, b, args.num_b, title, err, sizeof err);
        int write_failed = ferror(f);
        write_failed |= to_stdout ? fflush(f) != 0 : fclose(f) != 0;
        if (failed || write_failed) {
            if (!to_stdout)
                unlink(out);
            rc = failed && err[0] ? cli_file_error(CMD, NULL, "%s", err)
                                  : cli_file_error(CMD, out, "write failed: %s", strerror(errno));
        } else if (!to_stdout) {
            printf("wrote %s\n", out);
        }
    }
    compare_runs_free(a, args.num_a);
    compare_runs_free(b, args.num_b);
    compare_args_free(&args);
    return rc;
}
