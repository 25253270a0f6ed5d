/* export_files_streamed.h - the exports that write several files (prof:
 * one per rank; otf2: an archive directory) on the stream (docs/stream.md,
 * "Exports"). */
#ifndef SCOPEPROF_CLI_EXPORT_FILES_STREAMED_H
#define SCOPEPROF_CLI_EXPORT_FILES_STREAMED_H

#include <stddef.h>

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

#endif
