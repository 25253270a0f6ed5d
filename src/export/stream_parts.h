/* stream_parts.h - a streamed export written as one part of a
 * distributed export (`mpirun -np N scopeprof export folded|csv`,
 * src/dist/dist_export_stream.c): the rows of a contiguous share of the
 * selected ranks, the bytes the serial streamed export writes for them. */
#ifndef SP_EXPORT_STREAM_PARTS_H
#define SP_EXPORT_STREAM_PARTS_H

#include <stdint.h>
#include <stdio.h>

#include "scopeprof/export.h"
#include "scopeprof/stream.h"

typedef struct sp_csv_part {
    long first, count;  /* the selected ranks [first, first + count); count -1: to the end */
    int header;         /* write the header line first */
    /* make the checks of the ranks not selected and of the fork-edge
     * files (the serial export; process 0 of a distributed one: the other
     * parts need not repeat them) */
    int check_others;
    /* NULL, or called once between the two passes with the first pass's
     * status (0, or 1 with why): returns 0 to write (*out may be replaced
     * by the stream to write into), 1 not to (why set).  Every part's
     * first pass checks its share (process 0's also the rest of the run),
     * so the processes agree here. */
    int (*agree)(void *ctx, int rc, FILE **out, char *why, size_t whylen);
    void *ctx;
    uint64_t events;    /* out: the rows written (the warning counts them) */
} sp_csv_part;

/* sp_export_csv_stream of a part, without the warning: 0, 1 (nothing
 * written: why), -1 (writing failed after the first byte: why). */
int sp_export_csv_stream_part(FILE *out, const sp_run_source *src,
                              const sp_export_options *options, sp_csv_part *part, char *why,
                              size_t whylen);

#endif
