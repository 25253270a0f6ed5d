/* lifecycle.h - the process life cycle of the shim: output naming, the exit
 * hook, metadata, collecting a profiler's calls and handing them to the
 * writer (spill.h: bounded memory and deferred signals).
 *
 * Layer rule (docs/architecture.md): lifecycle/ calls record/ and base/,
 * never intercept/; intercept/ and entry.c call it. */
#ifndef SCOPEPROF_LIFECYCLE_H
#define SCOPEPROF_LIFECYCLE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "record/recorder.h"

/* Register the recorder's hooks (record_hooks.c), the spill and signal
 * handling.  Once, from the constructor (entry.c). */
void sp_lifecycle_install(void);

/* ---- output naming (output_path.c): the one owner of file names ---------- */

/* Expand the prefix (%p pid, %h host, %r rank, %%) and append
 * "_rank<NNNNN>.h5"; a fork child's file also carries ".pid<PID>" unless the
 * prefix holds %p.  0, or -1 if too long. */
int sp_output_path_format(char *buf, size_t len, const char *prefix, int rank, int pid);
/* The file name as the program gave it (relative stays relative), for
 * sp_output_path; sp_profiler_path is the absolute one that is written. */
const char *sp_profiler_given_path(struct sp_profiler *p);
/* p's file name, computed once per rank/prefix change; NULL if too long. */
const char *sp_profiler_path(struct sp_profiler *p);
/* Called by the MPI wrappers once MPI_Comm_rank/size are known: the default
 * profiler's file follows the MPI rank. */
void sp_process_set_rank(int rank, int size);

/* ---- the exit hook (process_exit.c) --------------------------------------- */

/* Make sure the profile is written at exit (idempotent, cheap after the
 * first call; the recorder's first_region hook). */
void sp_process_arm_exit_hook(void);

/* ---- metadata (process_meta.c) -------------------------------------------- */

/* Extra metadata added to every file this process writes (MPI version,
 * clock synchronisation points, ...).  Copies key and value. */
void sp_process_meta_int(const char *key, int64_t value);
void sp_process_meta_string(const char *key, const char *value);
/* For finalize.c: how many entries there are, and add them to meta[0, *n)
 * (same key: replaced) within `cap` entries. */
size_t sp_process_meta_count(void);
void sp_process_meta_merge(sp_meta *meta, size_t *n, size_t cap);
extern pthread_mutex_t *const sp_meta_lock;

/* ---- writing (finalize.c, handover.c, writer_process.c, writer_loader.c) - */

int sp_profiler_write(struct sp_profiler *p, int final, const char *why);
/* Write every active profiler now (exit path, fatal signal path). */
void sp_finalize_all(const char *why);
/* Run `scopeprof-writer MODE STATUS_FD ARGS...` and wait for it: 0 with
 * its one-line answer in line, or -1 when it cannot be started (the
 * reason in line). */
int sp_writer_process_run(const char *mode, const char *const *args, size_t nargs, char *line,
                          size_t linelen);
/* A frame's module path as the writer process must open it
 * (/proc/self/exe -> /proc/<pid>/exe, in buf). */
const char *sp_writer_module_path(const char *path, char *buf, size_t len);
/* The fallback when the writer process cannot be started: the writer
 * module loaded into the program (only when the program's malloc is the C
 * library's: the module's free must meet its own memory).  Returns the
 * writer's outcome (-1, 0, 1 as sp_writer_outcome), or -2 with the reason
 * in msg when the module cannot or must not be used. */
int sp_writer_module_write(const char *const *files, size_t n, char *msg, size_t msglen);
/* The writer's lock, for fork handlers (intercept/fork.c). */
extern pthread_mutex_t *const sp_write_lock;

/* The recorder's describe_callsite hook (callsite_describe.c). */
void sp_callsite_describe_with_writer(const uintptr_t *frames, int n, char *buf, size_t len);

#endif
