/* output_prefix.c - the output prefix as the run gave it, made safe to use
 * at exit: "%p", "%h", "%r" and "%%" expanded (sp_output_expand), a
 * relative prefix made absolute while the working directory is still the
 * one the user meant (sp_output_prefix_absolute: at load and at sp_init, so
 * a program that chdir()s later still writes where it was asked to), and
 * its directory created when recording starts (sp_output_prefix_ready), so
 * a missing directory is found at the start of the run, not after it. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim.h"

int sp_output_expand(char *buf, size_t len, const char *prefix, int rank, int pid)
{
    size_t n = 0;
    if (len == 0)
        return -1;
    for (const char *s = prefix; *s; s++) {
        char piece[300];
        const char *add = NULL;
        if (s[0] == '%' && s[1]) {
            switch (s[1]) {
            case 'p': snprintf(piece, sizeof piece, "%d", pid); add = piece; break;
            case 'r': snprintf(piece, sizeof piece, "%05d", rank); add = piece; break;
            case 'h':
                if (gethostname(piece, sizeof piece - 1) != 0)
                    strcpy(piece, "unknown-host");
                piece[sizeof piece - 1] = '\0';
                add = piece;
                break;
            case '%': add = "%"; break;
            default: break;
            }
        }
        if (add) {
            size_t a = strlen(add);
            if (n + a >= len)
                return -1;
            memcpy(buf + n, add, a);
            n += a;
            s++;
        } else {
            if (n + 1 >= len)
                return -1;
            buf[n++] = *s;
        }
    }
    buf[n] = '\0';
    return 0;
}

char *sp_output_prefix_absolute(const char *prefix)
{
    if (prefix[0] == '/')
        return strdup(prefix);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return strdup(prefix); /* keep it relative: the best there is */
    size_t a = strlen(cwd), b = strlen(prefix);
    char *abs = malloc(a + b + 2);
    if (abs) {
        memcpy(abs, cwd, a);
        abs[a] = '/';
        memcpy(abs + a + 1, prefix, b + 1);
    }
    return abs;
}

/* mkdir -p: every missing component, mode 0777 less the umask (what the
 * user's own mkdir would give). */
int sp_output_make_dirs(const char *dir)
{
    char path[PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) {
        errno = ENAMETOOLONG;
        return n == 0 ? 0 : -1;
    }
    memcpy(path, dir, n + 1);
    for (char *s = path + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        struct stat st;
        if (mkdir(path, 0777) != 0 && errno != EEXIST)
            return -1;
        if (stat(path, &st) != 0)
            return -1;
        if (!S_ISDIR(st.st_mode)) {
            errno = ENOTDIR;
            return -1;
        }
        *s = c;
        if (c == '\0')
            return 0;
    }
}

/* Directory part of an expanded prefix, "" when it has none. */
static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (slash == path)
        n = 1; /* "/x": the root */
    if (n >= len)
        n = len - 1;
    memcpy(dir, path, n);
    dir[n] = '\0';
}

char *sp_output_prefix_ready(const char *prefix, int rank)
{
    char expanded[PATH_MAX], dir[PATH_MAX];
    if (sp_output_expand(expanded, sizeof expanded, prefix, rank, sp_proc.pid) != 0)
        return NULL; /* too long: the writer names the problem */
    dir_of(expanded, dir, sizeof dir);
    if (!dir[0])
        return NULL;
    const char *problem = NULL;
    int err = 0;
    if (sp_output_make_dirs(dir) != 0) {
        problem = "cannot create the output directory";
        err = errno;
    } else if (access(dir, W_OK | X_OK) != 0) {
        problem = "cannot write into the output directory";
        err = errno;
    }
    if (!problem)
        return NULL;
    /* Fall back to the working directory, keeping the file's own name, so
     * that the run is not lost at its end. */
    const char *base = strrchr(prefix, '/');
    base = base && base[1] ? base + 1 : "scope_profile";
    char *fallback = sp_output_prefix_absolute(base);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        snprintf(cwd, sizeof cwd, ".");
    sp_log("%s %s (%s); writing the profile into the working directory %s instead",
           problem, dir, strerror(err), cwd);
    return fallback;
}
