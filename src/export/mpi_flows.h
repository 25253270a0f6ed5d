/* mpi_flows.h - point-to-point messages as pairs of events (send end,
 * receive end), for the message lines of the Chrome/Perfetto export.
 *
 * A send end is an event with events/mpi_peer, mpi_tag and mpi_comm set; a
 * receive end one with mpi_source, mpi_recv_tag and mpi_comm (wildcards
 * were resolved by the shim).  MPI does not let messages between two ranks
 * with one tag on one communicator overtake each other, so the k-th send
 * from a to b with tag t on communicator c is received by the k-th such
 * receive of b (in start order).  When the two counts of a key differ
 * (a receive whose end was not recorded: several wildcard receives
 * completed by one MPI_Waitall) no message of that key is paired, so a
 * drawn line is never a wrong one. */
#ifndef SCOPEPROF_MPI_FLOWS_H
#define SCOPEPROF_MPI_FLOWS_H

#include <stddef.h>
#include <stdint.h>

#include "scopeprof/export.h"
#include "scopeprof/profile.h"
#include "scopeprof/stream.h"

typedef struct sp_mpi_flow_end {
    uint64_t event;           /* index into the profile's event columns */
    uint64_t id;              /* message number, from 1 */
    int64_t bytes;            /* the send's mpi_sent_bytes (a receive end:
                                 its paired send's, for otf2's MPI_RECV);
                                 -1 unknown */
    int send;                 /* 1: the send end, 0: the receive end */
} sp_mpi_flow_end;

typedef struct sp_mpi_flows_file sp_mpi_flows_file;

typedef struct sp_mpi_flows {
    size_t num_ends;
    sp_mpi_flow_end *ends;    /* by event, then send before receive; NULL
                                 when they are in `file` */
    uint64_t messages;        /* pairs */
    uint64_t unpaired;        /* ends left out */
    sp_mpi_flows_file *file;  /* past the budget (mpi_flows_external.c):
                                 the ends in a temporary file in the order
                                 the writers look calls up, read in windows */
} sp_mpi_flows;

/* Pair the ends among events with kept[e] != 0 (kept may be NULL: all).
 * 0, or -1 when out of memory.  A profile without the MPI columns gives
 * no ends. */
int sp_mpi_flows_build(const sp_profile *p, const unsigned char *kept, sp_mpi_flows *out);
/* The same among the calls an export keeps: the selected ranks (ranks[],
 * num_ranks of them) after the selection's filters.  0, or -1 with err. */
int sp_mpi_flows_build_selected(const sp_profile *p, const sp_selection *sel,
                                const uint32_t *ranks, long num_ranks, sp_mpi_flows *out,
                                char *err, size_t errlen);
void sp_mpi_flows_free(sp_mpi_flows *flows);

/* One end of a message: its key (sender, receiver, tag, communicator),
 * its start (the order within the key), its event, and a send's sent
 * bytes (-1 unknown; the pairing hands them to the receive's flow end). */
typedef struct sp_mpi_end {
    int64_t src, dst, tag, comm, start;
    uint64_t event;
    int64_t bytes;
} sp_mpi_end;
/* The pairing itself, for both paths: sends and receives (malloc'ed:
 * sorted in place by key, start, event, then freed, whatever the result)
 * into *out.  0, or -1 when out of memory. */
int sp_mpi_flows_pair(sp_mpi_end *sends, size_t ns, sp_mpi_end *recvs, size_t nr,
                      sp_mpi_flows *out);

/* Sort in place (no scratch copy, unlike glibc's qsort): elements of at
 * most 64 bytes whose keys are all distinct. */
void sp_sort_in_place(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* ---- The same flows from a run source (mpi_flows_stream.c) ----------------
 * The exporter's first pass marks each call it keeps (one bit per event of
 * the rank file it is in); when the pass moves to another file, and at the
 * pairing, the marked file's rows of the selected ranks are read in
 * windows and each kept event that is a message end becomes a 56-byte
 * record (key, start, event, sent bytes) in one of two external sorts (ext_sort.h,
 * sends and receives, in the budget sp_flows_budget).  Under the budget
 * they are paired in memory by sp_mpi_flows_pair; past it by merging
 * the sorted runs (mpi_flows_external.c): the same ids, the flow ends in a
 * temporary file read one rank file's slice at a time.  Events are
 * numbered as sp_load_run numbers them (an order-preserving index: the
 * in-memory tie break), so the ids are the in-memory path's. */
struct sp_ext_sort;
typedef struct sp_mpi_flows_stream {
    const sp_run_source *src;
    int on;                   /* the run has the five columns flows read */
    uint64_t *file_base;      /* per path: index of its first event */
    uint32_t *ranks;          /* the selected ranks, ascending */
    long num_ranks;
    size_t *by_base;          /* the files with events, by their base */
    size_t num_by_base;
    long file;                /* the file of the marks, -1 none */
    unsigned char *kept;      /* its kept events, one bit each */
    size_t kept_cap;          /* bytes */
    uint64_t lo, hi;          /* the marked positions in the file */
    int64_t *window;          /* the columns read, 6 x 16,384 values */
    struct sp_ext_sort *sends, *recvs;
    size_t budget;
    int failed;               /* a read or the memory failed: why says */
    char *why;
    size_t whylen;
} sp_mpi_flows_stream;

/* Per file of the run: the index sp_load_run gives its first event (an
 * order-preserving numbering of the run's events: file base + the event's
 * position in its file).  malloc'ed, NULL when out of memory. */
uint64_t *sp_run_source_event_bases(const sp_run_source *src);
/* Ready to collect the ends of the rows of `ranks` (ascending); why
 * (whylen bytes) must outlive s: a later failure is worded there.  0, or
 * -1 out of memory.  A run without the columns gives on = 0 and no ends. */
int sp_mpi_flows_stream_open(sp_mpi_flows_stream *s, const sp_run_source *src,
                             const uint32_t *ranks, long num_ranks, char *why, size_t whylen);
/* The event of a call: skeleton row, position in the row. */
uint64_t sp_mpi_flows_stream_event(const sp_mpi_flows_stream *s, size_t row,
                                   uint64_t call_index);
/* The call at `event` is kept by the export (called once per kept call). */
void sp_mpi_flows_stream_keep(sp_mpi_flows_stream *s, uint64_t event);
/* For an export whose own pass meets every kept call with its MPI columns
 * (otf2): one end straight into the sorts, no marks.  A failure is kept
 * for sp_mpi_flows_stream_pair to word; nothing when the run has no flows. */
void sp_mpi_flows_stream_push(sp_mpi_flows_stream *s, const sp_mpi_end *end, int send);
/* Pair the kept ends into *out (the candidates are released).  0, or 1
 * with why set (a column does not read, out of memory, or the temporary
 * file failed): nothing is written yet, the in-memory path may still do. */
int sp_mpi_flows_stream_pair(sp_mpi_flows_stream *s, sp_mpi_flows *out);
void sp_mpi_flows_stream_close(sp_mpi_flows_stream *s);
/* The ends at event e (in memory only): *count of them (0, 1 or 2)
 * starting at the result. */
const sp_mpi_flow_end *sp_mpi_flows_at(const sp_mpi_flows *flows, uint64_t e, size_t *count);
/* The ends of a call the stream hands over: rank, its start (call->start)
 * and its event.  From memory as sp_mpi_flows_at; from a file, lookups in
 * the stream's order (rank by rank, start ascending: every kept call of
 * chrome's writing pass and of perfetto's, otf2's receives, at the
 * enter) read the file forward in windows; one that goes back seeks (a
 * galloping search).  Valid until the next call. */
const sp_mpi_flow_end *sp_mpi_flows_at_call(const sp_mpi_flows *flows, uint32_t rank,
                                            int64_t start, uint64_t e, size_t *count);

/* ---- Past the budget (mpi_flows_external.c) ------------------------------
 * Pair sends and recvs (external sorts by key, start, event: by_key),
 * finished here and freed by the caller, as sp_mpi_flows_pair does: a first
 * merge counts each key's ends and keeps the keys whose counts differ, a
 * second numbers the others' pairs; the flow ends go through a third
 * external sort (3/4 of the budget: the two merges read in the rest) in the
 * order the writers look calls up: rank, the call's start on the stream's
 * axis (its file's start minus the rank's clock offset, `offsets`), event;
 * into a temporary file read in windows (an eighth of the budget, 4 to
 * 4,096 ends of 40 bytes), unless they fit in it (then by event in memory,
 * as sp_mpi_flows_pair).  0, or -1 (out of memory, a temporary file
 * failed). */
typedef struct sp_mpi_rank_offsets {
    const uint32_t *ranks;    /* ascending */
    const int64_t *offsets;   /* sp_rank_clock_offset of each */
    size_t num;
} sp_mpi_rank_offsets;
int sp_mpi_flows_pair_external(struct sp_ext_sort *sends, struct sp_ext_sort *recvs,
                               size_t budget, const sp_mpi_rank_offsets *offsets,
                               sp_mpi_flows *out);
const sp_mpi_flow_end *sp_mpi_flows_file_at(sp_mpi_flows_file *file, uint32_t rank,
                                            int64_t start, uint64_t e, size_t *count);
/* Lookups that sought back (or far ahead) rather than read on; the window's
 * size in ends (for the trace and the tests). */
uint64_t sp_mpi_flows_file_seeks(const sp_mpi_flows_file *file);
size_t sp_mpi_flows_file_window(const sp_mpi_flows_file *file);
void sp_mpi_flows_file_free(sp_mpi_flows_file *file);
/* The order sp_mpi_flows_pair pairs in (key, start, event). */
int sp_mpi_end_by_key(const void *a, const void *b);

#endif
