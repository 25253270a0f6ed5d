/* capture_source.c - the events of a capture chunk by chunk (see
 * capture_source.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture_source.h"

static int add_segment(sp_source *s, sp_source_segment seg)
{
    if (s->num_segments == s->segments_cap) {
        size_t cap = s->segments_cap ? s->segments_cap * 2 : 256;
        sp_source_segment *grown = realloc(s->segments, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->segments = grown;
        s->segments_cap = cap;
    }
    s->segments[s->num_segments++] = seg;
    return 0;
}

static sp_capture_chunk chunk_of(const sp_event *events, uint32_t count, int await,
                                 int64_t thread)
{
    return (sp_capture_chunk){
        .events = events,
        .await_ns = await ? (const int64_t *)(const void *)(events + count) : NULL,
        .count = count,
        .thread = thread,
    };
}

/* MPI side data records, kept for the whole conversion (they are few next
 * to the events: one per recorded MPI call). */
static int add_mpi(sp_source *s, const void *records, uint32_t n)
{
    if (s->num_mpi + n > s->mpi_cap) {
        size_t cap = s->mpi_cap ? s->mpi_cap : 1024;
        while (cap < s->num_mpi + n)
            cap *= 2;
        sp_capture_mpi *grown = realloc(s->mpi, cap * sizeof *grown);
        if (!grown)
            return -1;
        s->mpi = grown;
        s->mpi_cap = cap;
    }
    memcpy(s->mpi + s->num_mpi, records, (size_t)n * sizeof *s->mpi);
    s->num_mpi += n;
    return 0;
}

/* Every good events frame of spill file f, and the MPI frames. */
static int index_file(sp_source *s, uint16_t f, sp_source_fn fn, void *ctx,
                      char *err, size_t errlen)
{
    sp_spill_reader *r = s->readers[f];
    sp_spill_frame frame;
    const void *payload;
    int rc;
    while ((rc = sp_spill_next(r, &frame, &payload, err, errlen)) == 1) {
        if (frame.type == SP_SPILL_FRAME_MPI && frame.count && payload) {
            if (add_mpi(s, payload, frame.count) != 0) {
                snprintf(err, errlen, "out of memory reading the spill file");
                return -1;
            }
            continue;
        }
        if (frame.type != SP_SPILL_FRAME_EVENTS || frame.count == 0 || !payload)
            continue;
        int await = (frame.flags & SP_SPILL_FLAG_AWAIT) != 0;
        sp_source_segment seg = {
            .offset = sp_spill_offset(r) - frame.length,
            .count = frame.count,
            .file = f,
            .await = (uint16_t)await,
            .thread = frame.thread,
        };
        if (add_segment(s, seg) != 0) {
            snprintf(err, errlen, "out of memory indexing the spill file");
            return -1;
        }
        if (fn) {
            sp_capture_chunk chunk = chunk_of(payload, frame.count, await, frame.thread);
            int stop = fn(ctx, &chunk);
            if (stop)
                return stop;
        }
    }
    return rc < 0 ? -1 : 0;
}

int sp_source_open(sp_source *s, const sp_capture *c, sp_source_fn fn, void *ctx,
                   char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->capture = c;
    if (c->num_spill_files >= SP_SOURCE_IN_MEMORY) {
        snprintf(err, errlen, "too many spill files (%zu)", c->num_spill_files);
        return -1;
    }
    s->readers = calloc(c->num_spill_files ? c->num_spill_files : 1, sizeof *s->readers);
    if (!s->readers) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->num_readers = c->num_spill_files;
    for (size_t f = 0; f < c->num_spill_files; f++) {
        if (!(s->readers[f] = sp_spill_open(c->spill_files[f], err, errlen)))
            return -1;
        int rc = index_file(s, (uint16_t)f, fn, ctx, err, errlen);
        if (rc != 0)
            return rc;
    }
    for (size_t k = 0; k < c->num_chunks; k++) {
        const sp_capture_chunk *chunk = &c->chunks[k];
        if (chunk->count == 0)
            continue;
        if (chunk->count > UINT32_MAX ||
            add_segment(s, (sp_source_segment){.offset = k, .count = (uint32_t)chunk->count,
                                               .file = SP_SOURCE_IN_MEMORY,
                                               .thread = chunk->thread}) != 0) {
            snprintf(err, errlen, "out of memory indexing the recorded chunks");
            return -1;
        }
        if (fn) {
            int stop = fn(ctx, chunk);
            if (stop)
                return stop;
        }
    }
    return 0;
}

int sp_source_chunk(sp_source *s, size_t k, sp_capture_chunk *chunk, char *err, size_t errlen)
{
    const sp_source_segment *seg = &s->segments[k];
    if (seg->file == SP_SOURCE_IN_MEMORY) {
        *chunk = s->capture->chunks[seg->offset];
        return 0;
    }
    size_t bytes = (size_t)seg->count * (sizeof(sp_event) + (seg->await ? sizeof(int64_t) : 0));
    if (bytes > s->buf_cap) {
        unsigned char *grown = realloc(s->buf, bytes);
        if (!grown) {
            snprintf(err, errlen, "out of memory reading the spill file");
            return -1;
        }
        s->buf = grown;
        s->buf_cap = bytes;
    }
    if (sp_spill_read_at(s->readers[seg->file], seg->offset, s->buf, bytes, err, errlen) != 0)
        return -1;
    *chunk = chunk_of((const sp_event *)(const void *)s->buf, seg->count, seg->await,
                      seg->thread);
    return 0;
}

void sp_source_close(sp_source *s)
{
    for (size_t f = 0; f < s->num_readers; f++)
        sp_spill_close(s->readers[f]);
    free(s->readers);
    free(s->segments);
    free(s->buf);
    free(s->mpi);
    memset(s, 0, sizeof *s);
}
