/* spill_format.h - the spill file: where the shim moves recorded events when
 * the memory cap (SCOPE_PROFILER_MAX_MEMORY) is reached or every
 * SCOPE_PROFILER_FLUSH_INTERVAL seconds.  The writer module reads it back at
 * finalize; `scopeprof recover` turns the spill file of a killed run into a
 * profile.  Layout (native byte order: the file is read on the machine, or
 * at least the architecture, that wrote it; byte_order says which):
 *
 *   sp_spill_header
 *   frame*        each: sp_spill_frame + `length` payload bytes
 *
 * The file is append-only.  Every frame carries a checksum over its header
 * and payload, so a frame torn by a kill or a full disk is detected; the
 * reader stops at the first frame that does not check out (a torn tail).
 * Regions and threads get their own frames before the first events frame
 * that refers to them, so any good prefix of the file is self-contained. */
#ifndef SCOPEPROF_SPILL_FORMAT_H
#define SCOPEPROF_SPILL_FORMAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SP_SPILL_MAGIC "SPSPILL\n"
/* 2 added the handover frames (6-10); version 1 files are still read. */
#define SP_SPILL_VERSION 2
#define SP_SPILL_BYTE_ORDER 0x01020304u
#define SP_SPILL_FRAME_SYNC 0x52465053u /* "SPFR" little-endian */
/* A frame is at most one chunk of events plus its await column; anything
 * larger is damage, not data. */
#define SP_SPILL_MAX_PAYLOAD (16u << 20)

typedef struct sp_spill_header {
    char magic[8];             /* SP_SPILL_MAGIC */
    uint32_t version;          /* SP_SPILL_VERSION */
    uint32_t header_size;      /* sizeof(sp_spill_header) */
    uint32_t event_size;       /* sizeof(sp_event) */
    uint32_t byte_order;       /* SP_SPILL_BYTE_ORDER */
    int32_t pid;
    int32_t rank;              /* best known when the file was created */
    int64_t start_time_ns;     /* run origin, CLOCK_MONOTONIC ns */
    int64_t start_realtime_ns;
    uint64_t checksum;         /* sp_spill_hash of the fields above */
} sp_spill_header;

enum sp_spill_frame_type {
    SP_SPILL_FRAME_META = 1,    /* "key\0value\0" pairs (strings) */
    SP_SPILL_FRAME_PROCESS = 2, /* sp_spill_process: rank and size, when they change */
    SP_SPILL_FRAME_REGION = 3,  /* sp_spill_region + name + source file */
    SP_SPILL_FRAME_THREAD = 4,  /* sp_spill_thread + name */
    SP_SPILL_FRAME_EVENTS = 5,  /* count sp_event, then count int64 await_ns if flagged */
    /* The handover (written at finalize, after every events frame, for the
     * writer process; see docs/robustness.md "The writer process"): what a
     * profile holds beyond the events.  A file that ends with a CAPTURE
     * frame is complete: the writer and `scopeprof recover` make the same
     * profile of it. */
    SP_SPILL_FRAME_REGION_FINAL = 6, /* sp_spill_region_final + frames + strings */
    SP_SPILL_FRAME_THREAD_END = 7,   /* sp_spill_thread_end */
    SP_SPILL_FRAME_TASK = 8,         /* sp_spill_task + kind + name + coro_name */
    SP_SPILL_FRAME_META_TYPED = 9,   /* sp_spill_meta + key\0 + values (each \0-ended) */
    SP_SPILL_FRAME_CAPTURE = 10,     /* sp_spill_capture_frame + output path + why */
    SP_SPILL_FRAME_MPI = 11,         /* count sp_capture_mpi: side data of MPI calls */
    SP_SPILL_FRAME_FORKS = 12,       /* count sp_fork_edge (model/capture.h, docs/tasks.md) */
};

#define SP_SPILL_FLAG_AWAIT 1u

typedef struct sp_spill_frame {
    uint32_t sync;             /* SP_SPILL_FRAME_SYNC */
    uint16_t type;             /* enum sp_spill_frame_type */
    uint16_t flags;            /* SP_SPILL_FLAG_* */
    uint32_t length;           /* payload bytes */
    uint32_t count;            /* EVENTS: number of events */
    int64_t thread;            /* EVENTS, THREAD: dense thread index */
    uint64_t checksum;         /* sp_spill_hash of this header (checksum 0) and payload */
} sp_spill_frame;

typedef struct sp_spill_process {
    int32_t rank;
    int32_t size;
} sp_spill_process;

typedef struct sp_spill_region {
    uint32_t id;
    uint32_t name_len;         /* bytes of name following, no NUL */
    uint32_t file_len;         /* bytes of source file after the name; 0: unknown */
    uint32_t reserved;
    int64_t source_line;       /* -1: unknown */
    uint64_t callsite;
} sp_spill_region;

typedef struct sp_spill_thread {
    int64_t index;
    int64_t ident;
    int64_t native_id;
    int64_t start_ns;          /* relative to start_time_ns */
    int32_t daemon;
    uint32_t name_len;         /* bytes of name following, no NUL */
} sp_spill_thread;

/* Per region, at finalize: counts not kept as events, calls still open,
 * and the frames of the registering call located in their modules
 * (num_frames sp_spill_callframe follow, then each frame's module path
 * and module name bytes). */
typedef struct sp_spill_region_final {
    uint32_t id;
    uint32_t num_frames;
    uint64_t dropped_calls;    /* counted, not kept as events */
    int64_t dropped_total_ns;
    uint64_t open_calls;       /* still open at finalize: dropped */
} sp_spill_region_final;

typedef struct sp_spill_callframe {
    uint64_t address;          /* file address in the module (raw if path_len 0) */
    uint32_t path_len;         /* module file to read; 0: not located */
    uint32_t name_len;         /* module name for display */
} sp_spill_callframe;

typedef struct sp_spill_thread_end {
    int64_t index;
    int64_t end_ns;            /* relative to start_time_ns; -1: still alive */
    int64_t cpu_ns;            /* -1: unknown */
    int64_t omp_thread_num;    /* OpenMP worker's thread number, -1 none */
    char kind[16];             /* main, pthread, openmp, mpi, other ("" unknown) */
} sp_spill_thread_end;

typedef struct sp_spill_task {
    int64_t index, thread_index, created_ns, done_ns, steps, running_ns, suspended_ns;
    uint32_t kind_len, name_len, coro_len, reserved;
} sp_spill_task;

typedef struct sp_spill_meta {
    uint32_t type;             /* sp_meta_type */
    uint32_t num_values;       /* STRING: 1, STRINGS: list length, else 0 */
    int64_t i;
    double f;
} sp_spill_meta;

typedef struct sp_spill_capture_frame {
    int32_t rank;
    int32_t verbose;
    int32_t track_threads;
    int32_t summary_only;      /* the events in memory did not fit: counted only */
    int64_t start_time_ns;
    uint64_t max_memory;
    uint32_t num_regions;
    uint32_t path_len;         /* output path bytes following */
    uint32_t why_len;          /* then "exit", "sp_finalize"... */
    uint32_t reserved;
} sp_spill_capture_frame;

/* FNV-1a over 64-bit words (then the tail bytes): about one multiply per 8
 * bytes, so checksumming a spilled chunk costs little next to the write.
 * Every step is a bijection of the state, so a single changed word always
 * changes the result. */
#define SP_SPILL_HASH_INIT 0xcbf29ce484222325ull
static inline uint64_t sp_spill_hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = (const unsigned char *)data;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; len; p++, len--)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

/* ---- reading (spill_read.c) ------------------------------------------------ */

typedef struct sp_spill_reader sp_spill_reader;

/* Open a spill file and check its header.  NULL with a one-line reason
 * naming the file in err. */
sp_spill_reader *sp_spill_open(const char *path, char *err, size_t errlen);
const sp_spill_header *sp_spill_file_header(const sp_spill_reader *reader);
/* The next good frame: 1 with *frame and *payload set (the payload stays
 * valid until the next call); 0 at the end of the good frames (clean end or
 * torn tail, see sp_spill_torn_bytes); -1 on a read error (err set). */
int sp_spill_next(sp_spill_reader *reader, sp_spill_frame *frame, const void **payload,
                  char *err, size_t errlen);
/* Once sp_spill_next returned 0: bytes after the last good frame (0 when
 * the file ended cleanly). */
uint64_t sp_spill_torn_bytes(const sp_spill_reader *reader);
/* End of the last good frame returned by sp_spill_next (so the payload of
 * that frame starts at sp_spill_offset - frame.length). */
uint64_t sp_spill_offset(const sp_spill_reader *reader);
/* Read len bytes at a file offset (a payload found before), without moving
 * the frame cursor.  0, or -1 with a one-line reason in err. */
int sp_spill_read_at(sp_spill_reader *reader, uint64_t offset, void *buf, size_t len,
                     char *err, size_t errlen);
/* Start again at the first frame. */
int sp_spill_rewind(sp_spill_reader *reader);
void sp_spill_close(sp_spill_reader *reader);

#endif /* SCOPEPROF_SPILL_FORMAT_H */
