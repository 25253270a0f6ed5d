/* main.c - `scopeprof <command> [options] FILES...`: dispatch only. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "launcher_quiet.h"
#include "scopeprof/h5.h"
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
    {"export", cmd_export, "export to perfetto, chrome, speedscope, prof, folded, json, csv, otf2"},
    {"flame", cmd_flame, "write an interactive SVG flame graph (or --chart)"},
    {"merge", cmd_merge, "merge rank files into one multi-rank file"},
    {"validate", cmd_validate, "validate files; exit 1 with the reasons when damaged"},
    {"diff", cmd_diff, "compare two runs region by region (text, json, csv)"},
    {"check", cmd_check, "regression gate: exit 1 when a region got slower than allowed"},
    {"recover", cmd_recover, "turn spill files of a killed run into a profile"},
};

/* HDF5 1.10 can crash on some corrupt files before any check of ours gets
 * a chance.  Then name the file in one line and exit 1, as for any other
 * damaged input (only async-signal-safe calls here). */
static void crashed(int sig)
{
    const char *path = sp_h5_current_path;
    static const char head[] = "scopeprof: ";
    static const char tail[] = ": damaged file: the HDF5 library crashed while reading it "
                               "(truncated or corrupt; try 'scopeprof validate' on the others)\n";
    static const char other[] = "scopeprof: internal error (crash); please report it with the "
                                "command line\n";
    ssize_t w;
    if (path) {
        w = write(STDERR_FILENO, head, sizeof head - 1);
        w = write(STDERR_FILENO, path, strlen(path));
        w = write(STDERR_FILENO, tail, sizeof tail - 1);
    } else {
        w = write(STDERR_FILENO, other, sizeof other - 1);
    }
    (void)w;
    (void)sig;
    _exit(1);
}

static void guard_against_crashes(void)
{
    static char stack[64 * 1024];
    stack_t ss = {.ss_sp = stack, .ss_size = sizeof stack};
    sigaltstack(&ss, NULL); /* a corrupt file may also mean deep recursion */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = crashed;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: scopeprof <command> [options] FILES...\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "  %-9s %s\n", "help", "'scopeprof help CMD' = 'scopeprof CMD --help'");
    fprintf(out, "  %-9s %s\n", "version", "print the version (also --version, -V)");
    fprintf(out, "\n'scopeprof <command> --help' describes each command.\n");
}

static int is_distributed(const char *name)
{
    return !strcmp(name, "report") || !strcmp(name, "merge") || !strcmp(name, "export");
}

/* A process other than 0 of a launcher (launcher_quiet.c): the distributed
 * commands keep their early messages aside; help, versions and unknown
 * commands end as on process 0 but silently; the other commands are
 * process 0's alone. */
static int follow(int argc, char **argv)
{
    if (argc >= 2 && is_distributed(argv[1])) {
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (!strcmp(argv[1], commands[i].name)) {
                sp_cli_start_read_watchdog();
                sp_h5_bound_attribute_memory = 1;
                sp_cli_quiet_begin();
                int status = commands[i].run(argc - 1, argv + 1);
                sp_cli_quiet_end(status != 2);
                return status;
            }
    }
    if (argc < 2)
        return 2;
    if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") || !strcmp(argv[1], "version"))
        return 0;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return 0;
    return 2; /* unknown command: process 0 says so */
}

int main(int argc, char **argv)
{
    scopeprof_argv0 = argv[0];
    guard_against_crashes();
    /* Under a launcher, process 0 alone prints help, versions and usage
     * errors (launcher_quiet.c); `run` has its own rule (cmd_run.c). */
    if ((argc < 2 || strcmp(argv[1], "run")) && sp_cli_launcher_follower())
        return follow(argc, argv);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    /* `scopeprof help CMD` is `scopeprof CMD --help`. */
    char help_option[] = "--help";
    char *help_argv[] = {argv[0], argc > 2 ? argv[2] : NULL, help_option, NULL};
    if (!strcmp(argv[1], "help") && argc > 2) {
        argc = 3;
        argv = help_argv;
    } else if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
               !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
        !strcmp(argv[1], "version")) {
        printf("scopeprof %s\n", SCOPEPROF_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            /* `run` reads nothing and may exec the program in place. */
            if (commands[i].run != cmd_run) {
                sp_cli_start_read_watchdog();
                sp_h5_bound_attribute_memory = 1;
            }
            return commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "scopeprof: unknown command '%s' (try 'scopeprof --help')\n", argv[1]);
    return 2;
}
