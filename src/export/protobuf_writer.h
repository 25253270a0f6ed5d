/* protobuf_writer.h - just enough of the protocol buffers wire format to
 * stream a trace: varints, tags, length-delimited fields.  Messages are
 * built bottom-up in small buffers (a nested message's length precedes it
 * on the wire), then appended to their parent or to the output. */
#ifndef SCOPEPROF_PROTOBUF_WRITER_H
#define SCOPEPROF_PROTOBUF_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_BYTES = 2 };

/* A growable byte buffer; `failed` is set (and stays set) when memory ran
 * out, so callers check once per message. */
typedef struct pb_buf {
    uint8_t *data;
    size_t len, cap;
    int failed;
} pb_buf;

void pb_reset(pb_buf *b);
void pb_free(pb_buf *b);
void pb_varint(pb_buf *b, uint64_t v);
void pb_uint(pb_buf *b, uint32_t field, uint64_t v);
void pb_fixed64(pb_buf *b, uint32_t field, uint64_t v);
void pb_bytes(pb_buf *b, uint32_t field, const void *data, size_t len);
void pb_string(pb_buf *b, uint32_t field, const char *s);
/* Append `child` as a length-delimited field of b. */
void pb_message(pb_buf *b, uint32_t field, const pb_buf *child);

/* Bytes a varint of v takes. */
static inline size_t pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Encode v at p; returns the byte after it.  p needs 10 bytes of room. */
static inline uint8_t *pb_put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

#endif
