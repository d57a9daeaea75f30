/* SpMM through the C ABI exactly as a caller would: every layout, op, value type, offset
 * and index type, base; k = 1, padded leading dimensions, alpha = 0 (X NULL, A's values
 * NaN), beta = 0 with NaN in Y, beta = 1, m = 0, n = 0, the analysis object, and every
 * error path with its status and message. Compares against a simple reference. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spgemm.h"

static int failures = 0;
#define EXPECT(cond, ...)                                      \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);     \
      fprintf(stderr, __VA_ARGS__);                            \
      fprintf(stderr, "\n");                                   \
      failures++;                                              \
    }                                                          \
  } while (0)

/* A small matrix with an empty row, an unsorted row and a duplicate: 5 x 4. */
enum { M = 5, N = 4, NNZ = 8 };
static const int64_t PTR[M + 1] = {0, 2, 2, 5, 7, 8};
static const int64_t COL[NNZ] = {0, 3, 2, 0, 2, 1, 3, 0};
static const double VAL[NNZ] = {1.5, -2.0, 0.5, 3.0, 1.0, -1.0, 2.5, 4.0};

/* The same arrays converted to the requested types and base. */
typedef struct {
  void *ptr, *col, *val;
  spgemm_matrix_t *mat;
} owned_t;

static owned_t make(spgemm_index_type_t ot, spgemm_index_type_t it, spgemm_value_type_t vt, int base) {
  owned_t o;
  size_t osz = ot == SPGEMM_INDEX_INT32 ? 4 : 8, isz = it == SPGEMM_INDEX_INT32 ? 4 : 8;
  size_t vsz = vt == SPGEMM_VALUE_FLOAT32 ? 4 : 8;
  o.ptr = malloc(osz * (M + 1));
  o.col = malloc(isz * NNZ);
  o.val = malloc(vsz * NNZ);
  for (int i = 0; i <= M; i++) {
    if (ot == SPGEMM_INDEX_INT32) ((int32_t *)o.ptr)[i] = (int32_t)(PTR[i] + base);
    else if (ot == SPGEMM_INDEX_INT64) ((int64_t *)o.ptr)[i] = PTR[i] + base;
    else ((size_t *)o.ptr)[i] = (size_t)(PTR[i] + base);
  }
  for (int p = 0; p < NNZ; p++) {
    if (it == SPGEMM_INDEX_INT32) ((int32_t *)o.col)[p] = (int32_t)(COL[p] + base);
    else ((int64_t *)o.col)[p] = COL[p] + base;
    if (vt == SPGEMM_VALUE_FLOAT32) ((float *)o.val)[p] = (float)VAL[p];
    else ((double *)o.val)[p] = VAL[p];
  }
  o.mat = NULL;
  spgemm_status_t s = spgemm_matrix_create_csr(&o.mat, M, N, ot, o.ptr, it, o.col, vt, o.val, base);
  EXPECT(s == SPGEMM_STATUS_SUCCESS, "create_csr: %d", s);
  return o;
}

static void release(owned_t *o) {
  spgemm_matrix_destroy(o->mat);
  free(o->ptr);
  free(o->col);
  free(o->val);
}

static double xval(int i, int j) { return (double)((i * 7 + j * 3) % 11 - 5) / 4.0; }
static double yval(int i, int j) { return (double)((i * 5 + j) % 7 - 3) / 2.0; }

static size_t at(int layout, int i, int j, int64_t ld) {
  return layout == SPGEMM_LAYOUT_ROW_MAJOR ? (size_t)i * (size_t)ld + (size_t)j
                                           : (size_t)j * (size_t)ld + (size_t)i;
}

/* Runs one product and compares every entry with the reference; padding must be intact. */
static void one(spgemm_handle_t *h, const owned_t *a, spgemm_value_type_t vt, int op, int layout, int k,
                int pad, double alpha, double beta, int nan_y, const spgemm_spmm_analysis_t *an) {
  int xr = op == SPGEMM_OPERATION_NON_TRANSPOSE ? N : M, yr = op == SPGEMM_OPERATION_NON_TRANSPOSE ? M : N;
  int64_t ldx = (layout == SPGEMM_LAYOUT_ROW_MAJOR ? k : xr) + pad;
  int64_t ldy = (layout == SPGEMM_LAYOUT_ROW_MAJOR ? k : yr) + pad;
  size_t nx = layout == SPGEMM_LAYOUT_ROW_MAJOR ? (size_t)xr * ldx : (size_t)k * ldx;
  size_t ny = layout == SPGEMM_LAYOUT_ROW_MAJOR ? (size_t)yr * ldy : (size_t)k * ldy;
  size_t vsz = vt == SPGEMM_VALUE_FLOAT32 ? 4 : 8;
  void *x = malloc(vsz * nx + 8), *y = malloc(vsz * ny + 8);
  double *want = calloc((size_t)yr * k + 1, sizeof(double));
  for (size_t p = 0; p < nx; p++) {
    if (vt == SPGEMM_VALUE_FLOAT32) ((float *)x)[p] = 777.0f; else ((double *)x)[p] = 777.0;
  }
  for (size_t p = 0; p < ny; p++) {
    if (vt == SPGEMM_VALUE_FLOAT32) ((float *)y)[p] = -999.0f; else ((double *)y)[p] = -999.0;
  }
  for (int i = 0; i < xr; i++)
    for (int j = 0; j < k; j++) {
      size_t q = at(layout, i, j, ldx);
      if (vt == SPGEMM_VALUE_FLOAT32) ((float *)x)[q] = (float)xval(i, j); else ((double *)x)[q] = xval(i, j);
    }
  for (int i = 0; i < yr; i++)
    for (int j = 0; j < k; j++) {
      size_t q = at(layout, i, j, ldy);
      double v = nan_y ? NAN : yval(i, j);
      if (vt == SPGEMM_VALUE_FLOAT32) ((float *)y)[q] = (float)v; else ((double *)y)[q] = v;
    }
  /* Reference in double (inputs are exact in float). */
  for (int i = 0; i < M; i++)
    for (int64_t p = PTR[i]; p < PTR[i + 1]; p++) {
      int r = op == SPGEMM_OPERATION_NON_TRANSPOSE ? i : (int)COL[p];
      int c = op == SPGEMM_OPERATION_NON_TRANSPOSE ? (int)COL[p] : i;
      for (int j = 0; j < k; j++) want[(size_t)r * k + j] += VAL[p] * xval(c, j);
    }
  for (int i = 0; i < yr; i++)
    for (int j = 0; j < k; j++) {
      double s = alpha == 0.0 ? 0.0 : alpha * want[(size_t)i * k + j];
      want[(size_t)i * k + j] = beta == 0.0 ? s : s + beta * yval(i, j);
    }
  spgemm_status_t s = spgemm_spmm(h, op, alpha, a->mat, an, layout, k, alpha == 0.0 ? NULL : x, ldx,
                                  beta, y, ldy);
  EXPECT(s == SPGEMM_STATUS_SUCCESS, "spmm status %d: %s", s, spgemm_last_error(h));
  for (size_t p = 0; p < ny; p++) {
    double g = vt == SPGEMM_VALUE_FLOAT32 ? ((float *)y)[p] : ((double *)y)[p];
    int used = 0;
    int i = layout == SPGEMM_LAYOUT_ROW_MAJOR ? (int)(p / (size_t)ldy) : (int)(p % (size_t)ldy);
    int j = layout == SPGEMM_LAYOUT_ROW_MAJOR ? (int)(p % (size_t)ldy) : (int)(p / (size_t)ldy);
    used = i < yr && j < k;
    if (!used) {
      EXPECT(g == -999.0, "padding at %zu changed to %g", p, g);
      continue;
    }
    double w = want[(size_t)i * k + j];
    EXPECT(fabs(g - w) <= 1e-5 * (1.0 + fabs(w)), "vt %d op %d layout %d k %d: Y(%d,%d) = %g, want %g", vt,
           op, layout, k, i, j, g, w);
  }
  free(x);
  free(y);
  free(want);
}

static void all_combinations(spgemm_handle_t *h) {
  spgemm_index_type_t ots[3] = {SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT64, SPGEMM_INDEX_SIZE_T};
  spgemm_index_type_t its[2] = {SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT64};
  spgemm_value_type_t vts[2] = {SPGEMM_VALUE_FLOAT32, SPGEMM_VALUE_FLOAT64};
  int ks[4] = {1, 3, 8, 21};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 2; b++)
      for (int c = 0; c < 2; c++)
        for (int base = 0; base < 2; base++) {
          owned_t m = make(ots[a], its[b], vts[c], base);
          for (int op = 0; op < 2; op++)
            for (int layout = 0; layout < 2; layout++)
              for (int q = 0; q < 4; q++) {
                one(h, &m, vts[c], op, layout, ks[q], 0, 1.0, 0.0, 0, NULL);
                one(h, &m, vts[c], op, layout, ks[q], 3, -0.5, 1.0, 0, NULL); /* ld > k, beta = 1 */
                one(h, &m, vts[c], op, layout, ks[q], 1, 2.0, 0.0, 1, NULL);  /* NaN in Y, beta = 0 */
                one(h, &m, vts[c], op, layout, ks[q], 0, 0.0, 0.5, 0, NULL);  /* alpha = 0, X NULL */
                spgemm_spmm_analysis_t *an = NULL;
                spgemm_status_t s = spgemm_spmm_analysis_create(h, op, m.mat, layout, ks[q], &an);
                EXPECT(s == SPGEMM_STATUS_SUCCESS && an != NULL, "analysis_create %d", s);
                one(h, &m, vts[c], op, layout, ks[q], 2, 1.25, -1.0, 0, an);
                EXPECT(spgemm_spmm_analysis_destroy(an) == SPGEMM_STATUS_SUCCESS, "analysis_destroy");
              }
          release(&m);
        }
}

/* alpha = 0: NaN values in A are not read. */
static void alpha_zero_does_not_read_a(spgemm_handle_t *h) {
  double nanv[NNZ];
  for (int p = 0; p < NNZ; p++) nanv[p] = NAN;
  spgemm_matrix_t *a = NULL;
  spgemm_matrix_create_csr(&a, M, N, SPGEMM_INDEX_INT64, PTR, SPGEMM_INDEX_INT64, COL, SPGEMM_VALUE_FLOAT64,
                           nanv, 0);
  double y[M * 2];
  for (int i = 0; i < M * 2; i++) y[i] = i;
  EXPECT(spgemm_spmm(h, 0, 0.0, a, NULL, 0, 2, NULL, 2, 2.0, y, 2) == 0, "alpha 0");
  for (int i = 0; i < M * 2; i++) EXPECT(y[i] == 2.0 * i, "alpha 0: y[%d] = %g", i, y[i]);
  spgemm_matrix_destroy(a);
}

/* m = 0 and n = 0. */
static void empty_shapes(spgemm_handle_t *h) {
  int64_t ptr0[1] = {0};
  double no_values[1] = {0}; /* a value array, empty: NULL would mean pattern-only */
  spgemm_matrix_t *a = NULL;
  EXPECT(spgemm_matrix_create_csr(&a, 0, 3, SPGEMM_INDEX_INT64, ptr0, SPGEMM_INDEX_INT32, NULL,
                                  SPGEMM_VALUE_FLOAT64, no_values, 0) == 0, "0 x 3");
  double x[6] = {1, 2, 3, 4, 5, 6};
  EXPECT(spgemm_spmm(h, 0, 1.0, a, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 2, x, 2, 0.0, NULL, 2) == 0, "m = 0: %s",
         spgemm_last_error(h));
  spgemm_matrix_destroy(a);
  int64_t ptr1[3] = {0, 0, 0};
  double vals_dummy[1] = {0};
  EXPECT(spgemm_matrix_create_csr(&a, 2, 0, SPGEMM_INDEX_INT64, ptr1, SPGEMM_INDEX_INT32, NULL,
                                  SPGEMM_VALUE_FLOAT64, vals_dummy, 0) == 0, "2 x 0");
  double y[4] = {NAN, NAN, 1, 1};
  EXPECT(spgemm_spmm(h, 0, 1.0, a, NULL, SPGEMM_LAYOUT_COL_MAJOR, 2, NULL, 1, 0.0, y, 2) == 0, "n = 0: %s",
         spgemm_last_error(h));
  for (int i = 0; i < 4; i++) EXPECT(y[i] == 0.0, "n = 0: y[%d] = %g", i, y[i]);
  spgemm_matrix_destroy(a);
}

static int contains(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

static void errors(spgemm_handle_t *h) {
  owned_t m = make(SPGEMM_INDEX_INT32, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT64, 0);
  double x[N * 4], y[M * 4], big[64];
  memset(x, 0, sizeof x);
  memset(y, 0, sizeof y);
  spgemm_status_t s;
  s = spgemm_spmm(NULL, 0, 1.0, m.mat, NULL, 0, 4, x, 4, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_NULL_POINTER, "NULL handle: %d", s);
  EXPECT(contains(spgemm_last_error(NULL), "handle"), "message: %s", spgemm_last_error(NULL));
  s = spgemm_spmm(h, 0, 1.0, NULL, NULL, 0, 4, x, 4, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_NULL_POINTER && contains(spgemm_last_error(h), "A"), "NULL A: %d", s);
  s = spgemm_spmm(h, 0, 1.0, m.mat, NULL, 0, 4, NULL, 4, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_NULL_POINTER && contains(spgemm_last_error(h), "X"), "NULL X: %d %s", s,
         spgemm_last_error(h));
  s = spgemm_spmm(h, 0, 1.0, m.mat, NULL, 0, 4, x, 4, 0.0, NULL, 4);
  EXPECT(s == SPGEMM_STATUS_NULL_POINTER && contains(spgemm_last_error(h), "Y"), "NULL Y: %d", s);
  s = spgemm_spmm(h, 7, 1.0, m.mat, NULL, 0, 4, x, 4, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_INVALID_VALUE && contains(spgemm_last_error(h), "op"), "bad op: %d", s);
  s = spgemm_spmm(h, 0, 1.0, m.mat, NULL, 5, 4, x, 4, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_INVALID_VALUE && contains(spgemm_last_error(h), "layout"), "bad layout: %d", s);
  s = spgemm_spmm(h, 0, 1.0, m.mat, NULL, 0, -1, x, 4, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_INVALID_VALUE && contains(spgemm_last_error(h), "k"), "negative k: %d", s);
  s = spgemm_spmm(h, 0, 1.0, m.mat, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 4, x, 3, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_INVALID_VALUE && contains(spgemm_last_error(h), "ldx = 3"), "ldx < k: %s",
         spgemm_last_error(h));
  s = spgemm_spmm(h, 0, 1.0, m.mat, NULL, SPGEMM_LAYOUT_COL_MAJOR, 4, x, N, 0.0, y, M - 1);
  EXPECT(s == SPGEMM_STATUS_INVALID_VALUE && contains(spgemm_last_error(h), "ldy = 4"), "ldy < m: %s",
         spgemm_last_error(h));
  s = spgemm_spmm(h, 0, 1.0, m.mat, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 4, x, -4, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_INVALID_VALUE, "negative ldx: %d", s);
  s = spgemm_spmm(h, 0, 1.0, m.mat, NULL, SPGEMM_LAYOUT_ROW_MAJOR, INT64_MAX / 2, x, INT64_MAX / 2, 0.0, y,
                  INT64_MAX / 2);
  EXPECT(s == SPGEMM_STATUS_INDEX_OVERFLOW, "overflow: %d %s", s, spgemm_last_error(h));
  s = spgemm_spmm(h, 0, 1.0, m.mat, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 4, big, 4, 0.0, big + 8, 4);
  EXPECT(s == SPGEMM_STATUS_INVALID_VALUE && contains(spgemm_last_error(h), "overlap"), "overlap: %d", s);
  /* NaN alpha and beta are allowed. */
  s = spgemm_spmm(h, 0, NAN, m.mat, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 4, x, 4, NAN, y, 4);
  EXPECT(s == SPGEMM_STATUS_SUCCESS && isnan(y[0]), "NaN alpha: %d", s);
  /* Analysis: NULL arguments, bad codes, and a matrix of another shape. */
  spgemm_spmm_analysis_t *an = NULL;
  EXPECT(spgemm_spmm_analysis_create(h, 0, m.mat, 0, 4, NULL) == SPGEMM_STATUS_NULL_POINTER, "NULL out");
  EXPECT(spgemm_spmm_analysis_create(NULL, 0, m.mat, 0, 4, &an) == SPGEMM_STATUS_NULL_POINTER, "NULL h");
  EXPECT(spgemm_spmm_analysis_create(h, 0, NULL, 0, 4, &an) == SPGEMM_STATUS_NULL_POINTER, "NULL A");
  EXPECT(spgemm_spmm_analysis_create(h, 3, m.mat, 0, 4, &an) == SPGEMM_STATUS_INVALID_VALUE, "bad op");
  EXPECT(spgemm_spmm_analysis_create(h, 0, m.mat, 9, 4, &an) == SPGEMM_STATUS_INVALID_VALUE, "bad layout");
  EXPECT(spgemm_spmm_analysis_create(h, 0, m.mat, 0, -2, &an) == SPGEMM_STATUS_INVALID_VALUE, "bad k_hint");
  EXPECT(an == NULL, "analysis left NULL on failure");
  EXPECT(spgemm_spmm_analysis_destroy(NULL) == SPGEMM_STATUS_SUCCESS, "destroy(NULL)");
  owned_t other = make(SPGEMM_INDEX_INT64, SPGEMM_INDEX_INT32, SPGEMM_VALUE_FLOAT64, 0);
  EXPECT(spgemm_spmm_analysis_create(h, 0, other.mat, 0, 4, &an) == 0, "analysis of other");
  s = spgemm_spmm(h, 0, 1.0, m.mat, an, SPGEMM_LAYOUT_ROW_MAJOR, 4, x, 4, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_PLAN_MISMATCH, "analysis mismatch: %d %s", s, spgemm_last_error(h));
  spgemm_spmm_analysis_destroy(an);
  release(&other);
  /* A without values. */
  spgemm_matrix_t *pat = NULL;
  spgemm_matrix_create_csr(&pat, M, N, SPGEMM_INDEX_INT64, PTR, SPGEMM_INDEX_INT64, COL, SPGEMM_VALUE_FLOAT64,
                           NULL, 0);
  s = spgemm_spmm(h, 0, 1.0, pat, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 4, x, 4, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_INVALID_VALUE && contains(spgemm_last_error(h), "values"), "pattern A: %d", s);
  spgemm_matrix_destroy(pat);
  /* A column index out of range: found by validation, and by the kernel with validation off. */
  int64_t badcol[NNZ];
  memcpy(badcol, COL, sizeof badcol);
  badcol[NNZ - 1] = N;
  spgemm_matrix_t *bad = NULL;
  spgemm_matrix_create_csr(&bad, M, N, SPGEMM_INDEX_INT64, PTR, SPGEMM_INDEX_INT64, badcol,
                           SPGEMM_VALUE_FLOAT64, VAL, 0);
  s = spgemm_spmm(h, 0, 1.0, bad, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 4, x, 4, 0.0, y, 4);
  EXPECT(s == SPGEMM_STATUS_INDEX_OUT_OF_RANGE, "bad column: %d %s", s, spgemm_last_error(h));
  EXPECT(spgemm_spmm_analysis_create(h, 0, bad, 0, 4, &an) == SPGEMM_STATUS_INDEX_OUT_OF_RANGE, "analysis");
  spgemm_set_validation(h, 0);
  s = spgemm_spmm(h, 0, 1.0, bad, NULL, SPGEMM_LAYOUT_ROW_MAJOR, 4, x, 4, 0.0, y, 4);
  EXPECT(s != SPGEMM_STATUS_SUCCESS, "bad column, validation off: %d", s);
  s = spgemm_spmm(h, 1, 1.0, bad, NULL, SPGEMM_LAYOUT_COL_MAJOR, 4, y, M, 0.0, x, N);
  EXPECT(s == SPGEMM_STATUS_INDEX_OUT_OF_RANGE, "bad column, transpose, validation off: %d", s);
  spgemm_set_validation(h, 1);
  spgemm_matrix_destroy(bad);
  release(&m);
}

int main(void) {
  spgemm_handle_t *h = NULL;
  if (spgemm_create(&h) != SPGEMM_STATUS_SUCCESS) return 1;
  for (int threads = 1; threads <= 3; threads += 2) {
    spgemm_set_num_threads(h, threads);
    all_combinations(h);
  }
  alpha_zero_does_not_read_a(h);
  empty_shapes(h);
  errors(h);
  spgemm_destroy(h);
  if (failures) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("spmm_abi: all checks passed\n");
  return 0;
}
