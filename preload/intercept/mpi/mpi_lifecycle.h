/* mpi_lifecycle.h - what the shim does around MPI_Init and MPI_Finalize,
 * shared by the C wrappers (mpi_wrap_c.c) and the Fortran ones
 * (mpi_wrap_fortran.c).  Implemented in mpi.c. */
#ifndef SCOPEPROF_MPI_LIFECYCLE_H
#define SCOPEPROF_MPI_LIFECYCLE_H

/* Returned by a wrapper whose real function cannot be found (MPI_ERR_OTHER
 * differs between families; any non-zero code is an error to the caller). */
#define SP_MPI_ERR_NO_LIBRARY 1

/* The next definition of `name` after the shim (dlsym RTLD_NEXT, so another
 * preloaded tool keeps working); when MPI was dlopen()ed into a local scope,
 * the one the calling object `caller` sees.  Never returns `self`.  NULL
 * (with a message on stderr) when there is none. */
void *sp_mpi_next(const char *name, const void *self, const void *caller);

/* After a successful init: rank and size from MPI, metadata, the first
 * clock synchronisation point.  Runs once per process, whichever wrapper
 * (C or Fortran, any thread) gets there first.  `real_init` is the function
 * that initialised MPI, used to find the library. */
void sp_mpi_after_init(const void *real_init);

/* Before the real finalize: the second synchronisation point (all ranks are
 * still in MPI).  Once per process. */
void sp_mpi_before_finalize(const void *real_finalize);

/* After the real finalize returned `rc`.  Nothing is written here: calls
 * closed after MPI_Finalize must still reach the file written at exit. */
void sp_mpi_after_finalize(int rc);

#endif /* SCOPEPROF_MPI_LIFECYCLE_H */
