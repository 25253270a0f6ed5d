/* cli_util.c - helpers shared by the `scopeprof` subcommands. */
#include "cli_util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "scopeprof/analysis.h"
#include "scopeprof_config.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "scopeprof %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(try 'scopeprof %s --help')\n", cmd);
    return 2;
}

int cli_file_error(const char *cmd, const char *file, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t len = file ? strlen(file) : 0;
    /* Reader messages already begin with "<file>: ". */
    if (file && !(strncmp(msg, file, len) == 0 && msg[len] == ':'))
        fprintf(stderr, "scopeprof %s: error: %s: %s\n", cmd, file, msg);
    else
        fprintf(stderr, "scopeprof %s: error: %s\n", cmd, msg);
    return 1;
}

void cli_warning(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "scopeprof %s: warning: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int cli_option_value(const char *cmd, int argc, char **argv, int *i, const char *name,
                     const char *shortname, const char **value)
{
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (!strncmp(arg, name, len) && arg[len] == '=') {
        *value = arg + len + 1;
        *i += 1;
        return 1;
    }
    if (strcmp(arg, name) && (!shortname || strcmp(arg, shortname)))
        return 0;
    if (*i + 1 >= argc) {
        cli_usage_error(cmd, "%s needs a value", name);
        return -1;
    }
    *value = argv[*i + 1];
    *i += 2;
    return 1;
}

int cli_flag(char **argv, int *i, const char *name, const char *shortname)
{
    if (strcmp(argv[*i], name) && (!shortname || strcmp(argv[*i], shortname)))
        return 0;
    *i += 1;
    return 1;
}

int cli_selection_option(const char *cmd, struct sp_selection *sel, int argc, char **argv,
                         int *i)
{
    char err[512];
    int got = sp_selection_parse_option(sel, argc, argv, i, err, sizeof err);
    if (got < 0) {
        cli_usage_error(cmd, "%s", err);
        return -1;
    }
    if (got > 0)
        return 1;
    if (argv[*i][0] == '-' && argv[*i][1] != '\0') {
        cli_usage_error(cmd, "unknown option '%s'", argv[*i]);
        return -1;
    }
    return 0;
}

int cli_parse_long(const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end || errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_double(const char *text, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno || !isfinite(v) || v < min)
        return -1;
    *out = v;
    return 0;
}

int cli_use_color(FILE *out)
{
    const char *no_color = getenv("NO_COLOR");
    if (no_color && no_color[0])
        return 0;
    return isatty(fileno(out));
}

int cli_exe_dir(char *buf, size_t buflen)
{
    char path[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n > 0) {
        path[n] = '\0';
    } else if (!realpath(scopeprof_argv0, path)) {
        /* argv[0] without a slash came from PATH: no reliable location. */
        return -1;
    }
    char *slash = strrchr(path, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    if ((size_t)snprintf(buf, buflen, "%s", path[0] ? path : "/") >= buflen)
        return -1;
    return 0;
}

/* Copy `path` into buf; 0, or -1 when it does not fit. */
static int copy_path(char *buf, size_t buflen, const char *path)
{
    size_t len = strlen(path);
    if (len >= buflen)
        return -1;
    memcpy(buf, path, len + 1);
    return 0;
}

int cli_find_shim(char *buf, size_t buflen)
{
    char dir[PATH_MAX], path[PATH_MAX + 64], resolved[PATH_MAX];
    /* Build tree first: running build/src/scopeprof must use the shim built
     * with it, not an older installed one. */
    if (cli_exe_dir(dir, sizeof dir) == 0 &&
        (size_t)snprintf(path, sizeof path, "%s/../preload/libscopeprof.so", dir) < sizeof path &&
        access(path, R_OK) == 0)
        return copy_path(buf, buflen, realpath(path, resolved) ? resolved : path);
    /* Installed: the shim of the same install, wherever it was moved. */
    if (SCOPEPROF_LIBDIR_FROM_BINDIR[0] && cli_exe_dir(dir, sizeof dir) == 0 &&
        (size_t)snprintf(path, sizeof path, "%s/%s/libscopeprof.so", dir,
                         SCOPEPROF_LIBDIR_FROM_BINDIR) < sizeof path &&
        access(path, R_OK) == 0)
        return copy_path(buf, buflen, realpath(path, resolved) ? resolved : path);
    copy_path(buf, buflen, SCOPEPROF_LIBDIR "/libscopeprof.so");
    return access(SCOPEPROF_LIBDIR "/libscopeprof.so", R_OK) == 0 ? 0 : -1;
}

const char *cli_output_path(const char *out, const char *default_name, char *buf, size_t len)
{
    struct stat st;
    size_t n = strlen(out);
    int is_dir = n > 0 && (out[n - 1] == '/' || (stat(out, &st) == 0 && S_ISDIR(st.st_mode)));
    if (!is_dir || !strcmp(out, "-"))
        return out;
    snprintf(buf, len, "%s%s%s", out, out[n - 1] == '/' ? "" : "/", default_name);
    return buf;
}

int cli_regular_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void cli_announce_written(const char *path, int replaced)
{
    /* Overwriting is what a re-run wants, but it must not go unnoticed. */
    printf("wrote %s%s\n", path, replaced ? " (replaced the existing file)" : "");
}
