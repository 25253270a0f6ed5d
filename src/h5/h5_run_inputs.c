/* h5_run_inputs.c - the files a run is given as: rank files, directories of
 * them, and @LIST files, so `report DIR` and `merge @ranks.txt` work for
 * runs of thousands of ranks, past the shell's argument limit. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "h5/h5_internal.h"

typedef struct path_list {
    char **paths;
    size_t count, cap;
} path_list;

static int add(path_list *l, const char *dir, const char *name)
{
    if (l->count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **grown = realloc(l->paths, cap * sizeof *grown);
        if (!grown)
            return -1;
        l->paths = grown;
        l->cap = cap;
    }
    size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    char *p = malloc(n);
    if (!p)
        return -1;
    if (dir)
        snprintf(p, n, "%s/%s", dir, name);
    else
        snprintf(p, n, "%s", name);
    l->paths[l->count++] = p;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with_h5(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".h5");
}

/* The *.h5 files directly in dir (not hidden: temporary files of an
 * interrupted write start with '.'), in name order. */
static int add_directory(path_list *l, const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        sp_h5_errf(err, errlen, "%s: cannot read the directory: %s", dir, strerror(errno));
        return -1;
    }
    size_t first = l->count;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)))
        if (e->d_name[0] != '.' && ends_with_h5(e->d_name))
            rc = add(l, dir, e->d_name);
    closedir(d);
    if (rc < 0) {
        sp_h5_errf(err, errlen, "%s: out of memory", dir);
        return -1;
    }
    if (l->count == first) {
        sp_h5_errf(err, errlen, "%s: a directory without .h5 files", dir);
        return -1;
    }
    qsort(l->paths + first, l->count - first, sizeof *l->paths, by_name);
    return 0;
}

/* One path per line; blank lines and '#' comments skipped; a relative path
 * is relative to the list's own directory, so a list can travel with its
 * files. */
static int add_list(path_list *l, const char *list, char *err, size_t errlen)
{
    FILE *f = fopen(list, "r");
    if (!f) {
        sp_h5_errf(err, errlen, "%s: cannot open the list of files: %s", list, strerror(errno));
        return -1;
    }
    char *dir = strdup(list);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *slash = '\0';
    size_t first = l->count;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = dir ? 0 : -1;
    while (rc == 0 && (n = getline(&line, &cap, f)) >= 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        rc = add(l, *p != '/' && slash ? dir : NULL, p);
    }
    free(line);
    free(dir);
    fclose(f);
    if (rc < 0) {
        sp_h5_errf(err, errlen, "%s: out of memory", list);
        return -1;
    }
    if (l->count == first) {
        sp_h5_errf(err, errlen, "%s: the list names no files", list);
        return -1;
    }
    return 0;
}

long sp_run_inputs_expand(const char *const *args, size_t count, char ***paths, char *err,
                          size_t errlen)
{
    path_list l = {0};
    for (size_t i = 0; i < count; i++) {
        const char *a = args[i];
        struct stat st;
        int rc;
        if (a[0] == '@' && a[1])
            rc = add_list(&l, a + 1, err, errlen);
        else if (stat(a, &st) == 0 && S_ISDIR(st.st_mode))
            rc = add_directory(&l, a, err, errlen);
        else if ((rc = add(&l, NULL, a)) < 0)
            sp_h5_errf(err, errlen, "%s: out of memory", a);
        if (rc < 0) {
            sp_run_inputs_free(l.paths, (long)l.count);
            return -1;
        }
    }
    *paths = l.paths;
    return (long)l.count;
}

void sp_run_inputs_free(char **paths, long count)
{
    for (long i = 0; i < count; i++)
        free(paths[i]);
    free(paths);
}
