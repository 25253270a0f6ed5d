/* mpi_threads.c - MPI_Init_thread(MPI_THREAD_MULTIPLE) and two pthreads per
 * rank, each running "work" rank+2 times while the main thread runs "wait". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#include "scope_profiler.h"

static int calls_per_thread;

static void *worker(void *arg)
{
    (void)arg;
    int work = sp_region("work");
    for (int i = 0; i < calls_per_thread; i++) {
        sp_begin(work);
        sp_end(work);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS)
        return 1;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    calls_per_thread = rank + 2;

    int wait = sp_region("wait");
    sp_begin(wait);
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&threads[i], NULL, worker, NULL) != 0)
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    sp_end(wait);

    printf("rank %d provided %d\n", rank, provided);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
