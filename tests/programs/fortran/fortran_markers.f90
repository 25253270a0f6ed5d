! fortran_markers.f90 - the Fortran marker API without MPI.  Prints what the
! API returns so the test can compare: under the shim ids are 1-based and
! calls are counted; with the no-op library everything is inactive.
program fortran_markers
  use scope_profiler
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  integer :: outer, inner, i, code
  character(len=64) :: msg
  type(sp_region_stats) :: stats

  outer = sp_region('outer   ')      ! trailing blanks are padding
  inner = sp_region('inner', file='fortran_markers.f90', line=12)
  do i = 1, 4
     call sp_begin(outer)
     call sp_begin(inner)
     call sp_end(inner)
     call sp_begin(inner)
     call sp_end(inner)
     call sp_end(outer)
  end do
  call sp_begin_name('by_name')
  call sp_end_name('by_name')

  ! An unmatched end is reported through stat and errmsg, not stderr.
  msg = ''
  call sp_end(inner, stat=code, errmsg=msg)
  print '(a,i0,a,a)', 'unmatched ', code, ' ', trim(msg)
  call sp_begin(0, stat=code)
  print '(a,i0)', 'bad id ', code

  call sp_get_region_stats(inner, stats, stat=code)
  print '(a,i0,a,i0,a,i0)', 'ids ', outer, ' ', inner, ' ', sp_region('by_name')
  print '(a,i0,a,i0,a,i0)', 'calls ', sp_num_calls(outer), ' ', sp_num_calls(inner), &
       ' ', stats%calls
  print '(a,l1,a,l1)', 'active ', sp_is_active(), ' clock ', sp_now_ns() > 0_int64
end program fortran_markers
