/* commands.h - the `scopeprof` subcommands.  Each takes the arguments after
 * its own name (argv[0] is the command name) and returns the exit status:
 * 0 ok, 1 failure (one line on stderr naming the file and the problem),
 * 2 usage error. */
#ifndef SCOPEPROF_CLI_COMMANDS_H
#define SCOPEPROF_CLI_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_flame(int argc, char **argv);
/* `flame --diff`: the differential flame graph (cmd_flame_diff.c). */
int cmd_flame_diff(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_recover(int argc, char **argv);

/* read_watchdog.c: exit 1 naming the file when HDF5 takes far longer to
 * read it than its size explains (SCOPEPROF_READ_TIMEOUT, default 10 s +
 * 1 s per 4 MiB). */
void sp_cli_start_read_watchdog(void);

/* argv[0] of the scopeprof process, for locating the shim. */
extern const char *scopeprof_argv0;

#endif
