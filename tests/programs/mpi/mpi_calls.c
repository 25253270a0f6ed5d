/* mpi_calls.c - MPI calls of every recorded family with exact, rank-
 * dependent bytes and peers, for test_mpi_calls.c (4 ranks).  Comments give
 * what rank r of n records.  Argument: the number of MPI_Test calls of the
 * polling loop (default 1000). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

/* MPICH's MPI_STATUSES_IGNORE is (MPI_Status *)1, which gcc takes for a
 * buffer of size 0 passed where MPI_Waitall's attribute expects count. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

int main(int argc, char **argv)
{
    long polls = argc > 1 ? atol(argv[1]) : 1000;
    int main_region = sp_region("main");
    sp_begin(main_region);

    int flag = -1;
    MPI_Initialized(&flag); /* before MPI_Init: not recorded, must not fail */
    if (flag != 0 || MPI_Init(&argc, &argv) != MPI_SUCCESS)
        return 1;
    int rank = 0, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int next = (rank + 1) % n, prev = (rank + n - 1) % n;
    int ints[100] = {0};
    double dbl[10] = {0}, one = rank, sum = 0;

    /* MPI_Send 400 B to next, MPI_Recv 400 B from prev (tag 7). */
    if (rank % 2 == 0) {
        MPI_Send(ints, 100, MPI_INT, next, 7, MPI_COMM_WORLD);
        MPI_Recv(ints, 100, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(ints, 100, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(ints, 100, MPI_INT, next, 7, MPI_COMM_WORLD);
    }

    /* MPI_Irecv 80 B from MPI_ANY_SOURCE, MPI_Isend 80 B to next, one
     * MPI_Waitall (statuses ignored) that receives from prev (tag 8). */
    MPI_Request req[2];
    MPI_Irecv(dbl, 10, MPI_DOUBLE, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(dbl, 10, MPI_DOUBLE, next, 8, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);

    /* MPI_Isend 4 B + MPI_Wait (peer next), MPI_Irecv any source +
     * MPI_Wait (peer prev from the status, tag 9). */
    MPI_Request sreq, rreq;
    int token = rank, got = -1;
    MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rreq);
    MPI_Isend(&token, 1, MPI_INT, next, 9, MPI_COMM_WORLD, &sreq);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    MPI_Wait(&rreq, MPI_STATUS_IGNORE);

    /* MPI_Sendrecv: 20 B to next, 20 B from prev. */
    MPI_Sendrecv(ints, 5, MPI_INT, next, 10, ints + 5, 5, MPI_INT, prev, 10, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    /* Sub-communicator of the ranks of equal parity: sub rank 0 (world
     * r = 0, 1) sends 8 B to sub rank 1 (world r + 2), tag 11. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int sub = -1;
    MPI_Comm_rank(half, &sub);
    if (sub == 0)
        MPI_Send(dbl, 1, MPI_DOUBLE, 1, 11, half);
    else if (sub == 1)
        MPI_Recv(dbl, 1, MPI_DOUBLE, 0, 11, half, MPI_STATUS_IGNORE);
    /* MPI_Bcast on it from sub rank 1 (world 2 or 3): 12 B. */
    MPI_Bcast(ints, 3, MPI_INT, 1, half);
    MPI_Comm_free(&half);

    /* Collectives on MPI_COMM_WORLD. */
    for (int i = 0; i < 3; i++)
        MPI_Barrier(MPI_COMM_WORLD);                      /* 3 calls */
    MPI_Bcast(ints, 16, MPI_INT, 1, MPI_COMM_WORLD);      /* 64 B, root 1 */
    for (int i = 0; i < 5; i++)                           /* 5 x 8 B */
        MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, ints, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* 16 B in place */
    MPI_Reduce(dbl, dbl + 2, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD); /* 16 B, root 0 */
    MPI_Gather(&token, 1, MPI_INT, ints, 1, MPI_INT, 2, MPI_COMM_WORLD); /* 4 B; root gets 4n */
    MPI_Allgather(&token, 1, MPI_INT, ints, 1, MPI_INT, MPI_COMM_WORLD); /* 4 B, 4n B */
    MPI_Alltoall(ints, 2, MPI_INT, ints + 50, 2, MPI_INT, MPI_COMM_WORLD); /* 8n B each way */
    /* A derived datatype: 3 ints, two of them = 24 B from root 0. */
    MPI_Datatype triple;
    MPI_Type_contiguous(3, MPI_INT, &triple);
    MPI_Type_commit(&triple);
    MPI_Bcast(ints, 2, triple, 0, MPI_COMM_WORLD);
    MPI_Type_free(&triple);
    /* A non-blocking collective: MPI_Iallreduce 8 B + MPI_Wait. */
    MPI_Request coll;
    MPI_Iallreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &coll);
    MPI_Wait(&coll, MPI_STATUS_IGNORE);

    /* One-sided: 3 MPI_Win_fence; MPI_Put 4 B to next, MPI_Get 4 B from
     * prev, MPI_Accumulate 4 B to next; lock, flush, unlock of next. */
    int window[4] = {0};
    MPI_Win win;
    MPI_Win_create(window, sizeof window, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    MPI_Put(&token, 1, MPI_INT, next, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get(&got, 1, MPI_INT, prev, 0, 1, MPI_INT, win);
    MPI_Accumulate(&token, 1, MPI_INT, next, 1, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    MPI_Win_lock(MPI_LOCK_SHARED, next, 0, win);
    MPI_Win_flush(next, win);
    MPI_Win_unlock(next, win);
    MPI_Win_free(&win);

    /* MPI-IO: open, 16 B written twice (write_at, write_at_all), 16 B read
     * back, close. */
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, "mpi_calls.dat", MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &fh) != MPI_SUCCESS)
        return 4;
    MPI_File_write_at(fh, rank * 16, ints, 4, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_write_at_all(fh, 64 + rank * 16, ints, 4, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_read_at(fh, rank * 16, ints, 4, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);

    /* Polling: `polls` MPI_Test calls on a receive from self that only
     * completes afterwards. */
    MPI_Request poll;
    int self_msg = 0;
    MPI_Irecv(&self_msg, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, &poll);
    for (long i = 0; i < polls; i++) {
        MPI_Test(&poll, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return 2;
    }
    MPI_Send(&token, 1, MPI_INT, rank, 99, MPI_COMM_WORLD);
    MPI_Wait(&poll, MPI_STATUS_IGNORE);

    printf("rank %d done\n", rank);
    fflush(stdout);
    MPI_Finalize();
    MPI_Finalized(&flag); /* after MPI_Finalize: not recorded, must not fail */
    sp_end(main_region);
    return flag ? 0 : 3;
}
