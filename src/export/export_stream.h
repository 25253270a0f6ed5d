/* export_stream.h - chrome, speedscope, csv and json written from a run
 * source in bounded memory (docs/stream.md, "Exports"); the in-memory
 * exporters of scopeprof/export.h give the same bytes.
 *
 * Each returns 0; 1 when the run goes through the in-memory path instead
 * (why says which: something the stream does not take, or a problem, which
 * the in-memory path words), nothing written then; -1 when writing failed
 * after the output began (why set).  Every check is made before the first
 * byte, so these may write to standard output. */
#ifndef SP_EXPORT_STREAM_H
#define SP_EXPORT_STREAM_H

#include <stdio.h>

#include "scopeprof/export.h"
#include "scopeprof/stream.h"

int sp_export_chrome_stream(FILE *out, const sp_run_source *src, const sp_export_options *options,
                            char *why, size_t whylen);
int sp_export_speedscope_stream(FILE *out, const sp_run_source *src,
                                const sp_export_options *options, char *why, size_t whylen);
int sp_export_csv_stream(FILE *out, const sp_run_source *src, const sp_export_options *options,
                         char *why, size_t whylen);
int sp_export_json_stream(FILE *out, const sp_run_source *src, const sp_export_options *options,
                          char *why, size_t whylen);

#endif
