! fortran_mpi_calls.f90 - MPI calls through the Fortran bindings (use mpi),
! for test_mpi_calls.c: 4 ranks, expected values in the comments.
program fortran_mpi_calls
  use mpi
  implicit none
  integer :: ierr, rank, n, next, prev, i
  integer :: reqs(2)
  ! one type for every buffer: MPICH's `mpi` module has no generic interfaces
  double precision :: ints(10), dbl(8), pair(2), one, total

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, n, ierr)
  next = mod(rank + 1, n)
  prev = mod(rank + n - 1, n)
  ints = 0
  dbl = 0
  one = rank

  ! MPI_Send 80 B to next, MPI_Recv 80 B from prev (tag 5)
  if (mod(rank, 2) == 0) then
    call mpi_send(ints, 10, MPI_DOUBLE_PRECISION, next, 5, MPI_COMM_WORLD, ierr)
    call mpi_recv(ints, 10, MPI_DOUBLE_PRECISION, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  else
    call mpi_recv(ints, 10, MPI_DOUBLE_PRECISION, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call mpi_send(ints, 10, MPI_DOUBLE_PRECISION, next, 5, MPI_COMM_WORLD, ierr)
  end if
  ! MPI_Irecv 64 B from prev, MPI_Isend 64 B to next (tag 6), one MPI_Waitall
  call mpi_irecv(dbl, 8, MPI_DOUBLE_PRECISION, prev, 6, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_isend(dbl, 8, MPI_DOUBLE_PRECISION, next, 6, MPI_COMM_WORLD, reqs(2), ierr)
  call mpi_waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  ! 2 x MPI_Barrier, MPI_Bcast 24 B from 1, 3 x MPI_Allreduce 8 B,
  ! MPI_Allreduce in place 16 B, MPI_Reduce 8 B to 0
  do i = 1, 2
    call mpi_barrier(MPI_COMM_WORLD, ierr)
  end do
  call mpi_bcast(ints, 3, MPI_DOUBLE_PRECISION, 1, MPI_COMM_WORLD, ierr)
  do i = 1, 3
    call mpi_allreduce(one, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  pair = rank
  call mpi_allreduce(MPI_IN_PLACE, pair, 2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call mpi_reduce(one, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call mpi_finalize(ierr)
end program fortran_mpi_calls
