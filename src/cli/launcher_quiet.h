/* launcher_quiet.h - messages printed once under an MPI launcher
 * (launcher_quiet.c). */
#ifndef SP_CLI_LAUNCHER_QUIET_H
#define SP_CLI_LAUNCHER_QUIET_H

/* 1 in a process other than 0 of a launcher (SCOPEPROF_DIST=0: never). */
int sp_cli_launcher_follower(void);
/* Keep stdout and stderr aside until the distributed session begins (then
 * dropped) or sp_cli_quiet_end. */
void sp_cli_quiet_begin(void);
/* Stop keeping: print what was kept (print = 1) or drop it. */
void sp_cli_quiet_end(int print);
void sp_cli_quiet_drop(void);

#endif
