//! Where everything lives: the callers' row ranges, the process grid, the stages of the
//! 2D algorithms, and which tile of A each global column falls in. Pure functions of
//! global facts, so every rank computes the same answers without communicating.

/// The callers' 1D distribution, in rank order: rank q owns rows `rows[q]..rows[q + 1]` of
/// A and Y and rows `xrows[q]..xrows[q + 1]` of X.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ranges {
    pub rows: Vec<usize>,
    pub xrows: Vec<usize>,
}

impl Ranges {
    pub fn p(&self) -> usize {
        self.rows.len() - 1
    }
    pub fn m(&self) -> usize {
        self.rows[self.p()]
    }
    pub fn n(&self) -> usize {
        self.xrows[self.p()]
    }
    pub fn yr(&self, q: usize) -> usize {
        self.rows[q + 1] - self.rows[q]
    }
    pub fn xr(&self, q: usize) -> usize {
        self.xrows[q + 1] - self.xrows[q]
    }
    /// The rank owning X row (= A column) `g`.
    pub fn x_owner(&self, g: usize) -> usize {
        self.xrows.partition_point(|&s| s <= g) - 1
    }
}

/// A pr x pc process grid; rank q sits at row q / pc, column q % pc, so a grid row is a
/// run of consecutive ranks and owns consecutive rows of A and Y.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Grid {
    pub pr: usize,
    pub pc: usize,
}

impl Grid {
    pub fn rank(&self, i: usize, j: usize) -> usize {
        i * self.pc + j
    }
    pub fn coords(&self, q: usize) -> (usize, usize) {
        (q / self.pc, q % self.pc)
    }
    /// The near-square grid for p ranks: pr the largest divisor of p up to sqrt(p)
    /// (p = 2, 3, 5: 1 x p; 4: 2 x 2; 6: 2 x 3; 8: 2 x 4; 9: 3 x 3).
    pub fn near_square(p: usize) -> Grid {
        let mut pr = 1;
        let mut d = 1;
        while d * d <= p {
            if p.is_multiple_of(d) {
                pr = d;
            }
            d += 1;
        }
        Grid { pr, pc: p / pr }
    }
    pub fn transposed(&self) -> Grid {
        Grid {
            pr: self.pc,
            pc: self.pr,
        }
    }
}

/// Part `s` of `0..n` cut into `parts` near-equal pieces.
pub fn split(n: usize, parts: usize, s: usize) -> (usize, usize) {
    (s * n / parts, (s + 1) * n / parts)
}

/// A stage of the 2D A-stationary algorithm: columns `k0..k1` of X and Y; X's block of the
/// stage lives in grid row `xo` (of the pr-way split of k), Y's in grid column `yo` (of the
/// pc-way split). The stages are the common refinement of the two splits (at most
/// pr + pc - 1, sqrt(p) on a square grid), empty pieces dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KStage {
    pub k0: usize,
    pub k1: usize,
    pub xo: usize,
    pub yo: usize,
}

impl KStage {
    pub fn width(&self) -> usize {
        self.k1 - self.k0
    }
}

pub fn k_stages(k: usize, g: Grid) -> Vec<KStage> {
    let mut cuts: Vec<usize> = (0..=g.pr)
        .map(|s| s * k / g.pr)
        .chain((0..=g.pc).map(|s| s * k / g.pc))
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .filter(|w| w[1] > w[0])
        .map(|w| KStage {
            k0: w[0],
            k1: w[1],
            xo: (0..g.pr).find(|&s| split(k, g.pr, s).1 > w[0]).unwrap_or(0),
            yo: (0..g.pc).find(|&s| split(k, g.pc, s).1 > w[0]).unwrap_or(0),
        })
        .collect()
}

/// A stage of the 2D C-stationary algorithm (SUMMA): the X rows (A columns) of ranks
/// `g0..g1`. A's column block of the stage lives in grid column `ao` (A's columns cut into
/// pc blocks of pr consecutive ranks' X rows), X's row block in grid row `xo` (X's rows cut
/// into pr blocks of pc consecutive ranks' rows, i.e. grid row xo's own). The stages are
/// the common refinement (at most pr + pc - 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NStage {
    pub g0: usize,
    pub g1: usize,
    pub ao: usize,
    pub xo: usize,
}

pub fn n_stages(g: Grid) -> Vec<NStage> {
    let p = g.pr * g.pc;
    let mut cuts: Vec<usize> = (0..=g.pc)
        .map(|s| s * g.pr)
        .chain((0..=g.pr).map(|s| s * g.pc))
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts.windows(2)
        .filter(|w| w[1] > w[0] && w[0] < p)
        .map(|w| NStage {
            g0: w[0],
            g1: w[1],
            ao: w[0] / g.pr,
            xo: w[0] / g.pc,
        })
        .collect()
}

/// How A's columns fall into tiles: column `c` owned (as an X row) by rank q lies in tile
/// `tile_of_rank[q]` at local id `base[q] + c - xrows[q]`. A tile's columns are the rows of
/// the X block its owner multiplies with, in that block's order.
#[derive(Clone, Debug)]
pub struct ColMap {
    pub tile_of_rank: Vec<usize>,
    pub base: Vec<usize>,
    /// Columns of each tile.
    pub width: Vec<usize>,
    /// Grid column that owns each tile (within every grid row).
    pub owner_col: Vec<usize>,
}

impl ColMap {
    pub fn tiles(&self) -> usize {
        self.width.len()
    }

    /// A-stationary tiles: tile j holds the X rows of the ranks of grid column j,
    /// concatenated in rank order (what an allgather in the grid column assembles).
    pub fn strided(r: &Ranges, g: Grid) -> ColMap {
        let p = r.p();
        let mut width = vec![0usize; g.pc];
        let mut base = vec![0usize; p];
        let mut tile_of_rank = vec![0usize; p];
        for q in 0..p {
            let j = q % g.pc;
            tile_of_rank[q] = j;
            base[q] = width[j];
            width[j] += r.xr(q);
        }
        ColMap {
            tile_of_rank,
            base,
            width,
            owner_col: (0..g.pc).collect(),
        }
    }

    /// C-stationary tiles: one per stage, its contiguous X rows.
    pub fn staged(r: &Ranges, stages: &[NStage]) -> ColMap {
        let p = r.p();
        let mut tile_of_rank = vec![0usize; p];
        let mut base = vec![0usize; p];
        let mut width = Vec::with_capacity(stages.len());
        for (t, s) in stages.iter().enumerate() {
            for q in s.g0..s.g1 {
                tile_of_rank[q] = t;
                base[q] = r.xrows[q] - r.xrows[s.g0];
            }
            width.push(r.xrows[s.g1] - r.xrows[s.g0]);
        }
        ColMap {
            tile_of_rank,
            base,
            width,
            owner_col: stages.iter().map(|s| s.ao).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_and_stages() {
        assert_eq!(Grid::near_square(1), Grid { pr: 1, pc: 1 });
        assert_eq!(Grid::near_square(2), Grid { pr: 1, pc: 2 });
        assert_eq!(Grid::near_square(3), Grid { pr: 1, pc: 3 });
        assert_eq!(Grid::near_square(4), Grid { pr: 2, pc: 2 });
        assert_eq!(Grid::near_square(6), Grid { pr: 2, pc: 3 });
        assert_eq!(Grid::near_square(12), Grid { pr: 3, pc: 4 });
        let g = Grid { pr: 2, pc: 3 };
        let ks = k_stages(12, g);
        let cuts: Vec<_> = ks.iter().map(|s| (s.k0, s.k1, s.xo, s.yo)).collect();
        assert_eq!(
            cuts,
            vec![(0, 4, 0, 0), (4, 6, 0, 1), (6, 8, 1, 1), (8, 12, 1, 2)]
        );
        // k = 1 on a 2 x 2 grid: one stage, owned by the second part of each split.
        let ks = k_stages(1, Grid { pr: 2, pc: 2 });
        assert_eq!(ks.len(), 1);
        assert_eq!((ks[0].xo, ks[0].yo), (1, 1));
        let ns = n_stages(g);
        let cuts: Vec<_> = ns.iter().map(|s| (s.g0, s.g1, s.ao, s.xo)).collect();
        assert_eq!(
            cuts,
            vec![(0, 2, 0, 0), (2, 3, 1, 0), (3, 4, 1, 1), (4, 6, 2, 1)]
        );
    }

    #[test]
    fn column_maps() {
        let r = Ranges {
            rows: vec![0, 3, 3, 7, 10],
            xrows: vec![0, 2, 5, 5, 9],
        };
        assert_eq!(r.x_owner(0), 0);
        assert_eq!(r.x_owner(2), 1);
        assert_eq!(r.x_owner(5), 3);
        let g = Grid { pr: 2, pc: 2 };
        let cm = ColMap::strided(&r, g);
        assert_eq!(cm.width, vec![2, 7]);
        assert_eq!(cm.base, vec![0, 0, 2, 3]);
        let st = n_stages(g);
        let cm = ColMap::staged(&r, &st);
        assert_eq!(cm.width, vec![5, 4]);
        assert_eq!(cm.owner_col, vec![0, 1]);
    }
}
