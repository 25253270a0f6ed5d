/* log.c - the shim's messages: one line on stderr, prefixed "scopeprof: ",
 * written with a single write(2) and no allocation, so it is safe from any
 * thread and from the exit and fatal-signal paths. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "shim.h"

void sp_vlog(const char *fmt, va_list ap)
{
    /* One write(2) per line so lines of different ranks do not interleave. */
    char line[1024];
    int n = snprintf(line, sizeof line, "scopeprof: ");
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

void sp_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sp_vlog(fmt, ap);
    va_end(ap);
}

void sp_debug(const char *fmt, ...)
{
    if (!sp_cfg.verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    sp_vlog(fmt, ap);
    va_end(ap);
}
