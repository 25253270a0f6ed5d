/* mpi_wrap_fortran_calls.c - the Fortran bindings (mpif.h, `use mpi`) of
 * the most used MPI calls that take time, in the four spellings compilers
 * produce (mpi_send_, mpi_send__, mpi_send, MPI_SEND).  Open MPI's Fortran
 * library calls PMPI_ directly, so its Fortran programs would record
 * nothing: these wrappers record the call under its C name, reading the
 * arguments through MPI_Comm_f2c/MPI_Type_f2c.  MPICH's Fortran library
 * calls the C bindings, whose wrappers record the call: there these only
 * chain.  Every argument is a pointer (Fortran passes by reference);
 * MPI_Fint is a default INTEGER (int). */
#include <stdlib.h>

#include "mpi_wrap_fortran_common.h"

/* ---- point to point ------------------------------------------------------ */

/* Requests are kept for the completion calls only where these record. */
static int f_tracking(void)
{
    return record_fortran() && sp_mpi_tracking();
}

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
        if (f_tracking() && ierr && *ierr == 0) {                                   \
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
            else                                                                    \
                side.peer = sp_mpi_world_peer(sp_mpi_comm_f2c(*comm), *source);     \
        }                                                                           \
        SP_F_CALL((buf, count, type, source, tag, comm, req, ierr));                \
        if (f_tracking() && ierr && *ierr == 0) {                                   \
            struct sp_mpi_request_info info = {SP_MPI_REQ_RECV, *tag, *source,      \
                                               sp_mpi_comm_f2c(*comm),              \
                                               !sp_mpi_wildcard(*source, *tag)};    \
            sp_mpi_request_track(FREQ(*req), &info);                                \
        }                                                                           \
    }

/* The source and tag of a received message: from the status unless it is
 * ignored or the call failed (then as posted, maybe wildcards). */
static void f_received(sp_capture_mpi *side, const F *comm, int source, int tag, const F *status,
                       const F *ierr)
{
    int ok = ierr && *ierr == 0;
    if (ok && !sp_mpi_f_status_ignored(status)) {
        source = status[0];
        tag = status[1];
    }
    sp_mpi_side_received(side, sp_mpi_comm_f2c(*comm), source, ok ? tag : -1, NULL);
}

#define F_SENDRECV(sym)                                                             \
    SP_EXPORT void sym(const void *sbuf, const F *scount, const F *stype, const F *dest,  \
                       const F *stag, void *rbuf, const F *rcount, const F *rtype,  \
                       const F *source, const F *rtag, const F *comm, F *status, F *ierr); \
    SP_EXPORT void sym(const void *sbuf, const F *scount, const F *stype, const F *dest,  \
                       const F *stag, void *rbuf, const F *rcount, const F *rtype,  \
                       const F *source, const F *rtag, const F *comm, F *status, F *ierr) \
    {                                                                               \
        typedef void (*fn_t)(const void *, const F *, const F *, const F *, const F *, void *, \
                             const F *, const F *, const F *, const F *, const F *, F *, F *); \
        SP_F_REAL(sym, fn_t)                                                        \
        SP_F_BEGIN(SP_MPI_Sendrecv) {                                               \
            side.sent_bytes = f_bytes(stype, scount);                               \
            side.recv_bytes = f_bytes(rtype, rcount);                               \
            sp_mpi_side_send(&side, sp_mpi_comm_f2c(*comm), *dest, *stag);          \
        }                                                                           \
        sp_mpi_call_start(&call);                                                   \
        real(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status, \
             ierr);                                                                 \
        if (call.mode)                                                              \
            f_received(&side, comm, *source, *rtag, status, ierr);                  \
        sp_mpi_call_end(&call, &side);                                              \
    }

#define F_SENDRECV_REPLACE(sym)                                                     \
    SP_EXPORT void sym(void *buf, const F *count, const F *type, const F *dest,     \
                       const F *stag, const F *source, const F *rtag, const F *comm, \
                       F *status, F *ierr);                                         \
    SP_EXPORT void sym(void *buf, const F *count, const F *type, const F *dest,     \
                       const F *stag, const F *source, const F *rtag, const F *comm, \
                       F *status, F *ierr)                                          \
    {                                                                               \
        typedef void (*fn_t)(void *, const F *, const F *, const F *, const F *, const F *, \
                             const F *, const F *, F *, F *);                       \
        SP_F_REAL(sym, fn_t)                                                        \
        SP_F_BEGIN(SP_MPI_Sendrecv_replace) {                                       \
            side.sent_bytes = side.recv_bytes = f_bytes(type, count);               \
            sp_mpi_side_send(&side, sp_mpi_comm_f2c(*comm), *dest, *stag);          \
        }                                                                           \
        sp_mpi_call_start(&call);                                                   \
        real(buf, count, type, dest, stag, source, rtag, comm, status, ierr);       \
        if (call.mode)                                                              \
            f_received(&side, comm, *source, *rtag, status, ierr);                  \
        sp_mpi_call_end(&call, &side);                                              \
    }

/* Probes: the peer is the probed message's source (from the status). */
static int64_t f_probed(const F *comm, const F *source, const F *status, const F *ierr)
{
    int from = ierr && *ierr == 0 && !sp_mpi_f_status_ignored(status) ? status[0] : *source;
    return sp_mpi_world_peer(sp_mpi_comm_f2c(*comm), from);
}

#define F_PROBE(sym)                                                                \
    SP_EXPORT void sym(const F *source, const F *tag, const F *comm, F *status, F *ierr); \
    SP_EXPORT void sym(const F *source, const F *tag, const F *comm, F *status, F *ierr)  \
    {                                                                               \
        typedef void (*fn_t)(const F *, const F *, const F *, F *, F *);            \
        SP_F_REAL(sym, fn_t)                                                        \
        SP_F_BEGIN(SP_MPI_Probe) {}                                                 \
        sp_mpi_call_start(&call);                                                   \
        real(source, tag, comm, status, ierr);                                      \
        if (call.mode)                                                              \
            side.peer = f_probed(comm, source, status, ierr);                       \
        sp_mpi_call_end(&call, &side);                                              \
    }

#define F_IPROBE(sym)                                                               \
    SP_EXPORT void sym(const F *source, const F *tag, const F *comm, F *flag, F *status, \
                       F *ierr);                                                    \
    SP_EXPORT void sym(const F *source, const F *tag, const F *comm, F *flag, F *status, \
                       F *ierr)                                                     \
    {                                                                               \
        typedef void (*fn_t)(const F *, const F *, const F *, F *, F *, F *);       \
        SP_F_REAL(sym, fn_t)                                                        \
        SP_F_BEGIN(SP_MPI_Iprobe) {}                                                \
        sp_mpi_call_start(&call);                                                   \
        real(source, tag, comm, flag, status, ierr);                                \
        if (call.mode == SP_MPI_MODE_EVENTS && flag && *flag)                       \
            side.peer = f_probed(comm, source, status, ierr);                       \
        sp_mpi_call_end(&call, &side);                                              \
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


/* ---- completion ------------------------------------------------------------ */

/* Open MPI's Fortran MPI_STATUS_SIZE is 6 integers (its C status, 24 B);
 * only Open MPI's Fortran calls are recorded here. */
#define F_STATUS_INTS 6
#define F_UNDEFINED (-32766) /* MPI_UNDEFINED of both families */
#define F_SMALL 32

/* The requests of one completion call, read before MPI overwrites them. */
struct f_completion {
    F small[F_SMALL];
    F *before;
    int n;
    int peers;              /* distinct peers seen: 0, 1, 2 (= many) */
    int receives;           /* message ends seen */
};

/* Begin a completion call of fn on n requests; 1 when requests are
 * tracked (then f_done names what completed). */
static int f_completion_begin(enum sp_mpi_fn fn, struct sp_mpi_call *call,
                              struct f_completion *c, const F *count, const F *reqs,
                              uintptr_t caller)
{
    call->mode = SP_MPI_MODE_OFF;
    c->n = 0;
    c->before = c->small;
    c->peers = c->receives = 0;
    if (!record_fortran())
        return 0;
    sp_mpi_call_begin(fn, call, caller);
    int n = count && reqs ? *count : 0;
    if (sp_mpi_tracking() && n > 0) {
        c->before = n <= F_SMALL ? c->small : malloc((size_t)n * sizeof *c->before);
        if (!c->before)
            c->before = c->small;
        else
            c->n = n;
        for (int i = 0; i < c->n; i++)
            c->before[i] = reqs[i];
    }
    sp_mpi_call_start(call);
    return c->n > 0;
}

/* Request i (0-based) completed, with status k of `statuses` (an array
 * when `array`). */
static void f_done(struct f_completion *c, sp_capture_mpi *side, int i, const F *statuses,
                   int k, int array)
{
    if (i < 0 || i >= c->n)
        return;
    int ignored = array ? sp_mpi_f_statuses_ignored(statuses) : sp_mpi_f_status_ignored(statuses);
    f_completed(side, c->before[i], ignored ? NULL : statuses + k * F_STATUS_INTS, &c->peers,
                &c->receives);
}

static void f_completion_end(struct sp_mpi_call *call, const sp_capture_mpi *side,
                             struct f_completion *c)
{
    sp_mpi_call_end(call, side);
    if (c->before != c->small)
        free(c->before);
}

/* One wrapper: `count` and `reqs` name the requests, DONE (run after a
 * successful call, with `c` and `side`) says which completed. */
#define F_COMPLETION(sym, fn, params, call_args, count, DONE)                       \
    SP_EXPORT void sym params;                                                      \
    SP_EXPORT void sym params                                                       \
    {                                                                               \
        typedef void (*fn_t) params;                                                \
        SP_F_REAL(sym, fn_t)                                                        \
        struct sp_mpi_call call;                                                    \
        struct f_completion c;                                                      \
        sp_capture_mpi side = sp_mpi_side_none();                                   \
        int tracked = f_completion_begin(fn, &call, &c, count, reqs, SP_MPI_CALLER); \
        real call_args;                                                             \
        if (tracked && ierr && *ierr == 0) {                                        \
            DONE;                                                                   \
        }                                                                           \
        f_completion_end(&call, &side, &c);                                         \
    }

static const F f_one = 1;

#define F_WAIT(sym)                                                                 \
    F_COMPLETION(sym, SP_MPI_Wait, (F *reqs, F *status, F *ierr), (reqs, status, ierr), \
                 &f_one, f_done(&c, &side, 0, status, 0, 0))
#define F_TEST_ONE(sym)                                                                 \
    F_COMPLETION(sym, SP_MPI_Test, (F *reqs, F *flag, F *status, F *ierr),          \
                 (reqs, flag, status, ierr), &f_one,                                \
                 if (*flag) f_done(&c, &side, 0, status, 0, 0))

#define F_EVERY(n) for (int i = 0; i < (n); i++) f_done(&c, &side, i, statuses, i, 1)
#define F_WAITALL(sym)                                                              \
    F_COMPLETION(sym, SP_MPI_Waitall, (const F *count, F *reqs, F *statuses, F *ierr), \
                 (count, reqs, statuses, ierr), count, F_EVERY(c.n))
#define F_TESTALL(sym)                                                              \
    F_COMPLETION(sym, SP_MPI_Testall, (const F *count, F *reqs, F *flag, F *statuses, F *ierr), \
                 (count, reqs, flag, statuses, ierr), count, if (*flag) F_EVERY(c.n))

/* Fortran indices count from 1. */
#define F_INDEX_DONE                                                                \
    if (*index != F_UNDEFINED) f_done(&c, &side, *index - 1, status, 0, 0)
#define F_WAITANY(sym)                                                              \
    F_COMPLETION(sym, SP_MPI_Waitany, (const F *count, F *reqs, F *index, F *status, F *ierr), \
                 (count, reqs, index, status, ierr), count, F_INDEX_DONE)
#define F_TESTANY(sym)                                                              \
    F_COMPLETION(sym, SP_MPI_Testany,                                               \
                 (const F *count, F *reqs, F *index, F *flag, F *status, F *ierr),  \
                 (count, reqs, index, flag, status, ierr), count, if (*flag) F_INDEX_DONE)

#define F_SOME(sym, fn)                                                             \
    F_COMPLETION(sym, fn,                                                           \
                 (const F *incount, F *reqs, F *outcount, F *indices, F *statuses, F *ierr), \
                 (incount, reqs, outcount, indices, statuses, ierr), incount,       \
                 if (*outcount != F_UNDEFINED) for (int j = 0; j < *outcount; j++)  \
                     f_done(&c, &side, indices[j] - 1, statuses, j, 1))

SP_F_ALL(F_SEND, send, SEND, SP_MPI_Send)
SP_F_ALL(F_SEND, ssend, SSEND, SP_MPI_Ssend)
SP_F_ALL(F_SEND, bsend, BSEND, SP_MPI_Bsend)
SP_F_ALL(F_SEND, rsend, RSEND, SP_MPI_Rsend)
SP_F_ALL(F_ISEND, isend, ISEND, SP_MPI_Isend)
SP_F_ALL(F_ISEND, issend, ISSEND, SP_MPI_Issend)
SP_F_ALL(F_RECV, recv, RECV)
SP_F_ALL(F_IRECV, irecv, IRECV)
SP_F_ALL(F_SENDRECV, sendrecv, SENDRECV)
SP_F_ALL(F_SENDRECV_REPLACE, sendrecv_replace, SENDRECV_REPLACE)
SP_F_ALL(F_PROBE, probe, PROBE)
SP_F_ALL(F_IPROBE, iprobe, IPROBE)
SP_F_ALL(F_WAIT, wait, WAIT)
SP_F_ALL(F_TEST_ONE, test, TEST)
SP_F_ALL(F_WAITALL, waitall, WAITALL)
SP_F_ALL(F_TESTALL, testall, TESTALL)
SP_F_ALL(F_WAITANY, waitany, WAITANY)
SP_F_ALL(F_TESTANY, testany, TESTANY)
SP_F_ALL(F_SOME, waitsome, WAITSOME, SP_MPI_Waitsome)
SP_F_ALL(F_SOME, testsome, TESTSOME, SP_MPI_Testsome)
