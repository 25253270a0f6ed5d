/* mpi_wrap_fortran_calls.c - the Fortran bindings (mpif.h, `use mpi`) of
 * the most used MPI calls that take time, in the four spellings compilers
 * produce (mpi_send_, mpi_send__, mpi_send, MPI_SEND).  Open MPI's Fortran
 * library calls PMPI_ directly, so its Fortran programs would record
 * nothing: these wrappers record the call under its C name, reading the
 * arguments through MPI_Comm_f2c/MPI_Type_f2c.  MPICH's Fortran library
 * calls the C bindings, whose wrappers record the call: there these only
 * chain.  Every argument is a pointer (Fortran passes by reference);
 * MPI_Fint is a default INTEGER (int). */
#include "mpi_wrap_common.h"

typedef int F;

/* Fortran requests are tracked apart from C ones (they are small ints). */
#define FREQ(r) ((sp_mpi_handle)1 << 62 | (uint32_t)(r))

static int record_fortran(void)
{
    return !sp_mpi_fortran_calls_c();
}

static int64_t f_bytes(const F *type, const F *count)
{
    return type && count ? sp_mpi_bytes(sp_mpi_type_f2c(*type), *count) : -1;
}

/* Each wrapper: find the real symbol of its own spelling, record, chain. */
#define SP_F_REAL(sym, type)                                                       \
    static void *real_slot_##sym;                                                  \
    type real = (type)sp_mpi_real(&real_slot_##sym, #sym, (const void *)sym,       \
                                  __builtin_return_address(0));                    \
    if (!real) {                                                                   \
        if (ierr)                                                                  \
            *ierr = SP_MPI_ERR_NO_LIBRARY;                                         \
        return;                                                                    \
    }

#define SP_F_BEGIN(fn)                                                             \
    struct sp_mpi_call call;                                                       \
    sp_capture_mpi side = sp_mpi_side_none();                                      \
    call.mode = SP_MPI_MODE_OFF;                                                   \
    if (record_fortran() && sp_mpi_call_begin(fn, &call, SP_MPI_CALLER))

#define SP_F_CALL(args)                                                            \
    sp_mpi_call_start(&call);                                                      \
    real args;                                                                     \
    sp_mpi_call_end(&call, &side)

/* ---- point to point ------------------------------------------------------ */

typedef void (*f_send_fn)(const void *, const F *, const F *, const F *, const F *, const F *, F *);
#define F_SEND(sym, fn)                                                             \
    SP_EXPORT void sym(const void *buf, const F *count, const F *type, const F *dest, \
                       const F *tag, const F *comm, F *ierr);                       \
    SP_EXPORT void sym(const void *buf, const F *count, const F *type, const F *dest, \
                       const F *tag, const F *comm, F *ierr)                        \
    {                                                                               \
        SP_F_REAL(sym, f_send_fn)                                                   \
        SP_F_BEGIN(fn) {                                                            \
            side.sent_bytes = f_bytes(type, count);                                 \
            sp_mpi_side_send(&side, sp_mpi_comm_f2c(*comm), *dest, *tag);           \
        }                                                                           \
        SP_F_CALL((buf, count, type, dest, tag, comm, ierr));                       \
    }

typedef void (*f_isend_fn)(const void *, const F *, const F *, const F *, const F *, const F *,
                           F *, F *);
#define F_ISEND(sym, fn)                                                            \
    SP_EXPORT void sym(const void *buf, const F *count, const F *type, const F *dest, \
                       const F *tag, const F *comm, F *req, F *ierr);               \
    SP_EXPORT void sym(const void *buf, const F *count, const F *type, const F *dest, \
                       const F *tag, const F *comm, F *req, F *ierr)                \
    {                                                                               \
        SP_F_REAL(sym, f_isend_fn)                                                  \
        SP_F_BEGIN(fn) {                                                            \
            side.sent_bytes = f_bytes(type, count);                                 \
            sp_mpi_side_send(&side, sp_mpi_comm_f2c(*comm), *dest, *tag);           \
        }                                                                           \
        SP_F_CALL((buf, count, type, dest, tag, comm, req, ierr));                  \
        if (call.mode && ierr && *ierr == 0) {                                      \
            struct sp_mpi_request_info info = {SP_MPI_REQ_SEND, *tag, *dest,        \
                                               sp_mpi_comm_f2c(*comm), 1};          \
            sp_mpi_request_track(FREQ(*req), &info);                                \
        }                                                                           \
    }

typedef void (*f_recv_fn)(void *, const F *, const F *, const F *, const F *, const F *, F *,
                          F *);
#define F_RECV(sym)                                                                 \
    SP_EXPORT void sym(void *buf, const F *count, const F *type, const F *source,   \
                       const F *tag, const F *comm, F *status, F *ierr);            \
    SP_EXPORT void sym(void *buf, const F *count, const F *type, const F *source,   \
                       const F *tag, const F *comm, F *status, F *ierr)             \
    {                                                                               \
        SP_F_REAL(sym, f_recv_fn)                                                   \
        SP_F_BEGIN(SP_MPI_Recv) { side.recv_bytes = f_bytes(type, count); }         \
        sp_mpi_call_start(&call);                                                   \
        real(buf, count, type, source, tag, comm, status, ierr);                    \
        if (call.mode) {                                                            \
            int src = *source, t = ierr && *ierr == 0 ? *tag : -1;                  \
            if (!sp_mpi_f_status_ignored(status) && t != -1) {                      \
                src = status[0];                                                    \
                t = status[1];                                                      \
            }                                                                       \
            sp_mpi_side_received(&side, sp_mpi_comm_f2c(*comm), src, t, NULL);      \
        }                                                                           \
        sp_mpi_call_end(&call, &side);                                              \
    }

typedef void (*f_irecv_fn)(void *, const F *, const F *, const F *, const F *, const F *, F *,
                           F *);
#define F_IRECV(sym)                                                                \
    SP_EXPORT void sym(void *buf, const F *count, const F *type, const F *source,   \
                       const F *tag, const F *comm, F *req, F *ierr);               \
    SP_EXPORT void sym(void *buf, const F *count, const F *type, const F *source,   \
                       const F *tag, const F *comm, F *req, F *ierr)                \
    {                                                                               \
        SP_F_REAL(sym, f_irecv_fn)                                                  \
        SP_F_BEGIN(SP_MPI_Irecv) {                                                  \
            side.recv_bytes = f_bytes(type, count);                                 \
            if (!sp_mpi_wildcard(*source, *tag))                                    \
                sp_mpi_side_received(&side, sp_mpi_comm_f2c(*comm), *source, *tag, NULL); \
        }                                                                           \
        SP_F_CALL((buf, count, type, source, tag, comm, req, ierr));                \
        if (call.mode && ierr && *ierr == 0) {                                      \
            struct sp_mpi_request_info info = {SP_MPI_REQ_RECV, *tag, *source,      \
                                               sp_mpi_comm_f2c(*comm),              \
                                               !sp_mpi_wildcard(*source, *tag)};    \
            sp_mpi_request_track(FREQ(*req), &info);                                \
        }                                                                           \
    }

/* A completed Fortran request: what the side data gets from it. */
static void f_completed(sp_capture_mpi *side, F request, const F *status, int *peers,
                        int *receives)
{
    struct sp_mpi_request_info info;
    if (!sp_mpi_request_take(FREQ(request), &info))
        return;
    int rank = info.rank, tag = info.tag;
    if (info.kind == SP_MPI_REQ_RECV && status) {
        rank = status[0];
        tag = status[1];
    }
    int64_t peer = sp_mpi_world_peer(info.comm, rank);
    if (*peers == 0 || (*peers == 1 && side->peer != peer))
        (*peers)++;
    side->peer = *peers == 1 ? peer : -1;
    if (info.kind != SP_MPI_REQ_RECV || info.ended || peer < 0 || tag < 0)
        return;
    if (++*receives == 1) {
        side->source = peer;
        side->recv_tag = tag;
        side->comm = sp_mpi_comm_id(info.comm);
    } else {
        side->source = side->recv_tag = side->comm = -1;
    }
}

typedef void (*f_wait_fn)(F *, F *, F *);
#define F_WAIT(sym)                                                                 \
    SP_EXPORT void sym(F *req, F *status, F *ierr);                                 \
    SP_EXPORT void sym(F *req, F *status, F *ierr)                                  \
    {                                                                               \
        SP_F_REAL(sym, f_wait_fn)                                                   \
        F before = *req;                                                            \
        SP_F_BEGIN(SP_MPI_Wait) {}                                                  \
        sp_mpi_call_start(&call);                                                   \
        real(req, status, ierr);                                                    \
        if (call.mode && ierr && *ierr == 0) {                                      \
            int peers = 0, receives = 0;                                            \
            f_completed(&side, before, sp_mpi_f_status_ignored(status) ? NULL : status, \
                        &peers, &receives);                                         \
        }                                                                           \
        sp_mpi_call_end(&call, &side);                                              \
    }

/* Open MPI's Fortran MPI_STATUS_SIZE is 6 integers (its C status, 24 B). */
#define F_STATUS_INTS 6
typedef void (*f_waitall_fn)(const F *, F *, F *, F *);
#define F_WAITALL(sym)                                                              \
    SP_EXPORT void sym(const F *count, F *reqs, F *statuses, F *ierr);              \
    SP_EXPORT void sym(const F *count, F *reqs, F *statuses, F *ierr)               \
    {                                                                               \
        SP_F_REAL(sym, f_waitall_fn)                                                \
        F small[32], *before = NULL;                                                \
        int n = count ? *count : 0;                                                 \
        SP_F_BEGIN(SP_MPI_Waitall) {                                                \
            before = n <= 32 ? small : malloc((size_t)n * sizeof *before);          \
            for (int i = 0; before && i < n; i++)                                   \
                before[i] = reqs[i];                                                \
        }                                                                           \
        sp_mpi_call_start(&call);                                                   \
        real(count, reqs, statuses, ierr);                                          \
        if (call.mode && before && ierr && *ierr == 0) {                            \
            int peers = 0, receives = 0;                                            \
            int ignored = sp_mpi_f_statuses_ignored(statuses);                        \
            for (int i = 0; i < n; i++)                                             \
                f_completed(&side, before[i], ignored ? NULL : statuses + i * F_STATUS_INTS, \
                            &peers, &receives);                                     \
        }                                                                           \
        sp_mpi_call_end(&call, &side);                                              \
        if (before != small)                                                        \
            free(before);                                                           \
    }

/* ---- collectives --------------------------------------------------------- */

typedef void (*f_barrier_fn)(const F *, F *);
#define F_BARRIER(sym)                                                              \
    SP_EXPORT void sym(const F *comm, F *ierr);                                     \
    SP_EXPORT void sym(const F *comm, F *ierr)                                      \
    {                                                                               \
        SP_F_REAL(sym, f_barrier_fn)                                                \
        SP_F_BEGIN(SP_MPI_Barrier) { side.comm = sp_mpi_comm_id(sp_mpi_comm_f2c(*comm)); } \
        SP_F_CALL((comm, ierr));                                                    \
    }

typedef void (*f_bcast_fn)(void *, const F *, const F *, const F *, const F *, F *);
#define F_BCAST(sym)                                                                \
    SP_EXPORT void sym(void *buf, const F *count, const F *type, const F *root,     \
                       const F *comm, F *ierr);                                     \
    SP_EXPORT void sym(void *buf, const F *count, const F *type, const F *root,     \
                       const F *comm, F *ierr)                                      \
    {                                                                               \
        SP_F_REAL(sym, f_bcast_fn)                                                  \
        SP_F_BEGIN(SP_MPI_Bcast) {                                                  \
            sp_mpi_handle c = sp_mpi_comm_f2c(*comm);                               \
            int64_t b = f_bytes(type, count);                                       \
            if (sp_mpi_comm_rank(c) == *root)                                       \
                side.sent_bytes = b;                                                \
            else                                                                    \
                side.recv_bytes = b;                                                \
            side.peer = sp_mpi_world_peer(c, *root);                                \
            side.comm = sp_mpi_comm_id(c);                                          \
        }                                                                           \
        SP_F_CALL((buf, count, type, root, comm, ierr));                            \
    }

typedef void (*f_allreduce_fn)(const void *, void *, const F *, const F *, const F *, const F *,
                               F *);
#define F_ALLREDUCE(sym)                                                            \
    SP_EXPORT void sym(const void *sbuf, void *rbuf, const F *count, const F *type, \
                       const F *op, const F *comm, F *ierr);                        \
    SP_EXPORT void sym(const void *sbuf, void *rbuf, const F *count, const F *type, \
                       const F *op, const F *comm, F *ierr)                         \
    {                                                                               \
        SP_F_REAL(sym, f_allreduce_fn)                                              \
        SP_F_BEGIN(SP_MPI_Allreduce) {                                              \
            side.recv_bytes = f_bytes(type, count);                                 \
            side.sent_bytes = sp_mpi_f_in_place(sbuf) ? 0 : side.recv_bytes;        \
            side.comm = sp_mpi_comm_id(sp_mpi_comm_f2c(*comm));                     \
        }                                                                           \
        SP_F_CALL((sbuf, rbuf, count, type, op, comm, ierr));                       \
    }

typedef void (*f_reduce_fn)(const void *, void *, const F *, const F *, const F *, const F *,
                            const F *, F *);
#define F_REDUCE(sym)                                                               \
    SP_EXPORT void sym(const void *sbuf, void *rbuf, const F *count, const F *type, \
                       const F *op, const F *root, const F *comm, F *ierr);         \
    SP_EXPORT void sym(const void *sbuf, void *rbuf, const F *count, const F *type, \
                       const F *op, const F *root, const F *comm, F *ierr)          \
    {                                                                               \
        SP_F_REAL(sym, f_reduce_fn)                                                 \
        SP_F_BEGIN(SP_MPI_Reduce) {                                                 \
            sp_mpi_handle c = sp_mpi_comm_f2c(*comm);                               \
            int64_t b = f_bytes(type, count);                                       \
            side.sent_bytes = sp_mpi_f_in_place(sbuf) ? 0 : b;                      \
            if (sp_mpi_comm_rank(c) == *root)                                       \
                side.recv_bytes = b;                                                \
            side.peer = sp_mpi_world_peer(c, *root);                                \
            side.comm = sp_mpi_comm_id(c);                                          \
        }                                                                           \
        SP_F_CALL((sbuf, rbuf, count, type, op, root, comm, ierr));                 \
    }

/* Four spellings of each, and Open MPI's ompi_<name>_f, which its mpi_f08
 * module calls (same arguments: the handles' MPI_VAL integers). */
#define SP_F_ALL(MACRO, base, upper, ...)                                           \
    MACRO(mpi_##base##_, ##__VA_ARGS__)                                             \
    MACRO(mpi_##base##__, ##__VA_ARGS__)                                            \
    MACRO(mpi_##base, ##__VA_ARGS__)                                                \
    MACRO(MPI_##upper, ##__VA_ARGS__)                                               \
    MACRO(ompi_##base##_f, ##__VA_ARGS__)

SP_F_ALL(F_SEND, send, SEND, SP_MPI_Send)
SP_F_ALL(F_SEND, ssend, SSEND, SP_MPI_Ssend)
SP_F_ALL(F_ISEND, isend, ISEND, SP_MPI_Isend)
SP_F_ALL(F_RECV, recv, RECV)
SP_F_ALL(F_IRECV, irecv, IRECV)
SP_F_ALL(F_WAIT, wait, WAIT)
SP_F_ALL(F_WAITALL, waitall, WAITALL)
SP_F_ALL(F_BARRIER, barrier, BARRIER)
SP_F_ALL(F_BCAST, bcast, BCAST)
SP_F_ALL(F_ALLREDUCE, allreduce, ALLREDUCE)
SP_F_ALL(F_REDUCE, reduce, REDUCE)
