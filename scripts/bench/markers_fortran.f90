! markers_fortran.f90 - the Fortran name API against ids, same process:
! ns per sp_begin_name/sp_end_name pair (a name lookup per call, lock-free
! for an existing name) and per sp_begin/sp_end pair of the same region.
! Usage: markers_fortran N
program markers_fortran
  use scope_profiler
  implicit none
  integer :: id, n, i, round
  integer(8) :: t0, t1, rate
  real(8) :: by_name(7), by_id(7)
  character(len=32) :: arg
  call get_command_argument(1, arg)
  read (arg, *) n
  call sp_init('fbench', 0)
  id = sp_region('bench')
  do round = 1, 7
     call system_clock(t0, rate)
     do i = 1, n
        call sp_begin_name('bench')
        call sp_end_name('bench')
     end do
     call system_clock(t1)
     by_name(round) = real(t1 - t0, 8) / real(rate, 8) * 1d9 / n
     call system_clock(t0)
     do i = 1, n
        call sp_begin(id)
        call sp_end(id)
     end do
     call system_clock(t1)
     by_id(round) = real(t1 - t0, 8) / real(rate, 8) * 1d9 / n
  end do
  write (*, '(f0.2, a, f0.2, a, f0.2)') median(by_name), ' ns/pair by name, ', median(by_id), &
       ' ns/pair by id, ratio ', median(by_name) / median(by_id)
contains
  real(8) function median(v)
    real(8), intent(inout) :: v(7)
    integer :: a, b
    real(8) :: t
    do a = 1, 7
       do b = a + 1, 7
          if (v(b) < v(a)) then
             t = v(a); v(a) = v(b); v(b) = t
          end if
       end do
    end do
    median = v(4)
  end function median
end program markers_fortran
