! fortran_mpi_calls_f08.f90 - MPI calls through the mpi_f08 module, for
! test_mpi_calls.c: MPI_Allreduce 8 B, MPI_Barrier, rank 0 sends 8 B to
! rank 1 (tag 3).
program fortran_mpi_calls_f08
  use mpi_f08
  implicit none
  integer :: rank
  double precision :: x, y
  call mpi_init()
  call mpi_comm_rank(MPI_COMM_WORLD, rank)
  x = rank
  call mpi_allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  call mpi_barrier(MPI_COMM_WORLD)
  if (rank == 0) call mpi_send(x, 1, MPI_DOUBLE_PRECISION, 1, 3, MPI_COMM_WORLD)
  if (rank == 1) call mpi_recv(y, 1, MPI_DOUBLE_PRECISION, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  call mpi_finalize()
end program fortran_mpi_calls_f08
