! A distributed AMG setup from Fortran under mpirun: the coarse operator A_c = P^T A P of the
! 1D Laplacian tridiag(-1, 2, -1) of order n with aggregates of three points (P(i, J) = 1 for
! the aggregate J of point i), rows of A and P in contiguous blocks over the ranks of
! MPI_COMM_WORLD (1-based CSR, default integers, global column indices), the coarse points
! in blocks too (P's local column size). One plan (spgemm_dist_rap_symbolic) serves every
! numeric call: the setup is repeated with A's values scaled, as a nonlinear or
! time-dependent solver re-forms its hierarchy, and only values move between ranks.
! A_c is tridiag(-1, 2, -1) of order n / 3 (times the scale); each rank checks its rows.
!
! Build (library built with `cargo build --release --features mpi`), run:
!   mpifort spgemm.f90 dist_amg.f90 -L<libdir> -lspgemm -Wl,-rpath,<libdir> -o dist_amg
!   mpirun -np 4 ./dist_amg
program dist_amg
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_loc, c_int, c_int32_t, c_int64_t, &
      c_double
  use mpi
  use spgemm
  implicit none

  integer, parameter :: nc = 400, n = 3 * nc
  integer :: ierr, me, np, first, nloc, cfirst, cloc, i, j, q, round
  integer, allocatable, target :: arow(:), acol(:), prow(:), pcol(:), crow(:), ccol(:)
  real(c_double), allocatable, target :: aval(:), pval(:), cval(:)
  type(c_ptr) :: h = c_null_ptr, a = c_null_ptr, p = c_null_ptr, plan = c_null_ptr
  integer(c_int64_t) :: row0, rows, gcols, lnnz, gnnz
  integer(c_int32_t) :: ops
  real(c_double) :: want, worst, scale

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, me, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, np, ierr)
  ! This rank's fine rows first .. first + nloc - 1 and coarse points cfirst .. (1-based).
  first = me * n / np + 1
  nloc = (me + 1) * n / np - me * n / np
  cfirst = me * nc / np + 1
  cloc = (me + 1) * nc / np - me * nc / np

  allocate(arow(nloc + 1), acol(3 * nloc + 1), aval(3 * nloc + 1))
  allocate(prow(nloc + 1), pcol(nloc + 1), pval(nloc + 1))
  arow(1) = 1
  q = 0
  do i = first, first + nloc - 1
    do j = max(1, i - 1), min(n, i + 1)
      q = q + 1
      acol(q) = j
      aval(q) = merge(2d0, -1d0, i == j)
    end do
    arow(i - first + 2) = q + 1
    prow(i - first + 1) = i - first + 1
    pcol(i - first + 1) = (i - 1) / 3 + 1
    pval(i - first + 1) = 1d0
  end do
  prow(nloc + 1) = nloc + 1

  call check(spgemm_create(h), 'spgemm_create')
  call check(spgemm_set_num_threads(h, 1_c_int), 'spgemm_set_num_threads')
  call check(spgemm_dist_matrix_create_csr(h, int(MPI_COMM_WORLD, c_int), int(n, c_int64_t), &
      int(n, c_int64_t), int(first - 1, c_int64_t), int(nloc, c_int64_t), -1_c_int64_t, &
      0_c_int64_t, SPGEMM_INDEX_INT32, c_loc(arow), SPGEMM_INDEX_INT32, c_loc(acol), &
      SPGEMM_VALUE_FLOAT64, c_loc(aval), SPGEMM_INDEX_BASE_ONE, a), 'A')
  call check(spgemm_dist_matrix_create_csr(h, int(MPI_COMM_WORLD, c_int), int(n, c_int64_t), &
      int(nc, c_int64_t), int(first - 1, c_int64_t), int(nloc, c_int64_t), &
      int(cfirst - 1, c_int64_t), int(cloc, c_int64_t), SPGEMM_INDEX_INT32, c_loc(prow), &
      SPGEMM_INDEX_INT32, c_loc(pcol), SPGEMM_VALUE_FLOAT64, c_loc(pval), SPGEMM_INDEX_BASE_ONE, p), &
      'P')
  ! A_c = P^T A P: op T on the first matrix, which is P; C's rows are P's coarse block.
  allocate(crow(cloc + 1))
  call check(spgemm_dist_rap_symbolic(h, SPGEMM_OPERATION_TRANSPOSE, p, a, p, SPGEMM_INDEX_INT32, &
      SPGEMM_INDEX_INT32, SPGEMM_INDEX_BASE_ONE, c_loc(crow), plan), 'spgemm_dist_rap_symbolic')
  call check(spgemm_dist_spgemm_plan_get_info(plan, row0, rows, gcols, lnnz, gnnz, ops), &
      'spgemm_dist_spgemm_plan_get_info')
  allocate(ccol(max(lnnz, 1_c_int64_t)), cval(max(lnnz, 1_c_int64_t)))

  scale = 1d0
  do round = 1, 3
    call check(spgemm_dist_spgemm_numeric(h, plan, p, a, p, c_loc(ccol), c_loc(cval)), &
        'spgemm_dist_spgemm_numeric')
    worst = 0
    do i = 1, cloc
      do q = crow(i), crow(i + 1) - 1
        j = ccol(q)
        want = 0
        if (j == cfirst + i - 1) then
          want = 2d0 * scale
        else if (abs(j - (cfirst + i - 1)) == 1) then
          want = -scale
        end if
        worst = max(worst, abs(cval(q) - want))
      end do
      ! Three entries inside, two at the ends.
      if (crow(i + 1) - crow(i) /= merge(2, 3, cfirst + i - 1 == 1 .or. cfirst + i - 1 == nc)) &
          worst = huge(1d0)
    end do
    if (worst > 1d-12) then
      print '(a, i0, a, i0, a, es10.3)', 'dist_amg: rank ', me, ' round ', round, ': error ', worst
      error stop 1
    end if
    ! The next setup: A's values change, the structure does not.
    aval = 2d0 * aval
    scale = 2d0 * scale
  end do
  if (me == 0) print '(a, i0, a, i0, a, i0, a)', 'dist_amg (Fortran): ', np, ' ranks, A_c = P^T A P (', &
      gnnz, ' entries, ', nc, ' coarse points) correct in 3 setups with one plan'

  call check(spgemm_dist_spgemm_plan_destroy(plan), 'spgemm_dist_spgemm_plan_destroy')
  call check(spgemm_dist_matrix_destroy(p), 'spgemm_dist_matrix_destroy')
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

end program dist_amg
