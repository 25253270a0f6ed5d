/* mpi_wrap_common.h - shared by the wrapper files: finding the real
 * function once, and the side data of a message end. */
#ifndef SCOPEPROF_MPI_WRAP_COMMON_H
#define SCOPEPROF_MPI_WRAP_COMMON_H

#include "base/shim.h"
#include "mpi_calls.h"
#include "mpi_lifecycle.h"
#include "mpi_requests.h"

typedef sp_mpi_handle H;

/* `real`: the next definition of the wrapper `name`, or return an error. */
#define SP_MPI_REAL(name, type)                                                    \
    static void *real_slot_##name;                                                 \
    type real = (type)sp_mpi_real(&real_slot_##name, #name, (const void *)name,    \
                                  __builtin_return_address(0));                    \
    if (!real)                                                                     \
        return SP_MPI_ERR_NO_LIBRARY

/* A status big enough for either family, for calls whose program passed
 * MPI_STATUS_IGNORE but whose source or tag we need. */
typedef union {
    char bytes[64];
    int64_t align;
} sp_mpi_status_buf;

/* Side data of a message sent to `dest` of comm. */
static inline void sp_mpi_side_send(sp_capture_mpi *side, H comm, int dest, int tag)
{
    side->peer = sp_mpi_world_peer(comm, dest);
    if (side->peer >= 0) {
        side->tag = tag;
        side->comm = sp_mpi_comm_id(comm);
    }
}

/* Side data of a message received from `source` of comm with `tag`
 * (from `status` unless it is ignored or NULL): a message end.  The peer
 * column takes the source unless the call already named one (Sendrecv). */
static inline void sp_mpi_side_received(sp_capture_mpi *side, H comm, int source, int tag,
                                        const void *status)
{
    if (status && !sp_mpi_status_ignored(status)) {
        source = sp_mpi_status_source(status, 0);
        tag = sp_mpi_status_tag(status, 0);
    }
    int64_t from = sp_mpi_world_peer(comm, source);
    if (side->peer < 0)
        side->peer = from;
    if (from >= 0 && tag >= 0) {
        side->source = from;
        side->recv_tag = tag;
        side->comm = sp_mpi_comm_id(comm);
    }
}

/* Is a wildcard involved, so the status is needed to name the message? */
static inline int sp_mpi_wildcard(int source, int tag)
{
    return source == sp_mpi_any_source() || tag == -1 /* MPI_ANY_TAG, both families */;
}

#endif
