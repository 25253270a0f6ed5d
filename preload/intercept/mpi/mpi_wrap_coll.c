/* mpi_wrap_coll.c - collectives, blocking and non-blocking.  Bytes are
 * those of the call's own buffer arguments (count x type size, as mpiP
 * reports them): a rooted collective's root counts what it sends to or
 * receives from every rank; MPI_IN_PLACE makes the send buffer the receive
 * buffer, counted once, as received (docs/mpi.md).  The peer is the root
 * as a world rank, -1 for collectives without one. */
#include "mpi_wrap_common.h"

/* Argument values shared by the wrappers' bookkeeping. */
struct coll_args {
    H comm;
    int root;               /* -1: no root */
};

static int64_t sum_counts(const int *counts, int n)
{
    if (!counts || n < 0)
        return -1;
    int64_t s = 0;
    for (int i = 0; i < n; i++)
        s += counts[i];
    return s;
}

static int64_t times(int64_t bytes, int64_t factor)
{
    return bytes < 0 || factor < 0 ? -1 : bytes * factor;
}

/* The root's and the others' sides of a rooted collective. */
static int is_root(const struct coll_args *a)
{
    return a->root >= 0 && sp_mpi_comm_rank(a->comm) == a->root;
}

static void finish_side(sp_capture_mpi *side, const struct coll_args *a)
{
    side->peer = a->root >= 0 ? sp_mpi_world_peer(a->comm, a->root) : -1;
    side->comm = sp_mpi_comm_id(a->comm); /* which operation it is, for the waits */
}

/* The send side of a buffer that may be MPI_IN_PLACE (then counted as
 * received only). */
#define UNLESS_IN_PLACE(buf, bytes) (sp_mpi_in_place(buf) ? 0 : (bytes))

/* Ranks of the call's communicator, asked only by the collectives whose
 * bytes depend on it (an MPI call of its own). */
#define COMM_SIZE sp_mpi_comm_size(args.comm)

/* One macro per signature: the wrapper computes the side data from its
 * arguments (BYTES, a statement using `side`, `args`), then chains. */
#define SP_COLL(name, params, call_args, comm_arg, root_arg, BYTES)               \
    SP_EXPORT int name params;                                                     \
    SP_EXPORT int name params                                                      \
    {                                                                              \
        typedef int (*fn_t) params;                                                \
        SP_MPI_REAL(name, fn_t);                                                   \
        struct sp_mpi_call call;                                                   \
        sp_capture_mpi side = sp_mpi_side_none();                                  \
        if (sp_mpi_call_begin(SP_##name, &call, SP_MPI_CALLER)) {                  \
            struct coll_args args = {comm_arg, root_arg};                          \
            BYTES;                                                                 \
            finish_side(&side, &args);                                             \
        }                                                                          \
        sp_mpi_call_start(&call);                                                  \
        int rc = real call_args;                                                   \
        sp_mpi_call_end(&call, &side);                                             \
        return rc;                                                                 \
    }

#define NONE ((void)0)
#define REQ , H *req
#define REQ_ARG , req

/* ---- the signatures, each blocking and non-blocking -------------------- */

#define BARRIER(name, R, RA) \
    SP_COLL(name, (H comm R), (comm RA), comm, -1, NONE)
BARRIER(MPI_Barrier, , )
BARRIER(MPI_Ibarrier, REQ, REQ_ARG)

#define BCAST(name, R, RA)                                                          \
    SP_COLL(name, (void *buf, int count, H type, int root, H comm R),               \
            (buf, count, type, root, comm RA), comm, root,              \
            { if (is_root(&args)) side.sent_bytes = sp_mpi_bytes(type, count);      \
              else side.recv_bytes = sp_mpi_bytes(type, count); })
BCAST(MPI_Bcast, , )
BCAST(MPI_Ibcast, REQ, REQ_ARG)

#define REDUCE(name, R, RA)                                                         \
    SP_COLL(name, (const void *sbuf, void *rbuf, int count, H type, H op, int root, H comm R), \
            (sbuf, rbuf, count, type, op, root, comm RA), comm, root,   \
            { int64_t b = sp_mpi_bytes(type, count);                                \
              side.sent_bytes = UNLESS_IN_PLACE(sbuf, b);                           \
              if (is_root(&args)) side.recv_bytes = b; })
REDUCE(MPI_Reduce, , )
REDUCE(MPI_Ireduce, REQ, REQ_ARG)

#define ALLREDUCE(name, R, RA)                                                      \
    SP_COLL(name, (const void *sbuf, void *rbuf, int count, H type, H op, H comm R), \
            (sbuf, rbuf, count, type, op, comm RA), comm, -1,           \
            { side.recv_bytes = sp_mpi_bytes(type, count);                          \
              side.sent_bytes = UNLESS_IN_PLACE(sbuf, side.recv_bytes); })
ALLREDUCE(MPI_Allreduce, , )
ALLREDUCE(MPI_Iallreduce, REQ, REQ_ARG)
ALLREDUCE(MPI_Scan, , )
ALLREDUCE(MPI_Iscan, REQ, REQ_ARG)
ALLREDUCE(MPI_Exscan, , )
ALLREDUCE(MPI_Iexscan, REQ, REQ_ARG)

#define GATHER(name, R, RA)                                                         \
    SP_COLL(name, (const void *sbuf, int scount, H stype, void *rbuf, int rcount, H rtype, \
                   int root, H comm R),                                             \
            (sbuf, scount, stype, rbuf, rcount, rtype, root, comm RA), comm, root, \
            { side.sent_bytes = UNLESS_IN_PLACE(sbuf, sp_mpi_bytes(stype, scount)); \
              if (is_root(&args)) side.recv_bytes = times(sp_mpi_bytes(rtype, rcount), COMM_SIZE); })
GATHER(MPI_Gather, , )
GATHER(MPI_Igather, REQ, REQ_ARG)

#define GATHERV(name, R, RA)                                                        \
    SP_COLL(name, (const void *sbuf, int scount, H stype, void *rbuf, const int *rcounts, \
                   const int *displs, H rtype, int root, H comm R),                 \
            (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm RA), comm, root, \
                                                                         \
            { side.sent_bytes = UNLESS_IN_PLACE(sbuf, sp_mpi_bytes(stype, scount)); \
              if (is_root(&args)) side.recv_bytes = sp_mpi_bytes(rtype, sum_counts(rcounts, COMM_SIZE)); })
GATHERV(MPI_Gatherv, , )
GATHERV(MPI_Igatherv, REQ, REQ_ARG)

#define SCATTER(name, R, RA)                                                        \
    SP_COLL(name, (const void *sbuf, int scount, H stype, void *rbuf, int rcount, H rtype, \
                   int root, H comm R),                                             \
            (sbuf, scount, stype, rbuf, rcount, rtype, root, comm RA), comm, root, \
            { if (is_root(&args)) side.sent_bytes = times(sp_mpi_bytes(stype, scount), COMM_SIZE); \
              side.recv_bytes = UNLESS_IN_PLACE(rbuf, sp_mpi_bytes(rtype, rcount)); })
SCATTER(MPI_Scatter, , )
SCATTER(MPI_Iscatter, REQ, REQ_ARG)

#define SCATTERV(name, R, RA)                                                       \
    SP_COLL(name, (const void *sbuf, const int *scounts, const int *displs, H stype, void *rbuf, \
                   int rcount, H rtype, int root, H comm R),                        \
            (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm RA), comm, root, \
                                                                         \
            { if (is_root(&args)) side.sent_bytes = sp_mpi_bytes(stype, sum_counts(scounts, COMM_SIZE)); \
              side.recv_bytes = UNLESS_IN_PLACE(rbuf, sp_mpi_bytes(rtype, rcount)); })
SCATTERV(MPI_Scatterv, , )
SCATTERV(MPI_Iscatterv, REQ, REQ_ARG)

#define ALLGATHER(name, R, RA)                                                      \
    SP_COLL(name, (const void *sbuf, int scount, H stype, void *rbuf, int rcount, H rtype, \
                   H comm R),                                                       \
            (sbuf, scount, stype, rbuf, rcount, rtype, comm RA), comm, -1, \
            { side.sent_bytes = UNLESS_IN_PLACE(sbuf, sp_mpi_bytes(stype, scount)); \
              side.recv_bytes = times(sp_mpi_bytes(rtype, rcount), COMM_SIZE); })
ALLGATHER(MPI_Allgather, , )
ALLGATHER(MPI_Iallgather, REQ, REQ_ARG)

#define ALLGATHERV(name, R, RA)                                                     \
    SP_COLL(name, (const void *sbuf, int scount, H stype, void *rbuf, const int *rcounts, \
                   const int *displs, H rtype, H comm R),                           \
            (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm RA), comm, -1, \
            { side.sent_bytes = UNLESS_IN_PLACE(sbuf, sp_mpi_bytes(stype, scount)); \
              side.recv_bytes = sp_mpi_bytes(rtype, sum_counts(rcounts, COMM_SIZE)); })
ALLGATHERV(MPI_Allgatherv, , )
ALLGATHERV(MPI_Iallgatherv, REQ, REQ_ARG)

#define ALLTOALL(name, R, RA)                                                       \
    SP_COLL(name, (const void *sbuf, int scount, H stype, void *rbuf, int rcount, H rtype, \
                   H comm R),                                                       \
            (sbuf, scount, stype, rbuf, rcount, rtype, comm RA), comm, -1, \
            { side.sent_bytes = UNLESS_IN_PLACE(sbuf, times(sp_mpi_bytes(stype, scount), COMM_SIZE)); \
              side.recv_bytes = times(sp_mpi_bytes(rtype, rcount), COMM_SIZE); })
ALLTOALL(MPI_Alltoall, , )
ALLTOALL(MPI_Ialltoall, REQ, REQ_ARG)

#define ALLTOALLV(name, R, RA)                                                      \
    SP_COLL(name, (const void *sbuf, const int *scounts, const int *sdispls, H stype, void *rbuf, \
                   const int *rcounts, const int *rdispls, H rtype, H comm R),      \
            (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm RA), comm, -1, \
                                                                         \
            { side.sent_bytes = UNLESS_IN_PLACE(sbuf, sp_mpi_bytes(stype, sum_counts(scounts, COMM_SIZE))); \
              side.recv_bytes = sp_mpi_bytes(rtype, sum_counts(rcounts, COMM_SIZE)); })
ALLTOALLV(MPI_Alltoallv, , )
ALLTOALLV(MPI_Ialltoallv, REQ, REQ_ARG)

/* Per-peer datatypes: the handles are an array of the family's width. */
static int64_t bytes_w(const int *counts, const void *types, int n)
{
    if (!counts || !types || n < 0)
        return -1;
    int64_t s = 0;
    for (int i = 0; i < n; i++) {
        int64_t b = sp_mpi_bytes(sp_mpi_handle_at(types, i), counts[i]);
        if (b < 0)
            return -1;
        s += b;
    }
    return s;
}

#define ALLTOALLW(name, R, RA)                                                      \
    SP_COLL(name, (const void *sbuf, const int *scounts, const int *sdispls, const void *stypes, \
                   void *rbuf, const int *rcounts, const int *rdispls, const void *rtypes, \
                   H comm R),                                                       \
            (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm RA), comm, -1, \
                                                                         \
            { side.sent_bytes = UNLESS_IN_PLACE(sbuf, bytes_w(scounts, stypes, COMM_SIZE)); \
              side.recv_bytes = bytes_w(rcounts, rtypes, COMM_SIZE); })
ALLTOALLW(MPI_Alltoallw, , )
ALLTOALLW(MPI_Ialltoallw, REQ, REQ_ARG)

#define REDUCE_SCATTER(name, R, RA)                                                 \
    SP_COLL(name, (const void *sbuf, void *rbuf, const int *rcounts, H type, H op, H comm R), \
            (sbuf, rbuf, rcounts, type, op, comm RA), comm, -1,         \
            { side.sent_bytes = UNLESS_IN_PLACE(sbuf, sp_mpi_bytes(type, sum_counts(rcounts, COMM_SIZE))); \
              int me = sp_mpi_comm_rank(comm);                                      \
              side.recv_bytes = me >= 0 && rcounts ? sp_mpi_bytes(type, rcounts[me]) : -1; })
REDUCE_SCATTER(MPI_Reduce_scatter, , )
REDUCE_SCATTER(MPI_Ireduce_scatter, REQ, REQ_ARG)

#define REDUCE_SCATTER_BLOCK(name, R, RA)                                           \
    SP_COLL(name, (const void *sbuf, void *rbuf, int rcount, H type, H op, H comm R), \
            (sbuf, rbuf, rcount, type, op, comm RA), comm, -1,          \
            { side.sent_bytes = UNLESS_IN_PLACE(sbuf, times(sp_mpi_bytes(type, rcount), COMM_SIZE)); \
              side.recv_bytes = sp_mpi_bytes(type, rcount); })
REDUCE_SCATTER_BLOCK(MPI_Reduce_scatter_block, , )
REDUCE_SCATTER_BLOCK(MPI_Ireduce_scatter_block, REQ, REQ_ARG)

/* Not recorded: only forgets what the rank translation cached about the
 * communicator, whose handle MPI may reuse. */
typedef int (*comm_free_fn)(H *comm);
SP_EXPORT int MPI_Comm_free(H *comm);
SP_EXPORT int MPI_Comm_free(H *comm)
{
    SP_MPI_REAL(MPI_Comm_free, comm_free_fn);
    if (comm)
        sp_mpi_comm_forget(sp_mpi_handle_at(comm, 0));
    return real(comm);
}
