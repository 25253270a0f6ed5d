/* mpi_wrap_p2p.c - point-to-point calls: each records its region with the
 * bytes of its buffer arguments, the peer as a world rank, and what names
 * the message (tag, communicator) for the timeline's message lines. */
#include "mpi_wrap_common.h"

typedef int (*send_fn)(const void *buf, int count, H type, int dest, int tag, H comm);
typedef int (*isend_fn)(const void *buf, int count, H type, int dest, int tag, H comm, H *req);
typedef int (*recv_fn)(void *buf, int count, H type, int source, int tag, H comm, void *status);
typedef int (*irecv_fn)(void *buf, int count, H type, int source, int tag, H comm, H *req);
typedef int (*sendrecv_fn)(const void *sbuf, int scount, H stype, int dest, int stag, void *rbuf,
                           int rcount, H rtype, int source, int rtag, H comm, void *status);
typedef int (*sendrecv_replace_fn)(void *buf, int count, H type, int dest, int stag, int source,
                                   int rtag, H comm, void *status);
typedef int (*probe_fn)(int source, int tag, H comm, void *status);
typedef int (*iprobe_fn)(int source, int tag, H comm, int *flag, void *status);

static inline int blocking_send(enum sp_mpi_fn fn, send_fn real, const void *buf, int count,
                                H type, int dest, int tag, H comm, uintptr_t caller)
{
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    if (sp_mpi_call_begin(fn, &call, caller)) {
        side.sent_bytes = sp_mpi_bytes(type, count);
        sp_mpi_side_send(&side, comm, dest, tag);
    }
    sp_mpi_call_start(&call);
    int rc = real(buf, count, type, dest, tag, comm);
    sp_mpi_call_end(&call, &side);
    return rc;
}

#define SP_BLOCKING_SEND(name)                                                     \
    SP_EXPORT int name(const void *buf, int count, H type, int dest, int tag, H comm); \
    SP_EXPORT int name(const void *buf, int count, H type, int dest, int tag, H comm)  \
    {                                                                              \
        SP_MPI_REAL(name, send_fn);                                                \
        return blocking_send(SP_##name, real, buf, count, type, dest, tag, comm,   \
                             SP_MPI_CALLER);                                       \
    }

SP_BLOCKING_SEND(MPI_Send)
SP_BLOCKING_SEND(MPI_Ssend)
SP_BLOCKING_SEND(MPI_Bsend)
SP_BLOCKING_SEND(MPI_Rsend)

static inline int nonblocking_send(enum sp_mpi_fn fn, isend_fn real, const void *buf, int count,
                                   H type, int dest, int tag, H comm, H *req, uintptr_t caller)
{
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    int tracked = sp_mpi_tracking();
    if (sp_mpi_call_begin(fn, &call, caller)) {
        side.sent_bytes = sp_mpi_bytes(type, count);
        sp_mpi_side_send(&side, comm, dest, tag);
    }
    sp_mpi_call_start(&call);
    int rc = real(buf, count, type, dest, tag, comm, req);
    sp_mpi_call_end(&call, &side);
    if (rc == 0 && tracked && req) {
        struct sp_mpi_request_info info = {SP_MPI_REQ_SEND, tag, dest, comm, 1};
        sp_mpi_request_track(sp_mpi_handle_at(req, 0), &info);
    }
    return rc;
}

#define SP_NONBLOCKING_SEND(name)                                                  \
    SP_EXPORT int name(const void *buf, int count, H type, int dest, int tag, H comm, H *req); \
    SP_EXPORT int name(const void *buf, int count, H type, int dest, int tag, H comm, H *req)  \
    {                                                                              \
        SP_MPI_REAL(name, isend_fn);                                               \
        return nonblocking_send(SP_##name, real, buf, count, type, dest, tag, comm, req, \
                                SP_MPI_CALLER);                                    \
    }

SP_NONBLOCKING_SEND(MPI_Isend)
SP_NONBLOCKING_SEND(MPI_Issend)

SP_EXPORT int MPI_Recv(void *buf, int count, H type, int source, int tag, H comm, void *status);
SP_EXPORT int MPI_Recv(void *buf, int count, H type, int source, int tag, H comm, void *status)
{
    SP_MPI_REAL(MPI_Recv, recv_fn);
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    sp_mpi_status_buf own;
    if (sp_mpi_call_begin(SP_MPI_Recv, &call, SP_MPI_CALLER)) {
        side.recv_bytes = sp_mpi_bytes(type, count);
        if (sp_mpi_status_ignored(status) && sp_mpi_wildcard(source, tag))
            status = own.bytes;
    }
    sp_mpi_call_start(&call);
    int rc = real(buf, count, type, source, tag, comm, status);
    if (call.mode)
        sp_mpi_side_received(&side, comm, source, rc == 0 ? tag : -1, rc == 0 ? status : NULL);
    sp_mpi_call_end(&call, &side);
    return rc;
}

SP_EXPORT int MPI_Irecv(void *buf, int count, H type, int source, int tag, H comm, H *req);
SP_EXPORT int MPI_Irecv(void *buf, int count, H type, int source, int tag, H comm, H *req)
{
    SP_MPI_REAL(MPI_Irecv, irecv_fn);
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    int tracked = sp_mpi_tracking();
    if (sp_mpi_call_begin(SP_MPI_Irecv, &call, SP_MPI_CALLER)) {
        side.recv_bytes = sp_mpi_bytes(type, count);
        /* Source and tag known: the message end is the posting call, in
         * posting order, which is MPI's matching order.  Otherwise the call
         * that completes the request resolves them from its status. */
        if (!sp_mpi_wildcard(source, tag))
            sp_mpi_side_received(&side, comm, source, tag, NULL);
        else
            side.peer = sp_mpi_world_peer(comm, source);
    }
    sp_mpi_call_start(&call);
    int rc = real(buf, count, type, source, tag, comm, req);
    sp_mpi_call_end(&call, &side);
    if (rc == 0 && tracked && req) {
        struct sp_mpi_request_info info = {SP_MPI_REQ_RECV, tag, source, comm,
                                           !sp_mpi_wildcard(source, tag)};
        sp_mpi_request_track(sp_mpi_handle_at(req, 0), &info);
    }
    return rc;
}

SP_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, H stype, int dest, int stag, void *rbuf,
                           int rcount, H rtype, int source, int rtag, H comm, void *status);
SP_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, H stype, int dest, int stag, void *rbuf,
                           int rcount, H rtype, int source, int rtag, H comm, void *status)
{
    SP_MPI_REAL(MPI_Sendrecv, sendrecv_fn);
    sp_mpi_status_buf own;
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    if (sp_mpi_call_begin(SP_MPI_Sendrecv, &call, SP_MPI_CALLER)) {
        side.sent_bytes = sp_mpi_bytes(stype, scount);
        side.recv_bytes = sp_mpi_bytes(rtype, rcount);
        sp_mpi_side_send(&side, comm, dest, stag);
        if (sp_mpi_status_ignored(status) && sp_mpi_wildcard(source, rtag))
            status = own.bytes;
    }
    sp_mpi_call_start(&call);
    int rc = real(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
    if (call.mode && rc == 0)
        sp_mpi_side_received(&side, comm, source, rtag, status);
    sp_mpi_call_end(&call, &side);
    return rc;
}

SP_EXPORT int MPI_Sendrecv_replace(void *buf, int count, H type, int dest, int stag, int source,
                                   int rtag, H comm, void *status);
SP_EXPORT int MPI_Sendrecv_replace(void *buf, int count, H type, int dest, int stag, int source,
                                   int rtag, H comm, void *status)
{
    SP_MPI_REAL(MPI_Sendrecv_replace, sendrecv_replace_fn);
    sp_mpi_status_buf own;
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    if (sp_mpi_call_begin(SP_MPI_Sendrecv_replace, &call, SP_MPI_CALLER)) {
        side.sent_bytes = side.recv_bytes = sp_mpi_bytes(type, count);
        sp_mpi_side_send(&side, comm, dest, stag);
        if (sp_mpi_status_ignored(status) && sp_mpi_wildcard(source, rtag))
            status = own.bytes;
    }
    sp_mpi_call_start(&call);
    int rc = real(buf, count, type, dest, stag, source, rtag, comm, status);
    if (call.mode && rc == 0)
        sp_mpi_side_received(&side, comm, source, rtag, status);
    sp_mpi_call_end(&call, &side);
    return rc;
}

SP_EXPORT int MPI_Probe(int source, int tag, H comm, void *status);
SP_EXPORT int MPI_Probe(int source, int tag, H comm, void *status)
{
    SP_MPI_REAL(MPI_Probe, probe_fn);
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    sp_mpi_call_begin(SP_MPI_Probe, &call, SP_MPI_CALLER);
    sp_mpi_call_start(&call);
    int rc = real(source, tag, comm, status);
    if (call.mode) {
        int from = rc == 0 && !sp_mpi_status_ignored(status) ? sp_mpi_status_source(status, 0)
                                                              : source;
        side.peer = sp_mpi_world_peer(comm, from);
    }
    sp_mpi_call_end(&call, &side);
    return rc;
}

SP_EXPORT int MPI_Iprobe(int source, int tag, H comm, int *flag, void *status);
SP_EXPORT int MPI_Iprobe(int source, int tag, H comm, int *flag, void *status)
{
    SP_MPI_REAL(MPI_Iprobe, iprobe_fn);
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    sp_mpi_call_begin(SP_MPI_Iprobe, &call, SP_MPI_CALLER);
    sp_mpi_call_start(&call);
    int rc = real(source, tag, comm, flag, status);
    if (call.mode == SP_MPI_MODE_EVENTS && rc == 0 && flag && *flag) {
        int from = !sp_mpi_status_ignored(status) ? sp_mpi_status_source(status, 0) : source;
        side.peer = sp_mpi_world_peer(comm, from);
    }
    sp_mpi_call_end(&call, &side);
    return rc;
}
