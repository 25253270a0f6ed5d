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

/* ---- the handover to the writer process (finalize.c) ----------------------
 * A spill-format file with every region and thread, to which finalize adds
 * the calls in memory and the rest of the capture (spill_format.h).  The
 * final write appends to p's spill file (created if none), so that a failed
 * write leaves one complete file for `scopeprof recover`; a flush writes a
 * separate file beside it (its calls stay in memory).  Spill lock held. */
typedef struct spill_file sp_spill_file;
/* NULL after one line on stderr. */
sp_spill_file *sp_spill_handover_begin(struct sp_profiler *p, int final);
int sp_spill_handover_frame(sp_spill_file *f, uint16_t type, uint16_t flags, uint32_t count,
                            int64_t thread, const void *a, size_t alen, const void *b,
                            size_t blen, const void *c, size_t clen);
/* The end of the file, and cutting it back there after a failed write. */
int64_t sp_spill_handover_mark(sp_spill_file *f);
int sp_spill_handover_cut(sp_spill_file *f, int64_t mark);
const char *sp_spill_handover_path(const sp_spill_file *f);
/* After the writer: a separate file is removed (kept after a failed final
 * write, with the recover hint); a final write finishes p's spill file
 * (sp_spill_finish).  f may be NULL. */
void sp_spill_handover_end(struct sp_profiler *p, sp_spill_file *f, int final, int written);

/* handover.c: the calls in memory (cap->chunks, their events in spans) and the rest of the capture
 * as frames of f, the CAPTURE frame last.  *summary_only: the calls in
 * memory did not fit and are in the per-region counts only.  0, or -1
 * (errno set). */
int sp_handover_write(sp_spill_file *f, const sp_capture *cap, const struct sp_chunk_span *spans,
                      const uint64_t *open_calls, const char *why, int *summary_only);

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
