! callsite_fortran.f90 - regions registered through the scope_profiler
! module: the call site is the user's line, not the module's (lines marked
! @name are read by the test).
program callsite_fortran
  use scope_profiler
  implicit none
  integer :: solve, given

  solve = sp_region('f_solve') ! @f_solve
  given = sp_region('f_given', file='given.f90', line=3)
  call sp_begin(solve)
  call sp_end(solve)
  call sp_begin(given)
  call sp_end(given)
  call work()

contains

  subroutine work()
    integer :: id
    id = sp_region('f_work') ! @f_work
    call sp_begin(id)
    call sp_end(id)
  end subroutine work

end program callsite_fortran
