//! The cost model (paper sections 4 and 5.1): per algorithm and grid, the buffers each
//! rank holds, the bytes each collective moves, and a predicted time from the alpha-beta
//! model of every collective plus the measured local SpMM rate. Everything is computed
//! from global facts (row ranges, k, the nonzeros of every tile) so all ranks agree.

use super::layout::{Grid, KStage, NStage, Ranges, k_stages, n_stages, split};
use crate::common::options::Layout;

/// Latency and inverse bandwidth of one message between two ranks (the alpha-beta model).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetParams {
    /// Seconds per message.
    pub alpha_s: f64,
    /// Seconds per byte.
    pub beta_s_per_byte: f64,
    /// Whether a one-sided get completes while its target computes (an RDMA network, or
    /// an MPI with a progress thread). Without it the get waits for the target's next MPI
    /// call, so the asynchronous algorithms' gets do not overlap the products.
    pub async_gets: bool,
}

/// Measured speed of local products: `call_s + entries * k * per_entry_col(k)` seconds,
/// with `per_entry_col` interpolated in log2(k) between k = 1, 8 and 64 (a narrow
/// product does less work per loaded entry of A, so its rate per flop is lower: the
/// paper's section 6.2 effect that makes the 2D algorithms' k/sqrt(p) slices slow).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalRate {
    /// Fixed cost of one call (launch, thread wake-up).
    pub call_s: f64,
    /// Seconds per stored entry and column of X at k = 1, 8, 64.
    pub per_entry_col_s: [f64; 3],
}

impl LocalRate {
    /// Predicted seconds of one local product.
    pub fn time(&self, nnz: usize, k: usize) -> f64 {
        if k == 0 {
            return 0.0;
        }
        let l = (k as f64).log2();
        let [r1, r8, r64] = self.per_entry_col_s;
        let per = if l <= 0.0 {
            r1
        } else if l <= 3.0 {
            r1 + (r8 - r1) * l / 3.0
        } else if l <= 6.0 {
            r8 + (r64 - r8) * (l - 3.0) / 3.0
        } else {
            r64
        };
        self.call_s + nnz as f64 * k as f64 * per.max(0.0)
    }
}

/// Words of a packed tile: `nrows + 1` offsets, `nnz` int32 ids (two per word), `nnz`
/// values.
pub fn tile_words(nrows: usize, nnz: usize, value_bytes: usize) -> usize {
    nrows + 1 + nnz.div_ceil(2) + (nnz * value_bytes).div_ceil(8)
}

/// A distributed SpMM algorithm (paper Table 1; BS bulk-synchronous, AS one-sided).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Let the cost model choose algorithm and grid.
    Auto,
    /// 1.5D A-stationary (pr x pc grid, c = pc: X replicated over grid columns by an
    /// allgather, partial Y summed over grid rows by a reduce-scatter).
    SA15D,
    /// 2D A-stationary, bulk-synchronous (broadcasts of X, reductions of Y, per k-stage).
    SA2D,
    /// 2D C-stationary (SUMMA), bulk-synchronous (broadcasts of A and X per stage).
    SC2D,
    /// 2D A-stationary, one-sided (gets of X tiles, partial Y fetched by its owner).
    SA2DAsync,
    /// 2D C-stationary, one-sided (gets of A and X tiles, Figure 4 of the paper).
    SC2DAsync,
    /// 1D rows, sparsity-aware (PETSc MPIAIJ's halo): each rank receives only the rows of
    /// X its columns name, point to point from their owners (grid p x 1).
    Halo1D,
}

impl Algorithm {
    pub const ALL: [Algorithm; 6] = [
        Algorithm::SA15D,
        Algorithm::SA2D,
        Algorithm::SC2D,
        Algorithm::SA2DAsync,
        Algorithm::SC2DAsync,
        Algorithm::Halo1D,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Auto => "auto",
            Algorithm::SA15D => "sA-1.5D-BS",
            Algorithm::SA2D => "sA-2D-BS",
            Algorithm::SC2D => "sC-2D-BS",
            Algorithm::SA2DAsync => "sA-2D-AS",
            Algorithm::SC2DAsync => "sC-2D-AS",
            Algorithm::Halo1D => "1D-halo",
        }
    }
    pub fn code(self) -> i64 {
        match self {
            Algorithm::Auto => 0,
            Algorithm::SA15D => 1,
            Algorithm::SA2D => 2,
            Algorithm::SC2D => 3,
            Algorithm::SA2DAsync => 4,
            Algorithm::SC2DAsync => 5,
            Algorithm::Halo1D => 6,
        }
    }
    pub fn is_stationary_c(self) -> bool {
        matches!(self, Algorithm::SC2D | Algorithm::SC2DAsync)
    }
}

/// The global facts a model evaluation needs.
pub struct Shape<'a> {
    pub r: &'a Ranges,
    pub k: usize,
    /// Bytes per value.
    pub w: usize,
    pub layout: Layout,
    /// Entries of A on each rank (the caller's rows).
    pub nnz_local: &'a [usize],
    /// Each rank's halo (1D-halo only; empty where no candidate needs it).
    pub halo: &'a [HaloFacts],
}

/// One rank's halo exchange: rows of X it receives and from how many owners, rows it
/// sends and to how many ranks; and its [`InnerSplit`]: entries of the inner run, own
/// rows of X the other rows read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HaloFacts {
    pub recv_rows: usize,
    pub recv_peers: usize,
    pub send_rows: usize,
    pub send_peers: usize,
    pub inner_nnz: usize,
    pub near_rows: usize,
}

/// Words of [`HaloFacts`] in the allgather of planning.
pub const HALO_FACT_WORDS: usize = 6;

impl HaloFacts {
    pub fn words(&self) -> [u64; HALO_FACT_WORDS] {
        [
            self.recv_rows as u64,
            self.recv_peers as u64,
            self.send_rows as u64,
            self.send_peers as u64,
            self.inner_nnz as u64,
            self.near_rows as u64,
        ]
    }
    pub fn of_words(w: &[u64]) -> HaloFacts {
        HaloFacts {
            recv_rows: w[0] as usize,
            recv_peers: w[1] as usize,
            send_rows: w[2] as usize,
            send_peers: w[3] as usize,
            inner_nnz: w[4] as usize,
            near_rows: w[5] as usize,
        }
    }
}

/// The smallest inner run of 1D-halo worth its own node call (the run must also hold an
/// eighth of the rank's rows): below that the overlap saves less than a call costs.
pub const INNER_MIN_ROWS: usize = 1024;

/// How 1D-halo splits a rank's rows (docs/DISTRIBUTED.md, 1D-halo): the inner run, rows
/// that read only the rank's own rows of X, multiplied on the caller's X while the halo
/// travels; the rows before and after it read X's rows `near` (local ids, increasing)
/// followed by the halo, gathered into one buffer. Each row is still one product of
/// whole rows, so sums keep their order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InnerSplit {
    pub inner: std::ops::Range<usize>,
    pub inner_nnz: usize,
    pub near: Vec<usize>,
}

/// The [`InnerSplit`] of a rank's `nrows` rows: `row(i)` the entry range of local row i,
/// `col(e)` entry e's global column, `own` the rank's rows of X. Without a halo every row
/// is inner; else the longest run of rows that read no halo (the first of equals) if it
/// has `INNER_MIN_ROWS` rows and an eighth of the rank's, else none.
pub fn inner_split(
    nrows: usize,
    row: impl Fn(usize) -> std::ops::Range<usize>,
    col: impl Fn(usize) -> usize,
    own: std::ops::Range<usize>,
) -> InnerSplit {
    let reads_own = |i: usize| row(i).all(|e| own.contains(&col(e)));
    let (mut best, mut start) = (0..0, 0);
    for i in 0..=nrows {
        if i == nrows || !reads_own(i) {
            if i - start > best.len() {
                best = start..i;
            }
            start = i + 1;
        }
    }
    let all = best.len() == nrows;
    let inner = if all || (best.len() >= INNER_MIN_ROWS && 8 * best.len() >= nrows) {
        best
    } else {
        0..0
    };
    let inner_nnz = if inner.is_empty() {
        0
    } else {
        row(inner.end - 1).end - row(inner.start).start
    };
    let mut seen = vec![0u64; own.len().div_ceil(64)];
    for i in (0..inner.start).chain(inner.end..nrows) {
        for e in row(i) {
            let c = col(e);
            if own.contains(&c) {
                let l = c - own.start;
                seen[l / 64] |= 1 << (l % 64);
            }
        }
    }
    let mut near = Vec::new();
    for (w, &b) in seen.iter().enumerate() {
        let mut x = b;
        while x != 0 {
            near.push(w * 64 + x.trailing_zeros() as usize);
            x &= x - 1;
        }
    }
    InnerSplit {
        inner,
        inner_nnz,
        near,
    }
}

/// Nonzeros of every tile of a grid: `sa[q]` for the A-stationary tile of rank q,
/// `sc[i * stages + t]` for the C-stationary piece of grid row i and stage t.
pub struct TileNnz {
    pub grid: Grid,
    /// Rows of A and Y of each grid row (`row_block`), X rows of each grid column
    /// (`col_block`): looked up for every rank and stage by the model.
    pub rb: Vec<usize>,
    pub cb: Vec<usize>,
    pub sa: Vec<usize>,
    pub sc: Vec<usize>,
    pub n_stages: Vec<NStage>,
}

/// Element counts of the buffers one rank holds for one algorithm (values of V unless
/// named words).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Buffers {
    pub tile_words: usize,
    pub abuf_words: usize,
    pub x_own: usize,
    pub x_send: usize,
    pub x_recv: usize,
    pub x_stage: usize,
    pub y_part: usize,
    pub y_stage: usize,
    pub y_own: usize,
    pub y_send: usize,
    pub y_recv: usize,
}

impl Buffers {
    pub fn values(&self) -> usize {
        self.x_own
            + self.x_send
            + self.x_recv
            + self.x_stage
            + self.y_part
            + self.y_stage
            + self.y_own
            + self.y_send
            + self.y_recv
    }
}

/// One evaluated choice.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub algorithm: Algorithm,
    pub grid: Grid,
    /// Predicted seconds of one execute: communication + local products.
    pub time_s: f64,
    pub comm_s: f64,
    pub comp_s: f64,
    /// Predicted payload bytes received by all ranks together in one execute.
    pub bytes_total: f64,
    /// Predicted bytes this rank holds.
    pub memory_mine: usize,
    /// The largest footprint over the ranks, and whose.
    pub memory_max: usize,
    pub memory_max_rank: usize,
}

fn lg(g: usize) -> f64 {
    if g <= 1 {
        0.0
    } else {
        (g as f64).log2().ceil()
    }
}

/// Rows of grid row i (A's and Y's rows of its ranks).
pub fn row_block(r: &Ranges, g: Grid, i: usize) -> usize {
    r.rows[(i + 1) * g.pc] - r.rows[i * g.pc]
}

/// X rows of grid column j (A-stationary tile width).
pub fn col_block(r: &Ranges, g: Grid, j: usize) -> usize {
    (j..r.p()).step_by(g.pc).map(|q| r.xr(q)).sum()
}

/// X rows of a C-stationary stage.
pub fn stage_rows(r: &Ranges, s: &NStage) -> usize {
    r.xrows[s.g1] - r.xrows[s.g0]
}

/// Columns of Y's pc-way split owned by grid column j (C-stationary).
pub fn kc(k: usize, g: Grid, j: usize) -> usize {
    let (a, b) = split(k, g.pc, j);
    b - a
}

/// The buffers rank q holds under `alg` (what the plan allocates, to the element).
pub fn buffers(alg: Algorithm, sh: &Shape<'_>, t: &TileNnz, q: usize) -> Buffers {
    let g = t.grid;
    let (i, j) = g.coords(q);
    let r = sh.r;
    let k = sh.k;
    let ri = t.rb[i];
    let yr = r.yr(q);
    let xr = r.xr(q);
    let mut b = Buffers::default();
    match alg {
        Algorithm::Auto => {}
        Algorithm::SA15D => {
            let acj = t.cb[j];
            b.tile_words = tile_words(ri, t.sa[q], sh.w);
            // A grid column of one rank multiplies the caller's X in place.
            if g.pr > 1 {
                b.x_own = acj * k;
                b.x_send = xr * k;
                if sh.layout == Layout::ColMajor {
                    b.x_stage = acj * k;
                }
            }
            if g.pc > 1 {
                b.y_part = ri * k;
                if sh.layout == Layout::ColMajor {
                    b.y_send = ri * k;
                }
                b.y_recv = yr * k;
            }
        }
        Algorithm::SA2D | Algorithm::SA2DAsync => {
            let acj = t.cb[j];
            let st = k_stages(k, g);
            let kmax = st.iter().map(KStage::width).max().unwrap_or(0);
            let kx: usize = st.iter().filter(|s| s.xo == i).map(KStage::width).sum();
            let ky: usize = st.iter().filter(|s| s.yo == j).map(KStage::width).sum();
            b.tile_words = tile_words(ri, t.sa[q], sh.w);
            b.x_own = acj * kx;
            b.x_send = xr * k;
            b.x_recv = acj * kx;
            b.y_own = ri * ky;
            b.y_send = ri * ky;
            b.y_recv = yr * k;
            if alg == Algorithm::SA2D {
                b.x_stage = acj * kmax;
                b.y_part = ri * kmax;
            } else {
                b.x_stage = 2 * acj * kmax;
                b.y_part = ri * k;
                b.y_stage = 2 * ri * kmax;
            }
        }
        Algorithm::Halo1D => {
            let h = sh.halo[q];
            b.tile_words = tile_words(ri, t.sa[q], sh.w);
            // Without a halo the caller's X is the whole operand, used in place; with
            // one the rows outside the inner run read the near rows and the halo.
            if h.recv_rows > 0 {
                b.x_own = (h.near_rows + h.recv_rows) * k;
                if sh.layout == Layout::ColMajor {
                    b.x_stage = h.recv_rows * k;
                }
            }
            b.x_send = h.send_rows * k;
        }
        Algorithm::SC2D | Algorithm::SC2DAsync => {
            let ns = t.n_stages.len();
            let kcj = kc(k, g, j);
            let mut own = 0;
            let mut amax = 0;
            let mut xown = 0;
            let mut nmax = 0;
            for (s, st) in t.n_stages.iter().enumerate() {
                let wds = tile_words(ri, t.sc[i * ns + s], sh.w);
                if st.ao == j {
                    own += wds;
                }
                amax = amax.max(wds);
                let nt = stage_rows(r, st);
                if st.xo == i {
                    xown += nt * kcj;
                }
                nmax = nmax.max(nt);
            }
            let copies = if alg == Algorithm::SC2D { 1 } else { 2 };
            b.tile_words = own;
            b.abuf_words = copies * amax;
            b.x_own = xown;
            b.x_send = xr * k;
            b.x_recv = (r.xrows[(i + 1) * g.pc] - r.xrows[i * g.pc]) * kcj;
            b.x_stage = copies * nmax * kcj;
            b.y_own = ri * kcj;
            b.y_send = ri * kcj;
            b.y_recv = yr * k;
        }
    }
    b
}

/// Bytes rank q holds: the buffers plus the value-refresh map of A.
pub fn footprint(alg: Algorithm, sh: &Shape<'_>, t: &TileNnz, q: usize) -> usize {
    let b = buffers(alg, sh, t, q);
    let owned = if alg.is_stationary_c() {
        let j = q % t.grid.pc;
        t.n_stages.iter().filter(|s| s.ao == j).count()
    } else {
        1
    };
    let refresh = sh.nnz_local[q] * std::mem::size_of::<usize>()
        + t.grid.pc * owned * 4 * std::mem::size_of::<usize>();
    let send_list = if alg == Algorithm::Halo1D {
        let h = sh.halo[q];
        // The rows asked of this rank and the near rows (local ids); with a halo, the
        // row offsets of the three runs (rebased to 0 each).
        let runs = if h.recv_rows > 0 { t.rb[q] + 3 } else { 0 };
        (h.send_rows + h.near_rows) * std::mem::size_of::<usize>() + runs * 8
    } else {
        0
    };
    (b.tile_words + b.abuf_words) * 8 + b.values() * sh.w + refresh + send_list
}

/// Payload bytes received by all ranks together in one execute, from the collectives'
/// semantics (self-messages excluded; one-sided gets counted at the origin).
pub fn bytes_total(alg: Algorithm, sh: &Shape<'_>, t: &TileNnz) -> f64 {
    let g = t.grid;
    let r = sh.r;
    let p = r.p();
    let (k, w) = (sh.k, sh.w as f64);
    let (m, n) = (r.m() as f64, r.n() as f64);
    let mut bytes = 0.0;
    match alg {
        Algorithm::Auto => {}
        Algorithm::SA15D => {
            // Allgather of X in each grid column, reduce-scatter of Y in each grid row.
            bytes += (g.pr - 1) as f64 * n * k as f64 * w;
            bytes += (g.pc - 1) as f64 * m * k as f64 * w;
        }
        Algorithm::Halo1D => {
            bytes += sh.halo.iter().map(|h| h.recv_rows).sum::<usize>() as f64 * k as f64 * w;
        }
        Algorithm::SA2D | Algorithm::SA2DAsync => {
            let st = k_stages(k, g);
            for q in 0..p {
                let (i, j) = g.coords(q);
                let kx: usize = st.iter().filter(|s| s.xo == i).map(KStage::width).sum();
                let ky: usize = st.iter().filter(|s| s.yo == j).map(KStage::width).sum();
                // X to the 2D layout (what the others send me), Y back (what I receive).
                bytes += (t.cb[j] - r.xr(q)) as f64 * kx as f64 * w;
                bytes += r.yr(q) as f64 * (k - ky) as f64 * w;
            }
            // Per stage: X block to the grid column, partial Y from the grid row.
            bytes += (g.pr - 1) as f64 * n * k as f64 * w;
            bytes += (g.pc - 1) as f64 * m * k as f64 * w;
        }
        Algorithm::SC2D | Algorithm::SC2DAsync => {
            let ns = t.n_stages.len();
            for q in 0..p {
                let (i, j) = g.coords(q);
                let kcj = kc(k, g, j);
                let xrow = (r.xrows[(i + 1) * g.pc] - r.xrows[i * g.pc]) as f64;
                bytes += (xrow - r.xr(q) as f64) * kcj as f64 * w;
                bytes += r.yr(q) as f64 * (k - kcj) as f64 * w;
            }
            if alg == Algorithm::SC2D {
                // Per stage: A's piece broadcast in the grid row (when it has entries), X's
                // block in the grid column.
                for i in 0..g.pr {
                    let ri = t.rb[i];
                    for s in 0..ns {
                        let nz = t.sc[i * ns + s];
                        if nz > 0 {
                            bytes += (g.pc - 1) as f64 * (tile_words(ri, nz, sh.w) * 8) as f64;
                        }
                    }
                }
                bytes += (g.pr - 1) as f64 * n * k as f64 * w;
            } else {
                // Each rank gets the remote pieces of the stages it multiplies (those with
                // entries in its grid row and columns of Y in its grid column).
                for q in 0..p {
                    let (i, j) = g.coords(q);
                    let (ri, kcj) = (t.rb[i], kc(k, g, j));
                    for (s, st) in t.n_stages.iter().enumerate() {
                        let nz = t.sc[i * ns + s];
                        if nz == 0 || kcj == 0 {
                            continue;
                        }
                        if st.ao != j {
                            bytes += (tile_words(ri, nz, sh.w) * 8) as f64;
                        }
                        if st.xo != i {
                            bytes += stage_rows(r, st) as f64 * kcj as f64 * w;
                        }
                    }
                }
            }
        }
    }
    bytes
}

/// Predicted seconds of one execute: (communication, local products).
pub fn time(
    alg: Algorithm,
    sh: &Shape<'_>,
    t: &TileNnz,
    net: NetParams,
    rate: &LocalRate,
) -> (f64, f64) {
    let g = t.grid;
    let r = sh.r;
    let p = r.p();
    let (k, w) = (sh.k, sh.w as f64);
    let (a, b) = (net.alpha_s, net.beta_s_per_byte);
    let maxq = |f: &dyn Fn(usize) -> f64| (0..p).map(f).fold(0.0, f64::max);
    // Alltoall of each rank's rows of X (or Y) within a group of size gs.
    let a2a = |gs: usize, rows: &dyn Fn(usize) -> usize| {
        if gs <= 1 {
            return 0.0;
        }
        maxq(&|q| {
            a * (gs - 1) as f64 + b * rows(q) as f64 * k as f64 * w * (gs - 1) as f64 / gs as f64
        })
    };
    // A get prefetched behind a product: hidden only where gets progress on their own.
    let overlap = |get: f64, prod: f64| {
        if net.async_gets {
            get.max(prod)
        } else {
            get + prod
        }
    };
    let (mut comm, mut comp) = (0.0, 0.0);
    match alg {
        Algorithm::Auto => {}
        Algorithm::SA15D => {
            if g.pr > 1 {
                comm += maxq(&|q| {
                    let j = q % g.pc;
                    a * lg(g.pr) + b * (t.cb[j] - r.xr(q)) as f64 * k as f64 * w
                });
            }
            if g.pc > 1 {
                comm += maxq(&|q| {
                    let i = q / g.pc;
                    a * lg(g.pc) + b * (t.rb[i] - r.yr(q)) as f64 * k as f64 * w
                });
            }
            comp += maxq(&|q| rate.time(t.sa[q], k));
        }
        Algorithm::Halo1D => {
            // Nonblocking messages to and from the neighbours only, sends and receives
            // overlapping; the inner run's product hides part of them.
            let split = |q: usize| {
                let n = sh.halo[q].inner_nnz;
                (n > 0 && n < t.sa[q]).then_some(n)
            };
            let inner = |q: usize| split(q).map_or(0.0, |n| rate.time(n, k));
            comm += maxq(&|q| {
                let h = sh.halo[q];
                let c = a * h.recv_peers.max(h.send_peers) as f64
                    + b * h.recv_rows.max(h.send_rows) as f64 * k as f64 * w;
                (c - inner(q)).max(0.0)
            });
            comp += maxq(&|q| match split(q) {
                Some(n) => rate.time(n, k) + rate.time(t.sa[q] - n, k),
                None => rate.time(t.sa[q], k),
            });
        }
        Algorithm::SA2D | Algorithm::SA2DAsync => {
            let st = k_stages(k, g);
            comm += a2a(g.pr, &|q| r.xr(q)) + a2a(g.pc, &|q| r.yr(q));
            if alg == Algorithm::SA2D {
                for s in &st {
                    let kt = s.width() as f64;
                    if g.pr > 1 {
                        comm += maxq(&|q| {
                            let acj = t.cb[q % g.pc] as f64;
                            a * lg(g.pr) + b * acj * kt * w * lg(g.pr)
                        });
                    }
                    if g.pc > 1 {
                        comm += maxq(&|q| {
                            let ri = t.rb[q / g.pc] as f64;
                            a * lg(g.pc) + b * ri * kt * w * lg(g.pc)
                        });
                    }
                    comp += maxq(&|q| rate.time(t.sa[q], s.width()));
                }
            } else {
                // Gets overlap the products (prefetch): per stage the slower of the two where
                // gets progress on their own, else their sum.
                let phase1 = maxq(&|q| {
                    let (i, j) = g.coords(q);
                    let acj = t.cb[j] as f64;
                    let mut s_t = a;
                    for s in &st {
                        let get = if s.xo == i {
                            0.0
                        } else {
                            a + b * acj * s.width() as f64 * w
                        };
                        s_t += overlap(get, rate.time(t.sa[q], s.width()));
                    }
                    s_t
                });
                let phase2 = maxq(&|q| {
                    let (i, j) = g.coords(q);
                    let ri = t.rb[i] as f64;
                    st.iter()
                        .filter(|s| s.yo == j)
                        .map(|s| (g.pc - 1) as f64 * (a + b * ri * s.width() as f64 * w))
                        .sum::<f64>()
                });
                let split_comp = maxq(&|q| st.iter().map(|s| rate.time(t.sa[q], s.width())).sum());
                comp += split_comp;
                comm += (phase1 - split_comp).max(0.0) + phase2 + 2.0 * a * lg(p);
            }
        }
        Algorithm::SC2D | Algorithm::SC2DAsync => {
            let ns = t.n_stages.len();
            let xrow_rows = |q: usize| r.xr(q);
            comm += a2a(g.pc, &xrow_rows) + a2a(g.pc, &|q| r.yr(q));
            let tile_b = |i: usize, s: usize| {
                let nz = t.sc[i * ns + s];
                if nz == 0 {
                    0.0
                } else {
                    (tile_words(t.rb[i], nz, sh.w) * 8) as f64
                }
            };
            if alg == Algorithm::SC2D {
                for (s, st) in t.n_stages.iter().enumerate() {
                    let nt = stage_rows(r, st) as f64;
                    if g.pc > 1 {
                        comm += maxq(&|q| a * lg(g.pc) + b * tile_b(q / g.pc, s) * lg(g.pc));
                    }
                    if g.pr > 1 {
                        comm += maxq(&|q| {
                            a * lg(g.pr) + b * nt * kc(k, g, q % g.pc) as f64 * w * lg(g.pr)
                        });
                    }
                    comp += maxq(&|q| rate.time(t.sc[(q / g.pc) * ns + s], kc(k, g, q % g.pc)));
                }
            } else {
                let total = maxq(&|q| {
                    let (i, j) = g.coords(q);
                    let mut s_t = a;
                    for (s, st) in t.n_stages.iter().enumerate() {
                        let mut get = 0.0;
                        if t.sc[i * ns + s] == 0 || kc(k, g, j) == 0 {
                            continue;
                        }
                        if st.ao != j {
                            get += a + b * tile_b(i, s);
                        }
                        if st.xo != i {
                            get += a + b * stage_rows(r, st) as f64 * kc(k, g, j) as f64 * w;
                        }
                        s_t += overlap(get, rate.time(t.sc[i * ns + s], kc(k, g, j)));
                    }
                    s_t
                });
                let c = maxq(&|q| {
                    let (i, j) = g.coords(q);
                    (0..ns)
                        .map(|s| rate.time(t.sc[i * ns + s], kc(k, g, j)))
                        .sum()
                });
                comp += c;
                comm += (total - c).max(0.0) + a * lg(p);
            }
        }
    }
    (comm, comp)
}

/// Tile widths (local column ids) must fit int32.
pub fn widths_fit(alg: Algorithm, r: &Ranges, g: Grid, st: &[NStage]) -> bool {
    let lim = i32::MAX as usize;
    if alg.is_stationary_c() {
        st.iter().all(|s| stage_rows(r, s) <= lim)
    } else {
        (0..g.pc).all(|j| col_block(r, g, j) <= lim)
    }
}

/// The model's evaluation of `alg` on the grid of `t`: predicted time, bytes, the
/// footprint of rank `me` and the largest over the ranks.
pub fn candidate(
    alg: Algorithm,
    sh: &Shape<'_>,
    t: &TileNnz,
    net: NetParams,
    rate: &LocalRate,
    me: usize,
) -> Candidate {
    let (mut memory_max, mut memory_max_rank) = (0, 0);
    for q in 0..sh.r.p() {
        let f = footprint(alg, sh, t, q);
        if f > memory_max {
            (memory_max, memory_max_rank) = (f, q);
        }
    }
    let (comm_s, comp_s) = time(alg, sh, t, net, rate);
    Candidate {
        algorithm: alg,
        grid: t.grid,
        time_s: comm_s + comp_s,
        comm_s,
        comp_s,
        bytes_total: bytes_total(alg, sh, t),
        memory_mine: footprint(alg, sh, t, me),
        memory_max,
        memory_max_rank,
    }
}

/// The fastest candidate whose largest per-rank footprint is within `limit`.
pub fn best_within(c: &[Candidate], limit: usize) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (n, x) in c.iter().enumerate() {
        if x.memory_max <= limit && best.is_none_or(|b| x.time_s < c[b].time_s) {
            best = Some(n);
        }
    }
    best
}

/// The grids an algorithm may run on (`forced`: the caller's; else for 1.5D every
/// factorisation p = (p/c) x c, for 2D the near-square grid and its transpose).
pub fn grids(alg: Algorithm, p: usize, forced: Option<Grid>, c: Option<usize>) -> Vec<Grid> {
    if alg == Algorithm::Halo1D {
        let rows = Grid { pr: p, pc: 1 };
        return if forced.is_none_or(|g| g == rows) {
            vec![rows]
        } else {
            Vec::new()
        };
    }
    if let Some(g) = forced {
        return vec![g];
    }
    match alg {
        Algorithm::SA15D => (1..=p)
            .filter(|&d| p.is_multiple_of(d) && c.is_none_or(|c| c == d))
            .map(|d| Grid { pr: p / d, pc: d })
            .collect(),
        _ => {
            let g = Grid::near_square(p);
            if g.pr == g.pc {
                vec![g]
            } else {
                vec![g, g.transposed()]
            }
        }
    }
}

/// The stages of a C-stationary grid (re-exported for the tile tables).
pub fn stages_of(g: Grid) -> Vec<NStage> {
    n_stages(g)
}
