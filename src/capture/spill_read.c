/* spill_read.c - read a spill file frame by frame (format: spill_format.h).
 * Damage is expected, not exceptional: a run killed while spilling leaves a
 * torn last frame, which ends the good part of the file. */
#include <errno.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/capture.h"
#include "model/file_kind.h"
#include "model/spill_format.h"

struct sp_spill_reader {
    FILE *f;
    char *path;
    sp_spill_header header;
    unsigned char *payload;
    size_t payload_cap;
    uint64_t offset;      /* end of the last good frame */
    uint64_t size;        /* file size at open */
    int ended;
};

sp_spill_reader *sp_spill_open(const char *path, char *err, size_t errlen)
{
    /* Before opening it: opening a FIFO waits for a writer for ever. */
    struct stat st;
    const char *kind = stat(path, &st) == 0 ? sp_file_kind_not_regular(&st) : NULL;
    if (kind) {
        snprintf(err, errlen, "%s: is %s, not a spill file (give the path of a regular "
                 "file)", path, kind);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open (%s)", path, strerror(errno));
        return NULL;
    }
    sp_spill_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    r->f = f;
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        r->size = end > 0 ? (uint64_t)end : 0;
    }
    rewind(f);
    size_t got = fread(&r->header, 1, sizeof r->header, f);
    const sp_spill_header *h = &r->header;
    if (got == 0) {
        snprintf(err, errlen, "%s: empty file, not a scopeprof spill file", path);
        goto fail;
    }
    if (got < sizeof r->header || memcmp(h->magic, SP_SPILL_MAGIC, sizeof h->magic) != 0) {
        snprintf(err, errlen, "%s: not a scopeprof spill file", path);
        goto fail;
    }
    if (h->byte_order != SP_SPILL_BYTE_ORDER) {
        snprintf(err, errlen, "%s: written on a machine of another byte order; recover it there",
                 path);
        goto fail;
    }
    if ((h->version != 1 && h->version != SP_SPILL_VERSION) || h->header_size != sizeof *h ||
        h->event_size != sizeof(sp_event)) {
        snprintf(err, errlen, "%s: spill file version %u is not supported by this scopeprof",
                 path, h->version);
        goto fail;
    }
    if (h->checksum != sp_spill_hash(SP_SPILL_HASH_INIT, h, offsetof(sp_spill_header, checksum))) {
        snprintf(err, errlen, "%s: damaged spill file header", path);
        goto fail;
    }
    r->offset = sizeof *h;
    return r;
fail:
    fclose(f);
    if (r)
        free(r->path);
    free(r);
    return NULL;
}

const sp_spill_header *sp_spill_file_header(const sp_spill_reader *r)
{
    return &r->header;
}

static int frame_shape_ok(const sp_spill_frame *h)
{
    switch (h->type) {
    case SP_SPILL_FRAME_META:
        return 1;
    case SP_SPILL_FRAME_PROCESS:
        return h->length == sizeof(sp_spill_process);
    case SP_SPILL_FRAME_REGION:
        return h->length >= sizeof(sp_spill_region);
    case SP_SPILL_FRAME_THREAD:
        return h->length >= sizeof(sp_spill_thread);
    case SP_SPILL_FRAME_REGION_FINAL:
        return h->length >= sizeof(sp_spill_region_final);
    case SP_SPILL_FRAME_THREAD_END:
        return h->length == sizeof(sp_spill_thread_end);
    case SP_SPILL_FRAME_TASK:
        return h->length >= sizeof(sp_spill_task);
    case SP_SPILL_FRAME_META_TYPED:
        return h->length >= sizeof(sp_spill_meta);
    case SP_SPILL_FRAME_CAPTURE:
        return h->length >= sizeof(sp_spill_capture_frame);
    case SP_SPILL_FRAME_FORKS:
        return (uint64_t)h->count * sizeof(sp_fork_edge) == h->length;
    case SP_SPILL_FRAME_EVENTS: {
        uint64_t per = sizeof(sp_event) + (h->flags & SP_SPILL_FLAG_AWAIT ? sizeof(int64_t) : 0);
        return (uint64_t)h->count * per == h->length;
    }
    case SP_SPILL_FRAME_MPI:
        return (uint64_t)h->count * sizeof(sp_capture_mpi) == h->length;
    default:
        return 0;
    }
}

/* The variable parts of region and thread frames fit their payload. */
static int payload_ok(const sp_spill_frame *h, const unsigned char *p)
{
    if (h->type == SP_SPILL_FRAME_REGION) {
        sp_spill_region rec;
        memcpy(&rec, p, sizeof rec);
        return (uint64_t)sizeof rec + rec.name_len + rec.file_len == h->length;
    }
    if (h->type == SP_SPILL_FRAME_THREAD) {
        sp_spill_thread rec;
        memcpy(&rec, p, sizeof rec);
        return (uint64_t)sizeof rec + rec.name_len == h->length;
    }
    if (h->type == SP_SPILL_FRAME_REGION_FINAL) {
        sp_spill_region_final rec;
        memcpy(&rec, p, sizeof rec);
        uint64_t need = sizeof rec + (uint64_t)rec.num_frames * sizeof(sp_spill_callframe);
        if (rec.num_frames > 64 || need > h->length)
            return 0;
        for (uint32_t i = 0; i < rec.num_frames; i++) {
            sp_spill_callframe f;
            memcpy(&f, p + sizeof rec + i * sizeof f, sizeof f);
            need += (uint64_t)f.path_len + f.name_len;
        }
        return need == h->length;
    }
    if (h->type == SP_SPILL_FRAME_TASK) {
        sp_spill_task rec;
        memcpy(&rec, p, sizeof rec);
        return (uint64_t)sizeof rec + rec.kind_len + rec.name_len + rec.coro_len == h->length;
    }
    if (h->type == SP_SPILL_FRAME_CAPTURE) {
        sp_spill_capture_frame rec;
        memcpy(&rec, p, sizeof rec);
        return (uint64_t)sizeof rec + rec.path_len + rec.why_len == h->length;
    }
    return 1;
}

int sp_spill_next(sp_spill_reader *r, sp_spill_frame *frame, const void **payload,
                  char *err, size_t errlen)
{
    if (r->ended)
        return 0;
    sp_spill_frame h;
    size_t got = fread(&h, 1, sizeof h, r->f);
    if (got < sizeof h || h.sync != SP_SPILL_FRAME_SYNC || h.length > SP_SPILL_MAX_PAYLOAD ||
        !frame_shape_ok(&h))
        goto end;
    if (h.length > r->payload_cap) {
        size_t cap = r->payload_cap ? r->payload_cap : 4096;
        while (cap < h.length)
            cap *= 2;
        unsigned char *grown = realloc(r->payload, cap);
        if (!grown) {
            snprintf(err, errlen, "%s: out of memory", r->path);
            return -1;
        }
        r->payload = grown;
        r->payload_cap = cap;
    }
    if (fread(r->payload, 1, h.length, r->f) < h.length) {
        if (ferror(r->f)) {
            snprintf(err, errlen, "%s: read error (%s)", r->path, strerror(errno));
            return -1;
        }
        goto end;
    }
    uint64_t stored = h.checksum;
    h.checksum = 0;
    uint64_t sum = sp_spill_hash(SP_SPILL_HASH_INIT, &h, sizeof h);
    sum = sp_spill_hash(sum, r->payload, h.length);
    h.checksum = stored;
    if (sum != stored || !payload_ok(&h, r->payload))
        goto end;
    r->offset += sizeof h + h.length;
    *frame = h;
    *payload = r->payload;
    return 1;
end:
    if (ferror(r->f)) {
        snprintf(err, errlen, "%s: read error (%s)", r->path, strerror(errno));
        return -1;
    }
    r->ended = 1;
    return 0;
}

uint64_t sp_spill_torn_bytes(const sp_spill_reader *r)
{
    return r->size > r->offset ? r->size - r->offset : 0;
}

uint64_t sp_spill_offset(const sp_spill_reader *r)
{
    return r->offset;
}

int sp_spill_read_at(sp_spill_reader *r, uint64_t offset, void *buf, size_t len,
                     char *err, size_t errlen)
{
    unsigned char *to = buf;
    while (len > 0) {
        ssize_t got = pread(fileno(r->f), to, len, (off_t)offset);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            snprintf(err, errlen, "%s: read error (%s)", r->path,
                     got < 0 ? strerror(errno) : "the file got shorter while being read");
            return -1;
        }
        to += got;
        offset += (uint64_t)got;
        len -= (size_t)got;
    }
    return 0;
}

int sp_spill_rewind(sp_spill_reader *r)
{
    if (fseek(r->f, (long)sizeof r->header, SEEK_SET) != 0)
        return -1;
    clearerr(r->f);
    r->offset = sizeof r->header;
    r->ended = 0;
    return 0;
}

void sp_spill_close(sp_spill_reader *r)
{
    if (!r)
        return;
    fclose(r->f);
    free(r->path);
    free(r->payload);
    free(r);
}
