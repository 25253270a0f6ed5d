/* mpi_launcher.h - rank guess from launcher variables (sp_mpi_rank_guess in
 * shim.h), and which variable it came from, for the mismatch warning. */
#ifndef SCOPEPROF_MPI_LAUNCHER_H
#define SCOPEPROF_MPI_LAUNCHER_H

/* Name of the variable the last successful sp_mpi_rank_guess() used. */
const char *sp_mpi_rank_guess_source(void);

#endif /* SCOPEPROF_MPI_LAUNCHER_H */
