/* run_inputs.c - the files of one run named by one command-line argument:
 * comparing commands take one argument per run, so a run of many rank files
 * is named by its directory, a quoted glob, or its output prefix. */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scopeprof/diff.h"

void sp_run_inputs_free(char **paths, size_t count)
{
    for (size_t k = 0; k < count; k++)
        free(paths[k]);
    free(paths);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with_h5(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".h5");
}

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

static int from_directory(const char *dir, char ***paths, size_t *count, char *err,
                          size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot open the directory: %s", dir, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (!ends_with_h5(e->d_name))
            continue;
        char path[4096];
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
            continue;
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            rc = push(paths, count, &cap, path);
    }
    closedir(d);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory listing %s", dir);
        return -1;
    }
    if (*count == 0) {
        snprintf(err, errlen, "%s: no .h5 profile files in this directory", dir);
        return -1;
    }
    qsort(*paths, *count, sizeof **paths, by_string);
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
    if (stat(input, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            rc = from_directory(input, paths, count, err, errlen);
        else {
            size_t cap = 0;
            rc = push(paths, count, &cap, input);
            if (rc != 0)
                snprintf(err, errlen, "out of memory");
        }
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
        sp_run_inputs_free(*paths, *count);
        *paths = NULL;
        *count = 0;
    }
    return rc;
}
