/* capture_source.h - every recorded event of a capture, chunk by chunk, in
 * the order the writer concatenates them: the spill files' events frames
 * (file after file, frame after frame), then the chunks still in memory.
 * One pass over the spill files indexes their frames; afterwards any chunk
 * can be fetched again, in any order (the streaming writer walks them
 * backwards), one chunk in memory at a time. */
#ifndef SCOPEPROF_CAPTURE_SOURCE_H
#define SCOPEPROF_CAPTURE_SOURCE_H

#include "model/capture.h"
#include "model/spill_format.h"

typedef struct sp_source_segment {
    uint64_t offset;     /* payload offset in the spill file; chunk index in memory */
    uint32_t count;
    uint16_t file;       /* spill file index, SP_SOURCE_IN_MEMORY for a memory chunk */
    uint16_t await;      /* the await column follows the events */
    int64_t thread;
} sp_source_segment;
#define SP_SOURCE_IN_MEMORY UINT16_MAX

typedef struct sp_source {
    const sp_capture *capture;
    sp_spill_reader **readers;
    size_t num_readers;
    sp_source_segment *segments;
    size_t num_segments, segments_cap;
    unsigned char *buf;  /* the last chunk read from a spill file */
    size_t buf_cap;
    sp_capture_mpi *mpi; /* MPI side data found in the spill files */
    size_t num_mpi, mpi_cap;
} sp_source;

/* Called on every chunk in order while the source is opened (the first
 * pass over the events comes for free); nonzero stops with that value. */
typedef int (*sp_source_fn)(void *ctx, const sp_capture_chunk *chunk);

/* Index the capture's spill files, calling fn (may be NULL) on every chunk
 * in order.  Returns 0, fn's nonzero value, or -1 with err set. */
int sp_source_open(sp_source *source, const sp_capture *capture, sp_source_fn fn, void *ctx,
                   char *err, size_t errlen);
/* Chunk k (k < num_segments); valid until the next call.  0 or -1. */
int sp_source_chunk(sp_source *source, size_t k, sp_capture_chunk *chunk,
                    char *err, size_t errlen);
void sp_source_close(sp_source *source);

#endif /* SCOPEPROF_CAPTURE_SOURCE_H */
