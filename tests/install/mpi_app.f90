! mpi_app.f90 - per rank 2 x f_step inside f_main, built with only
! `mpif90 -I<moddir> mpi_app.f90 -lscopeprof-markers`.
program mpi_app
  use mpi
  use scope_profiler
  implicit none
  integer :: ierr, main_id, step, i
  call MPI_Init(ierr)
  main_id = sp_region('f_main')
  step = sp_region('f_step')
  call sp_begin(main_id)
  do i = 1, 2
     call sp_begin(step)
     call MPI_Barrier(MPI_COMM_WORLD, ierr)
     call sp_end(step)
  end do
  call sp_end(main_id)
  call MPI_Finalize(ierr)
end program mpi_app
