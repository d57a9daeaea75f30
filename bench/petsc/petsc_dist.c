/*
 * petsc_dist: the PETSc peer of `spgemm-bench dist-spgemm` / `dist-spmm`.
 *
 * Measures PETSc's distributed sparse products on Matrix Market inputs, with the row and
 * column split the libspgemm distributed layer uses, and prints one JSON line (rank 0).
 *
 *   petsc_dist mm   A.mtx B.mtx|A        C = A*B        (MatMatMult, MATPRODUCT_AB)
 *   petsc_dist ptap A.mtx P.mtx          C = P^T*A*P    (MatPtAP, MATPRODUCT_PtAP)
 *   petsc_dist rap  R.mtx A.mtx P.mtx    C = R*A*P      (MatMatMatMult, MATPRODUCT_ABC)
 *   petsc_dist atb  A.mtx B.mtx|A        C = A^T*B      (MatTransposeMatMult, MATPRODUCT_AtB)
 *   petsc_dist spmm A.mtx K              Y = A*X, X dense N x K (MatMatMult, AIJ x DENSE)
 *   options: --reps N (default 5)  --alg NAME (default "default")
 *            --mat-type mpiaij|aij (default mpiaij: MPIAIJ at every rank count, so the
 *              algorithm names mean the same at np 1; "aij" gives SeqAIJ at np 1)
 *   PETSc options (-log_view, ...) go after the operands; PetscInitialize reads them.
 *
 * Distribution: rank q of p owns rows floor(q*m/p) .. floor((q+1)*m/p) - 1 of an m x n
 * matrix, and its local column size (PETSc's `n`) is floor((q+1)*n/p) - floor(q*n/p).
 * X of spmm has the row split of A's columns; X(i,j) = ((7i + 13j) mod 17 - 8) / 8
 * (0-based global i, j), the values `spgemm-bench spmm` uses.
 *
 * Timing (MPI_Wtime, MPI_Barrier before each timed region, max over ranks per region,
 * median over --reps; matrix reading and assembly are not timed):
 *   symbolic_s  MatProductSymbolic of a fresh product (MatProductCreate .. SetFromOptions
 *               untimed), one per rep, destroyed after the rep
 *   numeric_s   the first MatProductNumeric of that product
 *   total_s     MatMatMult / MatPtAP / MatMatMatMult / MatTransposeMatMult with
 *               MAT_INITIAL_MATRIX, from scratch (C destroyed after each rep but the last)
 *   reuse_s     the same call with MAT_REUSE_MATRIX on the last C
 * Before each reuse rep, A's values change: MatScale(A, -1.0) (untimed). A negation really
 * rewrites every value (MatScale(A, 1.0) may skip the work), keeps the magnitudes, so
 * sumabsC is the same whatever the number of reps, and keeps nnz(C).
 *
 * JSON (rank 0, stdout): lib, petsc_version, mode, alg (asked), alg_used (resolved),
 * mat_type, np, inputs, reps, symbolic_s, numeric_s, total_s, reuse_s, C_rows, C_cols,
 * nnzC (stored entries of C summed over ranks: structural, an exact cancellation counts),
 * sumabsC (sum of |c_ij|), flops (scalar multiplications: sum over the nonzeros a_ik of
 * nnz(B row k); ptap and rap add those of A*P and of P^T*(AP) or R*(AP); spmm nnz(A)*K);
 * spmm adds K, gflops_total and gflops_reuse = 2*nnz(A)*K / total_s or reuse_s. Errors:
 * {"lib":"petsc","error":"..."} and a nonzero exit (MPI_Abort when PETSc fails inside a
 * product, so that no rank waits forever). Rank 0 holds the whole inputs for the flop
 * count; the other ranks keep their own rows.
 *
 * The algorithm: MatProductSetAlgorithm(C, NAME) for the MatProduct path; for the
 * MatMatMult-style calls the options database key that PETSc 3.18 reads for them
 * (-matmatmult_via, -matptap_via, -matmatmatmult_via, -mattransposematmult_via) is set to
 * NAME for the duration of the call. The algorithm PETSc resolved ("default" becomes a
 * concrete one) is read from both products and must agree; it is printed as alg_used.
 */
#define _POSIX_C_SOURCE 200809L

#include <petscmat.h>
#include <petsc/private/matimpl.h> /* C->product->alg: the algorithm PETSc resolved */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------ */
/* errors                                                                              */

static int g_rank = 0;

static void json_string(FILE *f, const char *s)
{
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c == '\n') fputs("\\n", f);
    else if (c == '\t') fputs("\\t", f);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

/* A PETSc call failed on this rank. The others may be blocked in a collective, so the
   run ends with MPI_Abort. Rank 0 reports at once; another rank waits a second first, so
   that an error every rank hits is reported once, by rank 0, before its abort. */
static void petsc_failed(PetscErrorCode ierr, const char *call, int line)
{
  const char *text = NULL;
  char       *specific = NULL, msg[1024];
  PetscErrorMessage(ierr, &text, &specific);
  snprintf(msg, sizeof msg, "PETSc error %d (%s%s%s) in %s at petsc_dist.c:%d on rank %d; PETSc's trace is on stderr", (int)ierr, text ? text : "", text && specific && *specific ? ": " : "",
           specific ? specific : "", call, line, g_rank);
  if (g_rank != 0) sleep(1);
  fputs("{\"lib\":\"petsc\",\"error\":", stdout);
  json_string(stdout, msg);
  fputs("}\n", stdout);
  fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* What the driver is doing, for the error line of a signal caught inside PETSc. */
static const char *volatile g_phase = "setup (reading the inputs, building the matrices)";

/* PETSc's signal handler calls this (PetscPushSignalHandler): a crash inside PETSc leaves a
   JSON error line too. write(2) only, then abort. */
static PetscErrorCode on_signal(int sig, void *ctx)
{
  char buf[512];
  int  n;
  (void)ctx;
  n = snprintf(buf, sizeof buf, "{\"lib\":\"petsc\",\"error\":\"signal %d (%s) inside PETSc during %s on rank %d\"}\n", sig,
               sig == 11 ? "SEGV" : sig == 7 ? "BUS" : sig == 8 ? "FPE" : "?", g_phase, g_rank);
  if (g_rank != 0) sleep(1);
  if (n > 0) {
    ssize_t w = write(STDOUT_FILENO, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    (void)w;
  }
  MPI_Abort(MPI_COMM_WORLD, 2);
  return 0;
}

#define CK(call) \
  do { \
    PetscErrorCode ierr_ = (call); \
    if (ierr_) petsc_failed(ierr_, #call, __LINE__); \
  } while (0)

/* An error every rank reaches in the same way (arguments, inputs): rank 0 prints it and
   every rank leaves cleanly. */
static int fail_all(const char *msg)
{
  if (g_rank == 0) {
    fputs("{\"lib\":\"petsc\",\"error\":", stdout);
    json_string(stdout, msg);
    fputs("}\n", stdout);
    fflush(stdout);
  }
  PetscFinalize();
  return 1;
}

/* ------------------------------------------------------------------------------------ */
/* Matrix Market reader                                                                */

/* Rows r0 .. r1-1 of an m x n matrix: row offsets (r1-r0+1 entries, from 0), global
   column indices sorted in each row, duplicates summed. */
typedef struct {
  PetscInt     m, n;   /* global size */
  PetscInt     r0, r1; /* rows held */
  PetscInt    *ptr;
  PetscInt    *col;
  PetscScalar *val;
  int64_t      nnz_file; /* global nnz after mirroring and merging (every rank) */
} Csr;

typedef struct {
  PetscInt    c;
  PetscScalar v;
} Entry;

static int entry_cmp(const void *a, const void *b)
{
  PetscInt x = ((const Entry *)a)->c, y = ((const Entry *)b)->c;
  return (x > y) - (x < y);
}

static void csr_free(Csr *a)
{
  free(a->ptr);
  free(a->col);
  free(a->val);
  memset(a, 0, sizeof *a);
}

/* Case-insensitive token match. */
static int tok_eq(const char *a, const char *b)
{
  for (; *a && *b; a++, b++)
    if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
  return *a == *b;
}

static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
  FILE *f = fopen(path, "rb");
  char *buf;
  long  sz;
  if (!f) {
    snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  if (fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
    snprintf(err, errlen, "cannot size %s", path);
    fclose(f);
    return NULL;
  }
  buf = malloc((size_t)sz + 1);
  if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
    snprintf(err, errlen, "cannot read %s", path);
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  buf[sz] = '\0';
  *len    = (size_t)sz;
  return buf;
}

/* Reads `path`; keeps rows [floor(q*m/p), floor((q+1)*m/p)) when all == 0, every row
   when all != 0. Returns 0, or -1 with a message in err. Every rank parses the whole
   file, so an error in the file is seen by all ranks alike. */
static int read_mtx(const char *path, int q, int p, int all, Csr *out, char *err, size_t errlen)
{
  size_t       len;
  char        *buf = slurp(path, &len, err, errlen), *s, *e, *line;
  char         w[5][64];
  int          pattern = 0, symm = 0, skew = 0, nw;
  long long    m, n, nz, k;
  PetscInt     r0, r1, nloc, *cnt = NULL, *ptr = NULL, *col = NULL;
  PetscInt    *ri = NULL, *ci = NULL;
  PetscScalar *vi = NULL, *val = NULL;
  size_t       ne = 0, cap;
  int          rc = -1;

  memset(out, 0, sizeof *out);
  if (!buf) return -1;
  /* header */
  line = buf;
  e    = strchr(line, '\n');
  if (e) *e = '\0';
  nw = sscanf(line, "%63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4]);
  if (nw != 5 || !tok_eq(w[0], "%%MatrixMarket") || !tok_eq(w[1], "matrix")) {
    snprintf(err, errlen, "%s: not a Matrix Market matrix header", path);
    goto done;
  }
  if (!tok_eq(w[2], "coordinate")) {
    snprintf(err, errlen, "%s: format %s unsupported (coordinate only)", path, w[2]);
    goto done;
  }
  if (tok_eq(w[3], "pattern")) pattern = 1;
  else if (!tok_eq(w[3], "real") && !tok_eq(w[3], "integer") && !tok_eq(w[3], "double")) {
    snprintf(err, errlen, "%s: field %s unsupported (real, integer, pattern)", path, w[3]);
    goto done;
  }
  if (tok_eq(w[4], "symmetric")) symm = 1;
  else if (tok_eq(w[4], "skew-symmetric")) symm = skew = 1;
  else if (!tok_eq(w[4], "general")) {
    snprintf(err, errlen, "%s: symmetry %s unsupported (general, symmetric, skew-symmetric)", path, w[4]);
    goto done;
  }
  /* comments, then the size line */
  s = e ? e + 1 : buf + len;
  while (s < buf + len && (*s == '%' || *s == '\n' || *s == '\r')) {
    if (*s == '%') {
      e = strchr(s, '\n');
      s = e ? e + 1 : buf + len;
    } else s++;
  }
  if (sscanf(s, "%lld %lld %lld", &m, &n, &nz) != 3 || m < 0 || n < 0 || nz < 0 || m > PETSC_MAX_INT || n > PETSC_MAX_INT) {
    snprintf(err, errlen, "%s: bad size line", path);
    goto done;
  }
  e = strchr(s, '\n');
  s = e ? e + 1 : buf + len;

  r0   = all ? 0 : (PetscInt)((int64_t)q * m / p);
  r1   = all ? (PetscInt)m : (PetscInt)((int64_t)(q + 1) * m / p);
  nloc = r1 - r0;
  cap  = (size_t)(all ? nz * (symm ? 2 : 1) : (nz * (symm ? 2 : 1)) / p + 16);
  ri   = malloc(cap * sizeof *ri);
  ci   = malloc(cap * sizeof *ci);
  vi   = malloc(cap * sizeof *vi);
  if (!ri || !ci || !vi) {
    snprintf(err, errlen, "%s: out of memory", path);
    goto done;
  }
  for (k = 0; k < nz; k++) {
    long long i, j;
    double    v = 1.0;
    char     *t;
    i = strtoll(s, &t, 10);
    if (t == s) break;
    s = t;
    j = strtoll(s, &t, 10);
    if (t == s) break;
    s = t;
    if (!pattern) {
      v = strtod(s, &t);
      if (t == s) break;
      s = t;
    }
    while (*s && *s != '\n') s++; /* rest of the line (e.g. an imaginary part) */
    if (i < 1 || i > m || j < 1 || j > n) {
      snprintf(err, errlen, "%s: entry %lld (%lld, %lld) outside %lld x %lld", path, k + 1, i, j, m, n);
      goto done;
    }
    for (int mirror = 0; mirror <= (symm && i != j); mirror++) {
      PetscInt r = (PetscInt)(mirror ? j : i) - 1, c = (PetscInt)(mirror ? i : j) - 1;
      if (r < r0 || r >= r1) continue;
      if (ne == cap) {
        cap = cap * 2 + 16;
        ri  = realloc(ri, cap * sizeof *ri);
        ci  = realloc(ci, cap * sizeof *ci);
        vi  = realloc(vi, cap * sizeof *vi);
        if (!ri || !ci || !vi) {
          snprintf(err, errlen, "%s: out of memory", path);
          goto done;
        }
      }
      ri[ne] = r - r0;
      ci[ne] = c;
      vi[ne] = (mirror && skew) ? -v : v;
      ne++;
    }
  }
  if (k != nz) {
    snprintf(err, errlen, "%s: %lld entries read, header says %lld", path, k, nz);
    goto done;
  }
  if (symm && m != n) {
    snprintf(err, errlen, "%s: symmetric but %lld x %lld", path, m, n);
    goto done;
  }
  /* counting sort by row, then sort and merge each row */
  cnt = calloc((size_t)nloc + 1, sizeof *cnt);
  ptr = malloc(((size_t)nloc + 1) * sizeof *ptr);
  col = malloc((ne ? ne : 1) * sizeof *col);
  val = malloc((ne ? ne : 1) * sizeof *val);
  if (!cnt || !ptr || !col || !val) {
    snprintf(err, errlen, "%s: out of memory", path);
    goto done;
  }
  for (size_t t = 0; t < ne; t++) cnt[ri[t] + 1]++;
  for (PetscInt r = 0; r < nloc; r++) cnt[r + 1] += cnt[r];
  {
    Entry   *row = NULL;
    size_t   rowcap = 0;
    PetscInt out_n = 0;
    PetscInt *fill = malloc(((size_t)nloc + 1) * sizeof *fill);
    if (!fill) {
      snprintf(err, errlen, "%s: out of memory", path);
      goto done;
    }
    memcpy(fill, cnt, ((size_t)nloc + 1) * sizeof *fill);
    for (size_t t = 0; t < ne; t++) {
      PetscInt d = fill[ri[t]]++;
      col[d]     = ci[t];
      val[d]     = vi[t];
    }
    free(fill);
    ptr[0] = 0;
    for (PetscInt r = 0; r < nloc; r++) {
      PetscInt b = cnt[r], l = cnt[r + 1] - cnt[r];
      if ((size_t)l > rowcap) {
        rowcap = (size_t)l * 2;
        free(row);
        row = malloc(rowcap * sizeof *row);
        if (!row) {
          snprintf(err, errlen, "%s: out of memory", path);
          goto done;
        }
      }
      for (PetscInt t = 0; t < l; t++) {
        row[t].c = col[b + t];
        row[t].v = val[b + t];
      }
      if (l > 1) qsort(row, (size_t)l, sizeof *row, entry_cmp);
      for (PetscInt t = 0; t < l; t++) {
        if (t > 0 && row[t].c == col[out_n - 1]) val[out_n - 1] += row[t].v;
        else {
          col[out_n] = row[t].c;
          val[out_n] = row[t].v;
          out_n++;
        }
      }
      ptr[r + 1] = out_n;
    }
    free(row);
  }
  out->m = (PetscInt)m;
  out->n = (PetscInt)n;
  out->r0 = r0;
  out->r1 = r1;
  out->ptr = ptr;
  out->col = col;
  out->val = val;
  ptr = NULL;
  col = NULL;
  val = NULL;
  rc = 0;
done:
  free(buf);
  free(ri);
  free(ci);
  free(vi);
  free(cnt);
  free(ptr);
  free(col);
  free(val);
  return rc;
}

/* ------------------------------------------------------------------------------------ */
/* distribution and PETSc matrices                                                     */

static PetscInt split(PetscInt n, int p, int q)
{
  return (PetscInt)((int64_t)q * n / p);
}

/* The PETSc matrix of a global CSR held in full (rank 0's copy) or in part (the rows this
   rank owns): rows r0 .. r1-1 of `a` are sliced out. Exact preallocation from the CSR. */
static Mat build_aij(const Csr *a, int p, int q, const char *type)
{
  Mat       A;
  PetscInt  r0 = split(a->m, p, q), r1 = split(a->m, p, q + 1);
  PetscInt  c0 = split(a->n, p, q), c1 = split(a->n, p, q + 1);
  PetscInt  base = a->ptr[r0 - a->r0];
  PetscInt *ia   = malloc(((size_t)(r1 - r0) + 1) * sizeof *ia);
  for (PetscInt r = r0; r <= r1; r++) ia[r - r0] = a->ptr[r - a->r0] - base;
  CK(MatCreate(PETSC_COMM_WORLD, &A));
  CK(MatSetSizes(A, r1 - r0, c1 - c0, a->m, a->n));
  CK(MatSetType(A, type));
  CK(MatSeqAIJSetPreallocationCSR(A, ia, a->col + base, a->val + base)); /* no-op unless SeqAIJ */
  CK(MatMPIAIJSetPreallocationCSR(A, ia, a->col + base, a->val + base)); /* no-op unless MPIAIJ */
  CK(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  CK(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  free(ia);
  return A;
}

/* X (N x K, MPIDENSE), rows split like A's columns. */
static Mat build_dense(PetscInt N, PetscInt K, int p, int q)
{
  Mat          X;
  PetscScalar *x;
  PetscInt     lda, r0 = split(N, p, q), r1 = split(N, p, q + 1);
  CK(MatCreateDense(PETSC_COMM_WORLD, r1 - r0, PETSC_DECIDE, N, K, NULL, &X));
  CK(MatDenseGetLDA(X, &lda));
  CK(MatDenseGetArrayWrite(X, &x));
  for (PetscInt j = 0; j < K; j++)
    for (PetscInt i = r0; i < r1; i++) x[(size_t)(i - r0) + (size_t)j * (size_t)lda] = (PetscScalar)(((7 * (int64_t)i + 13 * (int64_t)j) % 17 - 8) / 8.0);
  CK(MatDenseRestoreArrayWrite(X, &x));
  CK(MatAssemblyBegin(X, MAT_FINAL_ASSEMBLY));
  CK(MatAssemblyEnd(X, MAT_FINAL_ASSEMBLY));
  return X;
}

/* Global nnz (stored entries) and sum of |c_ij| of C. */
static void global_stats(Mat C, int64_t *nnz, double *sumabs)
{
  PetscInt rs, re;
  int64_t  ln = 0, gn;
  double   ls = 0.0, gs;
  CK(MatGetOwnershipRange(C, &rs, &re));
  for (PetscInt r = rs; r < re; r++) {
    PetscInt           l;
    const PetscScalar *v;
    CK(MatGetRow(C, r, &l, NULL, &v));
    ln += l;
    for (PetscInt t = 0; t < l; t++) ls += fabs((double)PetscRealPart(v[t]));
    CK(MatRestoreRow(C, r, &l, NULL, &v));
  }
  MPI_Allreduce(&ln, &gn, 1, MPI_INT64_T, MPI_SUM, PETSC_COMM_WORLD);
  MPI_Allreduce(&ls, &gs, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  *nnz    = gn;
  *sumabs = gs;
}

/* ------------------------------------------------------------------------------------ */
/* flops (scalar multiplications), from the global CSRs on rank 0                       */

static int64_t flops_ab(const Csr *a, const Csr *b)
{
  int64_t f = 0;
  for (PetscInt t = 0; t < a->ptr[a->m]; t++) f += b->ptr[a->col[t] + 1] - b->ptr[a->col[t]];
  return f;
}

/* Row lengths of A*B (symbolic, with a marker per column of B). */
static PetscInt *rowlen_ab(const Csr *a, const Csr *b)
{
  PetscInt *len = malloc((size_t)a->m * sizeof *len), *mark = malloc(((size_t)b->n + 1) * sizeof *mark);
  for (PetscInt c = 0; c < b->n; c++) mark[c] = -1;
  for (PetscInt i = 0; i < a->m; i++) {
    PetscInt l = 0;
    for (PetscInt t = a->ptr[i]; t < a->ptr[i + 1]; t++) {
      PetscInt k = a->col[t];
      for (PetscInt u = b->ptr[k]; u < b->ptr[k + 1]; u++)
        if (mark[b->col[u]] != i) {
          mark[b->col[u]] = i;
          l++;
        }
    }
    len[i] = l;
  }
  free(mark);
  return len;
}

/* ------------------------------------------------------------------------------------ */
/* products                                                                            */

typedef enum { MODE_MM, MODE_PTAP, MODE_RAP, MODE_ATB, MODE_SPMM } Mode;

static const char *const mode_names[] = {"mm", "ptap", "rap", "atb", "spmm"};

/* Algorithm names PETSc 3.18 accepts for each product of MPIAIJ matrices (checked with
   -help and by running each; "hypre" needs PETSc built with hypre, as Debian's is). A
   name outside the list is refused before any product, on every rank alike. */
static const char *const algs_mm[]   = {"default", "scalable", "nonscalable", "seqmpi", "backend", "hypre", NULL};
static const char *const algs_ptap[] = {"default", "scalable", "nonscalable", "allatonce", "allatonce_merged", "backend", "hypre", NULL};
static const char *const algs_rap[]  = {"default", "scalable", "nonscalable", "seqmpi", NULL};
static const char *const algs_atb[]  = {"default", "scalable", "nonscalable", "at*b", "backend", NULL};
static const char *const algs_spmm[] = {"default", NULL};
/* SeqAIJ (--mat-type aij at np 1) has its own names */
static const char *const algs_seq_ab[]   = {"default", "sorted", "scalable", "scalable_fast", "heap", "btheap", "llcondensed", "rowmerge", "hypre", NULL};
static const char *const algs_seq_ptap[] = {"default", "scalable", "rap", "hypre", NULL};
static const char *const algs_seq_abc[]  = {"default", "sorted", "scalable", "scalable_fast", "heap", "btheap", "llcondensed", "rowmerge", NULL};
static const char *const algs_seq_atb[]  = {"default", "at*b", "outerproduct", NULL};

static const char *const via_key[] = {"-matmatmult_via", "-matptap_via", "-matmatmatmult_via", "-mattransposematmult_via", "-matmatmult_via"};

static const MatProductType ptype[] = {MATPRODUCT_AB, MATPRODUCT_PtAP, MATPRODUCT_ABC, MATPRODUCT_AtB, MATPRODUCT_AB};

typedef struct {
  Mode        mode;
  const char *alg;
  Mat         m0, m1, m2; /* operands in MatProductCreate order */
} Prod;

/* From-scratch product through the MatMatMult-style API, or its reuse. */
static void api_call(const Prod *pr, MatReuse reuse, Mat *C)
{
  switch (pr->mode) {
  case MODE_MM:
  case MODE_SPMM:
    CK(MatMatMult(pr->m0, pr->m1, reuse, PETSC_DEFAULT, C));
    break;
  case MODE_PTAP:
    CK(MatPtAP(pr->m0, pr->m1, reuse, PETSC_DEFAULT, C));
    break;
  case MODE_RAP:
    CK(MatMatMatMult(pr->m0, pr->m1, pr->m2, reuse, PETSC_DEFAULT, C));
    break;
  case MODE_ATB:
    CK(MatTransposeMatMult(pr->m0, pr->m1, reuse, PETSC_DEFAULT, C));
    break;
  }
}

static double now_synced(void)
{
  MPI_Barrier(PETSC_COMM_WORLD);
  return MPI_Wtime();
}

/* Max over ranks of a local elapsed time (every rank gets it). */
static double tmax(double local)
{
  double g;
  MPI_Allreduce(&local, &g, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return g;
}

static int dbl_cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, dbl_cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void usage_line(char *buf, size_t len)
{
  snprintf(buf, len,
           "usage: petsc_dist mm A.mtx B.mtx|A | ptap A.mtx P.mtx | rap R.mtx A.mtx P.mtx | atb A.mtx B.mtx|A | spmm A.mtx K"
           " [--reps N] [--alg NAME] [--mat-type mpiaij|aij]");
}

int main(int argc, char **argv)
{
  char        msg[1024];
  const char *files[3] = {NULL, NULL, NULL};
  int         nfiles = 0, reps = 5, np, same_b = 0;
  long        K = 0;
  const char *alg = "default", *mtype_arg = "mpiaij";
  MatType     mtype;
  Mode        mode = MODE_MM;
  const char *const *valid;
  Csr         in[3];
  Mat         M[3] = {NULL, NULL, NULL}, C = NULL;
  Prod        pr;
  double     *ts, *tn, *tt, *tr, sym_s, num_s, tot_s, reu_s, sumabs;
  int64_t     nnzC, flops = 0;
  char        alg_used[64] = "", alg_used_api[64] = "";
  const char *pos[4] = {NULL, NULL, NULL, NULL};
  int         npos = 0;

  /* PETSc gets argv[0] and the PETSc options (from the first single-dash word on); pargv
     stays allocated, PETSc keeps a reference to it (PetscGetArgs). */
  {
    int    first = argc, pargc;
    char **pargv;
    for (int i = 1; i < argc; i++) {
      if ((!strcmp(argv[i], "--reps") || !strcmp(argv[i], "--alg") || !strcmp(argv[i], "--mat-type")) && i + 1 < argc) i++;
      else if (argv[i][0] == '-' && argv[i][1] && argv[i][1] != '-') {
        first = i;
        break;
      }
    }
    pargc = 1 + argc - first;
    pargv = malloc(((size_t)pargc + 1) * sizeof *pargv);
    pargv[0] = argv[0];
    for (int i = first; i < argc; i++) pargv[1 + i - first] = argv[i];
    pargv[pargc] = NULL;
    if (PetscInitialize(&pargc, &pargv, NULL, NULL)) return 1;
  }
  MPI_Comm_rank(PETSC_COMM_WORLD, &g_rank);
  CK(PetscPushSignalHandler(on_signal, NULL));
  MPI_Comm_size(PETSC_COMM_WORLD, &np);
  memset(in, 0, sizeof in);

  /* Driver words first (mode, operands, --options in any order); PETSc options (single
     dash, e.g. -log_view) only after the operands, where they and their values are left to
     PETSc. */
  for (int i = 1; i < argc; i++) {
    int need = npos == 0 ? 1 : (!strcmp(pos[0], "rap") ? 4 : 3);
    if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      char *e;
      long  r = strtol(argv[++i], &e, 10);
      if (*e || r < 1 || r > 100000) return fail_all("--reps needs a positive integer");
      reps = (int)r;
    } else if (!strcmp(argv[i], "--alg") && i + 1 < argc) alg = argv[++i];
    else if (!strcmp(argv[i], "--mat-type") && i + 1 < argc) mtype_arg = argv[++i];
    else if (!strncmp(argv[i], "--", 2)) {
      snprintf(msg, sizeof msg, "unknown option %s (or it lacks its value)", argv[i]);
      return fail_all(msg);
    } else if (argv[i][0] == '-' && argv[i][1]) {
      if (npos < need) {
        snprintf(msg, sizeof msg, "PETSc option %s before the operands: put PETSc options last", argv[i]);
        return fail_all(msg);
      }
      break; /* the rest is PETSc's */
    } else if (npos < need) pos[npos++] = argv[i];
    else {
      usage_line(msg, sizeof msg);
      return fail_all(msg);
    }
  }
  if (npos < 1) {
    usage_line(msg, sizeof msg);
    return fail_all(msg);
  }
  {
    int found = 0;
    for (int m = 0; m < 5; m++)
      if (!strcmp(pos[0], mode_names[m])) {
        mode  = (Mode)m;
        found = 1;
      }
    if (!found) {
      snprintf(msg, sizeof msg, "unknown mode '%s' (mm, ptap, rap, atb, spmm)", pos[0]);
      return fail_all(msg);
    }
  }
  if (!strcmp(mtype_arg, "mpiaij")) mtype = MATMPIAIJ;
  else if (!strcmp(mtype_arg, "aij")) mtype = MATAIJ;
  else return fail_all("--mat-type must be mpiaij or aij");
  {
    int want = mode == MODE_RAP ? 3 : 2;
    if (npos != want + 1) {
      usage_line(msg, sizeof msg);
      return fail_all(msg);
    }
    for (int t = 0; t < want; t++) files[t] = pos[t + 1];
    nfiles = want;
    if ((mode == MODE_MM || mode == MODE_ATB) && !strcmp(files[1], "A")) {
      same_b = 1;
      nfiles = 1;
    }
    if (mode == MODE_SPMM) {
      char *e;
      K = strtol(files[1], &e, 10);
      if (*e || K < 1 || K > 1000000) return fail_all("spmm: K must be a positive integer");
      nfiles = 1;
    }
  }
  {
    int seq = np == 1 && !strcmp(mtype_arg, "aij");
    switch (mode) {
    case MODE_MM: valid = seq ? algs_seq_ab : algs_mm; break;
    case MODE_PTAP: valid = seq ? algs_seq_ptap : algs_ptap; break;
    case MODE_RAP: valid = seq ? algs_seq_abc : algs_rap; break;
    case MODE_ATB: valid = seq ? algs_seq_atb : algs_atb; break;
    default: valid = algs_spmm; break;
    }
    int ok = 0;
    size_t used = 0;
    char   list[256] = "";
    for (int t = 0; valid[t]; t++) {
      if (!strcmp(valid[t], alg)) ok = 1;
      used += (size_t)snprintf(list + used, used < sizeof list ? sizeof list - used : 0, "%s%s", t ? ", " : "", valid[t]);
    }
    if (!ok) {
      snprintf(msg, sizeof msg, "unknown --alg '%s' for %s on %s in PETSc %d.%d.%d (accepted: %s)", alg, mode_names[mode], seq ? "SeqAIJ" : "MPIAIJ", PETSC_VERSION_MAJOR,
               PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, list);
      return fail_all(msg);
    }
  }

  /* ---- read: rank 0 keeps every row (for the flop count), the others their own ---- */
  {
    int bad = 0, gbad;
    for (int t = 0; t < nfiles && !bad; t++)
      if (read_mtx(files[t], g_rank, np, g_rank == 0, &in[t], msg, sizeof msg)) bad = 1;
    MPI_Allreduce(&bad, &gbad, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
    if (gbad) {
      if (!bad) snprintf(msg, sizeof msg, "reading the inputs failed on a rank other than 0");
      /* rank 0's message, when rank 0 failed */
      if (g_rank == 0) {
        fputs("{\"lib\":\"petsc\",\"error\":", stdout);
        json_string(stdout, msg);
        fputs("}\n", stdout);
        fflush(stdout);
      }
      PetscFinalize();
      return 1;
    }
  }
  /* ---- shapes ---- */
  {
    const Csr *a = &in[0], *b = same_b ? &in[0] : &in[1], *c = &in[2];
    int        ok = 1;
    switch (mode) {
    case MODE_MM: ok = a->n == b->m; break;
    case MODE_ATB: ok = a->m == b->m; break;
    case MODE_PTAP: ok = a->m == a->n && a->n == b->m; break;
    case MODE_RAP: ok = a->n == b->m && b->n == c->m; break;
    case MODE_SPMM: ok = 1; break;
    }
    if (!ok) {
      snprintf(msg, sizeof msg, "%s: incompatible shapes", mode_names[mode]);
      return fail_all(msg);
    }
  }

  /* ---- flops on rank 0 (global CSRs), broadcast ---- */
  if (g_rank == 0) {
    const Csr *a = &in[0], *b = same_b ? &in[0] : &in[1];
    switch (mode) {
    case MODE_MM: flops = flops_ab(a, b); break;
    case MODE_ATB:
      for (PetscInt k = 0; k < a->m; k++) flops += (int64_t)(a->ptr[k + 1] - a->ptr[k]) * (b->ptr[k + 1] - b->ptr[k]);
      break;
    case MODE_PTAP: { /* A*P, then P^T*(AP): row k of P times row k of AP */
      PetscInt *lap = rowlen_ab(a, b);
      flops         = flops_ab(a, b);
      for (PetscInt k = 0; k < a->m; k++) flops += (int64_t)(b->ptr[k + 1] - b->ptr[k]) * lap[k];
      free(lap);
    } break;
    case MODE_RAP: { /* A*P, then R*(AP): in[0] = R, in[1] = A, in[2] = P */
      const Csr *r = &in[0], *aa = &in[1], *pp = &in[2];
      PetscInt  *lap = rowlen_ab(aa, pp);
      flops          = flops_ab(aa, pp);
      for (PetscInt t = 0; t < r->ptr[r->m]; t++) flops += lap[r->col[t]];
      free(lap);
    } break;
    case MODE_SPMM: flops = (int64_t)a->ptr[a->m] * K; break;
    }
  }
  MPI_Bcast(&flops, 1, MPI_INT64_T, 0, PETSC_COMM_WORLD);

  /* ---- PETSc matrices (setup, untimed) ---- */
  for (int t = 0; t < nfiles; t++) {
    M[t] = build_aij(&in[t], np, g_rank, mtype);
    csr_free(&in[t]);
  }
  pr.mode = mode;
  pr.alg  = alg;
  pr.m0   = M[0];
  pr.m1   = same_b ? M[0] : M[1];
  pr.m2   = M[2];
  if (mode == MODE_SPMM) {
    PetscInt N;
    CK(MatGetSize(M[0], NULL, &N));
    M[1]  = build_dense(N, (PetscInt)K, np, g_rank);
    pr.m1 = M[1];
  }

  ts = malloc(4 * (size_t)reps * sizeof *ts);
  tn = ts + reps;
  tt = tn + reps;
  tr = tt + reps;

  /* ---- symbolic and first numeric, MatProduct API ---- */
  g_phase = "MatProductCreate .. MatProductSetFromOptions";
  for (int r = 0; r < reps; r++) {
    double t0;
    CK(MatProductCreate(pr.m0, pr.m1, mode == MODE_RAP ? pr.m2 : NULL, &C));
    CK(MatProductSetType(C, ptype[mode]));
    CK(MatProductSetAlgorithm(C, alg));
    CK(MatProductSetFill(C, PETSC_DEFAULT));
    CK(MatProductSetFromOptions(C));
    if (!C->ops->productsymbolic) {
      snprintf(msg, sizeof msg, "PETSc has no %s product for these matrix types with algorithm '%s'", mode_names[mode], alg);
      return fail_all(msg);
    }
    g_phase = "MatProductSymbolic";
    t0      = now_synced();
    CK(MatProductSymbolic(C));
    ts[r] = tmax(MPI_Wtime() - t0);
    g_phase = "the first MatProductNumeric";
    t0      = now_synced();
    CK(MatProductNumeric(C));
    tn[r] = tmax(MPI_Wtime() - t0);
    if (r == 0) snprintf(alg_used, sizeof alg_used, "%s", C->product && C->product->alg ? C->product->alg : "?");
    CK(MatDestroy(&C));
  }

  /* ---- from scratch through the MatMatMult-style call ---- */
  if (strcmp(alg, "default")) CK(PetscOptionsSetValue(NULL, via_key[mode], alg));
  g_phase = "the MAT_INITIAL_MATRIX call";
  for (int r = 0; r < reps; r++) {
    double t0 = now_synced();
    api_call(&pr, MAT_INITIAL_MATRIX, &C);
    tt[r] = tmax(MPI_Wtime() - t0);
    if (r == 0) snprintf(alg_used_api, sizeof alg_used_api, "%s", C->product && C->product->alg ? C->product->alg : "?");
    if (r + 1 < reps) CK(MatDestroy(&C));
  }
  if (strcmp(alg, "default")) CK(PetscOptionsClearValue(NULL, via_key[mode]));
  if (strcmp(alg_used, alg_used_api)) {
    snprintf(msg, sizeof msg, "algorithm mismatch: MatProduct path resolved '%s', %s path resolved '%s' (option %s not honoured?)", alg_used, mode_names[mode], alg_used_api, via_key[mode]);
    CK(MatDestroy(&C));
    return fail_all(msg);
  }

  /* ---- reuse: values of A change (negated, untimed) before each rep ---- */
  for (int r = 0; r < reps; r++) {
    double t0;
    g_phase = "MatScale";
    CK(MatScale(mode == MODE_RAP ? pr.m1 : pr.m0, -1.0));
    g_phase = "the MAT_REUSE_MATRIX call";
    t0      = now_synced();
    api_call(&pr, MAT_REUSE_MATRIX, &C);
    tr[r] = tmax(MPI_Wtime() - t0);
  }

  g_phase = "the nnz and sum of |c_ij| of C";
  global_stats(C, &nnzC, &sumabs);
  sym_s = median(ts, reps);
  num_s = median(tn, reps);
  tot_s = median(tt, reps);
  reu_s = median(tr, reps);

  if (g_rank == 0) {
    PetscInt cm, cn;
    CK(MatGetSize(C, &cm, &cn));
    printf("{\"lib\":\"petsc\",\"petsc_version\":\"%d.%d.%d\",\"mode\":\"%s\",\"alg\":", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR, mode_names[mode]);
    json_string(stdout, alg);
    printf(",\"alg_used\":");
    json_string(stdout, alg_used);
    printf(",\"mat_type\":\"%s\",\"np\":%d,\"inputs\":[", mtype_arg, np);
    for (int t = 0; t < (mode == MODE_RAP ? 3 : mode == MODE_SPMM ? 1 : 2); t++) {
      if (t) putchar(',');
      json_string(stdout, files[t]);
    }
    printf("],\"reps\":%d,\"symbolic_s\":%.6g,\"numeric_s\":%.6g,\"total_s\":%.6g,\"reuse_s\":%.6g", reps, sym_s, num_s, tot_s, reu_s);
    printf(",\"C_rows\":%d,\"C_cols\":%d,\"nnzC\":%lld,\"sumabsC\":%.17g,\"flops\":%lld", (int)cm, (int)cn, (long long)nnzC, sumabs, (long long)flops);
    if (mode == MODE_SPMM) printf(",\"K\":%ld,\"gflops_total\":%.6g,\"gflops_reuse\":%.6g", K, 2.0 * (double)flops / tot_s * 1e-9, 2.0 * (double)flops / reu_s * 1e-9);
    printf("}\n");
    fflush(stdout);
  }

  free(ts);
  CK(MatDestroy(&C));
  for (int t = 0; t < 3; t++)
    if (M[t]) CK(MatDestroy(&M[t]));
  CK(PetscFinalize());
  return 0;
}
