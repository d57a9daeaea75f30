// libspgemm GPU SpMM kernels: Y = alpha * A * X + beta * Y with A sparse (CSR, 0-based
// int32 indices) and X, Y dense. The host prepends `#define VALUE_T double` (or float).
// With beta == 0, Y is not read (NaN in Y does not propagate), as in BLAS.

typedef VALUE_T value_t;

// Column-major X and Y (leading dimensions ldx, ldy): a half-warp per row of A (seed 001,
// section 5). The 16 lanes split the row's nonzeros; for each column of X each lane forms
// a partial dot product and the half-warp reduces it with shuffles.
extern "C" __global__ void spmm_halfwarp(int m, int n, const int* __restrict__ a_ptr,
                                         const int* __restrict__ a_col,
                                         const value_t* __restrict__ a_val,
                                         const value_t* __restrict__ x, long long ldx,
                                         value_t* __restrict__ y, long long ldy, value_t alpha,
                                         value_t beta) {
    int hw = (blockIdx.x * blockDim.x + threadIdx.x) >> 4;
    int lane = threadIdx.x & 15;
    // Whole warps stay in the loop so the full-mask shuffles are legal.
    bool active = hw < m;
    int start = active ? a_ptr[hw] : 0, end = active ? a_ptr[hw + 1] : 0;
    unsigned half_mask = (threadIdx.x & 16) ? 0xffff0000u : 0x0000ffffu;
    for (int c = 0; c < n; ++c) {
        value_t s = (value_t)0;
        const value_t* xc = x + (long long)c * ldx;
        for (int j = start + lane; j < end; j += 16) s += a_val[j] * xc[a_col[j]];
        for (int o = 8; o > 0; o >>= 1) s += __shfl_down_sync(half_mask, s, o, 16);
        if (active && lane == 0) {
            value_t* yc = y + (long long)c * ldy + hw;
            *yc = beta == (value_t)0 ? alpha * s : alpha * s + beta * *yc;
        }
    }
}

// Row-major X and Y: thread (row i, column c) with consecutive threads on consecutive
// columns, so every load of a row of X and every store to Y is coalesced. blockDim.x
// covers a tile of columns, blockDim.y rows; gridDim.y walks the column tiles.
extern "C" __global__ void spmm_rowmajor(int m, int n, const int* __restrict__ a_ptr,
                                         const int* __restrict__ a_col,
                                         const value_t* __restrict__ a_val,
                                         const value_t* __restrict__ x, long long ldx,
                                         value_t* __restrict__ y, long long ldy, value_t alpha,
                                         value_t beta) {
    int i = blockIdx.x * blockDim.y + threadIdx.y;
    int c = blockIdx.y * blockDim.x + threadIdx.x;
    if (i >= m || c >= n) return;
    value_t s = (value_t)0;
    for (int j = a_ptr[i]; j < a_ptr[i + 1]; ++j) s += a_val[j] * x[(long long)a_col[j] * ldx + c];
    value_t* yi = y + (long long)i * ldy + c;
    *yi = beta == (value_t)0 ? alpha * s : alpha * s + beta * *yi;
}
