/* mpi_library.h - calling into the program's MPI library without linking it.
 *
 * The shim is built once and must work under Open MPI and under the MPICH
 * family (MPICH, Intel MPI, MVAPICH).  Their C ABIs differ where it matters
 * here: Open MPI's MPI_Comm is a pointer (MPI_COMM_WORLD is the address of
 * `ompi_mpi_comm_world`), MPICH's is an int (MPI_COMM_WORLD = 0x44000000).
 * Everything is resolved with dlsym at run time, after MPI is initialised. */
#ifndef SCOPEPROF_MPI_LIBRARY_H
#define SCOPEPROF_MPI_LIBRARY_H

enum sp_mpi_family {
    SP_MPI_FAMILY_UNKNOWN = 0,
    SP_MPI_FAMILY_OPENMPI,
    SP_MPI_FAMILY_MPICH,
};

/* Find the MPI library through `anchor`, the address of an MPI function the
 * program called (its object's dependencies are searched first, which also
 * works when MPI was dlopen()ed into a local scope), and work out its ABI
 * family.  Returns the family; SP_MPI_FAMILY_UNKNOWN means no call below
 * will work.  Call once, before the functions below. */
enum sp_mpi_family sp_mpi_library_bind(const void *anchor);

/* "openmpi", "mpich" or "unknown". */
const char *sp_mpi_family_name(enum sp_mpi_family family);

/* Each returns 0 on success (MPI_SUCCESS), non-zero when the function is
 * missing or MPI reported an error. */
int sp_mpi_world_rank(int *rank);
int sp_mpi_world_size(int *size);
int sp_mpi_world_barrier(void);
/* MPI_Bcast of `count` bytes from `root` over MPI_COMM_WORLD. */
int sp_mpi_world_bcast_bytes(void *buf, int count, int root);
int sp_mpi_query_thread(int *provided);
/* NUL-terminated, trailing white space removed. */
int sp_mpi_library_version(char *buf, int len);
/* 1 when MPI_Init has completed (whoever called it), else 0. */
int sp_mpi_is_initialized(void);

/* The family bound by sp_mpi_library_bind (UNKNOWN before). */
enum sp_mpi_family sp_mpi_family(void);
/* A function of the library (PMPI_ name preferred), a data symbol of it,
 * and Open MPI's &ompi_mpi_comm_world; NULL when missing. */
void *sp_mpi_lookup(const char *name);
void *sp_mpi_lookup_data(const char *name);
void *sp_mpi_ompi_comm_world(void);

#endif /* SCOPEPROF_MPI_LIBRARY_H */
