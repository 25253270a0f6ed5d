/* cli_util.h - helpers shared by the `scopeprof` subcommands: option values,
 * error lines, colour, locating the shim. */
#ifndef SCOPEPROF_CLI_UTIL_H
#define SCOPEPROF_CLI_UTIL_H

#include <stddef.h>
#include <stdio.h>

/* "scopeprof <cmd>: <message>" + a hint to --help on stderr; returns 2 (the
 * usage exit status) so callers can `return cli_usage_error(...)`. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "scopeprof <cmd>: error: <file>: <problem>" on stderr; returns 1.  When the
 * problem already starts with the file name (readers do that), it is not
 * repeated.  file may be NULL. */
int cli_file_error(const char *cmd, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "scopeprof <cmd>: warning: <message>" on stderr. */
void cli_warning(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Is argv[*i] the option `name` (or `shortname`, may be NULL)?  Accepts
 * "--name VALUE", "--name=VALUE" and "-s VALUE".  Returns 1 and sets *value
 * (advancing *i past the value), 0 when it is another argument, -1 when the
 * value is missing (message printed, caller returns 2). */
int cli_option_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                     const char *shortname, const char **value);
/* Is argv[*i] the flag `name` (or `shortname`)?  Advances *i when it is. */
int cli_flag(char **argv, int *i, const char *name, const char *shortname);

/* The last option test of a command that reads files: argv[*i] is a
 * selection option (--rank, --region...: 1, *i advanced), a positional
 * argument (0), or an unknown or malformed option (-1, message printed,
 * caller returns 2). */
struct sp_selection;
int cli_selection_option(const char *cmd, struct sp_selection *sel, int argc, char **argv,
                         int *i);

/* Whole-string numbers; 0 or -1. */
int cli_parse_long(const char *text, long min, long max, long *out);
int cli_parse_double(const char *text, double min, double *out);

/* Colour on `out`: a terminal, and NO_COLOR unset or empty (no-color.org). */
int cli_use_color(FILE *out);

/* Directory of the running executable (/proc/self/exe, else argv[0]);
 * 0 or -1. */
int cli_exe_dir(char *buf, size_t buflen);
/* Path of libscopeprof.so: <exe dir>/../preload/libscopeprof.so in a build
 * tree, else <exe dir>/SCOPEPROF_LIBDIR_FROM_BINDIR/libscopeprof.so (the
 * same install, even moved), else SCOPEPROF_LIBDIR/libscopeprof.so.  0 and buf
 * filled when one of them is readable, -1 otherwise (buf holds the
 * installed path, for the error message). */
int cli_find_shim(char *buf, size_t buflen);

/* OUT for a command that writes one file: OUT itself, or when OUT is an
 * existing directory or ends in '/', OUT/default_name (in buf). */
const char *cli_output_path(const char *out, const char *default_name, char *buf, size_t len);
/* 1 when path names an existing regular file (about to be replaced). */
int cli_regular_file_exists(const char *path);
/* "wrote PATH", or "wrote PATH (replaced the existing file)" on stdout. */
void cli_announce_written(const char *path, int replaced);

#endif
