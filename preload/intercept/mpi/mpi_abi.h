/* mpi_abi.h - what the call wrappers need to read MPI arguments without
 * mpi.h, under both ABI families (mpi_library.h): handles, type sizes,
 * ranks translated to MPI_COMM_WORLD, statuses, MPI_IN_PLACE.
 *
 * Handles are taken as uintptr_t: on x86-64 and aarch64 an int handle
 * (MPICH) and a pointer handle (Open MPI) travel in the same register or
 * 8-byte stack slot, so a wrapper can pass what it got straight on and
 * only the reading here needs the family.  Everything returns -1 (or 0)
 * for "unknown" until the library is bound at MPI_Init. */
#ifndef SCOPEPROF_MPI_ABI_H
#define SCOPEPROF_MPI_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef uintptr_t sp_mpi_handle;

/* Bind the helpers once the library is known (mpi.c, after init). */
void sp_mpi_abi_bind(void);
/* 1 once bound and until MPI_Finalize. */
int sp_mpi_abi_ready(void);
void sp_mpi_abi_finalized(void);

/* count elements of `type` in bytes, -1 unknown. */
int64_t sp_mpi_bytes(sp_mpi_handle type, int64_t count);
int sp_mpi_in_place(const void *buf);

/* Own rank and size in comm (-1 unknown). */
int sp_mpi_comm_rank(sp_mpi_handle comm);
int sp_mpi_comm_size(sp_mpi_handle comm);
/* `rank` of comm as a rank of MPI_COMM_WORLD; -1 for MPI_ANY_SOURCE,
 * MPI_PROC_NULL, MPI_ROOT, inter-communicators or unknown. */
int64_t sp_mpi_world_peer(sp_mpi_handle comm, int rank);
/* An id of comm equal on every member (0 for MPI_COMM_WORLD; a hash of
 * the members' world ranks otherwise), -1 unknown. */
int64_t sp_mpi_comm_id(sp_mpi_handle comm);
/* The communicator is about to be freed: forget what is cached about it. */
void sp_mpi_comm_forget(sp_mpi_handle comm);

/* MPI_ANY_SOURCE / MPI_ANY_TAG of the family. */
int sp_mpi_any_source(void);

/* Statuses: MPI_STATUS(ES)_IGNORE, size of one, source and tag. */
int sp_mpi_status_ignored(const void *status);
size_t sp_mpi_status_size(void);
int sp_mpi_status_source(const void *status, int index);
int sp_mpi_status_tag(const void *status, int index);

/* Element i of an array of handles (requests, datatypes). */
sp_mpi_handle sp_mpi_handle_at(const void *array, int i);
int sp_mpi_request_null(sp_mpi_handle request);

/* `rank` of the group of window `win` as a world rank, -1 unknown. */
int64_t sp_mpi_win_world_peer(sp_mpi_handle win, int rank);

/* ---- Fortran handles (Open MPI's Fortran bindings bypass the C ones) ---- */

/* MPI_Comm_f2c / MPI_Type_f2c / MPI_Win_f2c; 0 when unknown. */
sp_mpi_handle sp_mpi_comm_f2c(int f);
sp_mpi_handle sp_mpi_type_f2c(int f);
sp_mpi_handle sp_mpi_win_f2c(int f);
/* Is buf Fortran's MPI_IN_PLACE, status Fortran's MPI_STATUS_IGNORE? */
int sp_mpi_f_in_place(const void *buf);
int sp_mpi_f_status_ignored(const void *status);
int sp_mpi_f_statuses_ignored(const void *statuses);
/* The family's Fortran bindings call the C ones (MPICH): the C wrappers
 * record those calls, the Fortran ones only chain. */
int sp_mpi_fortran_calls_c(void);

#endif
