/* config.c - SCOPE_PROFILER_* environment variables.
 *
 * Read once in the constructor.  A malformed value gets one line on stderr
 * naming the variable, the value and what is expected; the default is used
 * and the program runs on. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

/* SCOPE_PROFILER_FLUSH_INTERVAL bounds: below 0.1 s the spills (each with
 * an fsync) would dominate the run; above 10^9 s is "never" anyway. */
#define SP_FLUSH_INTERVAL_MIN_S 0.1
#define SP_FLUSH_INTERVAL_MAX_S 1e9

struct sp_config sp_cfg = {
    .output = NULL,
    .disable = 0,
    .label = NULL,
    .verbose = 0,
    .track_threads = 1,
    .mpi = -1,
    .max_memory = (uint64_t)1 << 30,
    .on_full = SP_ON_FULL_SPILL,
    .flush_interval = 0.0,
    .callsites = 1,
    .writer_isolated = 0,
    .timer = SP_TIMER_AUTO,
};

/* 1/0 for the usual spellings, -1 otherwise. */
static int parse_bool(const char *v)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off", ""};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!strcasecmp(v, yes[i]))
            return 1;
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (!strcasecmp(v, no[i]))
            return 0;
    return -1;
}

static void read_bool(const char *name, int *target)
{
    const char *v = getenv(name);
    if (!v)
        return;
    int b = parse_bool(v);
    if (b < 0)
        sp_log("%s='%s' is not a boolean (use 1/0, true/false, yes/no, on/off); using %d",
               name, v, *target);
    else
        *target = b;
}

/* "512M", "2G", "1048576", "64KiB" -> bytes; 0 on error. */
static uint64_t parse_size(const char *v)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (end == v || errno || x <= 0)
        return 0;
    while (isspace((unsigned char)*end))
        end++;
    double mult = 1;
    switch (toupper((unsigned char)*end)) {
    case 'K': mult = 1024.0; end++; break;
    case 'M': mult = 1024.0 * 1024; end++; break;
    case 'G': mult = 1024.0 * 1024 * 1024; end++; break;
    case 'T': mult = 1024.0 * 1024 * 1024 * 1024; end++; break;
    case '\0': break;
    default: return 0;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return 0;
    return (uint64_t)(x * mult);
}

/* Split a comma-separated list of globs (copies live for the process). */
static char **split_globs(const char *v, size_t *count)
{
    *count = 0;
    size_t n = 1;
    for (const char *s = v; *s; s++)
        n += *s == ',';
    char **out = calloc(n, sizeof *out);
    char *copy = strdup(v);
    if (!out || !copy) {
        free(out);
        free(copy);
        return NULL;
    }
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        if (*tok)
            out[(*count)++] = tok;
    }
    return out;
}

int sp_config_region_wanted(const char *name)
{
    for (size_t i = 0; i < sp_cfg.num_exclude; i++)
        if (fnmatch(sp_cfg.exclude[i], name, 0) == 0)
            return 0;
    if (sp_cfg.num_include == 0)
        return 1;
    for (size_t i = 0; i < sp_cfg.num_include; i++)
        if (fnmatch(sp_cfg.include[i], name, 0) == 0)
            return 1;
    return 0;
}

void sp_config_load(void)
{
    read_bool("SCOPE_PROFILER_VERBOSE", &sp_cfg.verbose);
    read_bool("SCOPE_PROFILER_DISABLE", &sp_cfg.disable);
    read_bool("SCOPE_PROFILER_TRACK_THREADS", &sp_cfg.track_threads);
    read_bool("SCOPE_PROFILER_CALLSITES", &sp_cfg.callsites);

    const char *v = getenv("SCOPE_PROFILER_OUTPUT");
    if (v) {
        if (*v)
            sp_cfg.output = v;
        else
            sp_log("SCOPE_PROFILER_OUTPUT is empty; using the default prefix 'scope_profile'");
    }
    v = getenv("SCOPE_PROFILER_LABEL");
    if (v && *v)
        sp_cfg.label = v;

    v = getenv("SCOPE_PROFILER_INCLUDE");
    if (v && *v)
        sp_cfg.include = split_globs(v, &sp_cfg.num_include);
    v = getenv("SCOPE_PROFILER_EXCLUDE");
    if (v && *v)
        sp_cfg.exclude = split_globs(v, &sp_cfg.num_exclude);

    v = getenv("SCOPE_PROFILER_MPI");
    if (v) {
        int b = parse_bool(v);
        if (b < 0 || !*v)
            sp_log("SCOPE_PROFILER_MPI='%s' is not 0 or 1; detecting MPI automatically", v);
        else
            sp_cfg.mpi = b;
    }

    v = getenv("SCOPE_PROFILER_MAX_MEMORY");
    if (v) {
        uint64_t bytes = parse_size(v);
        if (bytes < ((uint64_t)1 << 20))
            sp_log("SCOPE_PROFILER_MAX_MEMORY='%s' is not a size of at least 1M (e.g. 512M, 2G); using 1G", v);
        else
            sp_cfg.max_memory = bytes;
    }

    v = getenv("SCOPE_PROFILER_ON_FULL");
    if (v) {
        if (!strcasecmp(v, "spill"))
            sp_cfg.on_full = SP_ON_FULL_SPILL;
        else if (!strcasecmp(v, "stop"))
            sp_cfg.on_full = SP_ON_FULL_STOP;
        else
            sp_log("SCOPE_PROFILER_ON_FULL='%s' is not 'spill' or 'stop'; using 'spill'", v);
    }

    v = getenv("SCOPE_PROFILER_FLUSH_INTERVAL");
    if (v) {
        char *end;
        errno = 0;
        double s = strtod(v, &end);
        /* nan, inf and values whose nanoseconds overflow are refused; a
         * tiny interval would spill (and fsync) on nearly every call. */
        if (end == v || *end || errno || !isfinite(s) || s < 0 || s > SP_FLUSH_INTERVAL_MAX_S) {
            sp_log("SCOPE_PROFILER_FLUSH_INTERVAL='%s' is not a number of seconds between 0 and %.0f; "
                   "periodic spilling stays off", v, SP_FLUSH_INTERVAL_MAX_S);
        } else if (s > 0 && s < SP_FLUSH_INTERVAL_MIN_S) {
            sp_log("SCOPE_PROFILER_FLUSH_INTERVAL='%s' is below the minimum of %g s; using %g s",
                   v, SP_FLUSH_INTERVAL_MIN_S, SP_FLUSH_INTERVAL_MIN_S);
            sp_cfg.flush_interval = SP_FLUSH_INTERVAL_MIN_S;
        } else {
            sp_cfg.flush_interval = s;
        }
    }

    v = getenv("SCOPE_PROFILER_WRITER_NAMESPACE");
    if (v) {
        if (!strcmp(v, "isolated"))
            sp_cfg.writer_isolated = 1;
        else if (!strcmp(v, "shared"))
            sp_cfg.writer_isolated = 0;
        else
            sp_log("SCOPE_PROFILER_WRITER_NAMESPACE='%s' is not 'isolated' or 'shared'; using 'shared'", v);
    }

    v = getenv("SCOPE_PROFILER_TIMER");
    if (v) {
        if (!strcasecmp(v, "auto"))
            sp_cfg.timer = SP_TIMER_AUTO;
        else if (!strcasecmp(v, "tsc"))
            sp_cfg.timer = SP_TIMER_TSC;
        else if (!strcasecmp(v, "clock"))
            sp_cfg.timer = SP_TIMER_CLOCK;
        else
            sp_log("SCOPE_PROFILER_TIMER='%s' is not 'auto', 'tsc' or 'clock'; using 'auto'", v);
    }

    v = getenv("SCOPE_PROFILER_HUGE_PAGES");
    if (v) {
        if (!strcasecmp(v, "auto"))
            sp_cfg.huge_pages = SP_HUGE_AUTO;
        else if (parse_bool(v) == 1)
            sp_cfg.huge_pages = SP_HUGE_ON;
        else if (parse_bool(v) == 0)
            sp_cfg.huge_pages = SP_HUGE_OFF;
        else
            sp_log("SCOPE_PROFILER_HUGE_PAGES='%s' is not 'auto', 'on' or 'off'; using 'auto'", v);
    }
}
