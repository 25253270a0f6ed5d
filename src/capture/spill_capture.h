/* spill_capture.h - a capture read back from spill files: what the writer
 * process (scopeprof-writer) and `scopeprof recover` write a profile of.
 * A file the shim handed over at finalize ends with a CAPTURE frame and
 * holds everything the profile needs (spill_format.h); the spill file of a
 * killed process holds the regions, threads and events spilled so far,
 * and gets placeholder names and a basic metadata set. */
#ifndef SCOPEPROF_SPILL_CAPTURE_H
#define SCOPEPROF_SPILL_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "model/capture.h"

typedef struct sp_spill_capture {
    sp_capture capture;      /* spill_files = the files read; no chunks */
    int complete;            /* a CAPTURE frame was read */
    int summary_only;        /* the shim counted the calls in memory only */
    const char *why;         /* "exit", "sp_finalize"... ("" unless complete) */
    const uint64_t *open_calls; /* per region: still open at finalize */
    uint64_t events;         /* events in the files */
    uint64_t torn_bytes;     /* after the last good frame, summed over files */
    int64_t last_end;        /* latest end of an event (or start_time_ns) */
    int pid;
    int32_t size;            /* MPI size */
    /* Metadata has room for SP_SPILL_CAPTURE_META_SPARE more entries. */
    size_t meta_cap;
    struct sp_spill_capture_owned *owned;
} sp_spill_capture;

#define SP_SPILL_CAPTURE_META_SPARE 8

/* Read every good frame of files[0..n) (one process: a spill file and
 * perhaps the handover written beside it).  0, or -1 with a one-line
 * reason naming the file in err. */
int sp_spill_capture_load(const char *const *files, size_t n, sp_spill_capture *out,
                          char *err, size_t errlen);
/* Add a metadata entry (strings are not copied) within meta_cap. */
void sp_spill_capture_meta_str(sp_spill_capture *c, const char *key, const char *value);
void sp_spill_capture_meta_int(sp_spill_capture *c, const char *key, int64_t value);
void sp_spill_capture_free(sp_spill_capture *c);

#endif
