/* dist.h - `scopeprof report|merge|export` spread over the processes of an
 * MPI launcher (mpirun -np N scopeprof ...): the MPI library, loaded at run
 * time (nothing is linked at build time), the split of the rank files into
 * blocks, and the distributed commands.  Outside a launcher none of this
 * touches an MPI library. */
#ifndef SCOPEPROF_DIST_H
#define SCOPEPROF_DIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scopeprof/export.h"
#include "scopeprof/profile.h"
#include "scopeprof/report.h"

/* ---- the launcher (dist_launch.c) ----------------------------------------- */

/* The process count a launcher announces in the environment
 * (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE...), 0 when the process was
 * not started by a launcher, -1 when started by one that does not say (a
 * PMIx rank without a size): only MPI can tell.  SCOPEPROF_DIST=0 gives 0. */
int sp_dist_launcher_size(void);
/* The rank the launcher announces, -1 when none does. */
int sp_dist_launcher_rank(void);
/* 1 when the launcher variables are Open MPI's (OMPI_*). */
int sp_dist_launcher_is_openmpi(void);

/* Called as a distributed session begins (sp_dist_session_begin), before
 * anything else: the command's messages are the session's from then on. */
extern void (*sp_dist_session_starting)(void);

/* ---- the MPI library (dist_mpi.c) ----------------------------------------- */

/* dlopen the MPI library (SCOPEPROF_MPI_LIBRARY, or Open MPI's libmpi.so.40,
 * MPICH's libmpich.so.12 / libmpi.so.12, the launcher's family first),
 * tell the ABI family from its symbols, MPI_Init.  0, or -1 with one line
 * in err. */
int sp_dist_mpi_start(char *err, size_t errlen);
/* MPI_Finalize (when started). */
void sp_dist_mpi_finish(void);
int sp_dist_mpi_rank(void);
int sp_dist_mpi_size(void);
/* "Open MPI" or "MPICH". */
const char *sp_dist_mpi_family(void);
/* Collectives on MPI_COMM_WORLD, 0 or -1 (MPI's default error handler
 * aborts the job first in practice). */
int sp_dist_barrier(void);
int sp_dist_bcast(void *buf, size_t len, int root);
/* Each process's `len` bytes at `buf`, to process 0: there *parts is a
 * malloc'd array of size() buffers (each malloc'd, at least one byte) and
 * *lens their lengths; NULL elsewhere.  Any length (sent in rounds below
 * MPI's int counts). */
int sp_dist_gather(const void *buf, size_t len, uint8_t ***parts, size_t **lens);
void sp_dist_gather_free(uint8_t **parts, size_t *lens);
/* One buffer from this process to `dest` / from `source` (its length
 * first, then the bytes in pieces); *buf malloc'd. */
int sp_dist_send(const void *buf, size_t len, int dest);
int sp_dist_recv(uint8_t **buf, size_t *len, int source);
/* The same, sleeping between probes until the buffer starts to arrive
 * (for a process that may wait long: see sp_dist_wait). */
int sp_dist_recv_waiting(uint8_t **buf, size_t *len, int source);
/* A token to `dest`, and waiting for one from `source` without spinning
 * (probes 2 ms apart): for the processes that wait while process 0 works
 * alone. */
int sp_dist_signal(int dest);
int sp_dist_wait(int source);
/* Process 0's `len` bytes to every process, the others waiting for them
 * asleep (a token first): both MPIs spin in a collective, and the others
 * reach it while process 0 still works (its share, the run's checks, its
 * decision), on cores it may share.  0 or -1. */
int sp_dist_bcast_asleep(void *buf, size_t len);
/* 1 when a token from `source` is waiting (not taken), 0 when none, -1. */
int sp_dist_poll(int source);
/* A "go" to `dest`, on a tag of its own; and 1 when one from `source` was
 * waiting (taken), 0 when none, -1. */
int sp_dist_go(int dest);
int sp_dist_go_taken(int source);
/* MPI_Abort(MPI_COMM_WORLD, code): a process that cannot go on. */
void sp_dist_abort(int code);

/* ---- a distributed command (dist_session.c) ------------------------------- */

typedef struct sp_dist_session {
    int rank, size; /* this process, the process count (1: serial) */
    int mpi;        /* MPI started: sp_dist_session_end finalizes it */
} sp_dist_session;

enum sp_dist_mode {
    SP_DIST_SERIAL,   /* no launcher, one process, or MPI missing on process 0 */
    SP_DIST_PARALLEL, /* size > 1 processes share the work */
    SP_DIST_STANDBY,  /* MPI missing, not process 0: exit 0 quietly */
};
/* What `cmd` does in this process; prints the one line saying MPI could not
 * be loaded (on process 0 only) when the launcher's processes must fall
 * back to process 0 alone. */
enum sp_dist_mode sp_dist_session_begin(sp_dist_session *s, const char *cmd);
void sp_dist_session_end(sp_dist_session *s);

/* ---- the split (dist_partition.c) ----------------------------------------- */

/* Contiguous blocks in rank order: the first `count % size` processes get
 * one file more.  Sets *first and returns the number of files of `rank`. */
size_t sp_dist_block(size_t count, int rank, int size, size_t *first);

/* ---- a block of the run (dist_run.c) ------------------------------------- */

enum { SP_DIST_RUN_OK, SP_DIST_RUN_SERIAL, SP_DIST_RUN_FAILED };
/* Load this process's block of files (expanded) as the serial load of the
 * whole run would hold those ranks: the run's region table and numbering,
 * the lowest rank's metadata, the run's rank count and time origin.
 * SP_DIST_RUN_OK (*out NULL for an empty block), SP_DIST_RUN_SERIAL (the
 * blocks' ranks are not in order: process 0 should run the command
 * serially, the others return), or SP_DIST_RUN_FAILED with the first
 * failure in file order in err on every process.  Collective. */
int sp_dist_load_run(const sp_dist_session *s, char **files, size_t count, sp_profile **out,
                     char *err, size_t errlen);
struct sp_wire;
/* The run's region table and metadata as process 0 sent them (a count, the
 * names, the metadata), taken by a block's profile p: its rows renumbered
 * to the run's region ids, its names and metadata replaced (the trees it
 * sends then carry the run's ids).  p NULL (an empty block): read and
 * dropped.  0, or -1 (out of memory, a damaged message, or a region of the
 * block missing from the run's table). */
int sp_dist_adopt_region_table(struct sp_wire *a, sp_profile *p);

/* ---- the commands (dist_merge.c, dist_export.c, dist_report.c) ------------ */

/* `report`: the transport of sp_report_remote over MPI.  A selected rank
 * is streamed by the process whose block holds its file.  A process holds
 * its ranks' trees (up to 64 MiB, then it waits asleep) until process 0,
 * reaching its block, sends it a "go" (sp_dist_go), then sends each as
 * soon as it has it (MPI keeps the order between two processes); process
 * 0 receives them in rank order.  At the end (sp_dist_report_finish) every other process sends an empty
 * message, and process 0 sends each a token meaning "no more", then takes
 * what is still on its way up to that empty message: after a fall back to
 * the in-memory path, nothing is left waiting.  A process that sees the
 * token before a send stops streaming. */
typedef struct sp_dist_held sp_dist_held;
typedef struct sp_dist_report {
    sp_report_remote remote;
    int stopped;              /* a process other than 0 got the 0 */
    size_t sent;              /* trees this process gave process 0 */
    unsigned char *ended;     /* process 0: the end mark came from process k */
    unsigned char *asked;     /* process 0: "go" sent to process k */
    int go;                   /* others: process 0 takes the trees now */
    struct sp_dist_held {
        uint8_t *buf;
        size_t len;
    } *held;                  /* others: trees made before the go */
    size_t num_held, held_cap, held_bytes;
    /* sp_dist_report_open: the source, the run's file count (expanded),
     * and whether this process opened every file (else only its block) */
    const struct sp_run_source *src;
    size_t num_files;
    int whole_run;
    size_t cursor;            /* row where the last rank's file was found */
} sp_dist_report;
void sp_dist_report_init(sp_dist_report *r, const sp_dist_session *s);
/* The run source of this process's report (dist_report_source.c):
 * process 0 opens every file (it prints from every file's rows); another
 * process opens only the files of its block (sp_dist_block over the
 * expanded files) and takes the run's region table, metadata, rank count
 * and lane columns from process 0, so its trees are the ones it would
 * build on the whole run; a rank is streamed by the process whose block
 * holds its file.  With --from/--to (`window`: they count from the run's
 * first event) every process opens every file.  0 opened; -1 nothing to
 * stream on this process (process 0: the open's message in err; another:
 * an empty block, or process 0 could not open the run).  Collective. */
struct sp_run_source;
int sp_dist_report_open(sp_dist_report *r, const sp_dist_session *s, const char *const *args,
                        size_t count, int window, unsigned deferred, struct sp_run_source *src,
                        char *err, size_t errlen);
/* Process 0: tell every other process it wants no more and take what they
 * still send.  Others: say they are done, then wait for that word.  Called
 * once by every process, whatever path the report took.  0 or -1. */
int sp_dist_report_finish(sp_dist_report *r);

/* `merge`: files (expanded) split over the processes; each merges its block
 * into a hidden part next to output, process 0 merges the parts in order,
 * and the parts are removed, also on failure.  On process 0: 0, or -1 with
 * the message (the serial merge's) in err; the other processes return 0
 * (or -1 when MPI itself failed) and print nothing. */
int sp_dist_merge(const sp_dist_session *s, char **files, size_t count, const char *output,
                  char *err, size_t errlen);

/* `export folded|csv` of the block `p` (from sp_dist_load_run; NULL
 * for an empty block) with options `o`: process 0 writes the whole export
 * into `out` (NULL: discarded, when its output could not be created; it
 * still takes part), the others send it their parts.  0, or -1 with the
 * message in err (on process 0: the first failure in rank order; the
 * serial "no calls" message).  Collective. */
enum { SP_DIST_FOLDED = 1, SP_DIST_CSV };
int sp_dist_export(const sp_dist_session *s, int format, const sp_profile *p,
                   const sp_export_options *o, FILE *out, char *err, size_t errlen);

/* `export folded|csv` on the stream (dist_export_stream.c): every process
 * opens the whole run (the files' indexes: region ids, metadata and origin
 * are the run's) and streams a contiguous share of the selected ranks, in
 * rank order; process 0 writes its share into the output, the others into
 * a part file it then receives in pieces.  Memory is bounded on every
 * process, as in the serial streamed export.
 * Process 0 opens the output (`open`, with `discard` to give it up) only
 * once every process streamed its checks: *replaceable set by discard
 * when nothing must be kept (a file it created, not standard output).
 * Returns, the same on every process: 0 written (process 0: the output is
 * complete but not closed), 1 where the serial streamed export would go
 * to the in-memory path (why: the first reason in process order; the
 * output, if opened, discarded): the in-memory parts (sp_dist_load_run,
 * sp_dist_export) then do it; -1 failed after bytes were out (why).
 * trace: each process prints one line saying whether its part streamed.
 * Collective. */
typedef struct sp_dist_output {
    FILE *(*open)(void *ctx, char *why, size_t whylen);
    /* 0 when the opened output was given up (closed, removed if created),
     * -1 when bytes are out that cannot be taken back (standard output) */
    int (*discard)(void *ctx);
    void *ctx;
} sp_dist_output;
int sp_dist_export_stream(const sp_dist_session *s, int format, const char *const *files,
                          size_t count, const sp_export_options *o,
                          const sp_dist_output *output, int trace, char *why, size_t whylen);

/* ---- a part in a temporary file (dist_part_file.c) ------------------------ */

typedef struct sp_dist_part {
    FILE *file;      /* $TMPDIR, already unlinked */
    char *buffer;
    uint64_t bytes;  /* after sp_dist_part_finish */
} sp_dist_part;
/* 0, or -1 (no temporary file: the caller says why). */
int sp_dist_part_open(sp_dist_part *part);
/* Flush; the size in part->bytes.  0, -1 (a write failed). */
int sp_dist_part_finish(sp_dist_part *part);
/* The part's bytes to `dest` in pieces (dest receives exactly part->bytes,
 * or a piece saying why not).  0, -1. */
int sp_dist_part_send(sp_dist_part *part, int dest);
/* Process 0: `bytes` of source's part into out (NULL: dropped).  0, or -1
 * (why). */
int sp_dist_part_receive(FILE *out, uint64_t bytes, int source, char *why, size_t whylen);
void sp_dist_part_close(sp_dist_part *part);

#endif
