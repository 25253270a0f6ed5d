/* dist_mpi.c - the few MPI calls a distributed command needs, from an MPI
 * library loaded at run time.
 *
 * Handles are where the two ABI families differ: Open MPI's MPI_COMM_WORLD
 * and MPI_BYTE are the addresses of its symbols ompi_mpi_comm_world and
 * ompi_mpi_byte, MPICH's (and its derivatives') are integer constants from
 * its mpi.h.  Every call goes through one function per family below. */
#include <dlfcn.h>
#include <limits.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"

/* mpi.h of MPICH, Intel MPI, MVAPICH. */
#define MPICH_COMM_WORLD 0x44000000
#define MPICH_BYTE 0x4c00010d

enum family { FAMILY_NONE, FAMILY_OPENMPI, FAMILY_MPICH };

/* Open MPI: pointer handles. */
typedef int (*o_comm_int)(void *comm, int *out);
typedef int (*o_comm)(void *comm);
typedef int (*o_abort)(void *comm, int code);
typedef int (*o_bcast)(void *buf, int count, void *type, int root, void *comm);
typedef int (*o_gather)(const void *send, int scount, void *stype, void *recv, int rcount,
                        void *rtype, int root, void *comm);
typedef int (*o_gatherv)(const void *send, int scount, void *stype, void *recv,
                         const int *rcounts, const int *displs, void *rtype, int root,
                         void *comm);
/* MPICH: int handles. */
typedef int (*m_comm_int)(int comm, int *out);
typedef int (*m_comm)(int comm);
typedef int (*m_abort)(int comm, int code);
typedef int (*m_bcast)(void *buf, int count, int type, int root, int comm);
typedef int (*m_gather)(const void *send, int scount, int stype, void *recv, int rcount,
                        int rtype, int root, int comm);
typedef int (*m_gatherv)(const void *send, int scount, int stype, void *recv,
                         const int *rcounts, const int *displs, int rtype, int root, int comm);
typedef int (*o_send)(const void *buf, int count, void *type, int dest, int tag, void *comm);
typedef int (*o_recv)(void *buf, int count, void *type, int source, int tag, void *comm,
                      void *status);
typedef int (*m_send)(const void *buf, int count, int type, int dest, int tag, int comm);
typedef int (*m_recv)(void *buf, int count, int type, int source, int tag, int comm,
                      void *status);
typedef int (*o_iprobe)(int source, int tag, void *comm, int *flag, void *status);
typedef int (*m_iprobe)(int source, int tag, int comm, int *flag, void *status);
typedef int (*init_fn)(int *argc, char ***argv);
typedef int (*flag_fn)(int *flag);
typedef int (*void_fn)(void);

static struct {
    enum family family;
    void *library;
    void *o_world, *o_byte;
    void *comm_rank, *comm_size, *barrier, *abort, *bcast, *gather, *gatherv, *send, *recv;
    void *iprobe;
    void_fn finalize;
    flag_fn finalized;
    int rank, size, started;
    char name[256];
} mpi = {.size = 1};

static const char *const openmpi_libraries[] = {"libmpi.so.40", NULL};
static const char *const mpich_libraries[] = {"libmpich.so.12", "libmpi.so.12", NULL};

static void *open_library(const char *name, char *why, size_t whylen)
{
    void *h = dlopen(name, RTLD_NOW | RTLD_GLOBAL); /* its plugins bind to it */
    if (!h) {
        const char *e = dlerror();
        snprintf(why, whylen, "%s", e ? e : name);
    }
    return h;
}

/* The launcher's family first: Open MPI's mpirun cannot start MPICH
 * processes and vice versa. */
static void *find_library(char *err, size_t errlen)
{
    char why[512] = "";
    const char *forced = getenv("SCOPEPROF_MPI_LIBRARY");
    if (forced && *forced) {
        void *h = open_library(forced, why, sizeof why);
        if (h)
            snprintf(mpi.name, sizeof mpi.name, "%s", forced);
        else
            snprintf(err, errlen, "cannot load the MPI library SCOPEPROF_MPI_LIBRARY=%s: %s",
                     forced, why);
        return h;
    }
    const char *const *lists[2] = {openmpi_libraries, mpich_libraries};
    if (!sp_dist_launcher_is_openmpi()) {
        lists[0] = mpich_libraries;
        lists[1] = openmpi_libraries;
    }
    for (int l = 0; l < 2; l++)
        for (const char *const *n = lists[l]; *n; n++) {
            void *h = open_library(*n, why, sizeof why);
            if (h) {
                snprintf(mpi.name, sizeof mpi.name, "%s", *n);
                return h;
            }
        }
    snprintf(err, errlen, "no MPI library found (tried libmpi.so.40, libmpich.so.12, "
             "libmpi.so.12; set SCOPEPROF_MPI_LIBRARY to its path)");
    return NULL;
}

static void *sym(const char *name)
{
    return dlsym(mpi.library, name);
}

int sp_dist_mpi_start(char *err, size_t errlen)
{
    if (mpi.started)
        return 0;
    if (!(mpi.library = find_library(err, errlen)))
        return -1;
    mpi.o_world = sym("ompi_mpi_comm_world");
    mpi.o_byte = sym("ompi_mpi_byte");
    if (mpi.o_world && mpi.o_byte)
        mpi.family = FAMILY_OPENMPI;
    else if (sym("MPIR_Init_thread") || sym("MPII_Version_ABI") || sym("MPIR_Err_return_comm"))
        mpi.family = FAMILY_MPICH;
    init_fn init = (init_fn)sym("MPI_Init");
    flag_fn initialized = (flag_fn)sym("MPI_Initialized");
    mpi.finalize = (void_fn)sym("MPI_Finalize");
    mpi.finalized = (flag_fn)sym("MPI_Finalized");
    mpi.comm_rank = sym("MPI_Comm_rank");
    mpi.comm_size = sym("MPI_Comm_size");
    mpi.barrier = sym("MPI_Barrier");
    mpi.abort = sym("MPI_Abort");
    mpi.bcast = sym("MPI_Bcast");
    mpi.gather = sym("MPI_Gather");
    mpi.gatherv = sym("MPI_Gatherv");
    mpi.send = sym("MPI_Send");
    mpi.recv = sym("MPI_Recv");
    mpi.iprobe = sym("MPI_Iprobe");
    if (mpi.family == FAMILY_NONE) {
        snprintf(err, errlen, "%s: neither Open MPI nor MPICH (no ompi_mpi_comm_world, no "
                 "MPIR_Init_thread)", mpi.name);
        return -1;
    }
    if (!init || !initialized || !mpi.finalize || !mpi.comm_rank || !mpi.comm_size ||
        !mpi.barrier || !mpi.abort || !mpi.bcast || !mpi.gather || !mpi.gatherv || !mpi.send ||
        !mpi.recv || !mpi.iprobe) {
        snprintf(err, errlen, "%s: an MPI function is missing (MPI_Init, MPI_Gatherv...)",
                 mpi.name);
        return -1;
    }
    int flag = 0;
    if (initialized(&flag) != 0 || (!flag && init(NULL, NULL) != 0)) {
        snprintf(err, errlen, "%s: MPI_Init failed", mpi.name);
        return -1;
    }
    int rc;
    if (mpi.family == FAMILY_OPENMPI)
        rc = ((o_comm_int)mpi.comm_rank)(mpi.o_world, &mpi.rank) |
             ((o_comm_int)mpi.comm_size)(mpi.o_world, &mpi.size);
    else
        rc = ((m_comm_int)mpi.comm_rank)(MPICH_COMM_WORLD, &mpi.rank) |
             ((m_comm_int)mpi.comm_size)(MPICH_COMM_WORLD, &mpi.size);
    mpi.started = 1;
    if (rc != 0 || mpi.size < 1) {
        snprintf(err, errlen, "%s: MPI_Comm_rank/MPI_Comm_size failed", mpi.name);
        sp_dist_mpi_finish();
        return -1;
    }
    return 0;
}

void sp_dist_mpi_finish(void)
{
    int done = 0;
    if (mpi.started && !(mpi.finalized && mpi.finalized(&done) == 0 && done))
        mpi.finalize();
    mpi.started = 0;
    /* The library stays loaded: its exit handlers may still run. */
}

int sp_dist_mpi_rank(void) { return mpi.rank; }
int sp_dist_mpi_size(void) { return mpi.size; }

const char *sp_dist_mpi_family(void)
{
    return mpi.family == FAMILY_OPENMPI ? "Open MPI" : mpi.family == FAMILY_MPICH ? "MPICH"
                                                                                 : "none";
}

int sp_dist_barrier(void)
{
    if (mpi.family == FAMILY_OPENMPI)
        return ((o_comm)mpi.barrier)(mpi.o_world) ? -1 : 0;
    return ((m_comm)mpi.barrier)(MPICH_COMM_WORLD) ? -1 : 0;
}

void sp_dist_abort(int code)
{
    if (mpi.family == FAMILY_OPENMPI)
        ((o_abort)mpi.abort)(mpi.o_world, code);
    else
        ((m_abort)mpi.abort)(MPICH_COMM_WORLD, code);
    exit(code);
}

static int bcast_bytes(void *buf, int count, int root)
{
    if (mpi.family == FAMILY_OPENMPI)
        return ((o_bcast)mpi.bcast)(buf, count, mpi.o_byte, root, mpi.o_world) ? -1 : 0;
    return ((m_bcast)mpi.bcast)(buf, count, MPICH_BYTE, root, MPICH_COMM_WORLD) ? -1 : 0;
}

/* MPI counts are ints: large buffers go in pieces. */
#define PIECE (INT_MAX / 2)

int sp_dist_bcast(void *buf, size_t len, int root)
{
    for (size_t done = 0; done < len;) {
        size_t n = len - done < PIECE ? len - done : PIECE;
        if (bcast_bytes((char *)buf + done, (int)n, root) < 0)
            return -1;
        done += n;
    }
    return 0;
}

static int gather_bytes(const void *send, int count, void *recv)
{
    if (mpi.family == FAMILY_OPENMPI)
        return ((o_gather)mpi.gather)(send, count, mpi.o_byte, recv, count, mpi.o_byte, 0,
                                      mpi.o_world) ? -1 : 0;
    return ((m_gather)mpi.gather)(send, count, MPICH_BYTE, recv, count, MPICH_BYTE, 0,
                                  MPICH_COMM_WORLD) ? -1 : 0;
}

static int gatherv_bytes(const void *send, int count, void *recv, const int *counts,
                         const int *displs)
{
    if (mpi.family == FAMILY_OPENMPI)
        return ((o_gatherv)mpi.gatherv)(send, count, mpi.o_byte, recv, counts, displs,
                                        mpi.o_byte, 0, mpi.o_world) ? -1 : 0;
    return ((m_gatherv)mpi.gatherv)(send, count, MPICH_BYTE, recv, counts, displs, MPICH_BYTE,
                                    0, MPICH_COMM_WORLD) ? -1 : 0;
}

void sp_dist_gather_free(uint8_t **parts, size_t *lens)
{
    for (int k = 0; parts && k < mpi.size; k++)
        free(parts[k]);
    free(parts);
    free(lens);
}

/* Sizes first (8 bytes each), then the bytes by MPI_Gatherv in rounds of at
 * most PIECE bytes per process and INT_MAX in all, so that no count or
 * displacement overflows an int whatever the buffers. */
int sp_dist_gather(const void *buf, size_t len, uint8_t ***parts_out, size_t **lens_out)
{
    int root = mpi.rank == 0, n = mpi.size;
    uint64_t mine = len, *all = root ? calloc((size_t)n, sizeof *all) : NULL;
    uint8_t **parts = root ? calloc((size_t)n, sizeof *parts) : NULL;
    size_t *lens = root ? calloc((size_t)n, sizeof *lens) : NULL;
    int *counts = root ? calloc((size_t)n, sizeof *counts) : NULL;
    int *displs = root ? calloc((size_t)n, sizeof *displs) : NULL;
    int ok = !root || (all && parts && lens && counts && displs);
    if (!ok) /* the others are already in the gather: no way out but abort */
        sp_dist_abort(1);
    int rc = gather_bytes(&mine, (int)sizeof mine, all);
    uint64_t largest = 0;
    for (int k = 0; rc == 0 && root && k < n; k++) {
        largest = all[k] > largest ? all[k] : largest;
        lens[k] = (size_t)all[k];
        if (!(parts[k] = malloc(lens[k] ? lens[k] : 1)))
            sp_dist_abort(1);
    }
    /* the others reach this before process 0 has done its own work: they
     * wait for it asleep */
    if (rc == 0)
        rc = sp_dist_bcast_asleep(&largest, sizeof largest);
    uint64_t piece = (uint64_t)(INT_MAX / n);
    if (piece > PIECE)
        piece = PIECE;
    uint8_t *round = NULL; /* on process 0: what one round receives */
    size_t round_cap = 0;
    for (uint64_t done = 0; rc == 0 && (done < largest || done == 0); done += piece) {
        uint64_t left = mine > done ? mine - done : 0;
        int count = (int)(left < piece ? left : piece);
        size_t total = 0;
        for (int k = 0; root && k < n; k++) {
            uint64_t l = all[k] > done ? all[k] - done : 0;
            counts[k] = (int)(l < piece ? l : piece);
            displs[k] = k ? displs[k - 1] + counts[k - 1] : 0;
            total += (size_t)counts[k];
        }
        if (root && (total > round_cap || !round)) {
            free(round);
            round_cap = total;
            if (!(round = malloc(total ? total : 1)))
                sp_dist_abort(1);
        }
        static const uint8_t nothing;
        const uint8_t *from = count ? (const uint8_t *)buf + done : &nothing;
        rc = gatherv_bytes(from, count, round, counts, displs);
        for (int k = 0; rc == 0 && root && k < n; k++)
            if (counts[k])
                memcpy(parts[k] + done, round + displs[k], (size_t)counts[k]);
        if (largest == 0)
            break;
    }
    free(round);
    free(all);
    free(counts);
    free(displs);
    if (rc < 0 || !root) {
        sp_dist_gather_free(parts, lens);
        parts = NULL;
        lens = NULL;
    }
    *parts_out = parts;
    *lens_out = lens;
    return rc;
}

/* Tag of the messages of sp_dist_send/sp_dist_recv. */
#define TAG 7171

/* Tag of the tokens of sp_dist_signal/sp_dist_wait. */
#define TOKEN_TAG 7172
/* "go": process 0 now takes this process's report trees (dist_report.c) */
#define GO_TAG 7173

static int send_tagged(const void *buf, int count, int dest, int tag)
{
    if (mpi.family == FAMILY_OPENMPI)
        return ((o_send)mpi.send)(buf, count, mpi.o_byte, dest, tag, mpi.o_world) ? -1 : 0;
    return ((m_send)mpi.send)(buf, count, MPICH_BYTE, dest, tag, MPICH_COMM_WORLD) ? -1 : 0;
}

/* The status is written, never read: room for either family's MPI_Status
 * (MPI_STATUS_IGNORE differs between them). */
static int recv_tagged(void *buf, int count, int source, int tag)
{
    uint64_t status[16];
    if (mpi.family == FAMILY_OPENMPI)
        return ((o_recv)mpi.recv)(buf, count, mpi.o_byte, source, tag, mpi.o_world, status)
                   ? -1 : 0;
    return ((m_recv)mpi.recv)(buf, count, MPICH_BYTE, source, tag, MPICH_COMM_WORLD, status)
               ? -1 : 0;
}

static int send_bytes(const void *buf, int count, int dest)
{
    return send_tagged(buf, count, dest, TAG);
}

static int recv_bytes(void *buf, int count, int source)
{
    return recv_tagged(buf, count, source, TAG);
}

int sp_dist_signal(int dest)
{
    static const uint8_t token = 1;
    return send_tagged(&token, 1, dest, TOKEN_TAG);
}

/* Polls with a sleep between probes: a blocking receive would spin on a
 * core (both MPIs busy-wait), taking CPU from the process still working
 * on a shared node. */
static int wait_for(int source, int tag)
{
    uint64_t status[16];
    int flag = 0;
    struct timespec nap = {0, 2000000}; /* 2 ms: nothing here is latency-bound */
    while (!flag) {
        int rc = mpi.family == FAMILY_OPENMPI
                     ? ((o_iprobe)mpi.iprobe)(source, tag, mpi.o_world, &flag, status)
                     : ((m_iprobe)mpi.iprobe)(source, tag, MPICH_COMM_WORLD, &flag, status);
        if (rc != 0)
            return -1;
        if (!flag)
            nanosleep(&nap, NULL);
    }
    return 0;
}

static int poll_tag(int source, int tag)
{
    uint64_t status[16];
    int flag = 0;
    int rc = mpi.family == FAMILY_OPENMPI
                 ? ((o_iprobe)mpi.iprobe)(source, tag, mpi.o_world, &flag, status)
                 : ((m_iprobe)mpi.iprobe)(source, tag, MPICH_COMM_WORLD, &flag, status);
    return rc != 0 ? -1 : flag;
}

int sp_dist_poll(int source)
{
    return poll_tag(source, TOKEN_TAG);
}

int sp_dist_go(int dest)
{
    static const uint8_t token = 1;
    return send_tagged(&token, 1, dest, GO_TAG);
}

int sp_dist_go_taken(int source)
{
    int flag = poll_tag(source, GO_TAG);
    uint8_t token;
    if (flag > 0 && recv_tagged(&token, 1, source, GO_TAG) != 0)
        return -1;
    return flag;
}

int sp_dist_wait(int source)
{
    if (wait_for(source, TOKEN_TAG) != 0)
        return -1;
    uint8_t token;
    return recv_tagged(&token, 1, source, TOKEN_TAG);
}

int sp_dist_bcast_asleep(void *buf, size_t len)
{
    int rank = sp_dist_mpi_rank(), size = sp_dist_mpi_size();
    for (int k = 1; rank == 0 && k < size; k++)
        if (sp_dist_signal(k) != 0)
            return -1;
    if (rank != 0 && sp_dist_wait(0) != 0)
        return -1;
    return sp_dist_bcast(buf, len, 0);
}

int sp_dist_send(const void *buf, size_t len, int dest)
{
    uint64_t n = len;
    if (send_bytes(&n, (int)sizeof n, dest) < 0)
        return -1;
    for (size_t done = 0; done < len;) {
        size_t k = len - done < PIECE ? len - done : PIECE;
        if (send_bytes((const char *)buf + done, (int)k, dest) < 0)
            return -1;
        done += k;
    }
    return 0;
}

int sp_dist_recv_waiting(uint8_t **buf, size_t *len, int source)
{
    *buf = NULL;
    *len = 0;
    return wait_for(source, TAG) == 0 ? sp_dist_recv(buf, len, source) : -1;
}

int sp_dist_recv(uint8_t **buf, size_t *len, int source)
{
    uint64_t n = 0;
    *buf = NULL;
    *len = 0;
    if (recv_bytes(&n, (int)sizeof n, source) < 0)
        return -1;
    uint8_t *data = malloc(n ? (size_t)n : 1);
    if (!data)
        sp_dist_abort(1); /* the sender is blocked on us */
    for (size_t done = 0; done < n;) {
        size_t k = n - done < PIECE ? n - done : PIECE;
        if (recv_bytes(data + done, (int)k, source) < 0) {
            free(data);
            return -1;
        }
        done += k;
    }
    *buf = data;
    *len = (size_t)n;
    return 0;
}
