/* mpi.c - ns per MPI call for scripts/bench/mpi: N x MPI_Barrier, N x
 * 8-byte MPI_Allreduce, N x MPI_Test (polling a receive that completes
 * afterwards).  Rank 0 prints the means of the slowest rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double one = 1, sum = 0, t[3];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (long i = 0; i < n; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    t[0] = (now() - t0) / (double)n;
    t0 = now();
    for (long i = 0; i < n; i++)
        MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t[1] = (now() - t0) / (double)n;
    MPI_Request req;
    int msg = 0, token = 1, flag = 0;
    MPI_Irecv(&msg, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, &req);
    t0 = now();
    for (long i = 0; i < n; i++)
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    t[2] = (now() - t0) / (double)n;
    MPI_Send(&token, 1, MPI_INT, rank, 1, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    double worst[3];
    MPI_Reduce(t, worst, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.0f %.0f %.1f\n", worst[0], worst[1], worst[2]);
    MPI_Finalize();
    return 0;
}
