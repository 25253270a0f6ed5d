/* lane_spill.c - slice events set aside per lane (lane_spill.h). */
#include "lane_spill.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_BLOCK ((size_t)1 << 16)
#define MIN_BLOCK ((size_t)1 << 12)
#define BLOCKS_BUDGET ((size_t)32 << 20) /* every lane's block in memory */

typedef struct lane_buf {
    uint8_t *block;              /* the lane's last block, in memory */
    size_t used;
    int64_t last_t;              /* times are deltas on the lane */
    uint64_t *offsets;           /* its full blocks in the file */
    size_t num_blocks, cap;
    int lost;                    /* a block could not be kept: events dropped */
} lane_buf;

struct sx_lane_spill {
    int fd;
    size_t block_size;
    size_t num_lanes;
    lane_buf *lanes;
    uint64_t file_end;
    uint8_t *read_buf;
};

sx_lane_spill *sx_lane_spill_open(size_t num_lanes)
{
    sx_lane_spill *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->fd = -1;
    s->num_lanes = num_lanes;
    s->block_size = MAX_BLOCK;
    while (s->block_size > MIN_BLOCK && num_lanes * s->block_size > BLOCKS_BUDGET)
        s->block_size /= 2;
    s->lanes = calloc(num_lanes + 1, sizeof *s->lanes);
    s->read_buf = malloc(s->block_size);
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/scopeprof-lanes-XXXXXX", dir && dir[0] ? dir : "/tmp");
    if (s->lanes && s->read_buf)
        s->fd = mkstemp(path);
    if (s->fd < 0) {
        sx_lane_spill_close(s);
        return NULL;
    }
    unlink(path);
    return s;
}

void sx_lane_spill_close(sx_lane_spill *s)
{
    if (!s)
        return;
    for (size_t l = 0; s->lanes && l < s->num_lanes; l++) {
        free(s->lanes[l].block);
        free(s->lanes[l].offsets);
    }
    free(s->lanes);
    free(s->read_buf);
    if (s->fd >= 0)
        close(s->fd);
    free(s);
}

/* The lane's block is full: to the end of the file. */
static int write_block(sx_lane_spill *s, lane_buf *b)
{
    if (b->num_blocks == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 16;
        uint64_t *grown = realloc(b->offsets, cap * sizeof *grown);
        if (!grown)
            return -1;
        b->offsets = grown;
        b->cap = cap;
    }
    for (size_t done = 0; done < b->used;) {
        ssize_t n = pwrite(s->fd, b->block + done, b->used - done, (off_t)(s->file_end + done));
        if (n <= 0)
            return -1;
        done += (size_t)n;
    }
    b->offsets[b->num_blocks++] = s->file_end;
    s->file_end += b->used;
    b->used = 0;
    return 0;
}

static uint8_t *put_varint(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/* The lane's events can no longer be kept: it will be streamed alone. */
static void lose(lane_buf *b)
{
    b->lost = 1;
    free(b->block);
    b->block = NULL;
    b->used = 0;
}

int sx_lane_spill_lost(const sx_lane_spill *s, size_t lane)
{
    return s->lanes[lane].lost;
}

void sx_lane_spill_put(sx_lane_spill *s, size_t lane, int64_t t, int begin, uint32_t region,
                       uint64_t event)
{
    lane_buf *b = &s->lanes[lane];
    if (b->lost)
        return;
    if (!b->block && !(b->block = malloc(s->block_size))) {
        lose(b);
        return;
    }
    /* zigzag time delta; region with the kind and whether an event follows */
    uint8_t rec[3 * 10], *p = rec;
    uint64_t delta = (uint64_t)t - (uint64_t)b->last_t;
    b->last_t = t;
    p = put_varint(p, (delta << 1) ^ (uint64_t)-(int64_t)(delta >> 63));
    p = put_varint(p, ((uint64_t)region << 2) | (event ? 2u : 0u) | (begin ? 1u : 0u));
    if (event)
        p = put_varint(p, event);
    for (const uint8_t *q = rec; q < p;) {
        size_t n = (size_t)(p - q) < s->block_size - b->used ? (size_t)(p - q)
                                                             : s->block_size - b->used;
        memcpy(b->block + b->used, q, n);
        b->used += n;
        q += n;
        if (b->used == s->block_size && write_block(s, b) != 0) {
            lose(b);
            return;
        }
    }
}

/* The bytes of one lane, block after block. */
typedef struct reader {
    sx_lane_spill *s;
    lane_buf *b;
    size_t next_block;           /* b->num_blocks: the block in memory */
    const uint8_t *at, *end;
} reader;

static int refill(reader *r)
{
    if (r->next_block < r->b->num_blocks) {
        size_t len = r->s->block_size;
        uint64_t off = r->b->offsets[r->next_block++];
        for (size_t done = 0; done < len;) {
            ssize_t n = pread(r->s->fd, r->s->read_buf + done, len - done, (off_t)(off + done));
            if (n <= 0)
                return -1;
            done += (size_t)n;
        }
        r->at = r->s->read_buf;
        r->end = r->s->read_buf + len;
        return 0;
    }
    if (r->next_block == r->b->num_blocks && r->b->used) {
        r->next_block++;
        r->at = r->b->block;
        r->end = r->b->block + r->b->used;
        return 0;
    }
    return -1;
}

/* 1: a varint read; 0: no more bytes (between records); -1: damaged. */
static int get_varint(reader *r, uint64_t *v, int first)
{
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->at == r->end && refill(r) != 0)
            return first && shift == 0 ? 0 : -1;
        uint8_t byte = *r->at++;
        *v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return 1;
    }
    return -1;
}

int sx_lane_spill_replay(sx_lane_spill *s, size_t lane, sx_lane_event_fn fn, void *ctx)
{
    lane_buf *b = &s->lanes[lane];
    reader r = {s, b, 0, NULL, NULL};
    int64_t t = 0;
    for (;;) {
        uint64_t zz, head, event = 0;
        int got = get_varint(&r, &zz, 1);
        if (got == 0)
            return 0;
        if (got < 0 || get_varint(&r, &head, 0) != 1 ||
            ((head & 2) && get_varint(&r, &event, 0) != 1))
            return -1;
        t = (int64_t)((uint64_t)t + ((zz >> 1) ^ (uint64_t)-(int64_t)(zz & 1)));
        if (fn(ctx, t, (int)(head & 1), (uint32_t)(head >> 2), event) != 0)
            return -1;
    }
}
