! Lengths and the memory limit through the Fortran module (issue 27): matrices made with
! spgemm_matrix_create_csr_arrays (nrows and nnz from the arrays' sizes, checked against
! the last row offset), C filled with spgemm_numeric_arrays (kinds and sizes of C's arrays
! checked against the plan: an integer(c_int64_t) column array for an int32 plan and a
! short value array are errors with a message, nothing written), and
! spgemm_set_memory_limit (ALLOC_FAILED with the estimate, the handle usable after).
! C = A*A for A = tridiag(-1, 2, -1), 1-based, against the intrinsic matmul. Prints
! "N passed, M failed"; exit status 1 on failure.
program limits
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_int32_t, c_int64_t, c_double, &
      c_float, c_size_t
  use spgemm
  implicit none

  integer, parameter :: n = 6, nz = 3 * n - 2
  integer(c_int32_t), target :: a_rowptr(n + 1), a_cols(nz), bad_rowptr(n + 1)
  real(c_double), target :: a_vals(nz)
  integer(c_int32_t), allocatable, target :: c_rowptr(:), c_cols(:), short_cols(:)
  integer(c_int64_t), allocatable, target :: cols64(:)
  real(c_double), allocatable, target :: c_vals(:)
  real(c_float), allocatable, target :: vals32(:)
  real(c_double) :: ad(n, n), got(n, n), want(n, n)
  type(c_ptr) :: h = c_null_ptr, a = c_null_ptr, bad = c_null_ptr, plan = c_null_ptr
  integer(c_int64_t) :: nnz
  integer(c_size_t) :: limit
  integer :: passed = 0, failed = 0, i, j, p, st

  ! A, 1-based CSR.
  p = 0
  a_rowptr(1) = 1
  do i = 1, n
    do j = max(1, i - 1), min(n, i + 1)
      p = p + 1
      a_cols(p) = j
      a_vals(p) = merge(2.0_c_double, -1.0_c_double, i == j)
    end do
    a_rowptr(i + 1) = p + 1
  end do

  call check(spgemm_create(h) == SPGEMM_STATUS_SUCCESS, 'spgemm_create')
  call check(spgemm_matrix_create_csr_arrays(a, int(n, c_int64_t), a_rowptr, a_cols, a_vals, &
      SPGEMM_INDEX_BASE_ONE) == SPGEMM_STATUS_SUCCESS, 'spgemm_matrix_create_csr_arrays')
  ! Offsets that claim more entries than the arrays hold.
  bad_rowptr = a_rowptr
  bad_rowptr(n + 1) = bad_rowptr(n + 1) + 2
  st = spgemm_matrix_create_csr_arrays(bad, int(n, c_int64_t), bad_rowptr, a_cols, a_vals, &
      SPGEMM_INDEX_BASE_ONE)
  call check(st == SPGEMM_STATUS_INVALID_VALUE, 'offsets past the arrays: INVALID_VALUE')
  call check(index(spgemm_error_message(c_null_ptr), 'nnz') > 0, 'the message names nnz')

  ! The memory limit: a 64-byte bound fails with the estimate, none succeeds.
  call check(spgemm_set_memory_limit(h, 64_c_size_t) == SPGEMM_STATUS_SUCCESS, &
      'spgemm_set_memory_limit')
  call check(spgemm_get_memory_limit(h, limit) == SPGEMM_STATUS_SUCCESS .and. &
      limit == 64_c_size_t, 'spgemm_get_memory_limit')
  allocate(c_rowptr(n + 1))
  st = spgemm_symbolic(h, a, a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_INDEX_BASE_ONE, &
      c_null_ptr, plan)
  call check(st == SPGEMM_STATUS_ALLOC_FAILED, 'symbolic over the limit: ALLOC_FAILED')
  call check(index(spgemm_error_message(h), 'estimated') > 0, 'the message has the estimate')
  call check(spgemm_set_memory_limit(h, 0_c_size_t) == SPGEMM_STATUS_SUCCESS, 'no limit')
  call check(spgemm_symbolic(h, a, a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, &
      SPGEMM_INDEX_BASE_ONE, c_null_ptr, plan) == SPGEMM_STATUS_SUCCESS, 'spgemm_symbolic')
  call check(spgemm_plan_get_nnz(plan, nnz) == SPGEMM_STATUS_SUCCESS, 'spgemm_plan_get_nnz')
  allocate(c_cols(nnz), c_vals(nnz), short_cols(nnz - 1), cols64(nnz), vals32(nnz))

  ! Kinds and lengths that disagree with the plan: errors, nothing written.
  short_cols = -1
  st = spgemm_numeric_arrays(h, plan, a, a, c_rowptr, short_cols, c_vals)
  call check(st == SPGEMM_STATUS_INVALID_VALUE .and. short_cols(1) == -1, &
      'short column array: INVALID_VALUE')
  cols64 = -1
  st = spgemm_numeric_arrays(h, plan, a, a, c_rowptr, cols64, c_vals)
  call check(st == SPGEMM_STATUS_TYPE_MISMATCH .and. cols64(1) == -1, &
      'int64 columns for an int32 plan: TYPE_MISMATCH')
  call check(index(spgemm_error_message(h), 'int64') > 0, 'the message names int64')
  st = spgemm_numeric_arrays(h, plan, a, a, c_rowptr, c_cols, vals32)
  call check(st == SPGEMM_STATUS_TYPE_MISMATCH, 'float values for a double plan: TYPE_MISMATCH')

  ! The right arrays: C with its row offsets, against the dense product.
  call check(spgemm_numeric_arrays(h, plan, a, a, c_rowptr, c_cols, c_vals) &
      == SPGEMM_STATUS_SUCCESS, 'spgemm_numeric_arrays')
  ad = 0
  got = 0
  do i = 1, n
    do p = a_rowptr(i), a_rowptr(i + 1) - 1
      ad(i, a_cols(p)) = a_vals(p)
    end do
    do p = c_rowptr(i), c_rowptr(i + 1) - 1
      got(i, c_cols(p)) = got(i, c_cols(p)) + c_vals(p)
    end do
  end do
  want = matmul(ad, ad)
  call check(maxval(abs(want - got)) <= 1e-12_c_double * maxval(abs(want)), 'C = A*A')

  call check(spgemm_plan_destroy(plan) == SPGEMM_STATUS_SUCCESS, 'spgemm_plan_destroy')
  call check(spgemm_matrix_destroy(a) == SPGEMM_STATUS_SUCCESS, 'spgemm_matrix_destroy')
  call check(spgemm_destroy(h) == SPGEMM_STATUS_SUCCESS, 'spgemm_destroy')
  print '(i0, a, i0, a)', passed, ' passed, ', failed, ' failed'
  if (failed > 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      print '(3a)', 'FAIL limits.f90: ', what, ': ' // spgemm_error_message(h)
    end if
  end subroutine check

end program limits
