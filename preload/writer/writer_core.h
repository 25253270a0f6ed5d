/* writer_core.h - what the writer process (scopeprof-writer) and the
 * fallback writer module do: the shim's handover (spill-file format) ->
 * schema-3 HDF5 file, call sites resolved with libdw. */
#ifndef SCOPEPROF_WRITER_CORE_H
#define SCOPEPROF_WRITER_CORE_H

#include <stddef.h>

#include "model/capture.h"

/* The outcome of a write, one line in msg. */
enum sp_writer_outcome {
    SP_WRITER_FAILED = -1,  /* nothing written: keep the files */
    SP_WRITER_WRITTEN = 0,  /* the whole profile: the files may go */
    SP_WRITER_PARTIAL = 1,  /* only counts and totals per region fitted: keep the files */
};

/* Write the profile the handover files[0..n) describe (a spill file of the
 * process first, the handover last).  Lines about the run (regions still
 * open, warnings) go to stderr; the outcome's line to msg. */
enum sp_writer_outcome sp_writer_write_files(const char *const *files, size_t n,
                                             char *msg, size_t msglen);

/* "file:line in function" of frames; 0, or -1 when nothing is known. */
int sp_writer_describe(const sp_capture_frame *frames, size_t num_frames, char *text,
                       size_t textlen);

#endif
