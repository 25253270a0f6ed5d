/* heat.c - the bundled example: a 1-D heat equation split over MPI ranks,
 * each rank computing its blocks on 2 OpenMP threads.  Instrumented with the
 * scope-profiler markers only; built against the no-op marker library and
 * profiled by preloading libscopeprof.so (see scripts/demo). */
#include <math.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

#define CELLS 200000
#define STEPS 60
#define THREADS 2

static double *u, *next;
static int r_main, r_step, r_halo, r_compute, r_stencil, r_worker, r_reduce;

/* One block per OpenMP thread: the stencil, then the block's sum. */
static double stencil_block(int from, int to)
{
    sp_begin(r_worker);
    for (int i = from; i < to; i++)
        next[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
    sp_begin(r_reduce);
    double sum = 0;
    for (int i = from; i < to; i++)
        sum += next[i];
    sp_end(r_reduce);
    sp_end(r_worker);
    return sum;
}

int main(int argc, char **argv)
{
    r_main = sp_region("main");
    sp_begin(r_main);
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sp_init("heat", rank);
    r_step = sp_region("timestep");
    r_halo = sp_region("halo_exchange");
    r_compute = sp_region("compute");
    r_stencil = sp_region("stencil");
    r_worker = sp_region("stencil_block");
    r_reduce = sp_region("block_sum");

    u = calloc(CELLS + 2, sizeof *u);
    next = calloc(CELLS + 2, sizeof *next);
    for (int i = 1; i <= CELLS; i++)
        u[i] = sin(i * 0.001 + rank);
    double total = 0;
    for (int step = 0; step < STEPS; step++) {
        sp_begin(r_step);
        sp_begin(r_halo);
        int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
        int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
        MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 0, &u[CELLS + 1], 1, MPI_DOUBLE, right, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[CELLS], 1, MPI_DOUBLE, right, 1, &u[0], 1, MPI_DOUBLE, left, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sp_end(r_halo);

        sp_begin(r_compute);
        sp_begin(r_stencil);
        double local = 0;
#pragma omp parallel num_threads(THREADS) reduction(+ : local)
        {
            int k = omp_get_thread_num(), n = omp_get_num_threads();
            local += stencil_block(1 + k * CELLS / n, 1 + (k + 1) * CELLS / n);
        }
        sp_end(r_stencil);
        MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double *swap = u;
        u = next;
        next = swap;
        sp_end(r_compute);
        sp_end(r_step);
    }
    if (rank == 0)
        printf("heat: %d ranks x %d threads, %d steps, total heat %.6f\n", size, THREADS, STEPS, total);
    MPI_Finalize();
    free(u);
    free(next);
    sp_end(r_main); /* closed after MPI_Finalize: still in the profile */
    return 0;
}
