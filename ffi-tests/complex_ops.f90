! Complex values and transposed operands through the Fortran module: complex(c_double_complex)
! and complex(c_float_complex) arrays passed with c_loc as the real ones are. C = A^H * A
! (two phases, then numeric reuse after new values of A), C = A * A^T in single precision
! (one call, C's library-owned arrays read through c_f_pointer), and
! y = alpha * A^H * x + beta * y with complex alpha and beta (spgemm_spmm_scaled), each
! against the intrinsic matmul. Values are small integers and halves, so every sum is exact
! (compared with a 1e-12 relative tolerance, as -Wcompare-reals forbids ==). Prints
! "N passed, M failed"; exit status 1 on failure.
program complex_ops
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_f_pointer, c_int32_t, &
      c_int64_t, c_double, c_float, c_double_complex, c_float_complex
  use spgemm
  implicit none

  integer, parameter :: n = 4, nz = 8
  ! A, 1-based CSR (4 x 4, row 3 empty, row 4 unsorted).
  integer(c_int32_t), target :: a_rowptr(n + 1) = [1, 3, 5, 5, 9]
  integer(c_int32_t), target :: a_cols(nz) = [1, 3, 2, 4, 4, 1, 3, 2]
  complex(c_double_complex), target :: a_vals(nz)
  complex(c_float_complex), target :: af_vals(nz)
  integer(c_int32_t), target :: c_rowptr(n + 1)
  integer(c_int32_t), allocatable, target :: c_cols(:)
  complex(c_double_complex), allocatable, target :: c_vals(:)
  complex(c_double_complex) :: ad(n, n), want(n, n)
  complex(c_float_complex) :: afd(n, n), wantf(n, n)
  complex(c_double_complex), target :: x(n), y(n), alpha, beta
  complex(c_double_complex) :: y0(n)
  type(c_ptr) :: h = c_null_ptr, a = c_null_ptr, af = c_null_ptr, plan = c_null_ptr
  type(c_ptr) :: c = c_null_ptr, prp, pci, pv
  integer(c_int32_t), pointer :: frp(:), fci(:)
  complex(c_float_complex), pointer :: fv(:)
  integer(c_int64_t) :: nnz, cnnz, rows, cols
  integer(c_int32_t) :: ot, it, vt, base
  integer :: passed = 0, failed = 0, round, i, p

  call check(spgemm_create(h) == SPGEMM_STATUS_SUCCESS, 'spgemm_create')
  do round = 1, 2
    do p = 1, nz
      a_vals(p) = cmplx(real(mod(p + round, 5) - 2, c_double), &
          0.5_c_double * real(mod(3 * p, 4) - 1, c_double), c_double_complex)
    end do
    if (round == 1) then
      call check(spgemm_matrix_create_csr(a, int(n, c_int64_t), int(n, c_int64_t), &
          SPGEMM_INDEX_INT32, c_loc(a_rowptr), SPGEMM_INDEX_INT32, c_loc(a_cols), &
          SPGEMM_VALUE_COMPLEX_DOUBLE, c_loc(a_vals), SPGEMM_INDEX_BASE_ONE) &
          == SPGEMM_STATUS_SUCCESS, 'spgemm_matrix_create_csr (complex double)')
      call check(spgemm_symbolic_op(h, SPGEMM_OPERATION_CONJUGATE_TRANSPOSE, a, &
          SPGEMM_OPERATION_NON_TRANSPOSE, a, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, &
          SPGEMM_INDEX_BASE_ONE, c_loc(c_rowptr), plan) == SPGEMM_STATUS_SUCCESS, &
          'spgemm_symbolic_op')
      call check(spgemm_plan_get_nnz(plan, nnz) == SPGEMM_STATUS_SUCCESS, 'spgemm_plan_get_nnz')
      allocate(c_cols(nnz), c_vals(nnz))
    end if
    ! Round 2 reuses the plan with A's new values (in place).
    call check(spgemm_numeric(h, plan, a, a, c_loc(c_cols), c_loc(c_vals)) &
        == SPGEMM_STATUS_SUCCESS, 'spgemm_numeric')
    call dense(a_vals, ad)
    want = matmul(conjg(transpose(ad)), ad)
    call check(same_z(c_rowptr, c_cols, c_vals, want), 'C = A^H A')
  end do

  ! Single precision, C = A * A^T in one call; C's arrays are the library's.
  af_vals = cmplx(a_vals, kind=c_float_complex)
  call check(spgemm_matrix_create_csr(af, int(n, c_int64_t), int(n, c_int64_t), &
      SPGEMM_INDEX_INT32, c_loc(a_rowptr), SPGEMM_INDEX_INT32, c_loc(a_cols), &
      SPGEMM_VALUE_COMPLEX_FLOAT, c_loc(af_vals), SPGEMM_INDEX_BASE_ONE) &
      == SPGEMM_STATUS_SUCCESS, 'spgemm_matrix_create_csr (complex float)')
  call check(spgemm_multiply_op(h, SPGEMM_OPERATION_NON_TRANSPOSE, af, &
      SPGEMM_OPERATION_TRANSPOSE, af, SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, &
      SPGEMM_INDEX_BASE_ONE, c) == SPGEMM_STATUS_SUCCESS, 'spgemm_multiply_op')
  call check(spgemm_matrix_get_info(c, rows, cols, cnnz, ot, it, vt, base) &
      == SPGEMM_STATUS_SUCCESS, 'spgemm_matrix_get_info')
  call check(vt == SPGEMM_VALUE_COMPLEX_FLOAT .and. rows == n .and. cols == n .and. &
      ot == SPGEMM_INDEX_INT32 .and. it == SPGEMM_INDEX_INT32 .and. base == 1, 'C info')
  call check(spgemm_matrix_export_csr(c, prp, pci, pv) == SPGEMM_STATUS_SUCCESS, &
      'spgemm_matrix_export_csr')
  call c_f_pointer(prp, frp, [n + 1])
  call c_f_pointer(pci, fci, [cnnz])
  call c_f_pointer(pv, fv, [cnnz])
  call densef(af_vals, afd)
  wantf = matmul(afd, transpose(afd))
  call check(same_c(frp, fci, fv, wantf), 'C = A A^T (complex float)')

  ! y = alpha * A^H * x + beta * y, column-major, k = 1.
  do i = 1, n
    x(i) = cmplx(real(i - 2, c_double), 0.5_c_double * real(i, c_double), c_double_complex)
    y(i) = cmplx(1.0_c_double, real(-i, c_double), c_double_complex)
  end do
  y0 = y
  alpha = cmplx(0.5_c_double, -1.0_c_double, c_double_complex)
  beta = cmplx(2.0_c_double, 0.5_c_double, c_double_complex)
  call check(spgemm_spmm_scaled(h, SPGEMM_OPERATION_CONJUGATE_TRANSPOSE, c_loc(alpha), a, &
      c_null_ptr, SPGEMM_LAYOUT_COL_MAJOR, 1_c_int64_t, c_loc(x), int(n, c_int64_t), &
      c_loc(beta), c_loc(y), int(n, c_int64_t)) == SPGEMM_STATUS_SUCCESS, 'spgemm_spmm_scaled')
  call check(close_z(y, alpha * matmul(conjg(transpose(ad)), x) + beta * y0), &
      'y = alpha A^H x + beta y')

  call check(spgemm_matrix_destroy(c) == SPGEMM_STATUS_SUCCESS, 'destroy C')
  call check(spgemm_plan_destroy(plan) == SPGEMM_STATUS_SUCCESS, 'destroy plan')
  call check(spgemm_matrix_destroy(a) == SPGEMM_STATUS_SUCCESS, 'destroy A')
  call check(spgemm_matrix_destroy(af) == SPGEMM_STATUS_SUCCESS, 'destroy A (float)')
  call check(spgemm_destroy(h) == SPGEMM_STATUS_SUCCESS, 'spgemm_destroy')
  print '(i0, a, i0, a)', passed, ' passed, ', failed, ' failed'
  if (failed > 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      print '(a, a, a, a)', 'FAIL complex_ops.f90: ', what, ': ', spgemm_error_message(h)
    end if
  end subroutine check

  subroutine dense(v, d)
    complex(c_double_complex), intent(in) :: v(nz)
    complex(c_double_complex), intent(out) :: d(n, n)
    integer :: r, q
    d = (0.0_c_double, 0.0_c_double)
    do r = 1, n
      do q = a_rowptr(r), a_rowptr(r + 1) - 1
        d(r, a_cols(q)) = v(q)
      end do
    end do
  end subroutine dense

  subroutine densef(v, d)
    complex(c_float_complex), intent(in) :: v(nz)
    complex(c_float_complex), intent(out) :: d(n, n)
    integer :: r, q
    d = (0.0_c_float, 0.0_c_float)
    do r = 1, n
      do q = a_rowptr(r), a_rowptr(r + 1) - 1
        d(r, a_cols(q)) = v(q)
      end do
    end do
  end subroutine densef

  ! Whether 1-based CSR C equals the dense w (entries outside C's structure are zero in w).
  logical function same_z(rp, ci, v, w)
    integer(c_int32_t), intent(in) :: rp(:), ci(:)
    complex(c_double_complex), intent(in) :: v(:), w(n, n)
    complex(c_double_complex) :: d(n, n)
    integer :: r, q
    d = (0.0_c_double, 0.0_c_double)
    do r = 1, n
      do q = rp(r), rp(r + 1) - 1
        d(r, ci(q)) = v(q)
      end do
    end do
    same_z = close_z(reshape(d, [n * n]), reshape(w, [n * n]))
  end function same_z

  logical function same_c(rp, ci, v, w)
    integer(c_int32_t), intent(in) :: rp(:), ci(:)
    complex(c_float_complex), intent(in) :: v(:), w(n, n)
    complex(c_float_complex) :: d(n, n)
    integer :: r, q
    d = (0.0_c_float, 0.0_c_float)
    do r = 1, n
      do q = rp(r), rp(r + 1) - 1
        d(r, ci(q)) = v(q)
      end do
    end do
    same_c = maxval(abs(d - w)) <= 1e-6_c_float * max(1.0_c_float, maxval(abs(w)))
  end function same_c

  ! Whether got equals want up to rounding (the values are exact in binary, so this is
  ! equality in practice; gfortran's -Wcompare-reals rules out ==).
  logical function close_z(got, want)
    complex(c_double_complex), intent(in) :: got(:), want(:)
    close_z = maxval(abs(got - want)) <= 1e-12_c_double * max(1.0_c_double, maxval(abs(want)))
  end function close_z

end program complex_ops
