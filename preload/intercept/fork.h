/* fork.h - fork() handling of the shim (fork.c). */
#ifndef SCOPEPROF_FORK_H
#define SCOPEPROF_FORK_H

/* Register the pthread_atfork handlers (entry.c, once at load). */
void sp_fork_install(void);

#endif
