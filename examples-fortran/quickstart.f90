! libspgemm quickstart in Fortran: C = A*A for a small 1-based CSR matrix with default
! integer (int32) indices, in two phases (symbolic, then numeric), then once more after
! changing A's values (numeric reuse). Checks C against a dense product; exit status 1 on a
! wrong answer.
!
! Build (after `make install PREFIX=$HOME/opt/spgemm`):
!   export PKG_CONFIG_PATH=$HOME/opt/spgemm/lib/pkgconfig
!   gfortran -c $(pkg-config --variable=fortran_module spgemm)
!   gfortran quickstart.f90 spgemm.o $(pkg-config --libs spgemm) \
!     -Wl,-rpath,$(pkg-config --variable=libdir spgemm) -o quickstart
program quickstart
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_int64_t, c_double
  use spgemm
  implicit none

  integer, parameter :: n = 4
  ! A = tridiag(-1, 2, -1), 1-based CSR. TARGET: the library reads these arrays in place.
  integer, target :: a_rowptr(n + 1) = [1, 3, 6, 9, 11]
  integer, target :: a_cols(10) = [1, 2, 1, 2, 3, 2, 3, 4, 3, 4]
  real(c_double), target :: a_vals(10) = [2d0, -1d0, -1d0, 2d0, -1d0, -1d0, 2d0, -1d0, -1d0, 2d0]
  integer, target :: c_rowptr(n + 1)
  integer, allocatable, target :: c_cols(:)
  real(c_double), allocatable, target :: c_vals(:)
  type(c_ptr) :: h = c_null_ptr, a = c_null_ptr, plan = c_null_ptr
  integer(c_int64_t) :: nnz
  integer :: round

  call check(spgemm_create(h), 'spgemm_create')
  ! The descriptor points at the Fortran arrays: no copy is made. The array helper passes
  ! their kinds and sizes (nrows = size(a_rowptr) - 1, nnz = size(a_cols)); the library
  ! checks that the last row offset agrees.
  call check(spgemm_matrix_create_csr_arrays(a, int(n, c_int64_t), a_rowptr, a_cols, a_vals, &
      SPGEMM_INDEX_BASE_ONE), 'spgemm_matrix_create_csr_arrays')

  ! Symbolic phase: C's 1-based row offsets and nnz(C).
  call check(spgemm_symbolic(h, a, a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, &
      SPGEMM_INDEX_BASE_ONE, c_loc(c_rowptr), plan), 'spgemm_symbolic')
  call check(spgemm_plan_get_nnz(plan, nnz), 'spgemm_plan_get_nnz')
  allocate(c_cols(nnz), c_vals(nnz))

  do round = 1, 2
    ! Numeric phase; the second round reuses the plan after A's values changed. The array
    ! helper passes each array's kind and size, checked against the plan before writing.
    call check(spgemm_numeric_arrays(h, plan, a, a, c_rowptr, c_cols, c_vals), &
        'spgemm_numeric_arrays')
    call verify(round)
    a_vals = 1.5d0 * a_vals
  end do
  print '(a, i0, a)', 'quickstart: C = A*A has ', nnz, ' entries, matches the dense product'

  call check(spgemm_plan_destroy(plan), 'spgemm_plan_destroy')
  call check(spgemm_matrix_destroy(a), 'spgemm_matrix_destroy')
  call check(spgemm_destroy(h), 'spgemm_destroy')

contains

  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= SPGEMM_STATUS_SUCCESS) then
      print '(3a)', what, ' failed: ', spgemm_error_message(h)
      error stop 1
    end if
  end subroutine check

  ! Compares C (CSR) with the dense product of A (dense) with itself.
  subroutine verify(round)
    integer, intent(in) :: round
    real(c_double) :: ad(n, n), cd(n, n), got(n, n)
    integer :: i, k
    ad = 0
    got = 0
    do i = 1, n
      do k = a_rowptr(i), a_rowptr(i + 1) - 1
        ad(i, a_cols(k)) = a_vals(k)
      end do
      do k = c_rowptr(i), c_rowptr(i + 1) - 1
        got(i, c_cols(k)) = got(i, c_cols(k)) + c_vals(k)
      end do
    end do
    cd = matmul(ad, ad)
    if (maxval(abs(cd - got)) > 1d-12 * maxval(abs(cd))) then
      print '(a, i0, a)', 'quickstart: round ', round, ': C differs from the dense product'
      error stop 1
    end if
  end subroutine verify

end program quickstart
