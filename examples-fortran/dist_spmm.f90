! Distributed SpMM from Fortran under mpirun: Y = A*X for the 1D Laplacian tridiag(-1, 2, -1)
! of order n, rows distributed in contiguous blocks over the ranks of MPI_COMM_WORLD (1-based
! CSR, default integers, global column indices), X with k columns (column-major, as Fortran
! stores it). The communicator goes to the library as the Fortran integer handle. The plan
! is reused for a second product after A's values are scaled (spgemm_dist_spmm_update_values).
! Each rank checks its rows of Y against the exact result; exit status 1 on a wrong answer.
!
! Build (library built with `cargo build --release --features mpi`), run:
!   mpifort spgemm.f90 dist_spmm.f90 -L<libdir> -lspgemm -Wl,-rpath,<libdir> -o dist_spmm
!   mpirun -np 4 ./dist_spmm
program dist_spmm
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_int, c_int32_t, c_int64_t, &
      c_double
  use mpi
  use spgemm
  implicit none

  integer, parameter :: n = 1000, k = 3
  integer :: ierr, me, np, first, nloc, i, j, q, round
  integer, allocatable, target :: rowptr(:), cols(:)
  real(c_double), allocatable, target :: vals(:), x(:, :), y(:, :)
  type(c_ptr) :: h = c_null_ptr, a = c_null_ptr, plan = c_null_ptr
  integer(c_int32_t) :: alg, vt
  integer(c_int64_t) :: pr, pc, foot, xr, yr
  real(c_double) :: want, worst, scale, pred

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, me, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
  ! This rank's rows: first .. first + nloc - 1 (1-based), blocks in rank order.
  first = me * n / np + 1
  nloc = (me + 1) * n / np - me * n / np

  allocate(rowptr(nloc + 1), cols(3 * nloc), vals(3 * nloc), x(max(nloc, 1), k), y(max(nloc, 1), k))
  rowptr(1) = 1
  q = 0
  do i = first, first + nloc - 1
    do j = max(1, i - 1), min(n, i + 1)
      q = q + 1
      cols(q) = j
      vals(q) = merge(2d0, -1d0, i == j)
    end do
    rowptr(i - first + 2) = q + 1
  end do
  ! X(i, c) = i * c: A*X is 0 inside, and (i-1)*c ... at the boundary rows (see verify).
  do j = 1, k
    do i = 1, nloc
      x(i, j) = real(first + i - 1, c_double) * j
    end do
  end do

  call check(spgemm_create(h), 'spgemm_create')
  call check(spgemm_set_num_threads(h, 1_c_int), 'spgemm_set_num_threads')
  ! The communicator as the Fortran handle (MPI_COMM_WORLD here; any intra-communicator).
  call check(spgemm_dist_matrix_create_csr(h, int(MPI_COMM_WORLD, c_int), int(n, c_int64_t), &
      int(n, c_int64_t), int(first - 1, c_int64_t), int(nloc, c_int64_t), -1_c_int64_t, &
      0_c_int64_t, SPGEMM_INDEX_INT32, c_loc(rowptr), SPGEMM_INDEX_INT32, c_loc(cols), &
      SPGEMM_VALUE_FLOAT64, c_loc(vals), SPGEMM_INDEX_BASE_ONE, a), 'spgemm_dist_matrix_create_csr')
  call check(spgemm_dist_spmm_plan(h, a, int(k, c_int64_t), SPGEMM_LAYOUT_COL_MAJOR, &
      SPGEMM_DIST_ALG_AUTO, 0_c_int64_t, 0_c_int64_t, 0_c_int64_t, plan), 'spgemm_dist_spmm_plan')
  call check(spgemm_dist_plan_get_info(plan, alg, pr, pc, foot, pred, vt, xr, yr), &
      'spgemm_dist_plan_get_info')

  scale = 1d0
  do round = 1, 2
    call check(spgemm_dist_spmm(h, plan, 1d0, c_loc(x), int(max(nloc, 1), c_int64_t), 0d0, &
        c_loc(y), int(max(nloc, 1), c_int64_t)), 'spgemm_dist_spmm')
    worst = 0
    do j = 1, k
      do i = first, first + nloc - 1
        ! (A X)(i) = 2 i - (i - 1) - (i + 1) = 0 inside; row 1: 2 - 2 = 0; row n: 2n - (n-1) = n + 1.
        want = 0
        if (i == n) want = real(n + 1, c_double) * j * scale
        worst = max(worst, abs(y(i - first + 1, j) - want))
      end do
    end do
    if (worst > 1d-9) then
      print '(a, i0, a, i0, a, es10.3)', 'dist_spmm: rank ', me, ' round ', round, ': error ', worst
      error stop 1
    end if
    ! New values of A, same structure: the plan moves only values.
    vals = 2d0 * vals
    scale = 2d0
    call check(spgemm_dist_spmm_update_values(h, plan, a), 'spgemm_dist_spmm_update_values')
  end do
  if (me == 0) print '(a, i0, a, i0, a, i0, a, i0, a)', 'dist_spmm (Fortran): ', np, &
      ' ranks, algorithm ', alg, ' on a ', pr, ' x ', pc, ' grid: Y = A*X matches, twice'

  call check(spgemm_dist_plan_destroy(plan), 'spgemm_dist_plan_destroy')
  call check(spgemm_dist_matrix_destroy(a), 'spgemm_dist_matrix_destroy')
  call check(spgemm_destroy(h), 'spgemm_destroy')
  call mpi_finalize(ierr)

contains

  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= SPGEMM_STATUS_SUCCESS) then
      print '(a, i0, 4a)', 'rank ', me, ': ', what, ' failed: ', spgemm_error_message(h)
      error stop 1
    end if
  end subroutine check

end program dist_spmm
