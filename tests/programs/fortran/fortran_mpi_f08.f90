! fortran_mpi_f08.f90 - the same run as fortran_mpi.f90 through the mpi_f08
! module: MPI_Init_thread without the optional ierror (MPICH then passes
! NULL), MPI_Finalize with it.
program fortran_mpi_f08
  use mpi_f08
  use scope_profiler
  implicit none
  integer :: ierr, rank, nranks, solve, i, j, code, provided

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)

  solve = sp_region('solve')
  do i = 1, rank + 1
     call sp_begin(solve)
     do j = 1, 3
        call sp_begin_name('kernel')
        call sp_end_name('kernel')
     end do
     call sp_end(solve, stat=code)
  end do
  print '(a,i0,a,i0,a,i0)', 'rank ', rank, ' of ', nranks, ' provided ', provided

  call MPI_Finalize(ierr)
  if (ierr /= MPI_SUCCESS) stop 1
end program fortran_mpi_f08
