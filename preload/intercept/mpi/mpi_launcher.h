/* mpi_launcher.h - rank guess from launcher variables, and which variable
 * it came from, for the mismatch warning. */
#ifndef SCOPEPROF_MPI_LAUNCHER_H
#define SCOPEPROF_MPI_LAUNCHER_H

/* The rank from launcher variables (OMPI_COMM_WORLD_RANK, PMI_RANK, ...);
 * -1 when none. */
int sp_mpi_rank_guess(void);

/* Name of the variable the last successful sp_mpi_rank_guess() used. */
const char *sp_mpi_rank_guess_source(void);

#endif /* SCOPEPROF_MPI_LAUNCHER_H */
