! scope_profiler.f90 - the scope-profiler Fortran marker API, as bind(C)
! calls onto the C marker API of scope_profiler.h.
!
! Same public names, 1-based region ids, optional stat/errmsg and constants
! as the reference module, but every call ends in a C symbol (sp_region,
! sp_begin, ...).  So a Fortran program is profiled exactly like a C one:
! linked with -lscopeprof-markers it runs with no-op markers and writes
! nothing; run with LD_PRELOAD=libscopeprof.so it records.  See docs/mpi.md
! for the compile line.
!
! Differences from the reference module, on purpose:
!  - no nesting limit, so SP_ERR_DEPTH is never returned;
!  - thread-safe, since the C implementation is.
module scope_profiler
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int64_t, c_ptr, &
       c_null_char, c_size_t, c_associated, c_f_pointer
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private

  public :: sp_init, sp_region, sp_begin, sp_end, sp_begin_name, sp_end_name, &
       sp_finalize, sp_flush, sp_reset, sp_get_region_stats, sp_num_calls, &
       sp_now_ns, sp_is_active, sp_region_stats

  integer, parameter, public :: SP_OK = 0
  integer, parameter, public :: SP_ERR_INACTIVE = 1
  integer, parameter, public :: SP_ERR_NO_CLOCK = 2
  integer, parameter, public :: SP_ERR_NO_MEMORY = 3
  integer, parameter, public :: SP_ERR_IO = 4
  integer, parameter, public :: SP_ERR_UNMATCHED_END = 5
  integer, parameter, public :: SP_ERR_OPEN_SCOPES = 6
  integer, parameter, public :: SP_ERR_INVALID_ARGUMENT = 7
  integer, parameter, public :: SP_ERR_DEPTH = 8
  integer, parameter, public :: SP_MAX_NAME = 128

  ! Longest output prefix accepted, as in the reference module.
  integer, parameter :: MAX_PREFIX = 512

  ! Layout of the C struct sp_region_stats.
  type, bind(C) :: sp_region_stats
     integer(c_int64_t) :: calls = 0
     integer(c_int64_t) :: total_ns = 0
     integer(c_int64_t) :: min_ns = 0
     integer(c_int64_t) :: max_ns = 0
  end type sp_region_stats

  ! The C marker API (scope_profiler.h).  Strings go in NUL-terminated.
  interface
     function c_sp_init(prefix, rank) bind(C, name='sp_init') result(rc)
       import :: c_char, c_int
       character(kind=c_char), dimension(*), intent(in) :: prefix
       integer(c_int), value :: rank
       integer(c_int) :: rc
     end function c_sp_init

     function c_sp_region(name) bind(C, name='sp_region') result(id)
       import :: c_char, c_int
       character(kind=c_char), dimension(*), intent(in) :: name
       integer(c_int) :: id
     end function c_sp_region

     function c_sp_region_at(name, file, line) bind(C, name='sp_region_at') result(id)
       import :: c_char, c_int
       character(kind=c_char), dimension(*), intent(in) :: name, file
       integer(c_int), value :: line
       integer(c_int) :: id
     end function c_sp_region_at

     subroutine c_sp_begin(id) bind(C, name='sp_begin')
       import :: c_int
       integer(c_int), value :: id
     end subroutine c_sp_begin

     subroutine c_sp_end(id) bind(C, name='sp_end')
       import :: c_int
       integer(c_int), value :: id
     end subroutine c_sp_end

     ! The name path: lookup, call and status in one C call, no copy.
     function c_sp_begin_by_name(name, length) bind(C, name='sp_begin_by_name') result(status)
       import :: c_char, c_int, c_size_t
       character(kind=c_char), dimension(*), intent(in) :: name
       integer(c_size_t), value :: length
       integer(c_int) :: status
     end function c_sp_begin_by_name

     function c_sp_end_by_name(name, length) bind(C, name='sp_end_by_name') result(status)
       import :: c_char, c_int, c_size_t
       character(kind=c_char), dimension(*), intent(in) :: name
       integer(c_size_t), value :: length
       integer(c_int) :: status
     end function c_sp_end_by_name

     function c_sp_finalize() bind(C, name='sp_finalize') result(rc)
       import :: c_int
       integer(c_int) :: rc
     end function c_sp_finalize

     function c_sp_flush() bind(C, name='sp_flush') result(rc)
       import :: c_int
       integer(c_int) :: rc
     end function c_sp_flush

     function c_sp_reset() bind(C, name='sp_reset') result(rc)
       import :: c_int
       integer(c_int) :: rc
     end function c_sp_reset

     function c_sp_num_calls(id) bind(C, name='sp_num_calls') result(n)
       import :: c_int, c_int64_t
       integer(c_int), value :: id
       integer(c_int64_t) :: n
     end function c_sp_num_calls

     function c_sp_now_ns() bind(C, name='sp_now_ns') result(ns)
       import :: c_int64_t
       integer(c_int64_t) :: ns
     end function c_sp_now_ns

     function c_sp_is_active() bind(C, name='sp_is_active') result(active)
       import :: c_int
       integer(c_int) :: active
     end function c_sp_is_active

     function c_sp_last_error() bind(C, name='sp_last_error') result(status)
       import :: c_int
       integer(c_int) :: status
     end function c_sp_last_error

     function c_sp_get_region_stats(id, stats) bind(C, name='sp_get_region_stats') result(rc)
       import :: c_int, sp_region_stats
       integer(c_int), value :: id
       type(sp_region_stats), intent(out) :: stats
       integer(c_int) :: rc
     end function c_sp_get_region_stats

     function c_sp_error_string(status) bind(C, name='sp_error_string') result(text)
       import :: c_int, c_ptr
       integer(c_int), value :: status
       type(c_ptr) :: text
     end function c_sp_error_string

     function c_strlen(text) bind(C, name='strlen') result(n)
       import :: c_ptr, c_size_t
       type(c_ptr), value :: text
       integer(c_size_t) :: n
     end function c_strlen
  end interface

contains

  ! A Fortran string as a C string: trailing blanks are padding in Fortran,
  ! so they are dropped, and at most `limit` characters are kept.
  pure function c_string(text, limit) result(c)
    character(len=*), intent(in) :: text
    integer, intent(in) :: limit
    character(kind=c_char, len=min(len_trim(text), limit) + 1) :: c
    c = text(1:min(len_trim(text), limit)) // c_null_char
  end function c_string

  function message(code) result(text)
    integer, intent(in) :: code
    character(len=:), allocatable :: text
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    ! 7 and 8 are Fortran-only codes (in C, 7 is SP_ERR_UNSUPPORTED).
    select case (code)
    case (SP_ERR_INVALID_ARGUMENT)
       text = 'invalid argument'
       return
    case (SP_ERR_DEPTH)
       text = 'region nested too deeply'
       return
    end select
    p = c_sp_error_string(int(code, c_int))
    if (.not. c_associated(p)) then
       text = 'unknown status'
       return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: text)
    do i = 1, n
       text(i:i) = chars(i)
    end do
  end function message

  ! Hand `code` to the caller: through stat/errmsg when given, else as a
  ! line on stderr (inactive is not worth a line: markers are optional).
  subroutine report(code, what, stat, errmsg)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    if (present(stat)) stat = code
    if (present(errmsg) .and. code /= SP_OK) errmsg = message(code)
    if (.not. present(stat) .and. .not. present(errmsg) .and. &
         code /= SP_OK .and. code /= SP_ERR_INACTIVE) then
       write (error_unit, '(a)') 'scope_profiler: ' // what // ': ' // message(code)
    end if
  end subroutine report

  ! The status the C side left, or `fallback` when it says OK.
  integer function c_status(fallback)
    integer, intent(in) :: fallback
    c_status = int(c_sp_last_error())
    if (c_status == SP_OK) c_status = fallback
  end function c_status

  subroutine sp_init(prefix, rank, stat, errmsg)
    character(len=*), intent(in) :: prefix
    integer, intent(in), optional :: rank
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    integer :: r, code
    r = 0
    if (present(rank)) r = rank
    if (len_trim(prefix) == 0 .or. len_trim(prefix) > MAX_PREFIX .or. r < 0) then
       code = SP_ERR_INVALID_ARGUMENT
    else if (c_sp_init(c_string(prefix, MAX_PREFIX), int(r, c_int)) == 0) then
       code = SP_OK
    else
       code = c_status(SP_ERR_INACTIVE)
    end if
    call report(code, 'sp_init', stat, errmsg)
  end subroutine sp_init

  ! 1-based id of the region `name` (created on first use), 0 on error.
  integer function sp_region(name, file, line, stat, errmsg) result(id)
    character(len=*), intent(in) :: name
    character(len=*), intent(in), optional :: file
    integer, intent(in), optional :: line
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    integer(c_int) :: cid, cline
    integer :: code
    id = 0
    if (len_trim(name) == 0) then
       call report(SP_ERR_INVALID_ARGUMENT, 'sp_region', stat, errmsg)
       return
    end if
    if (present(file)) then
       cline = -1
       if (present(line)) cline = int(line, c_int)
       cid = c_sp_region_at(c_string(name, SP_MAX_NAME), c_string(file, len(file)), cline)
    else
       cid = c_sp_region(c_string(name, SP_MAX_NAME))
    end if
    if (cid >= 0) then
       id = int(cid) + 1
       code = SP_OK
    else
       code = c_status(SP_ERR_INACTIVE)
    end if
    call report(code, 'sp_region', stat, errmsg)
  end function sp_region

  ! Validity shared by begin and end: an inactive profiler first, as the
  ! reference does, then the id.
  integer function check_id(id)
    integer, intent(in) :: id
    if (c_sp_is_active() == 0) then
       check_id = SP_ERR_INACTIVE
    else if (id < 1) then
       check_id = SP_ERR_INVALID_ARGUMENT
    else
       check_id = SP_OK
    end if
  end function check_id

  subroutine sp_begin(id, stat, errmsg)
    integer, intent(in) :: id
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    integer :: code
    code = check_id(id)
    if (code == SP_OK) then
       call c_sp_begin(int(id - 1, c_int))
       code = int(c_sp_last_error())
    end if
    ! The common case (no error, no stat) skips the call.
    if (code /= SP_OK .or. present(stat) .or. present(errmsg)) &
         call report(code, 'sp_begin', stat, errmsg)
  end subroutine sp_begin

  subroutine sp_end(id, stat, errmsg)
    integer, intent(in) :: id
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    integer :: code
    code = check_id(id)
    if (code == SP_OK) then
       call c_sp_end(int(id - 1, c_int))
       code = int(c_sp_last_error())
    end if
    ! The common case (no error, no stat) skips the call.
    if (code /= SP_OK .or. present(stat) .or. present(errmsg)) &
         call report(code, 'sp_end', stat, errmsg)
  end subroutine sp_end

  ! The name API: one C call (sp_begin_by_name) that looks the name up
  ! by its length (lock-free and without a copy for an existing name),
  ! makes the call and returns the status, so a call costs the id path
  ! plus the lookup.
  subroutine sp_begin_name(name, stat, errmsg)
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    integer :: code, n
    n = min(len_trim(name), SP_MAX_NAME)
    if (n == 0) then
       code = SP_ERR_INVALID_ARGUMENT
    else
       code = int(c_sp_begin_by_name(name, int(n, c_size_t)))
    end if
    if (code /= SP_OK .or. present(stat) .or. present(errmsg)) &
         call report(code, 'sp_begin_name', stat, errmsg)
  end subroutine sp_begin_name

  subroutine sp_end_name(name, stat, errmsg)
    character(len=*), intent(in) :: name
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    integer :: code, n
    n = min(len_trim(name), SP_MAX_NAME)
    if (n == 0) then
       code = SP_ERR_INVALID_ARGUMENT
    else
       code = int(c_sp_end_by_name(name, int(n, c_size_t)))
    end if
    if (code /= SP_OK .or. present(stat) .or. present(errmsg)) &
         call report(code, 'sp_end_name', stat, errmsg)
  end subroutine sp_end_name

  ! Write the output and stop recording.  Open regions are reported as
  ! SP_ERR_OPEN_SCOPES after writing; a second call does nothing.
  subroutine sp_finalize(stat, errmsg)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    integer :: code
    if (c_sp_is_active() == 0) then
       code = SP_OK
    else if (c_sp_finalize() /= 0) then
       code = c_status(SP_ERR_IO)
    else if (c_sp_last_error() == SP_ERR_OPEN_SCOPES) then
       code = SP_ERR_OPEN_SCOPES
    else
       code = SP_OK
    end if
    call report(code, 'sp_finalize', stat, errmsg)
  end subroutine sp_finalize

  subroutine sp_flush(stat, errmsg)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    integer :: code
    code = SP_OK
    if (c_sp_flush() /= 0) code = SP_ERR_IO
    call report(code, 'sp_flush', stat, errmsg)
  end subroutine sp_flush

  subroutine sp_reset(stat, errmsg)
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    call report(int(c_sp_reset()), 'sp_reset', stat, errmsg)
  end subroutine sp_reset

  subroutine sp_get_region_stats(id, stats, stat, errmsg)
    integer, intent(in) :: id
    type(sp_region_stats), intent(out) :: stats
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    integer :: code
    if (id < 1) then
       code = SP_ERR_INVALID_ARGUMENT
    else
       code = int(c_sp_get_region_stats(int(id - 1, c_int), stats))
    end if
    call report(code, 'sp_get_region_stats', stat, errmsg)
  end subroutine sp_get_region_stats

  ! Times region `id` was entered (open calls included); 0 for a bad id.
  integer(c_int64_t) function sp_num_calls(id)
    integer, intent(in) :: id
    sp_num_calls = 0
    if (id >= 1) sp_num_calls = c_sp_num_calls(int(id - 1, c_int))
  end function sp_num_calls

  ! CLOCK_MONOTONIC in ns, the clock of the recorded timestamps.
  integer(c_int64_t) function sp_now_ns()
    sp_now_ns = c_sp_now_ns()
  end function sp_now_ns

  logical function sp_is_active()
    sp_is_active = c_sp_is_active() /= 0
  end function sp_is_active

end module scope_profiler
