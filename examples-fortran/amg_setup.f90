! AMG setup with libspgemm: the Galerkin product Ac = R*(A*P) for a 3D Poisson matrix A
! (time-dependent coefficient), a piecewise-constant aggregation prolongator P (2x2x2
! aggregates) and R = P^T, through two plans (A*P, then R*(AP)); then `rounds` time steps
! in which A's values change and Ac is recomputed by numeric reuse only. Every Ac is checked
! independently (Ac*v against R*(A*(P*v)) with this program's own loops) and per-phase
! times are printed. The same code runs with default integer (int32) and integer(c_int64_t)
! indices: amg_setup_body.inc is included by two modules that differ in the kind `ik`.
!
! Usage: amg_setup [nx] [rounds]     (grid nx^3, default 32 and 10; exit status 1 on a
!                                     wrong answer)
! Build: see quickstart.f90 (compile spgemm.f90 first; this file includes
!        amg_setup_body.inc from its own directory).

module amg_int32
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_int32_t, c_int64_t, c_double
  use spgemm
  implicit none
  private
  public :: run_amg
  integer, parameter :: ik = kind(1)  ! default integer: SPGEMM_INDEX_INT32
  include 'amg_setup_body.inc'
end module amg_int32

module amg_int64
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_int32_t, c_int64_t, c_double
  use spgemm
  implicit none
  private
  public :: run_amg
  integer, parameter :: ik = c_int64_t  ! SPGEMM_INDEX_INT64
  include 'amg_setup_body.inc'
end module amg_int64

program amg_setup
  use amg_int32, only: run_amg32 => run_amg
  use amg_int64, only: run_amg64 => run_amg
  implicit none
  integer :: nx, rounds
  logical :: ok32, ok64
  character(len=32) :: arg

  nx = 32
  rounds = 10
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) nx
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) rounds
  end if
  if (nx < 2 .or. rounds < 0) then
    print '(a)', 'usage: amg_setup [nx >= 2] [rounds >= 0]'
    error stop 2
  end if

  call run_amg32(nx, rounds, 'int32', ok32)
  call run_amg64(nx, rounds, 'int64', ok64)
  if (.not. (ok32 .and. ok64)) then
    print '(a)', 'amg_setup: FAILED'
    error stop 1
  end if
end program amg_setup
