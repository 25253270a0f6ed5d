/* fuzz_spill_read.c - libFuzzer target: the spill-file reader and the
 * conversion of spilled events into a profile (what the writer does at
 * finalize and `scopeprof recover` after a kill).
 *
 * Frames carry checksums, which random mutations almost never get right:
 * unless the first input byte is odd, the target first rewrites the
 * checksums of the header and of every frame it can delimit, so the
 * fuzzer reaches the code behind them.  Odd first bytes keep the input as
 * it is (checksum failures are paths too). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/capture.h"
#include "fuzz_input.h"
#include "model/spill_format.h"

static void fix_checksums(uint8_t *buf, size_t size)
{
    if (size < sizeof(sp_spill_header))
        return;
    sp_spill_header h;
    memcpy(&h, buf, sizeof h);
    h.checksum = sp_spill_hash(SP_SPILL_HASH_INIT, &h, offsetof(sp_spill_header, checksum));
    memcpy(buf, &h, sizeof h);
    for (size_t at = sizeof h; at + sizeof(sp_spill_frame) <= size;) {
        sp_spill_frame f;
        memcpy(&f, buf + at, sizeof f);
        size_t end = at + sizeof f + f.length;
        if (f.length > SP_SPILL_MAX_PAYLOAD || end > size)
            return;
        f.checksum = 0;
        uint64_t sum = sp_spill_hash(SP_SPILL_HASH_INIT, &f, sizeof f);
        f.checksum = sp_spill_hash(sum, buf + at + sizeof f, f.length);
        memcpy(buf + at, &f, sizeof f);
        at = end;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int keep = data[0] & 1;
    uint8_t *buf = malloc(size - 1 + 1);
    if (!buf)
        return 0;
    memcpy(buf, data + 1, size - 1);
    if (!keep)
        fix_checksums(buf, size - 1);
    char path[64], err[1024] = "", warning[1024] = "";
    int rc = fuzz_input_file(buf, size - 1, path, sizeof path);
    free(buf);
    if (rc != 0)
        return 0;

    /* every frame, as the readers walk them */
    sp_spill_reader *r = sp_spill_open(path, err, sizeof err);
    if (r) {
        sp_spill_frame frame;
        const void *payload;
        while (sp_spill_next(r, &frame, &payload, err, sizeof err) == 1)
            ;
        sp_spill_torn_bytes(r);
        sp_spill_close(r);
    }

    /* and into a profile, with four regions known to the "shim" */
    const sp_capture_region regions[4] = {
        {.name = "a", .source_line = -1}, {.name = "b", .source_line = -1},
        {.name = "c", .source_line = -1}, {.name = "d", .source_line = -1},
    };
    const char *files[1] = {path};
    sp_capture cap = {
        .abi = SP_CAPTURE_ABI,
        .path = "fuzz.h5",
        .track_threads = 1,
        .num_regions = 4,
        .regions = regions,
        .num_spill_files = 1,
        .spill_files = files,
    };
    sp_profile_free(sp_capture_to_profile(&cap, warning, sizeof warning, err, sizeof err));
    fuzz_input_done(path);
    return 0;
}
