! app.f90 - 4 x (f_outer > 3 x f_inner) through the installed module.
program app_f
  use scope_profiler
  implicit none
  integer :: outer, inner, i, j
  outer = sp_region('f_outer')
  inner = sp_region('f_inner')
  do i = 1, 4
     call sp_begin(outer)
     do j = 1, 3
        call sp_begin(inner)
        call sp_end(inner)
     end do
     call sp_end(outer)
  end do
end program app_f
