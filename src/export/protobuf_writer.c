/* protobuf_writer.c - see protobuf_writer.h. */
#include <stdlib.h>
#include <string.h>

#include "protobuf_writer.h"

static int reserve(pb_buf *b, size_t more)
{
    if (b->failed)
        return -1;
    if (b->len + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + more)
        cap *= 2;
    uint8_t *grown = realloc(b->data, cap);
    if (!grown) {
        b->failed = 1;
        return -1;
    }
    b->data = grown;
    b->cap = cap;
    return 0;
}

void pb_reset(pb_buf *b)
{
    b->len = 0;
}

void pb_free(pb_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void pb_varint(pb_buf *b, uint64_t v)
{
    if (reserve(b, 10) == 0)
        b->len = (size_t)(pb_put_varint(b->data + b->len, v) - b->data);
}

static void tag(pb_buf *b, uint32_t field, int wire)
{
    pb_varint(b, ((uint64_t)field << 3) | (uint64_t)wire);
}

void pb_uint(pb_buf *b, uint32_t field, uint64_t v)
{
    tag(b, field, PB_VARINT);
    pb_varint(b, v);
}

void pb_fixed64(pb_buf *b, uint32_t field, uint64_t v)
{
    tag(b, field, PB_FIXED64);
    if (reserve(b, 8) != 0)
        return;
    for (int i = 0; i < 8; i++)
        b->data[b->len++] = (uint8_t)(v >> (8 * i));
}

void pb_bytes(pb_buf *b, uint32_t field, const void *data, size_t len)
{
    tag(b, field, PB_BYTES);
    pb_varint(b, len);
    if (len && reserve(b, len) == 0) {
        memcpy(b->data + b->len, data, len);
        b->len += len;
    }
}

void pb_string(pb_buf *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

void pb_message(pb_buf *b, uint32_t field, const pb_buf *child)
{
    if (child->failed)
        b->failed = 1;
    pb_bytes(b, field, child->data, child->len);
}
