/* mpi_requests.h - what a non-blocking call started, kept until the call
 * that completes its request (MPI_Wait*, MPI_Test*) records the message:
 * a receive's source and tag are known only from the status there. */
#ifndef SCOPEPROF_MPI_REQUESTS_H
#define SCOPEPROF_MPI_REQUESTS_H

#include "mpi_abi.h"

enum { SP_MPI_REQ_SEND = 1, SP_MPI_REQ_RECV = 2, SP_MPI_REQ_OTHER = 3 };

struct sp_mpi_request_info {
    int kind;               /* SP_MPI_REQ_* */
    int tag;                /* as posted (may be MPI_ANY_TAG) */
    int rank;               /* destination or source as posted, a rank of comm */
    sp_mpi_handle comm;
    int ended;              /* the message end was recorded when posted */
};

/* Bounded: a request never completed through a wrapped call (freed,
 * persistent, completed by an unwrapped function) is overwritten later. */
void sp_mpi_request_track(sp_mpi_handle request, const struct sp_mpi_request_info *info);
/* 1 with *out filled (and the entry removed), 0 when unknown. */
int sp_mpi_request_take(sp_mpi_handle request, struct sp_mpi_request_info *out);

#endif
