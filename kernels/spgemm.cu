// libspgemm GPU SpGEMM kernels (CUDA C, compiled at run time by NVRTC).
//
// Scheme (OpSparse, Du et al.): per-row product counts -> binning by n_prod with
// shared-memory counters -> symbolic hash kernels (one table per row, table >= 1.2 n_prod,
// single-access atomicCAS insertion) -> binning by n_nz -> numeric hash kernels (table
// >= 2 n_nz) that condense and sort each output row. Rows too large for shared memory use
// global-memory tables taken from a pool: every resident block owns one chunk and pulls
// rows from a shared counter (many rows to many chunks, as KokkosKernels' MANY2MANY pool).
//
// The host prepends `#define VALUE_T double` (or float). Indices on the device are 0-based
// int32; the host converts other index types and bases.

typedef VALUE_T value_t;

#define EMPTY_KEY 0x7fffffff
#define MAX_BINS 16
#define MAX_GROUPS 256
// Numeric rows on tables up to this size, with at most RANK_SORT_SLOTS slots per thread,
// are sorted by ranking (see num_shared); larger tables by a bitonic network.
#define RANK_SORT_MAX_TABLE 256
#define RANK_SORT_SLOTS 8
// Accumulators start at -0.0, the exact additive identity: a single product of -0.0 stays
// -0.0, as when the first product is taken as is.
#define NEG_ZERO ((value_t)(-0.0))
// Columns per thread in one pass of a dense row's write-out.
#define DENSE_RUN 8

__device__ __forceinline__ unsigned hash_col(int col) {
    return (unsigned)col * 2654435761u;
}

// n_prod of each row of A: sum over A's row of the lengths of the referenced B rows.
// A warp per row, so long rows of A do not serialise one thread. The total and the largest
// n_prod are reduced per block and added with one atomic per block, so the host reads two
// numbers instead of the whole array.
extern "C" __global__ void row_nprod(int m, const int* __restrict__ a_ptr,
                                     const int* __restrict__ a_col,
                                     const int* __restrict__ b_ptr,
                                     long long* __restrict__ nprod,
                                     unsigned long long* __restrict__ total,
                                     unsigned long long* __restrict__ largest) {
    __shared__ unsigned long long wsum[32], wmax[32];
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
    long long s = 0;
    if (warp < m) {
        for (int j = a_ptr[warp] + lane; j < a_ptr[warp + 1]; j += 32) {
            int k = a_col[j];
            s += (long long)(b_ptr[k + 1] - b_ptr[k]);
        }
    }
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) {
        if (warp < m) nprod[warp] = s;
        wsum[wib] = (unsigned long long)s;
        wmax[wib] = (unsigned long long)s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long t = 0, x = 0;
        for (int w = 0; w < (int)(blockDim.x >> 5); ++w) {
            t += wsum[w];
            x = wmax[w] > x ? wmax[w] : x;
        }
        if (t > 0) atomicAdd(total, t);
        if (x > 0) atomicMax(largest, x);
    }
}

// ---- Exclusive scan of C's row counts into its row offsets, on the device ----
// Three launches: per-tile sums, one block scanning the tile sums (and writing the total),
// then every tile scanned with its offset. Sums are 64-bit so an nnz(C) past 2^31 is seen
// by the host (which reads the total) before any 32-bit offset is used.
#define SCAN_PER_THREAD 8
#define SCAN_BLOCK 256
#define SCAN_TILE (SCAN_PER_THREAD * SCAN_BLOCK)

// Exclusive scan of one value per thread across the block (blockDim a multiple of 32, at
// most 1024); *total gets the block's sum. The caller synchronises before a second call.
__device__ long long block_exclusive_scan(long long x, long long* total) {
    __shared__ long long warp_off[32];
    __shared__ long long block_total;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    long long incl = x;
    for (int o = 1; o < 32; o <<= 1) {
        long long y = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += y;
    }
    if (lane == 31) warp_off[w] = incl;
    __syncthreads();
    if (w == 0) {
        long long t = lane < nw ? warp_off[lane] : 0;
        long long it = t;
        for (int o = 1; o < 32; o <<= 1) {
            long long y = __shfl_up_sync(0xffffffffu, it, o);
            if (lane >= o) it += y;
        }
        if (lane < nw) warp_off[lane] = it - t;
        if (lane == 31) block_total = it;
    }
    __syncthreads();
    *total = block_total;
    return warp_off[w] + incl - x;
}

// Also the longest row (one atomic per block), which sizes the global numeric tables.
extern "C" __global__ void scan_tiles(int m, const int* __restrict__ n,
                                      long long* __restrict__ tile_sum,
                                      unsigned long long* __restrict__ longest) {
    __shared__ int block_max;
    if (threadIdx.x == 0) block_max = 0;
    long long start = (long long)blockIdx.x * SCAN_TILE;
    long long s = 0;
    int mx = 0;
    for (int e = 0; e < SCAN_PER_THREAD; ++e) {
        long long i = start + (long long)threadIdx.x + (long long)e * SCAN_BLOCK;
        if (i < m) {
            s += n[i];
            mx = n[i] > mx ? n[i] : mx;
        }
    }
    long long total;
    block_exclusive_scan(s, &total);  // its barriers also order block_max's initialisation
    if (mx > 0) atomicMax(&block_max, mx);
    __syncthreads();
    if (threadIdx.x == 0) {
        tile_sum[blockIdx.x] = total;
        if (block_max > 0) atomicMax(longest, (unsigned long long)block_max);
    }
}

// One block: tile_sum[0..tiles) becomes exclusive offsets, tile_sum[tiles] the total, and
// ptr[m] = the total (as 32-bit; the host checks the total first).
extern "C" __global__ void scan_tile_sums(int tiles, long long* __restrict__ tile_sum, int m,
                                          int* __restrict__ ptr) {
    long long carry = 0;
    for (int base = 0; base < tiles; base += blockDim.x) {
        int i = base + threadIdx.x;
        long long x = i < tiles ? tile_sum[i] : 0;
        long long total;
        long long ex = block_exclusive_scan(x, &total);
        if (i < tiles) tile_sum[i] = carry + ex;
        carry += total;
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        tile_sum[tiles] = carry;
        ptr[m] = (int)carry;
    }
}

extern "C" __global__ void scan_finish(int m, const int* __restrict__ n,
                                       const long long* __restrict__ tile_off,
                                       int* __restrict__ ptr) {
    // Thread t owns SCAN_PER_THREAD consecutive entries of the tile.
    long long start = (long long)blockIdx.x * SCAN_TILE + (long long)threadIdx.x * SCAN_PER_THREAD;
    int v[SCAN_PER_THREAD];
    long long s = 0;
    for (int e = 0; e < SCAN_PER_THREAD; ++e) {
        long long i = start + e;
        v[e] = i < m ? n[i] : 0;
        s += v[e];
    }
    long long total;
    long long off = tile_off[blockIdx.x] + block_exclusive_scan(s, &total);
    for (int e = 0; e < SCAN_PER_THREAD; ++e) {
        long long i = start + e;
        if (i < m) ptr[i] = (int)off;
        off += v[e];
    }
}

// The bin of a row: the first b whose upper limit is >= key (the last bin is unbounded).
__device__ __forceinline__ int bin_of(long long key, const long long* limits, int nb) {
    int b = 0;
    while (b < nb - 1 && key > limits[b]) ++b;
    return b;
}

// Pass 1 of binning: per-block counters in shared memory, one global atomic per bin and
// block (OpSparse 5.1) instead of one per row.
extern "C" __global__ void bin_count(int m, const long long* __restrict__ key,
                                     const long long* __restrict__ limits, int nb,
                                     int* __restrict__ bin_size) {
    __shared__ int cnt[MAX_BINS];
    __shared__ long long lim[MAX_BINS];
    if (threadIdx.x < MAX_BINS) {
        cnt[threadIdx.x] = 0;
        lim[threadIdx.x] = threadIdx.x < nb ? limits[threadIdx.x] : 0;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    // Rows of key 0 (no products, or no entries of C) need no kernel: they stay unbinned.
    if (i < m && key[i] > 0) atomicAdd(&cnt[bin_of(key[i], lim, nb)], 1);
    __syncthreads();
    if (threadIdx.x < nb && cnt[threadIdx.x] > 0) atomicAdd(&bin_size[threadIdx.x], cnt[threadIdx.x]);
}

// Pass 2: each block reserves one contiguous range per bin, then places its rows in it.
// bin_fill starts as the bins' offsets (exclusive scan of bin_size).
extern "C" __global__ void bin_scatter(int m, const long long* __restrict__ key,
                                       const long long* __restrict__ limits, int nb,
                                       int* __restrict__ bin_fill, int* __restrict__ bin_rows) {
    __shared__ int cnt[MAX_BINS];
    __shared__ int base[MAX_BINS];
    __shared__ long long lim[MAX_BINS];
    if (threadIdx.x < MAX_BINS) {
        cnt[threadIdx.x] = 0;
        lim[threadIdx.x] = threadIdx.x < nb ? limits[threadIdx.x] : 0;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int b = 0, local = 0;
    bool live = i < m && key[i] > 0;
    if (live) {
        b = bin_of(key[i], lim, nb);
        local = atomicAdd(&cnt[b], 1);
    }
    __syncthreads();
    if (threadIdx.x < nb && cnt[threadIdx.x] > 0)
        base[threadIdx.x] = atomicAdd(&bin_fill[threadIdx.x], cnt[threadIdx.x]);
    __syncthreads();
    if (live) bin_rows[base[b] + local] = i;
}

// ---------------------------------------------------------------------------------------
// Symbolic phase.

// Lanes that share one A entry of a row: about the row's products per A entry, as a
// power of two at most `tpr`. Short B rows (power-law and hub inputs) then keep many A
// entries in flight instead of idling 32-lane groups on 2-3 products, and a few long B
// rows (power nets) are spread over many lanes.
__device__ __forceinline__ int lanes_per_entry(long long products, int a_len, int tpr) {
    long long per = a_len > 0 ? (products + a_len - 1) / a_len : 1;
    int sub = 1;
    while (sub < tpr && (long long)sub < per) sub <<= 1;
    return sub;
}

// Inserts `col` once; returns 1 if it was new. A single atomicCAS per probe: its return
// value says whether the slot was empty, already held `col`, or holds another key
// (OpSparse 5.2). Returns -1 if the table is full (never happens when the caller sized
// it at least as large as the row's n_prod).
__device__ __forceinline__ int sym_insert(int* table, unsigned mask, int col) {
    unsigned h = hash_col(col) & mask;
    for (unsigned probe = 0; probe <= mask; ++probe) {
        int old = atomicCAS(&table[h], EMPTY_KEY, col);
        if (old == EMPTY_KEY) return 1;
        if (old == col) return 0;
        h = (h + 1) & mask;
    }
    return -1;
}

// Shared-memory symbolic kernel. `tpr` threads per row (a power of two), blockDim/tpr rows
// per block, one table of `tsize` keys per row. A row whose count passes `fail_at` stops
// and is queued for the global kernel (only the last shared bin sets fail_at < tsize).
extern "C" __global__ void sym_shared(const int* __restrict__ rows, int nrows, int tsize, int tpr,
                                      int fail_at,
                                      const int* __restrict__ a_ptr, const int* __restrict__ a_col,
                                      const int* __restrict__ b_ptr, const int* __restrict__ b_col,
                                      int* __restrict__ row_nnz, int* __restrict__ failed,
                                      int* __restrict__ nfailed) {
    extern __shared__ int smem[];
    __shared__ int count[MAX_GROUPS];
    int groups = blockDim.x / tpr;
    int g = threadIdx.x / tpr;
    int t = threadIdx.x % tpr;
    int r = blockIdx.x * groups + g;
    int* table = smem + g * tsize;
    unsigned mask = (unsigned)tsize - 1;
    for (int i = t; i < tsize; i += tpr) table[i] = EMPTY_KEY;
    if (t == 0) count[g] = 0;
    __syncthreads();
    if (r < nrows) {
        int row = rows[r];
        // A row of this bin has about tsize / 2 products (its table is >= 1.2 n_prod).
        int sub = lanes_per_entry(tsize / 2, a_ptr[row + 1] - a_ptr[row], tpr);
        int nsub = tpr / sub;
        int s = t / sub, lane = t % sub;
        // Only the last bin watches the running count (to give up on an overflowing row);
        // the others count per thread and add once: one shared counter per row took an
        // atomic for every new column.
        bool watch = fail_at <= tsize;
        int local = 0;
        for (int j = a_ptr[row] + s; j < a_ptr[row + 1]; j += nsub) {
            int k = a_col[j];
            for (int p = b_ptr[k] + lane; p < b_ptr[k + 1]; p += sub) {
                if (watch && *(volatile int*)&count[g] >= fail_at) break;
                int ins = sym_insert(table, mask, b_col[p]);
                if (ins > 0) {
                    if (watch) atomicAdd(&count[g], 1);
                    else ++local;
                } else if (ins < 0) {
                    atomicMax(&count[g], fail_at);
                }
            }
        }
        if (local > 0) atomicAdd(&count[g], local);
    }
    __syncthreads();
    if (r < nrows && t == 0) {
        int row = rows[r];
        if (count[g] >= fail_at) {
            failed[atomicAdd(nfailed, 1)] = row;
        } else {
            row_nnz[row] = count[g];
        }
    }
}

// Global-memory symbolic kernel for the rows the shared kernels could not hold. Block b
// owns pool chunk b (tsize keys, sized for the widest such row) and pulls rows from
// *next_row; each row uses only the power of two >= 2 min(n_prod, k) of its chunk, so a
// narrow row does not clear and probe a table sized for the widest one.
extern "C" __global__ void sym_global(const int* __restrict__ rows, int nrows, int tsize,
                                      const int* __restrict__ a_ptr, const int* __restrict__ a_col,
                                      const int* __restrict__ b_ptr, const int* __restrict__ b_col,
                                      const long long* __restrict__ nprod, int ncols,
                                      int* __restrict__ row_nnz, int* __restrict__ pool,
                                      int* __restrict__ next_row) {
    __shared__ int r;
    __shared__ int count;
    int* table = pool + (size_t)blockIdx.x * (size_t)tsize;
    for (;;) {
        if (threadIdx.x == 0) {
            r = atomicAdd(next_row, 1);
            count = 0;
        }
        __syncthreads();
        if (r >= nrows) return;
        int row = rows[r];
        long long want = nprod[row] < (long long)ncols ? nprod[row] : (long long)ncols;
        int ts = 32;
        while ((long long)ts < 2 * want && ts < tsize) ts <<= 1;
        unsigned mask = (unsigned)ts - 1;
        for (int i = threadIdx.x; i < ts; i += blockDim.x) table[i] = EMPTY_KEY;
        __syncthreads();
        int sub = lanes_per_entry(nprod[row], a_ptr[row + 1] - a_ptr[row], blockDim.x);
        int s = threadIdx.x / sub, lane = threadIdx.x % sub, nsub = blockDim.x / sub;
        for (int j = a_ptr[row] + s; j < a_ptr[row + 1]; j += nsub) {
            int k = a_col[j];
            for (int p = b_ptr[k] + lane; p < b_ptr[k + 1]; p += sub) {
                if (sym_insert(table, mask, b_col[p]) > 0) atomicAdd(&count, 1);
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) row_nnz[row] = count;
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------------------
// Numeric phase.

// Adds `v` at key `col`. The table is at least twice the row's n_nz, so a slot is found.
__device__ __forceinline__ void num_insert(int* keys, value_t* vals, unsigned mask, int col,
                                           value_t v, int has_vals) {
    unsigned h = hash_col(col) & mask;
    for (;;) {
        int old = atomicCAS(&keys[h], EMPTY_KEY, col);
        if (old == EMPTY_KEY || old == col) {
            if (has_vals) atomicAdd(&vals[h], v);
            return;
        }
        h = (h + 1) & mask;
    }
}

// Sorts n (a power of two) 64-bit words ascending with `nt` cooperating threads (thread t
// of them): each stage, a thread takes whole compare-exchange pairs. The loop counts are
// the same for every thread, so the __syncthreads inside are reached by the whole block.
__device__ void bitonic_sort_u64(unsigned long long* w, int n, int t, int nt) {
    for (int k = 2; k <= n; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int p = t; p < (n >> 1); p += nt) {
                int i = ((p & ~(j - 1)) << 1) | (p & (j - 1));  // bit j of i is 0
                unsigned long long x = w[i], y = w[i + j];
                if ((x > y) == ((i & k) == 0)) {
                    w[i] = y;
                    w[i + j] = x;
                }
            }
            __syncthreads();
        }
    }
}

// Writes the row held in a hash table of `ts` slots (a power of two, at least twice the
// row's entries) to C in column order, with `nt` threads of the block (thread t):
//  1. the occupied slots move to the front (keys and values; a warp reserves its places
//     with one atomic on *cnt, which starts at 0), chunk by chunk: a chunk is read before
//     the barrier and only slots already read are written;
//  2. each key is packed with its place into one 64-bit word, stored over the keys (ts
//     ints hold ts / 2 words), from the back so a word overwrites only keys already read;
//  3. the ts / 2 words are sorted and C is written from them.
// Sorting ts / 2 words instead of ts (key, value) pairs does about a third of the work
// of the previous whole-table sort (docs/DESIGN-NOTES.md, cuda kernels). `n` is the
// row's length in C (entries written), `live` is false for a group without a row (it
// still reaches every barrier). nt is a multiple of 32 and every warp lies in one group.
__device__ void table_to_c_sorted(int* keys, value_t* vals, int ts, int t, int nt, int* cnt,
                                  bool live, int base, int n, int* __restrict__ c_col,
                                  value_t* __restrict__ c_val, int has_vals) {
    int lane = threadIdx.x & 31;
    for (int c0 = 0; c0 < ts; c0 += nt) {
        int i = c0 + t;
        int k = i < ts ? keys[i] : EMPTY_KEY;
        value_t v = (i < ts && has_vals) ? vals[i] : NEG_ZERO;
        __syncthreads();
        bool occ = k != EMPTY_KEY;
        unsigned bal = __ballot_sync(0xffffffffu, occ);
        int wbase = 0;
        if (lane == 0 && bal != 0) wbase = atomicAdd(cnt, __popc(bal));
        wbase = __shfl_sync(0xffffffffu, wbase, 0);
        if (occ) {
            int o = wbase + __popc(bal & ((1u << lane) - 1u));
            keys[o] = k;
            if (has_vals) vals[o] = v;
        }
        __syncthreads();
    }
    int have = *(volatile int*)cnt;
    int half = ts >> 1;
    unsigned long long* words = (unsigned long long*)keys;
    for (int c0 = ((half - 1) / nt) * nt; c0 >= 0; c0 -= nt) {
        int p = c0 + t;
        int k = p < have ? keys[p] : EMPTY_KEY;
        __syncthreads();
        if (p < half)
            words[p] = p < have ? (((unsigned long long)(unsigned)k << 32) | (unsigned)p)
                                : ~0ull;
        __syncthreads();
    }
    bitonic_sort_u64(words, half, t, nt);
    if (live) {
        for (int i = t; i < n; i += nt) {
            unsigned long long w = words[i];
            c_col[base + i] = (int)(w >> 32);
            if (has_vals) c_val[base + i] = vals[(unsigned)w];
        }
    }
}

// Accumulates row `row` of A*B into the table (sub-groups of `sub` lanes share an A entry;
// `c_len`, the row's n_nz, stands for its products: most products of the irregular inputs
// are distinct entries of C).
__device__ __forceinline__ void num_accumulate(int row, int c_len, int t, int tpr, int part,
                                               int parts, int* keys, value_t* vals,
                                               unsigned mask, const int* __restrict__ a_ptr,
                                               const int* __restrict__ a_col,
                                               const value_t* __restrict__ a_val,
                                               const int* __restrict__ b_ptr,
                                               const int* __restrict__ b_col,
                                               const value_t* __restrict__ b_val, int has_vals,
                                               int det) {
    // det: one thread adds the row's products in A's then B's order, so every run (and
    // the CPU's Gustavson loop) sums each entry in the same order: the same bits.
    // `parts` blocks share a split row: sub-group s of part q takes A entries
    // q * nsub + s + every (parts * nsub)-th.
    if (det && (t != 0 || part != 0)) return;
    if (det) parts = 1;
    int sub = det ? 1 : lanes_per_entry(c_len, a_ptr[row + 1] - a_ptr[row], tpr);
    int nsub = det ? 1 : tpr / sub;
    int s = part * nsub + t / sub, lane = t % sub;
    for (int j = a_ptr[row] + s; j < a_ptr[row + 1]; j += parts * nsub) {
        int k = a_col[j];
        value_t av = has_vals ? a_val[j] : (value_t)0;
        for (int p = b_ptr[k] + lane; p < b_ptr[k + 1]; p += sub) {
            value_t v = has_vals ? av * b_val[p] : (value_t)0;
            num_insert(keys, vals, mask, b_col[p], v, has_vals);
        }
    }
}

// Shared-memory numeric kernel: hash, then either sort the whole table (sorted output;
// empty slots sort last, so the row is its first n_nz slots) or condense in slot order.
extern "C" __global__ void num_shared(const int* __restrict__ rows, int nrows, int tsize, int tpr,
                                      const int* __restrict__ a_ptr, const int* __restrict__ a_col,
                                      const value_t* __restrict__ a_val,
                                      const int* __restrict__ b_ptr, const int* __restrict__ b_col,
                                      const value_t* __restrict__ b_val,
                                      const int* __restrict__ c_ptr, int* __restrict__ c_col,
                                      value_t* __restrict__ c_val, int sorted, int has_vals,
                                      int det) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ int offset[MAX_GROUPS];
    int groups = blockDim.x / tpr;
    int g = threadIdx.x / tpr;
    int t = threadIdx.x % tpr;
    int r = blockIdx.x * groups + g;
    value_t* vals = (value_t*)smem_raw + (size_t)g * tsize;
    int* keys = (int*)((value_t*)smem_raw + (size_t)groups * tsize) + (size_t)g * tsize;
    unsigned mask = (unsigned)tsize - 1;
    for (int i = t; i < tsize; i += tpr) {
        keys[i] = EMPTY_KEY;
        vals[i] = NEG_ZERO;
    }
    if (t == 0) offset[g] = 0;
    __syncthreads();
    int row = r < nrows ? rows[r] : -1;
    if (row >= 0)
        num_accumulate(row, c_ptr[row + 1] - c_ptr[row], t, tpr, 0, 1, keys, vals, mask, a_ptr,
                       a_col, a_val, b_ptr, b_col, b_val, has_vals, det);
    __syncthreads();
    if (sorted && tsize <= RANK_SORT_MAX_TABLE && tsize / tpr <= RANK_SORT_SLOTS) {
        // Small tables: each entry's place in the sorted row is the number of smaller keys
        // in the table (EMPTY_KEY is larger than any column), so every thread ranks the
        // entries of its own slots in one pass over the table and writes them straight to
        // C. No sort network: bitonic sorting a 64-slot table took 21 block-wide barriers.
        if (row >= 0) {
            int base = c_ptr[row];
            int slots = tsize / tpr;
            int key[RANK_SORT_SLOTS], rank[RANK_SORT_SLOTS];
#pragma unroll
            for (int e = 0; e < RANK_SORT_SLOTS; ++e) {
                key[e] = e < slots ? keys[t + e * tpr] : EMPTY_KEY;
                rank[e] = 0;
            }
            // Rows sharing a warp start at different slots, so their loads hit different
            // banks (the tables are a multiple of 32 slots apart).
            for (int j0 = 0; j0 < tsize; ++j0) {
                int kj = keys[(j0 + g) & (tsize - 1)];
#pragma unroll
                for (int e = 0; e < RANK_SORT_SLOTS; ++e) rank[e] += kj < key[e];
            }
#pragma unroll
            for (int e = 0; e < RANK_SORT_SLOTS; ++e) {
                if (key[e] != EMPTY_KEY) {
                    c_col[base + rank[e]] = key[e];
                    if (has_vals) c_val[base + rank[e]] = vals[t + e * tpr];
                }
            }
        }
    } else if (sorted) {
        int base = row >= 0 ? c_ptr[row] : 0;
        int n = row >= 0 ? c_ptr[row + 1] - base : 0;
        table_to_c_sorted(keys, vals, tsize, t, tpr, &offset[g], row >= 0, base, n, c_col, c_val,
                          has_vals);
    } else if (row >= 0) {
        int base = c_ptr[row];
        for (int i = t; i < tsize; i += tpr) {
            if (keys[i] != EMPTY_KEY) {
                int o = atomicAdd(&offset[g], 1);
                c_col[base + o] = keys[i];
                if (has_vals) c_val[base + o] = vals[i];
            }
        }
    }
}

// Global-memory numeric kernel: block b owns pool chunk b (tsize keys and values) and
// pulls rows from *next_row; the chunk is sorted in place like the shared tables.
extern "C" __global__ void num_global(const int* __restrict__ rows, int nrows, int tsize,
                                      const int* __restrict__ a_ptr, const int* __restrict__ a_col,
                                      const value_t* __restrict__ a_val,
                                      const int* __restrict__ b_ptr, const int* __restrict__ b_col,
                                      const value_t* __restrict__ b_val,
                                      const int* __restrict__ c_ptr, int* __restrict__ c_col,
                                      value_t* __restrict__ c_val, int sorted, int has_vals,
                                      int* __restrict__ key_pool, value_t* __restrict__ val_pool,
                                      int* __restrict__ next_row, int det) {
    __shared__ int r;
    __shared__ int offset;
    int* keys = key_pool + (size_t)blockIdx.x * (size_t)tsize;
    value_t* vals = val_pool + (size_t)blockIdx.x * (size_t)tsize;
    for (;;) {
        if (threadIdx.x == 0) {
            r = atomicAdd(next_row, 1);
            offset = 0;
        }
        __syncthreads();
        if (r >= nrows) return;
        int row = rows[r];
        // This row's table: the power of two >= 2 n_nz within the chunk (the chunk is
        // sized for the widest global row; clearing and sorting all of it for every row
        // cost rmat-like inputs seconds).
        int ts = 32;
        while (ts < 2 * (c_ptr[row + 1] - c_ptr[row]) && ts < tsize) ts <<= 1;
        unsigned mask = (unsigned)ts - 1;
        for (int i = threadIdx.x; i < ts; i += blockDim.x) {
            keys[i] = EMPTY_KEY;
            vals[i] = NEG_ZERO;
        }
        __syncthreads();
        num_accumulate(row, c_ptr[row + 1] - c_ptr[row], threadIdx.x, blockDim.x, 0, 1, keys, vals,
                       mask, a_ptr, a_col, a_val, b_ptr, b_col, b_val, has_vals, det);
        __syncthreads();
        int base = c_ptr[row], n = c_ptr[row + 1] - base;
        if (sorted) {
            table_to_c_sorted(keys, vals, ts, threadIdx.x, blockDim.x, &offset, true, base, n,
                              c_col, c_val, has_vals);
        } else {
            for (int i = threadIdx.x; i < ts; i += blockDim.x) {
                if (keys[i] != EMPTY_KEY) {
                    int o = atomicAdd(&offset, 1);
                    c_col[base + o] = keys[i];
                    if (has_vals) c_val[base + o] = vals[i];
                }
            }
        }
        __syncthreads();
    }
}

// Dense global kernel for the widest rows when B has few enough columns (a dense row of
// k flags and k values per block costs less than hashing and sorting a table of 2 n_nz
// slots once n_nz is within a small factor of k, as in R-MAT's hub rows). Block b owns
// chunk b of the pools and pulls rows from *next_row; values are added with atomicAdd
// into the dense row (accumulators at -0.0 like the hash tables), then the row is
// emitted in column order (so sorted and unsorted output are the same) by a block scan
// of the flags, which leaves the chunk clean for the next row.
extern "C" __global__ void num_dense(const int* __restrict__ rows, int nrows, int ncols,
                                     const int* __restrict__ a_ptr, const int* __restrict__ a_col,
                                     const value_t* __restrict__ a_val,
                                     const int* __restrict__ b_ptr, const int* __restrict__ b_col,
                                     const value_t* __restrict__ b_val,
                                     const int* __restrict__ c_ptr, int* __restrict__ c_col,
                                     value_t* __restrict__ c_val, int has_vals,
                                     int* __restrict__ flag_pool, value_t* __restrict__ val_pool,
                                     int* __restrict__ next_row, int det) {
    __shared__ int r;
    int* flags = flag_pool + (size_t)blockIdx.x * (size_t)ncols;
    value_t* vals = val_pool + (size_t)blockIdx.x * (size_t)ncols;
    for (int i = threadIdx.x; i < ncols; i += blockDim.x) {
        flags[i] = 0;
        vals[i] = NEG_ZERO;
    }
    // det: thread 0 alone, in A's then B's order (see num_accumulate).
    bool works = !det || threadIdx.x == 0;
    for (;;) {
        if (threadIdx.x == 0) r = atomicAdd(next_row, 1);
        __syncthreads();
        if (r >= nrows) return;
        int row = rows[r];
        int sub = det ? 1
                      : lanes_per_entry(c_ptr[row + 1] - c_ptr[row], a_ptr[row + 1] - a_ptr[row],
                                        blockDim.x);
        int s = det ? 0 : threadIdx.x / sub, lane = det ? 0 : threadIdx.x % sub;
        int nsub = det ? 1 : blockDim.x / sub;
        for (int j = a_ptr[row] + s; works && j < a_ptr[row + 1]; j += nsub) {
            int k = a_col[j];
            value_t av = has_vals ? a_val[j] : (value_t)0;
            for (int p = b_ptr[k] + lane; p < b_ptr[k + 1]; p += sub) {
                int c = b_col[p];
                flags[c] = 1;
                if (has_vals) atomicAdd(&vals[c], av * b_val[p]);
            }
        }
        __syncthreads();
        long long out = c_ptr[row];
        // DENSE_RUN consecutive columns per thread: one block-wide scan per
        // DENSE_RUN * blockDim columns (a scan per blockDim columns left R-MAT's dense
        // rows waiting on barriers).
        for (int base = 0; base < ncols; base += blockDim.x * DENSE_RUN) {
            int c0 = base + threadIdx.x * DENSE_RUN;
            int f[DENSE_RUN];
            int cnt = 0;
#pragma unroll
            for (int e = 0; e < DENSE_RUN; ++e) {
                f[e] = c0 + e < ncols ? flags[c0 + e] : 0;
                cnt += f[e];
            }
            long long total;
            long long pos = out + block_exclusive_scan((long long)cnt, &total);
#pragma unroll
            for (int e = 0; e < DENSE_RUN; ++e) {
                if (f[e]) {
                    c_col[pos] = c0 + e;
                    if (has_vals) c_val[pos] = vals[c0 + e];
                    flags[c0 + e] = 0;
                    vals[c0 + e] = NEG_ZERO;
                    ++pos;
                }
            }
            out += total;
            __syncthreads();
        }
    }
}

// ---- Split rows: one row across many blocks ----
// A row with far more products than a block handles quickly (a hub or power-law row:
// alone on one multiprocessor it outlasted the rest of the product) gets `parts` blocks
// that insert into one hash table per row in global memory, `ts_max` slots apart (each
// row uses the power of two >= 2x its bound). Rows are processed in batches that fit the
// table pool; block b of a batch works on row b / parts, part b % parts.

// Sets n keys to EMPTY_KEY and, when vals is given, n values to -0.0.
extern "C" __global__ void split_clear(long long n, int* __restrict__ keys,
                                       value_t* __restrict__ vals, int has_vals) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        keys[i] = EMPTY_KEY;
        if (has_vals) vals[i] = NEG_ZERO;
    }
}

// The table size of a split row: the power of two >= 2 bound, at least 64, at most ts_max.
__device__ __forceinline__ int split_table(long long bound, int ts_max) {
    int ts = 64;
    while ((long long)ts < 2 * bound && ts < ts_max) ts <<= 1;
    return ts;
}

// Symbolic count of split rows: each block counts the columns it inserted first and adds
// them to the row's count (row_nnz of a split row starts at 0 and no other kernel writes it).
extern "C" __global__ void sym_split(const int* __restrict__ rows, int nrows, int parts,
                                     int ts_max, const int* __restrict__ a_ptr,
                                     const int* __restrict__ a_col, const int* __restrict__ b_ptr,
                                     const int* __restrict__ b_col,
                                     const long long* __restrict__ nprod, int ncols,
                                     int* __restrict__ row_nnz, int* __restrict__ pool) {
    __shared__ int count;
    int r = blockIdx.x / parts, part = blockIdx.x % parts;
    if (threadIdx.x == 0) count = 0;
    __syncthreads();
    if (r >= nrows) return;  // uniform for the block
    int row = rows[r];
    long long np = nprod[row];
    int ts = split_table(np < (long long)ncols ? np : (long long)ncols, ts_max);
    int* table = pool + (size_t)r * (size_t)ts_max;
    unsigned mask = (unsigned)ts - 1;
    int a0 = a_ptr[row], alen = a_ptr[row + 1] - a0;
    int sub = lanes_per_entry(np, alen, blockDim.x);
    int nsub = blockDim.x / sub;
    int s = part * nsub + threadIdx.x / sub, lane = threadIdx.x % sub;
    int local = 0;
    for (int j = a0 + s; j < a0 + alen; j += parts * nsub) {
        int k = a_col[j];
        for (int p = b_ptr[k] + lane; p < b_ptr[k + 1]; p += sub)
            local += sym_insert(table, mask, b_col[p]) > 0;
    }
    if (local > 0) atomicAdd(&count, local);
    __syncthreads();
    if (threadIdx.x == 0 && count > 0) atomicAdd(&row_nnz[row], count);
}

// Numeric products of split rows into their tables (cleared by split_clear). `det`: only
// part 0's first thread works, in A's then B's order (see num_accumulate).
extern "C" __global__ void num_split_acc(const int* __restrict__ rows, int nrows, int parts,
                                         int ts_max, const int* __restrict__ a_ptr,
                                         const int* __restrict__ a_col,
                                         const value_t* __restrict__ a_val,
                                         const int* __restrict__ b_ptr,
                                         const int* __restrict__ b_col,
                                         const value_t* __restrict__ b_val,
                                         const long long* __restrict__ nprod,
                                         const int* __restrict__ c_ptr, int has_vals,
                                         int* __restrict__ key_pool,
                                         value_t* __restrict__ val_pool, int det) {
    int r = blockIdx.x / parts, part = blockIdx.x % parts;
    if (r >= nrows) return;
    int row = rows[r];
    int ts = split_table(c_ptr[row + 1] - c_ptr[row], ts_max);
    int* keys = key_pool + (size_t)r * (size_t)ts_max;
    value_t* vals = val_pool + (size_t)r * (size_t)ts_max;
    long long np = nprod[row];
    int work = np < 0x40000000LL ? (int)np : 0x40000000;
    num_accumulate(row, work, threadIdx.x, blockDim.x, part, parts, keys, vals, (unsigned)ts - 1,
                   a_ptr, a_col, a_val, b_ptr, b_col, b_val, has_vals, det);
}

// Split rows to C: one block per row condenses and sorts its table (unsorted output takes
// the same path: a split row is long, and its order then costs little beside its products).
extern "C" __global__ void num_split_out(const int* __restrict__ rows, int nrows, int ts_max,
                                         const int* __restrict__ c_ptr, int* __restrict__ c_col,
                                         value_t* __restrict__ c_val, int has_vals,
                                         int* __restrict__ key_pool,
                                         value_t* __restrict__ val_pool) {
    __shared__ int cnt;
    if (threadIdx.x == 0) cnt = 0;
    __syncthreads();
    int r = blockIdx.x;
    if (r >= nrows) return;
    int row = rows[r];
    int base = c_ptr[row], n = c_ptr[row + 1] - base;
    int ts = split_table(n, ts_max);
    table_to_c_sorted(key_pool + (size_t)r * (size_t)ts_max, val_pool + (size_t)r * (size_t)ts_max,
                      ts, threadIdx.x, blockDim.x, &cnt, true, base, n, c_col, c_val, has_vals);
}

// Dense split rows (B narrow enough for a dense row per split row): products go to k
// flags and k values per row (cleared by split_dense_clear); the row is then written in
// column order by blocks of DENSE_RUN * 1024 columns, each placed after the entries of the
// row's earlier blocks (split_dense_count, then split_dense_emit). Sorting a table of tens
// of thousands of entries in one block took milliseconds (hub rows, docs/GPU.md).
extern "C" __global__ void split_dense_clear(long long n, int* __restrict__ flags,
                                             value_t* __restrict__ vals, int has_vals) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        flags[i] = 0;
        if (has_vals) vals[i] = NEG_ZERO;
    }
}

// Symbolic phase of dense split rows: flags only (a plain store per product, where the
// hash tables took an atomic per product on a few hot slots of a high-compression row),
// then each block of DENSE_RUN * blockDim columns adds its set flags to the row's count
// (row_nnz of a split row starts at 0).
extern "C" __global__ void sym_split_dense(const int* __restrict__ rows, int nrows, int parts,
                                           int ncols, const int* __restrict__ a_ptr,
                                           const int* __restrict__ a_col,
                                           const int* __restrict__ b_ptr,
                                           const int* __restrict__ b_col,
                                           const long long* __restrict__ nprod,
                                           int* __restrict__ flag_pool) {
    int r = blockIdx.x / parts, part = blockIdx.x % parts;
    if (r >= nrows) return;
    int row = rows[r];
    int* flags = flag_pool + (size_t)r * (size_t)ncols;
    int a0 = a_ptr[row], alen = a_ptr[row + 1] - a0;
    int sub = lanes_per_entry(nprod[row], alen, blockDim.x);
    int nsub = blockDim.x / sub;
    int s = part * nsub + threadIdx.x / sub, lane = threadIdx.x % sub;
    for (int j = a0 + s; j < a0 + alen; j += parts * nsub) {
        int k = a_col[j];
        for (int p = b_ptr[k] + lane; p < b_ptr[k + 1]; p += sub) flags[b_col[p]] = 1;
    }
}

// The set flags among block chunk `ch`'s DENSE_RUN * blockDim columns of a dense row (the
// whole block calls it; every thread gets the total).
__device__ long long dense_chunk_count(const int* __restrict__ flags, int ch, int ncols) {
    int c0 = ch * (int)blockDim.x * DENSE_RUN + threadIdx.x * DENSE_RUN;
    int cnt = 0;
#pragma unroll
    for (int e = 0; e < DENSE_RUN; ++e) cnt += c0 + e < ncols ? flags[c0 + e] : 0;
    long long total;
    block_exclusive_scan((long long)cnt, &total);
    return total;
}

extern "C" __global__ void sym_dense_count(const int* __restrict__ rows, int nrows, int chunks,
                                           int ncols, const int* __restrict__ flag_pool,
                                           int* __restrict__ row_nnz) {
    int r = blockIdx.x / chunks, ch = blockIdx.x % chunks;
    if (r >= nrows) return;
    long long total = dense_chunk_count(flag_pool + (size_t)r * (size_t)ncols, ch, ncols);
    if (threadIdx.x == 0 && total > 0) atomicAdd(&row_nnz[rows[r]], (int)total);
}

extern "C" __global__ void split_dense_acc(const int* __restrict__ rows, int nrows, int parts,
                                           int ncols, const int* __restrict__ a_ptr,
                                           const int* __restrict__ a_col,
                                           const value_t* __restrict__ a_val,
                                           const int* __restrict__ b_ptr,
                                           const int* __restrict__ b_col,
                                           const value_t* __restrict__ b_val,
                                           const long long* __restrict__ nprod, int has_vals,
                                           int* __restrict__ flag_pool,
                                           value_t* __restrict__ val_pool, int det) {
    int r = blockIdx.x / parts, part = blockIdx.x % parts;
    if (r >= nrows) return;
    if (det && (part != 0 || threadIdx.x != 0)) return;
    if (det) parts = 1;
    int row = rows[r];
    int* flags = flag_pool + (size_t)r * (size_t)ncols;
    value_t* vals = val_pool + (size_t)r * (size_t)ncols;
    long long np = nprod[row];
    int a0 = a_ptr[row], alen = a_ptr[row + 1] - a0;
    int tpr = det ? 1 : blockDim.x;
    int sub = det ? 1 : lanes_per_entry(np, alen, tpr);
    int nsub = tpr / sub;
    int t = det ? 0 : threadIdx.x;
    int s = part * nsub + t / sub, lane = t % sub;
    for (int j = a0 + s; j < a0 + alen; j += parts * nsub) {
        int k = a_col[j];
        value_t av = has_vals ? a_val[j] : (value_t)0;
        for (int p = b_ptr[k] + lane; p < b_ptr[k + 1]; p += sub) {
            int c = b_col[p];
            flags[c] = 1;
            if (has_vals) atomicAdd(&vals[c], av * b_val[p]);
        }
    }
}

// Block (r, ch) of a dense split row: the set flags among its DENSE_RUN * blockDim columns.
extern "C" __global__ void split_dense_count(int nrows, int chunks, int ncols,
                                             const int* __restrict__ flag_pool,
                                             int* __restrict__ chunk_count) {
    int r = blockIdx.x / chunks, ch = blockIdx.x % chunks;
    if (r >= nrows) return;
    long long total = dense_chunk_count(flag_pool + (size_t)r * (size_t)ncols, ch, ncols);
    if (threadIdx.x == 0) chunk_count[blockIdx.x] = (int)total;
}

extern "C" __global__ void split_dense_emit(const int* __restrict__ rows, int nrows, int chunks,
                                            int ncols, const int* __restrict__ flag_pool,
                                            const value_t* __restrict__ val_pool,
                                            const int* __restrict__ chunk_count,
                                            const int* __restrict__ c_ptr,
                                            int* __restrict__ c_col, value_t* __restrict__ c_val,
                                            int has_vals) {
    int r = blockIdx.x / chunks, ch = blockIdx.x % chunks;
    if (r >= nrows) return;
    int row = rows[r];
    const int* flags = flag_pool + (size_t)r * (size_t)ncols;
    const value_t* vals = val_pool + (size_t)r * (size_t)ncols;
    // Entries of this row's earlier chunks.
    long long before = 0;
    for (int i = threadIdx.x; i < ch; i += blockDim.x) before += chunk_count[r * chunks + i];
    long long sum;
    block_exclusive_scan(before, &sum);
    __syncthreads();
    int c0 = ch * (int)blockDim.x * DENSE_RUN + threadIdx.x * DENSE_RUN;
    int f[DENSE_RUN];
    int cnt = 0;
#pragma unroll
    for (int e = 0; e < DENSE_RUN; ++e) {
        f[e] = c0 + e < ncols ? flags[c0 + e] : 0;
        cnt += f[e];
    }
    long long total;
    long long pos = (long long)c_ptr[row] + sum + block_exclusive_scan((long long)cnt, &total);
#pragma unroll
    for (int e = 0; e < DENSE_RUN; ++e) {
        if (f[e]) {
            c_col[pos] = c0 + e;
            if (has_vals) c_val[pos] = vals[c0 + e];
            ++pos;
        }
    }
}

// Numeric bin keys: a row's n_nz, or `split_key` for a row of more than split_at products
// or more than wide_at entries.
extern "C" __global__ void num_keys(int m, const int* __restrict__ n,
                                    const long long* __restrict__ nprod, long long split_at,
                                    long long wide_at, long long split_key,
                                    long long* __restrict__ key) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m)
        key[i] = (n[i] > 0 && (nprod[i] > split_at || (long long)n[i] > wide_at))
                     ? split_key
                     : (long long)n[i];
}

// *out = the largest key[rows[i]] over i < n (out starts at 0).
extern "C" __global__ void rows_max_key(const int* __restrict__ rows, int n,
                                        const long long* __restrict__ key,
                                        unsigned long long* __restrict__ out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicMax(out, (unsigned long long)key[rows[i]]);
}

// ---- Device-resident inputs and outputs (caller's arrays already on the GPU) ----
// A caller's index array (int32 or int64, any base) becomes 0-based int32 with a range
// check: out[p] = in[p] - sub must lie in [0, hi). The smallest bad position goes to
// first_bad (initialised to n by the host), so the message can name it. Nothing is read
// outside [0, n).
extern "C" __global__ void idx_from_i32(const int* __restrict__ in, long long n, long long sub,
                                        long long hi, int* __restrict__ out,
                                        unsigned long long* __restrict__ first_bad) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (; p < n; p += stride) {
        long long v = (long long)in[p] - sub;
        if (v < 0 || v >= hi) {
            atomicMin(first_bad, (unsigned long long)p);
            v = 0;
        }
        out[p] = (int)v;
    }
}

extern "C" __global__ void idx_from_i64(const long long* __restrict__ in, long long n,
                                        long long sub, long long hi, int* __restrict__ out,
                                        unsigned long long* __restrict__ first_bad) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (; p < n; p += stride) {
        long long x = in[p];
        // size_t offsets arrive here too: values above 2^63 read as negative and fail.
        long long v = x - sub;
        if (x < sub || v >= hi) {
            atomicMin(first_bad, (unsigned long long)p);
            v = 0;
        }
        out[p] = (int)v;
    }
}

// Row offsets (0-based int32, m + 1 of them) must not decrease: the smallest row i with
// ptr[i] > ptr[i + 1] goes to first_bad (initialised to m).
extern "C" __global__ void offsets_check(const int* __restrict__ ptr, int m,
                                         unsigned long long* __restrict__ first_bad) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = gridDim.x * blockDim.x;
    for (; i < m; i += stride) {
        if (ptr[i] > ptr[i + 1]) atomicMin(first_bad, (unsigned long long)i);
    }
}

// 0-based int32 indices of C into the caller's device array `out`: int64 (wide != 0)
// or int32, plus the base.
extern "C" __global__ void idx_to_caller(const int* __restrict__ in, long long n, int base,
                                         void* __restrict__ out, int wide) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (; p < n; p += stride) {
        if (wide) ((long long*)out)[p] = (long long)in[p] + base;
        else ((int*)out)[p] = in[p] + base;
    }
}
