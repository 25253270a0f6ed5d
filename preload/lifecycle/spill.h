/* spill.h - bounded memory (SCOPE_PROFILER_MAX_MEMORY / ON_FULL), periodic
 * spilling (SCOPE_PROFILER_FLUSH_INTERVAL) and the deferred exit on
 * SIGTERM/SIGXCPU/SIGUSR1.  See docs/robustness.md.
 *
 * Chunk memory is changed in only two ways: the owner thread appends to its
 * tail chunk (no lock), and everything else (freeing or reusing chunks after
 * a spill) happens under the process-wide spill lock, which a write holds
 * from collecting the chunks until the file is written.  So a write never
 * sees a chunk being reused, and never reads an event both from memory and
 * from the spill file. */
#ifndef SCOPEPROF_SPILL_H
#define SCOPEPROF_SPILL_H

#include <signal.h>
#include <stdint.h>

#include "lifecycle.h"

/* The recorder's chunk_full hook (sp_lane_next_chunk): the tail chunk of
 * `lane` is full.  Returns 1 when the lane can go on without a new chunk
 * (the tail was spilled and is reused, or the lane stopped recording
 * events), 0 when a new chunk is needed. */
int sp_spill_on_full_chunk(struct sp_lane *lane, int64_t now);

/* The recorder's tick hook (recorder.h): a deferred signal, periodic
 * spilling. */
void sp_spill_tick_slow(struct sp_lane *lane, int64_t now);

/* For sp_profiler_write: hold the spill lock from collecting to writing. */
void sp_spill_lock(void);
void sp_spill_unlock(void);
/* p's spill file, or NULL if nothing was spilled (spill lock held). */
const char *sp_spill_path(struct sp_profiler *p);
/* sp_reset (spill lock held): drop what p spilled so far. */
void sp_spill_discard(struct sp_profiler *p);
/* After p's final write (spill lock held): remove the spill file when the
 * profile was written, else keep it and say how to recover it. */
void sp_spill_finish(struct sp_profiler *p, int written);

/* Constructor: forget the parent's spill files in fork children, and
 * install the signal handling below. */
void sp_spill_install(void);

/* signals.c */
void sp_signals_install(void);
/* A thread noticed sp_signal_pending: write every profile, then let the
 * signal take its course.  Returns only if the signal does not terminate. */
void sp_signals_deferred_exit(void);
/* The exit hook wrote the profiles: a signal still pending terminates now. */
void sp_signals_after_exit_write(void);

#endif
