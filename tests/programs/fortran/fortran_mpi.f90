! fortran_mpi.f90 - Fortran markers under MPI: rank r runs "solve" r+1
! times, each with 3 "kernel" calls (by name), around mpi_init/mpi_finalize.
program fortran_mpi
  use mpi
  use scope_profiler
  implicit none
  integer :: ierr, rank, nranks, solve, i, j, code

  call mpi_init(ierr)
  if (ierr /= MPI_SUCCESS) stop 1
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nranks, ierr)

  solve = sp_region('solve')
  do i = 1, rank + 1
     call sp_begin(solve)
     do j = 1, 3
        call sp_begin_name('kernel')
        call sp_end_name('kernel')
     end do
     call sp_end(solve, stat=code)
  end do
  print '(a,i0,a,i0,a,i0)', 'rank ', rank, ' of ', nranks, ' solve id ', solve

  call mpi_finalize(ierr)
end program fortran_mpi
