! fortran_mpi_calls.f90 - MPI calls through the Fortran bindings (use mpi),
! for test_mpi_calls.c: 4 ranks, expected values in the comments.
program fortran_mpi_calls
  use mpi
  implicit none
  integer :: ierr, rank, n, next, prev, i
  integer :: reqs(2), creqs(2), anyreq(1), poll(1), idx, k
  integer :: st(MPI_STATUS_SIZE)
  logical :: flag
  integer :: win, fh
  integer(kind=MPI_ADDRESS_KIND) :: wsize, disp
  integer(kind=MPI_OFFSET_KIND) :: offset
  ! one type for every buffer: MPICH's `mpi` module has no generic interfaces
  double precision :: ints(10), dbl(8), pair(2), one, total
  double precision :: four(4), all4(4), got4(4), tot2, self_msg, wild

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, n, ierr)
  next = mod(rank + 1, n)
  prev = mod(rank + n - 1, n)
  ints = 0
  dbl = 0
  one = rank
  four = 0
  all4 = 0

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

  ! MPI_Sendrecv 16 B to next, 16 B from prev (tag 7, status kept)
  call mpi_sendrecv(pair, 2, MPI_DOUBLE_PRECISION, next, 7, dbl, 2, MPI_DOUBLE_PRECISION, &
                    prev, 7, MPI_COMM_WORLD, st, ierr)
  ! MPI_Irecv 8 B from MPI_ANY_SOURCE (tag 8), MPI_Isend 8 B to next (tag 8):
  ! MPI_Waitany names prev from the status, MPI_Wait the send's peer next
  call mpi_irecv(wild, 1, MPI_DOUBLE_PRECISION, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, anyreq(1), ierr)
  call mpi_isend(one, 1, MPI_DOUBLE_PRECISION, next, 8, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_waitany(1, anyreq, idx, st, ierr)
  call mpi_wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  ! Polling, aggregated by default: 5 x MPI_Test and 3 x MPI_Testany on a
  ! receive from self (tag 99) that completes only after the MPI_Send
  ! 8 B to self; then MPI_Waitany completes it (peer: self)
  call mpi_irecv(self_msg, 1, MPI_DOUBLE_PRECISION, rank, 99, MPI_COMM_WORLD, poll(1), ierr)
  do k = 1, 5
    call mpi_test(poll(1), flag, MPI_STATUS_IGNORE, ierr)
    if (flag) stop 2
  end do
  do k = 1, 3
    call mpi_testany(1, poll, idx, flag, MPI_STATUS_IGNORE, ierr)
    if (flag) stop 3
  end do
  call mpi_send(one, 1, MPI_DOUBLE_PRECISION, rank, 99, MPI_COMM_WORLD, ierr)
  call mpi_waitany(1, poll, idx, MPI_STATUS_IGNORE, ierr)
  ! MPI_Iallreduce 8 B, MPI_Ibcast 32 B from 2, one MPI_Waitall
  call mpi_iallreduce(one, tot2, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, creqs(1), ierr)
  call mpi_ibcast(four, 4, MPI_DOUBLE_PRECISION, 2, MPI_COMM_WORLD, creqs(2), ierr)
  call mpi_waitall(2, creqs, MPI_STATUSES_IGNORE, ierr)
  ! MPI_Gather 8 B to 0 (32 B received there), MPI_Scatter 8 B from 3
  ! (32 B sent there), MPI_Alltoall 32 B each way, MPI_Allgather 8 B -> 32 B
  call mpi_gather(one, 1, MPI_DOUBLE_PRECISION, all4, 1, MPI_DOUBLE_PRECISION, 0, &
                  MPI_COMM_WORLD, ierr)
  call mpi_scatter(all4, 1, MPI_DOUBLE_PRECISION, total, 1, MPI_DOUBLE_PRECISION, 3, &
                   MPI_COMM_WORLD, ierr)
  call mpi_alltoall(all4, 1, MPI_DOUBLE_PRECISION, got4, 1, MPI_DOUBLE_PRECISION, &
                    MPI_COMM_WORLD, ierr)
  call mpi_allgather(one, 1, MPI_DOUBLE_PRECISION, got4, 1, MPI_DOUBLE_PRECISION, &
                     MPI_COMM_WORLD, ierr)
  ! One-sided: 2 x MPI_Win_fence around MPI_Put 8 B to next
  wsize = 8
  disp = 0
  call mpi_win_create(got4, wsize, 8, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call mpi_win_fence(0, win, ierr)
  call mpi_put(one, 1, MPI_DOUBLE_PRECISION, next, disp, 1, MPI_DOUBLE_PRECISION, win, ierr)
  call mpi_win_fence(0, win, ierr)
  call mpi_win_free(win, ierr)
  ! MPI-IO: MPI_File_write_at 8 B, MPI_File_read_at 8 B (file deleted on close)
  call mpi_file_open(MPI_COMM_WORLD, 'fortran_mpi_calls.dat', &
                     MPI_MODE_CREATE + MPI_MODE_RDWR + MPI_MODE_DELETE_ON_CLOSE, &
                     MPI_INFO_NULL, fh, ierr)
  if (ierr /= 0) stop 4
  offset = rank * 8
  call mpi_file_write_at(fh, offset, one, 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
  call mpi_file_read_at(fh, offset, total, 1, MPI_DOUBLE_PRECISION, MPI_STATUS_IGNORE, ierr)
  if (total /= one) stop 5
  call mpi_file_close(fh, ierr)
  call mpi_finalize(ierr)
end program fortran_mpi_calls
