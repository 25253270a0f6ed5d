/* fork_ids_check.h - the reader's check of a file's fork parent ids
 * (events/fork_parent_ids, docs/tasks.md), in windows: what the streamed
 * commands used to read each file with fork edges whole for (docs/stream.md,
 * "Checks on the way"). */
#ifndef SP_STREAM_FORK_IDS_CHECK_H
#define SP_STREAM_FORK_IDS_CHECK_H

#include <stddef.h>

#include "scopeprof/stream.h"

/* Every fork parent id of file `file` of the run source is -1 or a call id
 * of its row's rank in that file (h5_check.c's rule; a file without call
 * ids is not checked, as by the reader, but its column is still read
 * through).  Two windowed passes over the file's columns: its call ids into
 * one bitmap per rank (one bit per possible id, never more than a byte per
 * event of the rank plus 1 KiB), then its fork parent ids against it.
 * Returns 0, or 1 with why set: a fork parent id that is no call, call ids
 * the bitmap cannot hold (negative, twice, or too sparse), a column that
 * does not read, out of memory.  It never words a problem for the user:
 * on 1 the caller takes the in-memory path, whose reader prints its own
 * line. */
int sp_stream_check_fork_ids(const sp_run_source *src, size_t file, char *why, size_t whylen);

#endif
