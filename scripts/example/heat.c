/* heat.c - the bundled example: a 1-D heat equation split over MPI ranks,
 * each rank computing its half-blocks on 2 threads.  Instrumented with the
 * scope-profiler markers only; built against the no-op marker library and
 * profiled by preloading libscopeprof.so (see scripts/demo). */
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "scope_profiler.h"

#define CELLS 200000
#define STEPS 60
#define THREADS 2

static double *u, *next;
static int r_main, r_step, r_halo, r_compute, r_stencil, r_worker, r_reduce;

struct slice { int from, to; double sum; };

static void *stencil(void *arg)
{
    struct slice *s = arg;
    sp_begin(r_worker);
    for (int i = s->from; i < s->to; i++)
        next[i] = u[i] + 0.25 * (u[i - 1] - 2 * u[i] + u[i + 1]);
    sp_begin(r_reduce);
    s->sum = 0;
    for (int i = s->from; i < s->to; i++)
        s->sum += next[i];
    sp_end(r_reduce);
    sp_end(r_worker);
    return NULL;
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
        pthread_t t[THREADS];
        struct slice s[THREADS];
        for (int k = 0; k < THREADS; k++) {
            s[k].from = 1 + k * CELLS / THREADS;
            s[k].to = 1 + (k + 1) * CELLS / THREADS;
            pthread_create(&t[k], NULL, stencil, &s[k]);
        }
        double local = 0;
        for (int k = 0; k < THREADS; k++) {
            pthread_join(t[k], NULL);
            local += s[k].sum;
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
