/* main.c - `scopeprof <command> [options] FILES...`: dispatch only. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "scopeprof_config.h"

const char *scopeprof_argv0 = "scopeprof";

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"run", cmd_run, "run a command under the profiler (sets LD_PRELOAD)"},
    {"report", cmd_report, "print the call tree, flat profile, threads and ranks"},
    {"export", cmd_export, "export to speedscope, chrome, prof, folded, json or csv"},
    {"flame", cmd_flame, "write an interactive SVG flame graph (or --chart)"},
    {"merge", cmd_merge, "merge rank files into one multi-rank file"},
    {"check", cmd_check, "validate files; exit 1 with the reasons when damaged"},
    {"recover", cmd_recover, "turn spill files of a killed run into a profile"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: scopeprof <command> [options] FILES...\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'scopeprof <command> --help' describes each command.\n");
}

int main(int argc, char **argv)
{
    scopeprof_argv0 = argv[0];
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("scopeprof %s\n", SCOPEPROF_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "scopeprof: unknown command '%s' (try 'scopeprof --help')\n", argv[1]);
    return 2;
}
