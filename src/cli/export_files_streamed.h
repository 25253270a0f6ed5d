/* export_files_streamed.h - the exports that write several files (prof:
 * one per rank; otf2: an archive directory) on the stream (docs/stream.md,
 * "Exports"). */
#ifndef SCOPEPROF_CLI_EXPORT_FILES_STREAMED_H
#define SCOPEPROF_CLI_EXPORT_FILES_STREAMED_H

#include <stddef.h>
#include <stdint.h>

#include "scopeprof/export.h"

/* `export prof` of files to OUT_rank<R>.prof (stem: out without ".prof")
 * in bounded memory.  The exit status, or -1 when the in-memory path must
 * export (it words every problem): the run does not stream, a target is
 * not a plain file, a file has a problem.  trace: say on stderr which. */
int cli_export_prof_streamed(const char *out, const char *const *files, size_t num_files,
                             const sp_export_options *options, int trace);

/* `export otf2` of files into the archive directory out.  The exit status,
 * or -1 when the in-memory path must export (and word the problem). */
int cli_export_otf2_streamed(const char *out, const char *const *files, size_t num_files,
                             const sp_export_options *options, int trace);

/* A streamed export gave up with `why` (a rank whose calls do not nest?):
 * 1 when the stream words it as the in-memory path would
 * (sp_stream_nesting_error: why then holds that message, *rank the rank,
 * NULL: not wanted), else 0 (why unchanged: the in-memory path words it). */
struct sp_run_source;
int cli_export_nesting_error(const struct sp_run_source *src, const sp_export_options *options,
                             uint32_t *rank, char *why, size_t whylen);

#endif
