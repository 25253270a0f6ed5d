/* mpi_wrap_completion.c - MPI_Wait*, MPI_Test*: the calls where
 * non-blocking operations complete.  A completed receive is a message end
 * (source and tag from the status); when the program passed
 * MPI_STATUS(ES)_IGNORE the wrapper passes statuses of its own, which MPI
 * fills the same way. */
#include <stdlib.h>

#include "mpi_wrap_common.h"

typedef int (*wait_fn)(H *req, void *status);
typedef int (*test_fn)(H *req, int *flag, void *status);
typedef int (*waitall_fn)(int count, H *reqs, void *statuses);
typedef int (*testall_fn)(int count, H *reqs, int *flag, void *statuses);
typedef int (*waitany_fn)(int count, H *reqs, int *index, void *status);
typedef int (*testany_fn)(int count, H *reqs, int *index, int *flag, void *status);
typedef int (*waitsome_fn)(int incount, H *reqs, int *outcount, int *indices, void *statuses);

#define SMALL 32
#define MPI_UNDEFINED_BOTH (-32766) /* MPI_UNDEFINED of both families */

/* The requests of one call, read before MPI overwrites them, and room for
 * statuses. */
struct completion {
    H small[SMALL];
    H *handles;
    sp_mpi_status_buf small_status[SMALL / 2];
    void *own_statuses;
    int count;
    int peers;              /* distinct peers seen: 0, 1, 2 (= many) */
    int receives;           /* message ends seen */
};

static void snapshot(struct completion *c, int count, const H *reqs, void **statuses)
{
    c->count = count > 0 && reqs ? count : 0;
    c->handles = c->count <= SMALL ? c->small : malloc((size_t)c->count * sizeof *c->handles);
    if (!c->handles)
        c->count = 0;
    for (int i = 0; i < c->count; i++)
        c->handles[i] = sp_mpi_handle_at(reqs, i);
    c->own_statuses = NULL;
    c->peers = c->receives = 0;
    if (statuses && sp_mpi_status_ignored(*statuses) && c->count) {
        size_t bytes = (size_t)c->count * sp_mpi_status_size();
        c->own_statuses = bytes <= sizeof c->small_status ? (void *)c->small_status : malloc(bytes);
        if (c->own_statuses)
            *statuses = c->own_statuses;
    }
}

static void release(struct completion *c)
{
    if (c->handles != c->small)
        free(c->handles);
    if (c->own_statuses && c->own_statuses != (void *)c->small_status)
        free(c->own_statuses);
}

/* Request i of the snapshot completed with status `index` of statuses. */
static void completed(struct completion *c, sp_capture_mpi *side, int i, const void *statuses,
                      int index)
{
    struct sp_mpi_request_info info;
    if (i < 0 || i >= c->count || !sp_mpi_request_take(c->handles[i], &info))
        return;
    int rank = info.rank, tag = info.tag;
    if (info.kind == SP_MPI_REQ_RECV && !sp_mpi_status_ignored(statuses)) {
        rank = sp_mpi_status_source(statuses, index);
        tag = sp_mpi_status_tag(statuses, index);
    }
    int64_t peer = sp_mpi_world_peer(info.comm, rank);
    if (c->peers == 0 || (c->peers == 1 && side->peer != peer))
        c->peers++;
    side->peer = c->peers == 1 ? peer : -1;
    if (info.kind != SP_MPI_REQ_RECV || info.ended || peer < 0 || tag < 0)
        return;
    /* A receive posted with wildcards ends here. */
    if (++c->receives == 1) {
        side->source = peer;
        side->recv_tag = tag;
        side->comm = sp_mpi_comm_id(info.comm);
    } else {
        /* one event, several such messages: no single message end */
        side->source = side->recv_tag = side->comm = -1;
    }
}

SP_EXPORT int MPI_Wait(H *req, void *status);
SP_EXPORT int MPI_Wait(H *req, void *status)
{
    SP_MPI_REAL(MPI_Wait, wait_fn);
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    struct completion c;
    int tracked = sp_mpi_tracking();
    sp_mpi_call_begin(SP_MPI_Wait, &call, SP_MPI_CALLER);
    if (tracked)
        snapshot(&c, 1, req, &status);
    sp_mpi_call_start(&call);
    int rc = real(req, status);
    if (tracked && rc == 0)
        completed(&c, &side, 0, status, 0);
    sp_mpi_call_end(&call, &side);
    if (tracked)
        release(&c);
    return rc;
}

SP_EXPORT int MPI_Test(H *req, int *flag, void *status);
SP_EXPORT int MPI_Test(H *req, int *flag, void *status)
{
    SP_MPI_REAL(MPI_Test, test_fn);
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    struct completion c;
    int tracked = sp_mpi_tracking();
    sp_mpi_call_begin(SP_MPI_Test, &call, SP_MPI_CALLER);
    if (tracked)
        snapshot(&c, 1, req, &status);
    sp_mpi_call_start(&call);
    int rc = real(req, flag, status);
    if (tracked && rc == 0 && flag && *flag)
        completed(&c, &side, 0, status, 0);
    sp_mpi_call_end(&call, &side);
    if (tracked)
        release(&c);
    return rc;
}

static int all_completed(enum sp_mpi_fn fn, void *real, int count, H *reqs, int *flag,
                         void *statuses, uintptr_t caller)
{
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    struct completion c;
    int tracked = sp_mpi_tracking();
    sp_mpi_call_begin(fn, &call, caller);
    if (tracked)
        snapshot(&c, count, reqs, &statuses);
    sp_mpi_call_start(&call);
    int rc = flag ? ((testall_fn)real)(count, reqs, flag, statuses)
                  : ((waitall_fn)real)(count, reqs, statuses);
    if (tracked && rc == 0 && (!flag || *flag))
        for (int i = 0; i < c.count; i++)
            completed(&c, &side, i, statuses, i);
    sp_mpi_call_end(&call, &side);
    if (tracked)
        release(&c);
    return rc;
}

SP_EXPORT int MPI_Waitall(int count, H *reqs, void *statuses);
SP_EXPORT int MPI_Waitall(int count, H *reqs, void *statuses)
{
    SP_MPI_REAL(MPI_Waitall, waitall_fn);
    return all_completed(SP_MPI_Waitall, (void *)real, count, reqs, NULL, statuses,
                         SP_MPI_CALLER);
}

SP_EXPORT int MPI_Testall(int count, H *reqs, int *flag, void *statuses);
SP_EXPORT int MPI_Testall(int count, H *reqs, int *flag, void *statuses)
{
    SP_MPI_REAL(MPI_Testall, testall_fn);
    int ignored = 0;
    return all_completed(SP_MPI_Testall, (void *)real, count, reqs, flag ? flag : &ignored,
                         statuses, SP_MPI_CALLER);
}

static int any_completed(enum sp_mpi_fn fn, void *real, int count, H *reqs, int *index,
                         int *flag, void *status, uintptr_t caller)
{
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    struct completion c;
    int tracked = sp_mpi_tracking();
    sp_mpi_call_begin(fn, &call, caller);
    if (tracked) {
        snapshot(&c, count, reqs, NULL);
        if (sp_mpi_status_ignored(status))
            status = c.small_status;
    }
    sp_mpi_call_start(&call);
    int rc = flag ? ((testany_fn)real)(count, reqs, index, flag, status)
                  : ((waitany_fn)real)(count, reqs, index, status);
    if (tracked && rc == 0 && (!flag || *flag) && index && *index != MPI_UNDEFINED_BOTH)
        completed(&c, &side, *index, status, 0);
    sp_mpi_call_end(&call, &side);
    if (tracked)
        release(&c);
    return rc;
}

SP_EXPORT int MPI_Waitany(int count, H *reqs, int *index, void *status);
SP_EXPORT int MPI_Waitany(int count, H *reqs, int *index, void *status)
{
    SP_MPI_REAL(MPI_Waitany, waitany_fn);
    return any_completed(SP_MPI_Waitany, (void *)real, count, reqs, index, NULL, status,
                         SP_MPI_CALLER);
}

SP_EXPORT int MPI_Testany(int count, H *reqs, int *index, int *flag, void *status);
SP_EXPORT int MPI_Testany(int count, H *reqs, int *index, int *flag, void *status)
{
    SP_MPI_REAL(MPI_Testany, testany_fn);
    int ignored = 0;
    return any_completed(SP_MPI_Testany, (void *)real, count, reqs, index,
                         flag ? flag : &ignored, status, SP_MPI_CALLER);
}

static int some_completed(enum sp_mpi_fn fn, waitsome_fn real, int incount, H *reqs,
                          int *outcount, int *indices, void *statuses, uintptr_t caller)
{
    struct sp_mpi_call call;
    sp_capture_mpi side = sp_mpi_side_none();
    struct completion c;
    int tracked = sp_mpi_tracking();
    sp_mpi_call_begin(fn, &call, caller);
    if (tracked)
        snapshot(&c, incount, reqs, &statuses);
    sp_mpi_call_start(&call);
    int rc = real(incount, reqs, outcount, indices, statuses);
    if (tracked && rc == 0 && outcount && *outcount != MPI_UNDEFINED_BOTH && indices)
        for (int j = 0; j < *outcount; j++)
            completed(&c, &side, indices[j], statuses, j);
    sp_mpi_call_end(&call, &side);
    if (tracked)
        release(&c);
    return rc;
}

SP_EXPORT int MPI_Waitsome(int incount, H *reqs, int *outcount, int *indices, void *statuses);
SP_EXPORT int MPI_Waitsome(int incount, H *reqs, int *outcount, int *indices, void *statuses)
{
    SP_MPI_REAL(MPI_Waitsome, waitsome_fn);
    return some_completed(SP_MPI_Waitsome, real, incount, reqs, outcount, indices, statuses,
                          SP_MPI_CALLER);
}

SP_EXPORT int MPI_Testsome(int incount, H *reqs, int *outcount, int *indices, void *statuses);
SP_EXPORT int MPI_Testsome(int incount, H *reqs, int *outcount, int *indices, void *statuses)
{
    SP_MPI_REAL(MPI_Testsome, waitsome_fn);
    return some_completed(SP_MPI_Testsome, real, incount, reqs, outcount, indices, statuses,
                          SP_MPI_CALLER);
}
