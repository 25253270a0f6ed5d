/* cli_dir.c - see cli_dir.h. */
#include "cli_dir.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char dir[256];

void cli_dir_make(const char *kind)
{
    snprintf(dir, sizeof dir, "/tmp/scopeprof-%s-XXXXXX", kind);
    cr_assert_not_null(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void cli_dir_remove(void)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *in_dir(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

char *slurp_sized(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return s;
}

char *slurp(const char *path)
{
    char *s = slurp_sized(path, NULL);
    cr_assert_not_null(s, "%s: %s", path, strerror(errno));
    return s;
}

void result_free(result *r)
{
    free(r->out);
    free(r->err);
}
