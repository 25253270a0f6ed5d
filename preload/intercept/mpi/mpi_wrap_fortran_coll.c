/* mpi_wrap_fortran_coll.c - the Fortran bindings of the collectives,
 * blocking and non-blocking, generated per signature like their C
 * wrappers (mpi_wrap_coll.c, whose byte rules they follow): the handles
 * translated with MPI_Comm_f2c/MPI_Type_f2c, MPI_IN_PLACE the Fortran
 * one.  Recorded only where the Fortran library bypasses the C bindings
 * (Open MPI); elsewhere they only chain. */
#include "mpi_wrap_fortran_common.h"

static int64_t f_sum(const F *counts, int n)
{
    if (!counts || n < 0)
        return -1;
    int64_t s = 0;
    for (int i = 0; i < n; i++)
        s += counts[i];
    return s;
}

static int64_t f_times(int64_t bytes, int64_t factor)
{
    return bytes < 0 || factor < 0 ? -1 : bytes * factor;
}

/* Per-peer datatypes (alltoallw): Fortran handles, one per rank. */
static int64_t f_bytes_w(const F *counts, const F *types, int n)
{
    if (!counts || !types || n < 0)
        return -1;
    int64_t s = 0;
    for (int i = 0; i < n; i++) {
        int64_t b = sp_mpi_bytes(sp_mpi_type_f2c(types[i]), counts[i]);
        if (b < 0)
            return -1;
        s += b;
    }
    return s;
}

/* In BYTES: the C communicator `c`, the root `root_` (-1: none). */
#define F_IS_ROOT (root_ >= 0 && sp_mpi_comm_rank(c) == root_)
#define F_SIZE sp_mpi_comm_size(c)
#define F_UNLESS_IN_PLACE(buf, bytes) (sp_mpi_f_in_place(buf) ? 0 : (bytes))
#define F_BYTES(type, count) sp_mpi_bytes(sp_mpi_type_f2c(*(type)), *(count))

#define F_COLL(sym, fn, params, call_args, comm_arg, root_arg, BYTES)               \
    SP_EXPORT void sym params;                                                      \
    SP_EXPORT void sym params                                                       \
    {                                                                               \
        typedef void (*fn_t) params;                                                \
        SP_F_REAL(sym, fn_t)                                                        \
        SP_F_BEGIN(fn) {                                                            \
            sp_mpi_handle c = sp_mpi_comm_f2c(*(comm_arg));                         \
            int root_ = root_arg;                                                   \
            BYTES;                                                                  \
            side.peer = root_ >= 0 ? sp_mpi_world_peer(c, root_) : -1;              \
            side.comm = sp_mpi_comm_id(c);                                          \
        }                                                                           \
        SP_F_CALL(call_args);                                                       \
    }

#define NONE ((void)0)

#define F_BARRIER(sym, fn, k)                                                       \
    F_COLL(sym, fn, (const F *comm F_REQ_##k, F *ierr), (comm F_REQ_ARG_##k, ierr), comm, -1, NONE)

#define F_BCAST(sym, fn, k)                                                         \
    F_COLL(sym, fn, (void *buf, const F *count, const F *type, const F *root, const F *comm \
                     F_REQ_##k, F *ierr),                                           \
           (buf, count, type, root, comm F_REQ_ARG_##k, ierr), comm, *root,         \
           { if (F_IS_ROOT) side.sent_bytes = F_BYTES(type, count);                 \
             else side.recv_bytes = F_BYTES(type, count); })

#define F_REDUCE(sym, fn, k)                                                        \
    F_COLL(sym, fn, (const void *sbuf, void *rbuf, const F *count, const F *type, const F *op, \
                     const F *root, const F *comm F_REQ_##k, F *ierr),              \
           (sbuf, rbuf, count, type, op, root, comm F_REQ_ARG_##k, ierr), comm, *root, \
           { int64_t b = F_BYTES(type, count);                                      \
             side.sent_bytes = F_UNLESS_IN_PLACE(sbuf, b);                          \
             if (F_IS_ROOT) side.recv_bytes = b; })

#define F_ALLREDUCE(sym, fn, k)                                                     \
    F_COLL(sym, fn, (const void *sbuf, void *rbuf, const F *count, const F *type, const F *op, \
                     const F *comm F_REQ_##k, F *ierr),                             \
           (sbuf, rbuf, count, type, op, comm F_REQ_ARG_##k, ierr), comm, -1,       \
           { side.recv_bytes = F_BYTES(type, count);                                \
             side.sent_bytes = F_UNLESS_IN_PLACE(sbuf, side.recv_bytes); })

#define F_GATHER(sym, fn, k)                                                        \
    F_COLL(sym, fn, (const void *sbuf, const F *scount, const F *stype, void *rbuf,  \
                     const F *rcount, const F *rtype, const F *root, const F *comm  \
                     F_REQ_##k, F *ierr),                                           \
           (sbuf, scount, stype, rbuf, rcount, rtype, root, comm F_REQ_ARG_##k, ierr), comm, \
           *root,                                                                   \
           { side.sent_bytes = F_UNLESS_IN_PLACE(sbuf, F_BYTES(stype, scount));     \
             if (F_IS_ROOT) side.recv_bytes = f_times(F_BYTES(rtype, rcount), F_SIZE); })

#define F_GATHERV(sym, fn, k)                                                       \
    F_COLL(sym, fn, (const void *sbuf, const F *scount, const F *stype, void *rbuf,  \
                     const F *rcounts, const F *displs, const F *rtype, const F *root, \
                     const F *comm F_REQ_##k, F *ierr),                             \
           (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm F_REQ_ARG_##k, ierr), \
           comm, *root,                                                             \
           { side.sent_bytes = F_UNLESS_IN_PLACE(sbuf, F_BYTES(stype, scount));     \
             if (F_IS_ROOT)                                                         \
                 side.recv_bytes = sp_mpi_bytes(sp_mpi_type_f2c(*rtype), f_sum(rcounts, F_SIZE)); })

#define F_SCATTER(sym, fn, k)                                                       \
    F_COLL(sym, fn, (const void *sbuf, const F *scount, const F *stype, void *rbuf,  \
                     const F *rcount, const F *rtype, const F *root, const F *comm  \
                     F_REQ_##k, F *ierr),                                           \
           (sbuf, scount, stype, rbuf, rcount, rtype, root, comm F_REQ_ARG_##k, ierr), comm, \
           *root,                                                                   \
           { if (F_IS_ROOT) side.sent_bytes = f_times(F_BYTES(stype, scount), F_SIZE); \
             side.recv_bytes = F_UNLESS_IN_PLACE(rbuf, F_BYTES(rtype, rcount)); })

#define F_SCATTERV(sym, fn, k)                                                      \
    F_COLL(sym, fn, (const void *sbuf, const F *scounts, const F *displs, const F *stype, \
                     void *rbuf, const F *rcount, const F *rtype, const F *root,    \
                     const F *comm F_REQ_##k, F *ierr),                             \
           (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm F_REQ_ARG_##k, ierr), \
           comm, *root,                                                             \
           { if (F_IS_ROOT)                                                         \
                 side.sent_bytes = sp_mpi_bytes(sp_mpi_type_f2c(*stype), f_sum(scounts, F_SIZE)); \
             side.recv_bytes = F_UNLESS_IN_PLACE(rbuf, F_BYTES(rtype, rcount)); })

#define F_ALLGATHER(sym, fn, k)                                                     \
    F_COLL(sym, fn, (const void *sbuf, const F *scount, const F *stype, void *rbuf,  \
                     const F *rcount, const F *rtype, const F *comm F_REQ_##k, F *ierr), \
           (sbuf, scount, stype, rbuf, rcount, rtype, comm F_REQ_ARG_##k, ierr), comm, -1, \
           { side.sent_bytes = F_UNLESS_IN_PLACE(sbuf, F_BYTES(stype, scount));     \
             side.recv_bytes = f_times(F_BYTES(rtype, rcount), F_SIZE); })

#define F_ALLGATHERV(sym, fn, k)                                                    \
    F_COLL(sym, fn, (const void *sbuf, const F *scount, const F *stype, void *rbuf,  \
                     const F *rcounts, const F *displs, const F *rtype, const F *comm \
                     F_REQ_##k, F *ierr),                                           \
           (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm F_REQ_ARG_##k, ierr), comm, \
           -1,                                                                      \
           { side.sent_bytes = F_UNLESS_IN_PLACE(sbuf, F_BYTES(stype, scount));     \
             side.recv_bytes = sp_mpi_bytes(sp_mpi_type_f2c(*rtype), f_sum(rcounts, F_SIZE)); })

#define F_ALLTOALL(sym, fn, k)                                                      \
    F_COLL(sym, fn, (const void *sbuf, const F *scount, const F *stype, void *rbuf,  \
                     const F *rcount, const F *rtype, const F *comm F_REQ_##k, F *ierr), \
           (sbuf, scount, stype, rbuf, rcount, rtype, comm F_REQ_ARG_##k, ierr), comm, -1, \
           { side.sent_bytes = F_UNLESS_IN_PLACE(sbuf, f_times(F_BYTES(stype, scount), F_SIZE)); \
             side.recv_bytes = f_times(F_BYTES(rtype, rcount), F_SIZE); })

#define F_ALLTOALLV(sym, fn, k)                                                     \
    F_COLL(sym, fn, (const void *sbuf, const F *scounts, const F *sdispls, const F *stype, \
                     void *rbuf, const F *rcounts, const F *rdispls, const F *rtype, \
                     const F *comm F_REQ_##k, F *ierr),                             \
           (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype,           \
            comm F_REQ_ARG_##k, ierr), comm, -1,                                    \
           { side.sent_bytes = F_UNLESS_IN_PLACE(                                   \
                 sbuf, sp_mpi_bytes(sp_mpi_type_f2c(*stype), f_sum(scounts, F_SIZE))); \
             side.recv_bytes = sp_mpi_bytes(sp_mpi_type_f2c(*rtype), f_sum(rcounts, F_SIZE)); })

#define F_ALLTOALLW(sym, fn, k)                                                     \
    F_COLL(sym, fn, (const void *sbuf, const F *scounts, const F *sdispls, const F *stypes, \
                     void *rbuf, const F *rcounts, const F *rdispls, const F *rtypes, \
                     const F *comm F_REQ_##k, F *ierr),                             \
           (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes,         \
            comm F_REQ_ARG_##k, ierr), comm, -1,                                    \
           { side.sent_bytes = F_UNLESS_IN_PLACE(sbuf, f_bytes_w(scounts, stypes, F_SIZE)); \
             side.recv_bytes = f_bytes_w(rcounts, rtypes, F_SIZE); })

#define F_REDUCE_SCATTER(sym, fn, k)                                                \
    F_COLL(sym, fn, (const void *sbuf, void *rbuf, const F *rcounts, const F *type, \
                     const F *op, const F *comm F_REQ_##k, F *ierr),                \
           (sbuf, rbuf, rcounts, type, op, comm F_REQ_ARG_##k, ierr), comm, -1,     \
           { sp_mpi_handle t = sp_mpi_type_f2c(*type);                              \
             side.sent_bytes = F_UNLESS_IN_PLACE(sbuf, sp_mpi_bytes(t, f_sum(rcounts, F_SIZE))); \
             int me = sp_mpi_comm_rank(c);                                          \
             side.recv_bytes = me >= 0 && rcounts ? sp_mpi_bytes(t, rcounts[me]) : -1; })

#define F_REDUCE_SCATTER_BLOCK(sym, fn, k)                                          \
    F_COLL(sym, fn, (const void *sbuf, void *rbuf, const F *rcount, const F *type,  \
                     const F *op, const F *comm F_REQ_##k, F *ierr),                \
           (sbuf, rbuf, rcount, type, op, comm F_REQ_ARG_##k, ierr), comm, -1,      \
           { side.sent_bytes = F_UNLESS_IN_PLACE(sbuf, f_times(F_BYTES(type, rcount), F_SIZE)); \
             side.recv_bytes = F_BYTES(type, rcount); })

/* Each family in its blocking and non-blocking form, five spellings each. */
#define F_BOTH(MACRO, base, upper, Cname, ICname)                                   \
    SP_F_ALL(MACRO, base, upper, SP_MPI_##Cname, B)                                 \
    SP_F_ALL(MACRO, i##base, I##upper, SP_MPI_##ICname, I)

F_BOTH(F_BARRIER, barrier, BARRIER, Barrier, Ibarrier)
F_BOTH(F_BCAST, bcast, BCAST, Bcast, Ibcast)
F_BOTH(F_REDUCE, reduce, REDUCE, Reduce, Ireduce)
F_BOTH(F_ALLREDUCE, allreduce, ALLREDUCE, Allreduce, Iallreduce)
F_BOTH(F_ALLREDUCE, scan, SCAN, Scan, Iscan)
F_BOTH(F_ALLREDUCE, exscan, EXSCAN, Exscan, Iexscan)
F_BOTH(F_GATHER, gather, GATHER, Gather, Igather)
F_BOTH(F_GATHERV, gatherv, GATHERV, Gatherv, Igatherv)
F_BOTH(F_SCATTER, scatter, SCATTER, Scatter, Iscatter)
F_BOTH(F_SCATTERV, scatterv, SCATTERV, Scatterv, Iscatterv)
F_BOTH(F_ALLGATHER, allgather, ALLGATHER, Allgather, Iallgather)
F_BOTH(F_ALLGATHERV, allgatherv, ALLGATHERV, Allgatherv, Iallgatherv)
F_BOTH(F_ALLTOALL, alltoall, ALLTOALL, Alltoall, Ialltoall)
F_BOTH(F_ALLTOALLV, alltoallv, ALLTOALLV, Alltoallv, Ialltoallv)
F_BOTH(F_ALLTOALLW, alltoallw, ALLTOALLW, Alltoallw, Ialltoallw)
F_BOTH(F_REDUCE_SCATTER, reduce_scatter, REDUCE_SCATTER, Reduce_scatter, Ireduce_scatter)
F_BOTH(F_REDUCE_SCATTER_BLOCK, reduce_scatter_block, REDUCE_SCATTER_BLOCK,
       Reduce_scatter_block, Ireduce_scatter_block)

/* MPICH's mpi_f08 module: MPI_Barrier and MPI_Ibarrier (no buffer, so no
 * C binding on the way) go from mpi_barrier_f08_ straight to PMPI_; the
 * handle is the MPI_VAL integer.  Open MPI's mpi_barrier_f08_ calls
 * ompi_barrier_f, recorded above: there this one only chains. */
#define F08_BARRIER(sym, fn, k)                                                     \
    SP_EXPORT void sym(const F *comm F_REQ_##k, F *ierr);                           \
    SP_EXPORT void sym(const F *comm F_REQ_##k, F *ierr)                            \
    {                                                                               \
        typedef void (*fn_t)(const F *comm F_REQ_##k, F *ierr);                     \
        SP_F_REAL(sym, fn_t)                                                        \
        struct sp_mpi_call call;                                                    \
        sp_capture_mpi side = sp_mpi_side_none();                                   \
        call.mode = SP_MPI_MODE_OFF;                                                \
        if (sp_mpi_fortran_calls_c() && sp_mpi_call_begin(fn, &call, SP_MPI_CALLER)) \
            side.comm = sp_mpi_comm_id(sp_mpi_comm_f2c(*comm));                     \
        SP_F_CALL((comm F_REQ_ARG_##k, ierr));                                      \
    }
F08_BARRIER(mpi_barrier_f08_, SP_MPI_Barrier, B)
F08_BARRIER(mpi_ibarrier_f08_, SP_MPI_Ibarrier, I)
