/* run_inputs.c - the files of one run named by one command-line argument:
 * comparing commands take one argument per run, so a run of many rank files
 * is named by its directory or @LIST (sp_run_inputs_expand, as for every
 * command), a quoted glob, or its output prefix. */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scopeprof/diff.h"
#include "scopeprof/h5.h"

static int push(char ***paths, size_t *count, size_t *cap, const char *path)
{
    if (*count == *cap) {
        size_t ncap = *cap ? 2 * *cap : 8;
        char **grown = realloc(*paths, ncap * sizeof *grown);
        if (!grown)
            return -1;
        *paths = grown;
        *cap = ncap;
    }
    if (!((*paths)[*count] = strdup(path)))
        return -1;
    (*count)++;
    return 0;
}

static int from_glob(const char *pattern, char ***paths, size_t *count, char *err,
                     size_t errlen)
{
    glob_t g;
    int got = glob(pattern, 0, NULL, &g);
    if (got == GLOB_NOMATCH) {
        globfree(&g);
        return 1;
    }
    if (got != 0) {
        globfree(&g);
        snprintf(err, errlen, "%s: cannot expand the pattern", pattern);
        return -1;
    }
    size_t cap = 0;
    for (size_t k = 0; k < g.gl_pathc; k++)
        if (push(paths, count, &cap, g.gl_pathv[k]) != 0) {
            globfree(&g);
            snprintf(err, errlen, "out of memory expanding %s", pattern);
            return -1;
        }
    globfree(&g);
    return 0;
}

int sp_run_inputs(const char *input, char ***paths, size_t *count, char *err, size_t errlen)
{
    *paths = NULL;
    *count = 0;
    struct stat st;
    int rc;
    if (stat(input, &st) == 0 || (input[0] == '@' && input[1])) {
        /* a file, a directory of rank files, or @LIST: as every command */
        long n = sp_run_inputs_expand(&input, 1, paths, err, errlen);
        if (n < 0)
            return -1;
        *count = (size_t)n;
        rc = 0;
    } else if (strpbrk(input, "*?[")) {
        rc = from_glob(input, paths, count, err, errlen);
        if (rc == 1) {
            snprintf(err, errlen, "%s: no file matches this pattern", input);
            rc = -1;
        }
    } else {
        /* An output prefix: SCOPE_PROFILER_OUTPUT=run gives run_rank00000.h5... */
        char pattern[4096];
        snprintf(pattern, sizeof pattern, "%s_rank*.h5", input);
        rc = from_glob(pattern, paths, count, err, errlen);
        if (rc == 1) {
            snprintf(err, errlen, "%s: %s (nor any %s_rank*.h5)", input, strerror(ENOENT),
                     input);
            rc = -1;
        }
    }
    if (rc != 0) {
        sp_run_inputs_free(*paths, (long)*count);
        *paths = NULL;
        *count = 0;
    }
    return rc;
}
