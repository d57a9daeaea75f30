//! The cost model evaluated for rank counts this machine cannot run (the paper's section 5
//! projections): from A's pattern held whole on one process, each rank's rows and X rows
//! are the even split `spgemm-bench dist-spmm` and the PETSc driver use, and the tile
//! tables and halo facts a plan would gather over MPI are counted directly. With a
//! network (alpha, beta) and a local rate, [`project_spmm`] gives every candidate's
//! predicted time, bytes and per-rank memory at p ranks, as `dist_spmm_estimate` would.

use super::layout::{Grid, Ranges, split};
use super::model::{
    self, Algorithm, Candidate, HaloFacts, LocalRate, NetParams, Shape, TileNnz, col_block,
    widths_fit,
};
use crate::common::options::Layout;

/// A's pattern, 0-based: `row_ptr` of m + 1 offsets, `cols` global column ids.
pub struct GlobalPattern<'a> {
    pub ncols: usize,
    pub row_ptr: &'a [usize],
    pub cols: &'a [usize],
}

impl GlobalPattern<'_> {
    fn nrows(&self) -> usize {
        self.row_ptr.len() - 1
    }
}

/// Rows and X rows of p ranks, split evenly.
fn even_ranges(m: usize, n: usize, p: usize) -> Ranges {
    Ranges {
        rows: (0..=p)
            .map(|q| if q == p { m } else { split(m, p, q).0 })
            .collect(),
        xrows: (0..=p)
            .map(|q| if q == p { n } else { split(n, p, q).0 })
            .collect(),
    }
}

/// The tile table of grid `g` (what `tile_tables` allreduces), from the owner of every
/// entry's column (`owner`, in A's entry order).
fn tile_table(a: &GlobalPattern<'_>, r: &Ranges, owner: &[u32], g: Grid) -> TileNnz {
    let p = r.p();
    let st = model::stages_of(g);
    let mut stage_of = vec![0usize; p];
    for (t, s) in st.iter().enumerate() {
        stage_of[s.g0..s.g1].fill(t);
    }
    let mut sa = vec![0usize; p];
    let mut sc = vec![0usize; g.pr * st.len()];
    for q in 0..p {
        let i = q / g.pc;
        let (e0, e1) = (a.row_ptr[r.rows[q]], a.row_ptr[r.rows[q + 1]]);
        for &o in &owner[e0..e1] {
            let o = o as usize;
            sa[g.rank(i, o % g.pc)] += 1;
            sc[i * st.len() + stage_of[o]] += 1;
        }
    }
    TileNnz {
        grid: g,
        rb: (0..g.pr).map(|i| model::row_block(r, g, i)).collect(),
        cb: (0..g.pc).map(|j| col_block(r, g, j)).collect(),
        sa,
        sc,
        n_stages: st,
    }
}

/// Every rank's halo (what `halo_facts` allgathers): the distinct columns outside its X
/// rows and their owners, and what it must send in return.
fn halo_facts(a: &GlobalPattern<'_>, r: &Ranges, owner: &[u32]) -> Vec<HaloFacts> {
    let p = r.p();
    let mut f = vec![HaloFacts::default(); p];
    let mut seen = vec![0u32; a.ncols];
    let mut peer = vec![0u32; p];
    for q in 0..p {
        let stamp = q as u32 + 1;
        let (x0, x1) = (r.xrows[q], r.xrows[q + 1]);
        let (e0, e1) = (a.row_ptr[r.rows[q]], a.row_ptr[r.rows[q + 1]]);
        for (&c, &o) in a.cols[e0..e1].iter().zip(&owner[e0..e1]) {
            if (x0..x1).contains(&c) || seen[c] == stamp {
                continue;
            }
            seen[c] = stamp;
            let o = o as usize;
            f[q].recv_rows += 1;
            f[o].send_rows += 1;
            if peer[o] != stamp {
                peer[o] = stamp;
                f[q].recv_peers += 1;
                f[o].send_peers += 1;
            }
        }
        let r0 = r.rows[q];
        let s = model::inner_split(
            r.rows[q + 1] - r0,
            |i| a.row_ptr[r0 + i]..a.row_ptr[r0 + i + 1],
            |e| a.cols[e],
            x0..x1,
        );
        f[q].inner_nnz = s.inner_nnz;
        f[q].near_rows = s.near.len();
    }
    f
}

/// Every candidate algorithm and grid at `p` ranks for Y = A X with k columns of `w`-byte
/// values (all of `Algorithm::ALL`, the one-sided ones included), with `chosen` the model's
/// pick without a memory limit.
#[allow(clippy::too_many_arguments)]
pub fn project_spmm(
    a: &GlobalPattern<'_>,
    p: usize,
    k: usize,
    w: usize,
    layout: Layout,
    net: NetParams,
    rate: &LocalRate,
) -> (Vec<Candidate>, usize) {
    let p = p.max(1);
    let r = even_ranges(a.nrows(), a.ncols, p);
    let owner: Vec<u32> = a.cols.iter().map(|&c| r.x_owner(c) as u32).collect();
    let nnz_local: Vec<usize> = (0..p)
        .map(|q| a.row_ptr[r.rows[q + 1]] - a.row_ptr[r.rows[q]])
        .collect();
    let facts = halo_facts(a, &r, &owner);
    let sh = Shape {
        r: &r,
        k,
        w,
        layout,
        nnz_local: &nnz_local,
        halo: &facts,
    };
    let mut out = Vec::new();
    for alg in Algorithm::ALL {
        for g in model::grids(alg, p, None, None) {
            let t = tile_table(a, &r, &owner, g);
            if !widths_fit(alg, &r, g, &t.n_stages) {
                continue;
            }
            out.push(model::candidate(alg, &sh, &t, net, rate, 0));
        }
    }
    let chosen = model::best_within(&out, usize::MAX).unwrap_or(0);
    (out, chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1D Laplacian (tridiagonal) of n rows: each rank's halo is its two neighbours'
    /// boundary rows.
    fn tridiag(n: usize) -> (Vec<usize>, Vec<usize>) {
        let (mut rp, mut c) = (vec![0], Vec::new());
        for i in 0..n {
            for j in i.saturating_sub(1)..(i + 2).min(n) {
                c.push(j);
            }
            rp.push(c.len());
        }
        (rp, c)
    }

    #[test]
    fn halo_of_a_band_is_the_neighbours_rows() {
        let (rp, c) = tridiag(100);
        let a = GlobalPattern {
            ncols: 100,
            row_ptr: &rp,
            cols: &c,
        };
        let r = even_ranges(100, 100, 4);
        let owner: Vec<u32> = c.iter().map(|&x| r.x_owner(x) as u32).collect();
        let f = halo_facts(&a, &r, &owner);
        // 25 rows each: too few for an inner run, so the near rows are the rows the
        // block's own columns name (all 25).
        let want = |rows, peers| HaloFacts {
            recv_rows: rows,
            recv_peers: peers,
            send_rows: rows,
            send_peers: peers,
            inner_nnz: 0,
            near_rows: 25,
        };
        assert_eq!(f, vec![want(1, 1), want(2, 2), want(2, 2), want(1, 1)]);
    }

    #[test]
    fn inner_run_is_the_longest_run_reading_no_halo() {
        // Rank 0 of two on a tridiagonal 10000 x 10000: row 4999 reads row 5000 of X.
        let (rp, c) = tridiag(10_000);
        let row = |i: usize| rp[i]..rp[i + 1];
        let s = model::inner_split(5000, row, |e| c[e], 0..5000);
        assert_eq!(s.inner, 0..4999);
        assert_eq!(s.inner_nnz, 2 + 3 * 4998);
        assert_eq!(s.near, vec![4998, 4999]);
        // Rank 1: row 5000 (local 0) reads row 4999.
        let row1 = |i: usize| rp[5000 + i]..rp[5001 + i];
        let s = model::inner_split(5000, row1, |e| c[e], 5000..10_000);
        assert_eq!(s.inner, 1..5000);
        assert_eq!(s.near, vec![0, 1]);
        // A far entry in row 1500: the longer run after it is taken, rows before it and
        // the last row read the near rows.
        let mut cf = c.clone();
        cf[rp[1500]] = 9000;
        let s = model::inner_split(5000, row, |e| cf[e], 0..5000);
        assert_eq!(s.inner, 1501..4999);
        assert_eq!(s.near.len(), 1502 + 2);
        // No halo: every row is inner, nothing is near, however short.
        let s = model::inner_split(10, |i| rp[i]..rp[i + 1], |e| c[e], 0..10_000);
        assert_eq!((s.inner, s.near.len()), (0..10, 0));
        // Too short a run (under INNER_MIN_ROWS): no inner run.
        let s = model::inner_split(600, row1, |e| c[e], 5000..5600);
        assert_eq!((s.inner, s.inner_nnz), (0..0, 0));
        assert_eq!(s.near.len(), 600);
    }

    #[test]
    fn tiles_hold_every_entry_once() {
        let (rp, c) = tridiag(1000);
        let a = GlobalPattern {
            ncols: 1000,
            row_ptr: &rp,
            cols: &c,
        };
        let r = even_ranges(1000, 1000, 16);
        let owner: Vec<u32> = c.iter().map(|&x| r.x_owner(x) as u32).collect();
        for g in [
            Grid { pr: 4, pc: 4 },
            Grid { pr: 8, pc: 2 },
            Grid { pr: 16, pc: 1 },
        ] {
            let t = tile_table(&a, &r, &owner, g);
            assert_eq!(t.sa.iter().sum::<usize>(), c.len());
            assert_eq!(t.sc.iter().sum::<usize>(), c.len());
        }
    }

    #[test]
    fn projection_offers_every_algorithm_and_prefers_the_halo_on_a_band() {
        let (rp, c) = tridiag(1 << 16);
        let a = GlobalPattern {
            ncols: 1 << 16,
            row_ptr: &rp,
            cols: &c,
        };
        let net = NetParams {
            alpha_s: 2e-6,
            beta_s_per_byte: 1e-10,
            async_gets: true,
        };
        let rate = LocalRate {
            call_s: 1e-6,
            per_entry_col_s: [2e-9, 1e-9, 5e-10],
        };
        let (cands, chosen) = project_spmm(&a, 64, 16, 8, Layout::RowMajor, net, &rate);
        for alg in Algorithm::ALL {
            assert!(cands.iter().any(|c| c.algorithm == alg), "{alg:?}");
        }
        assert_eq!(cands[chosen].algorithm, Algorithm::Halo1D);
        // The halo moves two rows per neighbour and rank: 2 * 2 * 62 + 2 * 1 rows of k.
        let halo = cands
            .iter()
            .find(|c| c.algorithm == Algorithm::Halo1D)
            .unwrap();
        assert_eq!(halo.bytes_total, ((2 * 62 + 2) * 16 * 8) as f64);
    }

    #[test]
    fn gets_overlap_products_only_where_they_progress_alone() {
        // A random pattern (every tile holds entries), 16 ranks: the asynchronous
        // algorithms' gets hide behind the products with progress, add to them without.
        let n = 4096;
        let (mut rp, mut c) = (vec![0], Vec::new());
        for i in 0..n {
            for t in 0..8 {
                c.push((i * 7919 + t * 104_729) % n);
            }
            rp.push(c.len());
        }
        let a = GlobalPattern {
            ncols: n,
            row_ptr: &rp,
            cols: &c,
        };
        let rate = LocalRate {
            call_s: 1e-6,
            per_entry_col_s: [2e-9, 1e-9, 5e-10],
        };
        let net = |async_gets| NetParams {
            alpha_s: 2e-6,
            beta_s_per_byte: 1e-9,
            async_gets,
        };
        let run = |g| project_spmm(&a, 16, 64, 8, Layout::RowMajor, net(g), &rate).0;
        let (with, without) = (run(true), run(false));
        for (x, y) in with.iter().zip(&without) {
            assert_eq!((x.algorithm, x.grid), (y.algorithm, y.grid));
            assert_eq!(x.comp_s, y.comp_s);
            match x.algorithm {
                Algorithm::SA2DAsync | Algorithm::SC2DAsync => {
                    assert!(y.comm_s > x.comm_s, "{:?} {:?}", x.algorithm, x.grid)
                }
                _ => assert_eq!(x.comm_s, y.comm_s),
            }
        }
    }
}
