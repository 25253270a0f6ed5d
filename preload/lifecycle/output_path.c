/* output_path.c - the one owner of output file names:
 * "<prefix>_rank<NNNNN>.h5" with %p (pid), %h (host name), %r (rank) and %%
 * expanded in the prefix (base/output_prefix.c, which also makes it
 * absolute and creates its directory at the start), ".pid<PID>" for a fork
 * child, and the rank that MPI gives. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lifecycle.h"

/* Does the prefix expand %p (and not a literal "%%p")? */
static int prefix_has_pid(const char *prefix)
{
    for (const char *s = prefix; *s; s++)
        if (s[0] == '%' && s[1]) {
            if (s[1] == 'p')
                return 1;
            s++;
        }
    return 0;
}

int sp_output_path_format(char *buf, size_t len, const char *prefix, int rank, int pid)
{
    char expanded[4096];
    if (sp_output_expand(expanded, sizeof expanded, prefix, rank, pid) != 0)
        return -1;
    /* A fork child's file would collide with its parent's, unless the
     * prefix already tells them apart. */
    char fork_tail[32] = "";
    if (sp_proc.forked_from_pid && !prefix_has_pid(prefix))
        snprintf(fork_tail, sizeof fork_tail, ".pid%d", pid);
    int w = snprintf(buf, len, "%s_rank%05d%s.h5", expanded, rank, fork_tail);
    return (w < 0 || (size_t)w >= len) ? -1 : 0;
}

const char *sp_profiler_path(struct sp_profiler *p)
{
    pthread_mutex_lock(&p->lock);
    if (!p->path) {
        char buf[4096];
        if (sp_output_path_format(buf, sizeof buf, p->prefix, p->rank, sp_proc.pid) == 0) {
            p->path = strdup(buf);
            /* Made at the start already (sp_output_prefix_ready); again
             * here for a directory named after the rank MPI gave since. */
            char *slash = strrchr(buf, '/');
            if (slash && slash != buf) {
                *slash = '\0';
                sp_output_make_dirs(buf);
            }
        }
    }
    const char *path = p->path;
    pthread_mutex_unlock(&p->lock);
    return path;
}

const char *sp_profiler_given_path(struct sp_profiler *p)
{
    pthread_mutex_lock(&p->lock);
    if (!p->given_path) {
        char buf[4096];
        const char *prefix = p->given_prefix ? p->given_prefix : p->prefix;
        if (sp_output_path_format(buf, sizeof buf, prefix, p->rank, sp_proc.pid) == 0)
            p->given_path = strdup(buf);
    }
    const char *path = p->given_path;
    pthread_mutex_unlock(&p->lock);
    return path;
}

void sp_process_set_rank(int rank, int size)
{
    sp_proc.rank = rank;
    sp_proc.size = size > 0 ? size : 1;
    sp_proc.rank_from_mpi = 1;
    /* The default profiler follows MPI: a prefix fixed by sp_init keeps its
     * name, but the rank in the file name is the one MPI gives. */
    struct sp_profiler *p = sp_current_profiler();
    if (p && p->rank != rank) {
        if (p->rank_set)
            sp_log("sp_init() was given rank %d but MPI says %d; using %d", p->rank, rank, rank);
        pthread_mutex_lock(&p->lock);
        p->rank = rank;
        free(p->path);
        p->path = NULL;
        free(p->given_path);
        p->given_path = NULL;
        pthread_mutex_unlock(&p->lock);
    }
}
