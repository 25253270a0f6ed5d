/* fork.h - fork() handling of the shim (fork.c). */
#ifndef SCOPEPROF_FORK_H
#define SCOPEPROF_FORK_H

#include <stddef.h>

/* Pid of the parent when this process is a fork() child of a profiled
 * process, 0 otherwise. */
extern int sp_fork_parent_pid;

/* Register the pthread_atfork handlers (entry.c, once at load). */
void sp_fork_install(void);

/* A forked child's file would collide with its parent's: turn
 * "<p>_rank<NNNNN>.h5" into "<p>_rank<NNNNN>.pid<PID>.h5" in place, unless
 * the prefix already holds the pid (%p).  -1 if it does not fit. */
int sp_fork_path_suffix(char *path, size_t len, const char *prefix);

#endif
