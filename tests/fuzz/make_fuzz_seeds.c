/* make_fuzz_seeds.c - small valid inputs to start the fuzzers from:
 *   make_fuzz_seeds H5_DIR SPILL_DIR
 * writes a few profiles (one thread, two threads with a task, an empty
 * one) through the same path as the shim's writer, and a spill file with
 * header, metadata, process, region, thread and events frames.  Tiny on
 * purpose: the fuzzer mutates small inputs faster. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/capture.h"
#include "scopeprof/h5.h"
#include "model/spill_format.h"

static const sp_event nested[] = {
    {.start = 1000, .end = 1100, .region = 1, .task = -1},
    {.start = 1200, .end = 1300, .region = 1, .task = -1},
    {.start = 900, .end = 2000, .region = 0, .task = -1},
    {.start = 2100, .end = 2500, .region = 2, .task = -1},
};

static int write_profile(const char *dir, const char *name, size_t num_chunks,
                         const sp_capture_chunk *chunks, size_t num_threads)
{
    const sp_capture_region regions[3] = {
        {.name = "outer", .source_file = "app.c", .source_line = 10},
        {.name = "inner", .source_line = -1},
        {.name = "io", .source_line = -1},
    };
    const sp_thread_row threads[2] = {
        {.index = 0, .name = "MainThread", .start_ns = 0, .end_ns = -1, .cpu_ns = 5000},
        {.index = 1, .name = "worker", .start_ns = 100, .end_ns = 3000, .cpu_ns = 2000},
    };
    const sp_meta meta[2] = {
        {.key = "mpi_rank", .type = SP_META_INT, .i = 0},
        {.key = "label", .type = SP_META_STRING, .s = "seed"},
    };
    char path[4096], warning[512] = "", err[512] = "";
    snprintf(path, sizeof path, "%s/%s", dir, name);
    sp_capture cap = {
        .abi = SP_CAPTURE_ABI, .path = path, .track_threads = 1, .start_time_ns = 500,
        .num_regions = 3, .regions = regions, .num_chunks = num_chunks, .chunks = chunks,
        .num_threads = num_threads, .threads = threads, .num_meta = 2, .meta = meta,
    };
    sp_profile *p = sp_capture_to_profile(&cap, warning, sizeof warning, err, sizeof err);
    if (!p || sp_h5_write(path, p, err, sizeof err) != 0) {
        fprintf(stderr, "make_fuzz_seeds: %s: %s\n", path, err);
        sp_profile_free(p);
        return -1;
    }
    sp_profile_free(p);
    return 0;
}

/* One frame: header with checksum, then the payload. */
static void put_frame(FILE *f, uint16_t type, uint32_t count, int64_t thread,
                      const void *payload, uint32_t length)
{
    sp_spill_frame fr = {.sync = SP_SPILL_FRAME_SYNC, .type = type, .length = length,
                         .count = count, .thread = thread};
    uint64_t sum = sp_spill_hash(SP_SPILL_HASH_INIT, &fr, sizeof fr);
    fr.checksum = sp_spill_hash(sum, payload, length);
    fwrite(&fr, sizeof fr, 1, f);
    fwrite(payload, 1, length, f);
}

static int write_spill(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/seed.spill", dir);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return -1;
    }
    sp_spill_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SP_SPILL_MAGIC, sizeof h.magic);
    h.version = SP_SPILL_VERSION;
    h.header_size = sizeof h;
    h.event_size = sizeof(sp_event);
    h.byte_order = SP_SPILL_BYTE_ORDER;
    h.pid = 42;
    h.start_time_ns = 500;
    h.checksum = sp_spill_hash(SP_SPILL_HASH_INIT, &h, offsetof(sp_spill_header, checksum));
    fwrite(&h, sizeof h, 1, f);

    static const char meta[] = "label\0seed\0host\0fuzz\0";
    put_frame(f, SP_SPILL_FRAME_META, 0, 0, meta, sizeof meta - 1);
    sp_spill_process proc = {.rank = 0, .size = 1};
    put_frame(f, SP_SPILL_FRAME_PROCESS, 0, 0, &proc, sizeof proc);
    const char *names[3] = {"outer", "inner", "io"};
    for (uint32_t id = 0; id < 3; id++) {
        unsigned char buf[64];
        sp_spill_region r = {.id = id, .name_len = (uint32_t)strlen(names[id]),
                             .source_line = -1};
        memcpy(buf, &r, sizeof r);
        memcpy(buf + sizeof r, names[id], r.name_len);
        put_frame(f, SP_SPILL_FRAME_REGION, 0, 0, buf, (uint32_t)sizeof r + r.name_len);
    }
    unsigned char tbuf[64];
    sp_spill_thread t = {.index = 0, .name_len = 10};
    memcpy(tbuf, &t, sizeof t);
    memcpy(tbuf + sizeof t, "MainThread", 10);
    put_frame(f, SP_SPILL_FRAME_THREAD, 0, 0, tbuf, (uint32_t)sizeof t + 10);
    put_frame(f, SP_SPILL_FRAME_EVENTS, 4, 0, nested, sizeof nested);
    int rc = ferror(f) ? -1 : 0;
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: make_fuzz_seeds H5_DIR SPILL_DIR\n");
        return 2;
    }
    const sp_capture_chunk one[1] = {{nested, NULL, 4, 0}};
    static const sp_event other[] = {{.start = 1500, .end = 1800, .region = 2, .task = -1}};
    const sp_capture_chunk two[2] = {{nested, NULL, 4, 0}, {other, NULL, 1, 1}};
    int rc = 0;
    rc |= write_profile(argv[1], "one_thread.h5", 1, one, 1);
    rc |= write_profile(argv[1], "two_threads.h5", 2, two, 2);
    rc |= write_profile(argv[1], "empty.h5", 0, NULL, 1);
    rc |= write_spill(argv[2]);
    return rc ? 1 : 0;
}
