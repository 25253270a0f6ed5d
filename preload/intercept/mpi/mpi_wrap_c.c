/* mpi_wrap_c.c - the C entry points MPI_Init, MPI_Init_thread and
 * MPI_Finalize.  Each chains to the next definition and returns its code
 * unchanged; the shim's own work is in mpi.c. */
#include "mpi_lifecycle.h"
#include "base/shim.h"

/* The MPI signatures, spelled without mpi.h (the shim links no MPI). */
typedef int (*init_fn)(int *argc, char ***argv);
typedef int (*init_thread_fn)(int *argc, char ***argv, int required, int *provided);
typedef int (*finalize_fn)(void);

SP_EXPORT int MPI_Init(int *argc, char ***argv);
SP_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
SP_EXPORT int MPI_Finalize(void);

SP_EXPORT int MPI_Init(int *argc, char ***argv)
{
    init_fn real = (init_fn)sp_mpi_next("MPI_Init", (const void *)MPI_Init,
                                        __builtin_return_address(0));
    if (!real)
        return SP_MPI_ERR_NO_LIBRARY;
    int rc = real(argc, argv);
    if (rc == 0)
        sp_mpi_after_init((const void *)real);
    return rc;
}

SP_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    init_thread_fn real = (init_thread_fn)sp_mpi_next(
        "MPI_Init_thread", (const void *)MPI_Init_thread, __builtin_return_address(0));
    if (!real)
        return SP_MPI_ERR_NO_LIBRARY;
    int rc = real(argc, argv, required, provided);
    if (rc == 0)
        sp_mpi_after_init((const void *)real);
    return rc;
}

SP_EXPORT int MPI_Finalize(void)
{
    finalize_fn real = (finalize_fn)sp_mpi_next("MPI_Finalize", (const void *)MPI_Finalize,
                                                __builtin_return_address(0));
    if (!real)
        return SP_MPI_ERR_NO_LIBRARY;
    sp_mpi_before_finalize((const void *)real);
    int rc = real();
    sp_mpi_after_finalize(rc);
    return rc;
}
