/* mpi_wrap_fortran.c - the Fortran entry points of MPI (mpif.h and the
 * `mpi` module), in every spelling compilers produce: mpi_init_,
 * mpi_init__, mpi_init, MPI_INIT (and likewise for mpi_init_thread and
 * mpi_finalize).  Open MPI's Fortran library calls PMPI_Init_thread
 * directly, so the C wrapper never sees a Fortran program's init: these do
 * the same work (once, see mpi.c).  Each chains to the next definition of
 * its own name; ierr is passed through unchanged.
 *
 * Open MPI's `mpi_f08` module skips those names and calls its internal
 * ompi_init_f / ompi_init_thread_f / ompi_finalize_f (same arguments), so
 * those are wrapped too.  MPICH's `mpi_f08` calls mpi_init_f08_,
 * mpi_init_thread_f08_ and mpi_finalize_f08_, whose ierror is OPTIONAL:
 * NULL when the program leaves it out. */
#include "mpi_lifecycle.h"
#include "base/shim.h"

/* MPI_Fint is a default Fortran INTEGER: int with gfortran, ifx, flang. */
typedef void (*f_init_fn)(int *ierr);
typedef void (*f_init_thread_fn)(int *required, int *provided, int *ierr);
typedef void (*f_finalize_fn)(int *ierr);

static void fortran_init(const char *name, const void *self, const void *caller, int *ierr)
{
    f_init_fn real = (f_init_fn)sp_mpi_next(name, self, caller);
    if (!real) {
        *ierr = SP_MPI_ERR_NO_LIBRARY;
        return;
    }
    real(ierr);
    if (*ierr == 0)
        sp_mpi_after_init((const void *)real);
}

static void fortran_init_thread(const char *name, const void *self, const void *caller,
                                int *required, int *provided, int *ierr)
{
    f_init_thread_fn real = (f_init_thread_fn)sp_mpi_next(name, self, caller);
    if (!real) {
        *ierr = SP_MPI_ERR_NO_LIBRARY;
        return;
    }
    real(required, provided, ierr);
    if (*ierr == 0)
        sp_mpi_after_init((const void *)real);
}

static void fortran_finalize(const char *name, const void *self, const void *caller, int *ierr)
{
    f_finalize_fn real = (f_finalize_fn)sp_mpi_next(name, self, caller);
    if (!real) {
        *ierr = SP_MPI_ERR_NO_LIBRARY;
        return;
    }
    sp_mpi_before_finalize((const void *)real);
    real(ierr);
    sp_mpi_after_finalize(*ierr);
}

#define SP_FORTRAN_INIT(sym)                                                   \
    SP_EXPORT void sym(int *ierr);                                             \
    SP_EXPORT void sym(int *ierr)                                              \
    {                                                                          \
        fortran_init(#sym, (const void *)sym, __builtin_return_address(0), ierr); \
    }

#define SP_FORTRAN_INIT_THREAD(sym)                                            \
    SP_EXPORT void sym(int *required, int *provided, int *ierr);               \
    SP_EXPORT void sym(int *required, int *provided, int *ierr)                \
    {                                                                          \
        fortran_init_thread(#sym, (const void *)sym, __builtin_return_address(0), \
                            required, provided, ierr);                         \
    }

#define SP_FORTRAN_FINALIZE(sym)                                               \
    SP_EXPORT void sym(int *ierr);                                             \
    SP_EXPORT void sym(int *ierr)                                              \
    {                                                                          \
        fortran_finalize(#sym, (const void *)sym, __builtin_return_address(0), ierr); \
    }

/* mpi_f08 entry points: the status goes through a local, and to the
 * caller's ierror only if it passed one. */
#define SP_FORTRAN_F08_INIT(sym)                                               \
    SP_EXPORT void sym(int *ierror);                                           \
    SP_EXPORT void sym(int *ierror)                                            \
    {                                                                          \
        int status = 0;                                                        \
        fortran_init(#sym, (const void *)sym, __builtin_return_address(0), &status); \
        if (ierror)                                                            \
            *ierror = status;                                                  \
    }

#define SP_FORTRAN_F08_INIT_THREAD(sym)                                        \
    SP_EXPORT void sym(int *required, int *provided, int *ierror);             \
    SP_EXPORT void sym(int *required, int *provided, int *ierror)              \
    {                                                                          \
        int status = 0;                                                        \
        fortran_init_thread(#sym, (const void *)sym, __builtin_return_address(0), \
                            required, provided, &status);                      \
        if (ierror)                                                            \
            *ierror = status;                                                  \
    }

#define SP_FORTRAN_F08_FINALIZE(sym)                                           \
    SP_EXPORT void sym(int *ierror);                                           \
    SP_EXPORT void sym(int *ierror)                                            \
    {                                                                          \
        int status = 0;                                                        \
        fortran_finalize(#sym, (const void *)sym, __builtin_return_address(0), &status); \
        if (ierror)                                                            \
            *ierror = status;                                                  \
    }

SP_FORTRAN_F08_INIT(mpi_init_f08_)
SP_FORTRAN_F08_INIT_THREAD(mpi_init_thread_f08_)
SP_FORTRAN_F08_FINALIZE(mpi_finalize_f08_)

SP_FORTRAN_INIT(mpi_init_)
SP_FORTRAN_INIT(mpi_init__)
SP_FORTRAN_INIT(mpi_init)
SP_FORTRAN_INIT(MPI_INIT)
SP_FORTRAN_INIT(ompi_init_f)

SP_FORTRAN_INIT_THREAD(mpi_init_thread_)
SP_FORTRAN_INIT_THREAD(mpi_init_thread__)
SP_FORTRAN_INIT_THREAD(mpi_init_thread)
SP_FORTRAN_INIT_THREAD(MPI_INIT_THREAD)
SP_FORTRAN_INIT_THREAD(ompi_init_thread_f)

SP_FORTRAN_FINALIZE(mpi_finalize_)
SP_FORTRAN_FINALIZE(mpi_finalize__)
SP_FORTRAN_FINALIZE(mpi_finalize)
SP_FORTRAN_FINALIZE(MPI_FINALIZE)
SP_FORTRAN_FINALIZE(ompi_finalize_f)
