//! In-memory generators of the benchmark inputs of `shared/anchors/gen_matrices.py`, so the
//! benchmark can run without the Matrix Market files (`--a gen:NAME`) and can write the
//! same inputs for the peers' drivers (`spgemm-bench gen OUTDIR`).
//!
//! Deterministic families (`lap3d_7pt_N`, `lap3d_27pt_N`, `elast2d_q1_N`, `elast3d_p1_N`,
//! the structure of `banded_500k_7`) follow pyamg's gallery constructions (poisson,
//! stencil_grid, linear_elasticity Q1 with its Dirichlet restriction, linear_elasticity_p1
//! on the Freudenthal tetrahedra of gen_matrices.py) entry for entry: lap3d_* and elast2d
//! equal the .mtx files bit for bit. elast3d_p1 keeps the explicit zeros of its dense
//! 3 x 3 node blocks: in gen_matrices.py's file those positions hold rounding noise of
//! LAPACK's 4 x 4 inverses (|v| <= 6e-13 against entries up to 2e4; 230070 of them at
//! N = 22, all but 900 of the block positions), which our exact-cancelling arithmetic
//! makes 0.0; dropping them would leave 17% less work than the file gives the peers,
//! keeping them gives 0.07% more (1335294 stored entries vs 1334394). Random families
//! (`rmat_16`, `er_uniform_200k`, `rect_*`, banded values) use our own xoshiro256**
//! generator seeded with gen_matrices.py's seeds: sizes, nnz-per-row distribution and value
//! ranges match numpy's, the individual draws do not.
//!
//! `sa_poisson_*` and `sa_elast_*` are the first level of pyamg's smoothed_aggregation_solver
//! with its defaults: symmetric strength with theta 0 (the structure of A, explicit zeros
//! included), standard aggregation, candidates B improved by 4 symmetric Gauss-Seidel
//! sweeps on A x = 0, the tentative prolongator from a Gram-Schmidt QR of each aggregate's
//! block of B (fit_candidates), Jacobi smoothing P = T - (4/3)/rho D^-1 A T with rho from a
//! restarted 15-step Krylov estimate of rho(D^-1 A). pyamg uses Arnoldi on D^-1 A from a
//! numpy random start; we use Lanczos on the similar D^-1/2 A D^-1/2 from our own random
//! start, so rho (and P's values) differ slightly; the aggregates and the structure do not.
//! AP = A*P is formed here with a plain row-by-row product (never by the library).

use crate::mtx::{Csr, coo_to_csr};

/// The operators of the first two levels of a generated SA hierarchy: A, P, R = P^T,
/// AP = A*P and RA = R*A of levels 0 and 1.
macro_rules! sa_levels {
    ($h:literal) => {
        [
            concat!($h, "_A0"),
            concat!($h, "_P0"),
            concat!($h, "_R0"),
            concat!($h, "_AP0"),
            concat!($h, "_RA0"),
            concat!($h, "_A1"),
            concat!($h, "_P1"),
            concat!($h, "_R1"),
            concat!($h, "_AP1"),
            concat!($h, "_RA1"),
        ]
    };
}

/// Every matrix the generator knows by its gen_matrices.py name, grouped as there
/// (a group is built at once: the SA operators share their setup).
pub const GROUPS: &[(&str, &[&str])] = &[
    ("lap3d_7pt", &["lap3d_7pt_64"]),
    ("lap3d_27pt", &["lap3d_27pt_42"]),
    ("elast2d", &["elast2d_q1_196"]),
    ("elast3d", &["elast3d_p1_22"]),
    (
        "sa_poisson",
        &[
            "sa_poisson_A",
            "sa_poisson_P",
            "sa_poisson_R",
            "sa_poisson_AP",
        ],
    ),
    (
        "sa_elast",
        &["sa_elast_A", "sa_elast_P", "sa_elast_R", "sa_elast_AP"],
    ),
    ("rmat", &["rmat_16"]),
    ("er", &["er_uniform_200k"]),
    ("banded", &["banded_500k_7"]),
    ("rect", &["rect_A_200kx2k", "rect_B_2kx50k"]),
];

/// Groups generated only when named (`--only GROUP` or one of its matrices): the GPU
/// benchmark's irregular, low-compression classes (products ~ nnz(C): hub, power-law,
/// circuit, R-MAT) and the CPU tuning corpus of classes the public benchmark lacks
/// (SA hierarchies of rotated anisotropic diffusion and of 3D elasticity, R-MAT of other
/// scales and edge factors, hub, power-law and circuit inputs of other shapes). Our own
/// seeds, sizes and parameters.
pub const NAMED_ONLY: &[(&str, &[&str])] = &[
    (
        "irregular",
        &["hub_300k", "zipf_1m", "circuit_200k", "rmat_18s"],
    ),
    (
        "aniso",
        [
            sa_levels!("aniso_r22"),
            sa_levels!("aniso_r60"),
            sa_levels!("aniso_x0"),
        ]
        .as_flattened(),
    ),
    ("elast_sa", &sa_levels!("elast_sa26")),
    (
        "graphs",
        &[
            "rmat_17e4",
            "rmat_19e1",
            "hub_500k",
            "zipf_400k",
            "circuit_400k",
        ],
    ),
];

/// Hierarchies of `aniso`: (name, grid side n, anisotropy eps, angle in degrees). The
/// matrix is the bilinear finite-element discretisation of -div(D grad u) on the unit
/// square (Dirichlet boundary), D = Q diag(1, eps) Q^T with Q the rotation by the angle:
/// n^2 rows of 9-point stencils. Strength: symmetric, theta = 0.25 (line-like aggregates).
const ANISO: &[(&str, usize, f64, f64)] = &[
    ("aniso_r22", 700, 1e-3, 22.5),
    ("aniso_r60", 450, 1e-2, 60.0),
    ("aniso_x0", 500, 1e-3, 0.0),
];

/// Strength threshold of the anisotropic hierarchies.
const ANISO_THETA: f64 = 0.25;

/// Levels with products of a generated hierarchy (each gives A*P, R*(AP), R*A, (RA)*P).
const SA_PRODUCT_LEVELS: usize = 2;

/// Usage text of the names `gen:NAME` accepts.
pub const NAMES_HELP: &str = "lap3d_7pt_N, lap3d_27pt_N, elast2d_q1_N, elast3d_p1_N (any N >= 2; \
gen_matrices.py uses 64, 42, 196, 22), rmat_16, er_uniform_200k, banded_500k_7, rect_A_200kx2k, \
rect_B_2kx50k, sa_poisson_{A,P,R,AP}, sa_elast_{A,P,R,AP}, hub_300k, zipf_1m, circuit_200k, rmat_18s, \
{aniso_r22,aniso_r60,aniso_x0,elast_sa26}_{A,P,R,AP,RA}{0,1}, rmat_17e4, rmat_19e1, hub_500k, zipf_400k, \
circuit_400k";

/// Group of a matrix name (also for the parametrised grid families), or None.
pub fn group_of(name: &str) -> Option<&'static str> {
    if let Some((g, _)) = GROUPS
        .iter()
        .chain(NAMED_ONLY)
        .find(|(_, ns)| ns.contains(&name))
    {
        return Some(g);
    }
    for (prefix, g) in [
        ("lap3d_7pt_", "lap3d_7pt"),
        ("lap3d_27pt_", "lap3d_27pt"),
        ("elast2d_q1_", "elast2d"),
        ("elast3d_p1_", "elast3d"),
    ] {
        if grid_size(name, prefix).is_some() {
            return Some(g);
        }
    }
    None
}

fn grid_size(name: &str, prefix: &str) -> Option<usize> {
    name.strip_prefix(prefix)?
        .parse::<usize>()
        .ok()
        .filter(|&n| n >= 2)
}

/// The matrix `name` (see NAMES_HELP).
pub fn generate(name: &str) -> Result<Csr, String> {
    generate_group_of(name)?
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, m)| m)
        .ok_or_else(|| format!("gen:{name}: unknown matrix (known: {NAMES_HELP})"))
}

/// The first smoothed-aggregation level of `a` with candidates `b` (pyamg's defaults, seed
/// 777 as in gen_matrices.py), as the operators `{prefix}_A`, `_P`, `_R` and `_AP`.
fn sa_group(prefix: &str, a: Csr, b: &[Vec<f64>]) -> Vec<(String, Csr)> {
    let l = sa_level(&a, b, 777);
    eprintln!(
        "[gen] {prefix}: {} aggregates, rho(D^-1 A) ~ {}",
        l.n_aggregates, l.rho
    );
    [("A", a), ("P", l.p), ("R", l.r), ("AP", l.ap)]
        .into_iter()
        .map(|(op, m)| (format!("{prefix}_{op}"), m))
        .collect()
}

/// All matrices of the group `name` belongs to (the whole SA level for one of its
/// operators), named.
pub fn generate_group_of(name: &str) -> Result<Vec<(String, Csr)>, String> {
    let one = |m: Csr| Ok(vec![(name.to_string(), m)]);
    if let Some(n) = grid_size(name, "lap3d_7pt_") {
        return one(lap3d_7pt(n));
    }
    if let Some(n) = grid_size(name, "lap3d_27pt_") {
        return one(lap3d_27pt(n));
    }
    if let Some(n) = grid_size(name, "elast2d_q1_") {
        return one(without_zeros(&elasticity_2d(n)));
    }
    if let Some(n) = grid_size(name, "elast3d_p1_") {
        return one(elasticity_3d(n).0);
    }
    let named = |v: Vec<(&str, Csr)>| -> Result<Vec<(String, Csr)>, String> {
        Ok(v.into_iter().map(|(n, m)| (n.to_string(), m)).collect())
    };
    match group_of(name) {
        Some("sa_poisson") => {
            let a = lap3d_7pt(60);
            let ones = vec![vec![1.0; a.nrows]];
            Ok(sa_group("sa_poisson", a, &ones))
        }
        Some("sa_elast") => {
            let (a, b) = elasticity_3d(22);
            Ok(sa_group("sa_elast", a, &b))
        }
        Some("rmat") => named(vec![("rmat_16", rmat(16, 16, 16016))]),
        Some("er") => named(vec![(
            "er_uniform_200k",
            random_rows(200_000, 200_000, 8, 2008),
        )]),
        Some("banded") => named(vec![(
            "banded_500k_7",
            banded(500_000, &[-3, -2, -1, 0, 1, 2, 3], 5007),
        )]),
        Some("irregular") => named(vec![
            ("hub_300k", hub(300_000, 5, 50_000, 6101)),
            ("zipf_1m", zipf(1_000_000, 6202)),
            ("circuit_200k", circuit(200_000, 4, 12, 1500, 6303)),
            ("rmat_18s", rmat_edges(18, 7 * (1 << 18) / 4, 6404)),
        ]),
        Some("aniso") => Ok(ANISO
            .iter()
            .enumerate()
            .flat_map(|(t, &(h, n, eps, deg))| {
                let a = aniso_2d(n, eps, deg);
                let ones = vec![vec![1.0; a.nrows]];
                sa_hierarchy(h, a, ones, ANISO_THETA, 7100 + t as u64)
            })
            .collect()),
        Some("elast_sa") => {
            let (a, b) = elasticity_3d(26);
            Ok(sa_hierarchy("elast_sa26", a, b, 0.0, 7200))
        }
        Some("graphs") => named(vec![
            ("rmat_17e4", rmat(17, 4, 7301)),
            ("rmat_19e1", rmat(19, 1, 7302)),
            ("hub_500k", hub(500_000, 3, 100_000, 7303)),
            ("zipf_400k", zipf(400_000, 7304)),
            ("circuit_400k", circuit(400_000, 2, 30, 800, 7305)),
        ]),
        Some("rect") => named(vec![
            ("rect_A_200kx2k", random_rows(200_000, 2_000, 4, 4242)),
            ("rect_B_2kx50k", random_rows(2_000, 50_000, 25, 4343)),
        ]),
        _ => Err(format!("gen:{name}: unknown matrix (known: {NAMES_HELP})")),
    }
}

// ------------------------------------------------------------------ random numbers

/// xoshiro256** (Blackman and Vigna), state filled by splitmix64 from the seed.
pub struct Rng([u64; 4]);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Rng([next(), next(), next(), next()])
    }
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let r = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        r
    }
    /// Uniform in [0, 1) (53 random bits).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform integer in [0, n) (multiply-shift; the bias is below 2^-40 for our n).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
    /// gen_matrices.py's rand_vals: uniform in (-1, 1), an exact 0 replaced by 0.5.
    pub fn value(&mut self) -> f64 {
        let v = 2.0 * self.uniform() - 1.0;
        if v == 0.0 { 0.5 } else { v }
    }
}

// ----------------------------------------------------------------- CSR helpers

/// CSR from triplets: duplicates summed in input order, explicit zeros kept.
fn assemble(m: usize, n: usize, ri: Vec<u32>, ci: Vec<u32>, vv: Vec<f64>) -> Csr {
    coo_to_csr(m, n, ri, ci, vv).expect("generated matrices fit int32 offsets")
}

/// A copy of `a` without its explicit zeros (gen_matrices.py's write_mtx drops them).
pub fn without_zeros(a: &Csr) -> Csr {
    keep_entries(a, |_, p| a.val[p] != 0.0)
}

/// The entries p of rows i of `a` for which `keep(i, p)` holds.
fn keep_entries(a: &Csr, keep: impl Fn(usize, usize) -> bool) -> Csr {
    let mut row_ptr = Vec::with_capacity(a.nrows + 1);
    row_ptr.push(0i32);
    let (mut col, mut val) = (Vec::new(), Vec::new());
    for i in 0..a.nrows {
        for p in a.row(i) {
            if keep(i, p) {
                col.push(a.col[p]);
                val.push(a.val[p]);
            }
        }
        row_ptr.push(col.len() as i32);
    }
    Csr {
        nrows: a.nrows,
        ncols: a.ncols,
        row_ptr,
        col,
        val,
    }
}

/// Aᵀ with sorted rows.
pub fn transpose(a: &Csr) -> Csr {
    let mut count = vec![0i32; a.ncols + 1];
    for &j in &a.col {
        count[j as usize + 1] += 1;
    }
    for j in 0..a.ncols {
        count[j + 1] += count[j];
    }
    let mut pos: Vec<usize> = count.iter().map(|&c| c as usize).collect();
    let mut col = vec![0i32; a.nnz()];
    let mut val = vec![0f64; a.nnz()];
    for i in 0..a.nrows {
        for p in a.row(i) {
            let q = &mut pos[a.col[p] as usize];
            col[*q] = i as i32;
            val[*q] = a.val[p];
            *q += 1;
        }
    }
    Csr {
        nrows: a.ncols,
        ncols: a.nrows,
        row_ptr: count,
        col,
        val,
    }
}

/// A*B by rows with a dense accumulator, in A's then B's row order (as scipy's
/// csr_matmat sums), columns sorted, exact zeros dropped (scipy drops them too).
pub fn multiply(a: &Csr, b: &Csr) -> Csr {
    assert_eq!(a.ncols, b.nrows);
    let mut acc = vec![0f64; b.ncols];
    let mut seen = vec![false; b.ncols];
    let mut cols: Vec<usize> = Vec::new();
    let mut row_ptr = vec![0i32];
    let (mut col, mut val) = (Vec::new(), Vec::new());
    for i in 0..a.nrows {
        for p in a.row(i) {
            let k = a.col[p] as usize;
            for q in b.row(k) {
                let j = b.col[q] as usize;
                if !seen[j] {
                    seen[j] = true;
                    cols.push(j);
                }
                acc[j] += a.val[p] * b.val[q];
            }
        }
        cols.sort_unstable();
        for &j in &cols {
            if acc[j] != 0.0 {
                col.push(j as i32);
                val.push(acc[j]);
            }
            acc[j] = 0.0;
            seen[j] = false;
        }
        cols.clear();
        row_ptr.push(col.len() as i32);
    }
    Csr {
        nrows: a.nrows,
        ncols: b.ncols,
        row_ptr,
        col,
        val,
    }
}

// ------------------------------------------------------------- stencil families

/// Row i of an N^3 grid is point (x, y, z) with i = (x N + y) N + z; `points` lists the
/// stencil as (dx, dy, dz, value) in increasing column order.
fn stencil_3d(n: usize, points: &[(i64, i64, i64, f64)]) -> Csr {
    let nn = n * n * n;
    let mut row_ptr = Vec::with_capacity(nn + 1);
    row_ptr.push(0i32);
    let (mut col, mut val) = (Vec::new(), Vec::new());
    let ni = n as i64;
    let inside = |a: i64| (0..ni).contains(&a);
    for x in 0..ni {
        for y in 0..ni {
            for z in 0..ni {
                for &(dx, dy, dz, v) in points {
                    let (a, b, c) = (x + dx, y + dy, z + dz);
                    if inside(a) && inside(b) && inside(c) {
                        col.push(((a * ni + b) * ni + c) as i32);
                        val.push(v);
                    }
                }
                row_ptr.push(col.len() as i32);
            }
        }
    }
    Csr {
        nrows: nn,
        ncols: nn,
        row_ptr,
        col,
        val,
    }
}

/// pyamg gallery.poisson((N, N, N)): 6 on the diagonal, -1 to the 6 neighbours.
pub fn lap3d_7pt(n: usize) -> Csr {
    let mut pts = Vec::new();
    for (dx, dy, dz) in [
        (-1, 0, 0),
        (0, -1, 0),
        (0, 0, -1),
        (0, 0, 0),
        (0, 0, 1),
        (0, 1, 0),
        (1, 0, 0),
    ] {
        let v = if (dx, dy, dz) == (0, 0, 0) { 6.0 } else { -1.0 };
        pts.push((dx, dy, dz, v));
    }
    stencil_3d(n, &pts)
}

/// stencil_grid of the 27-point stencil: 26 on the diagonal, -1 to the 26 neighbours.
pub fn lap3d_27pt(n: usize) -> Csr {
    let mut pts = Vec::new();
    for dx in -1..=1 {
        for dy in -1..=1 {
            for dz in -1..=1 {
                let v = if (dx, dy, dz) == (0, 0, 0) {
                    26.0
                } else {
                    -1.0
                };
                pts.push((dx, dy, dz, v));
            }
        }
    }
    stencil_3d(n, &pts)
}

// -------------------------------------------------------------------- elasticity

/// Rotated anisotropic diffusion on an n x n grid of interior nodes (see [`ANISO`]): the
/// 9-point stencil is summed from the four bilinear elements around a node, each element
/// matrix integrated exactly by 2 x 2 Gauss points; neighbours outside the grid are dropped.
pub fn aniso_2d(n: usize, eps: f64, degrees: f64) -> Csr {
    let (s, c) = degrees.to_radians().sin_cos();
    // D = Q diag(1, eps) Q^T.
    let d = [
        [c * c + eps * s * s, (1.0 - eps) * c * s],
        [(1.0 - eps) * c * s, s * s + eps * c * c],
    ];
    // Corners (x, y) of the unit element; phi_k = (x or 1-x)(y or 1-y).
    let corners = [(0usize, 0usize), (1, 0), (1, 1), (0, 1)];
    let grad = |k: usize, x: f64, y: f64| {
        let (cx, cy) = corners[k];
        let fx = if cx == 1 { x } else { 1.0 - x };
        let fy = if cy == 1 { y } else { 1.0 - y };
        let sx = if cx == 1 { 1.0 } else { -1.0 };
        let sy = if cy == 1 { 1.0 } else { -1.0 };
        [sx * fy, sy * fx]
    };
    let g = 0.5 / 3f64.sqrt();
    let mut ke = [[0f64; 4]; 4];
    for x in [0.5 - g, 0.5 + g] {
        for y in [0.5 - g, 0.5 + g] {
            for (i, row) in ke.iter_mut().enumerate() {
                let gi = grad(i, x, y);
                for (j, v) in row.iter_mut().enumerate() {
                    let gj = grad(j, x, y);
                    let dgj = [
                        d[0][0] * gj[0] + d[0][1] * gj[1],
                        d[1][0] * gj[0] + d[1][1] * gj[1],
                    ];
                    *v += 0.25 * (gi[0] * dgj[0] + gi[1] * dgj[1]);
                }
            }
        }
    }
    // stencil[dx + 1][dy + 1] (pyamg's diffusion_stencil_2d orientation: its first index
    // is the grid's slow one): the node is corner i of the element whose lower-left corner
    // sits at minus corner i; its neighbour at corner j lies at corner j - corner i.
    let mut stencil = [[0f64; 3]; 3];
    for (i, &(xi, yi)) in corners.iter().enumerate() {
        for (j, &(xj, yj)) in corners.iter().enumerate() {
            let dx = xj as i64 - xi as i64;
            let dy = yj as i64 - yi as i64;
            stencil[(dx + 1) as usize][(dy + 1) as usize] += ke[i][j];
        }
    }
    let (mut ri, mut ci, mut vv) = (Vec::new(), Vec::new(), Vec::new());
    let nn = n as i64;
    for y in 0..nn {
        for x in 0..nn {
            for (dy, srow) in (-1i64..=1).zip(stencil) {
                for (dx, v) in (-1i64..=1).zip(srow) {
                    let (xx, yy) = (x + dx, y + dy);
                    if (0..nn).contains(&xx) && (0..nn).contains(&yy) && v != 0.0 {
                        ri.push((y * nn + x) as u32);
                        ci.push((yy * nn + xx) as u32);
                        vv.push(v);
                    }
                }
            }
        }
    }
    assemble(n * n, n * n, ri, ci, vv)
}

/// pyamg's material constants (E = 1e5, nu = 0.3): Lame's first parameter and the
/// shear modulus, in pyamg's order of operations.
fn lame_mu() -> (f64, f64) {
    let (e, nu) = (1e5f64, 0.3f64);
    (
        e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
        e / (2.0 + 2.0 * nu),
    )
}

/// pyamg's q12d_local for the unit square (F = I, det F = 1): 8 x 8, dofs x0 y0 x1 y1 ...
/// counter-clockwise from the lower left corner.
fn q1_local() -> [[f64; 8]; 8] {
    let (lame, mu) = lame_mu();
    let m = lame + 2.0 * mu;
    let r11: [[f64; 4]; 4] = [
        [2.0, -2.0, -1.0, 1.0],
        [-2.0, 2.0, 1.0, -1.0],
        [-1.0, 1.0, 2.0, -2.0],
        [1.0, -1.0, -2.0, 2.0],
    ]
    .map(|r| r.map(|x| x / 6.0));
    let r12: [[f64; 4]; 4] = [
        [1.0, 1.0, -1.0, -1.0],
        [-1.0, -1.0, 1.0, 1.0],
        [-1.0, -1.0, 1.0, 1.0],
        [1.0, 1.0, -1.0, -1.0],
    ]
    .map(|r| r.map(|x| x / 4.0));
    let r22: [[f64; 4]; 4] = [
        [2.0, 1.0, -1.0, -2.0],
        [1.0, 2.0, -2.0, -1.0],
        [-1.0, -2.0, 2.0, 1.0],
        [-2.0, -1.0, 1.0, 2.0],
    ]
    .map(|r| r.map(|x| x / 6.0));
    // E[0,0] R11 + E[0,1] R12 + E[1,0] R12^T + E[1,1] R22, left to right as numpy does.
    let comb = |e: [[f64; 2]; 2], i: usize, j: usize| {
        e[0][0] * r11[i][j] + e[0][1] * r12[i][j] + e[1][0] * r12[j][i] + e[1][1] * r22[i][j]
    };
    let mut k = [[0f64; 8]; 8];
    for i in 0..4 {
        for j in 0..4 {
            k[2 * i][2 * j] = comb([[m, 0.0], [0.0, mu]], i, j);
            k[2 * i + 1][2 * j + 1] = comb([[mu, 0.0], [0.0, m]], i, j);
            k[2 * i + 1][2 * j] = comb([[0.0, mu], [lame, 0.0]], i, j);
        }
    }
    for i in 0..4 {
        for j in 0..4 {
            k[2 * i][2 * j + 1] = k[2 * j + 1][2 * i];
        }
    }
    k
}

/// pyamg gallery.linear_elasticity((n, n)): Q1 on an (n+1) x (n+1) element grid whose
/// boundary nodes are removed (Dirichlet), 2 n^2 dofs, explicit zeros kept.
pub fn elasticity_2d(n: usize) -> Csr {
    let (x, y) = (n + 1, n + 1);
    let k = q1_local();
    // pyamg's element dof offsets from 2 * (lower left node).
    let off = [0, 1, 2, 3, 2 * x + 4, 2 * x + 5, 2 * x + 2, 2 * x + 3];
    let interior = |d: usize| -> Option<u32> {
        let (node, comp) = (d / 2, d % 2);
        let (a, b) = (node / (y + 1), node % (y + 1));
        ((1..x).contains(&a) && (1..y).contains(&b))
            .then(|| (2 * ((a - 1) * (y - 1) + (b - 1)) + comp) as u32)
    };
    let (mut ri, mut ci, mut vv) = (Vec::new(), Vec::new(), Vec::new());
    for a in 0..x {
        for b in 0..y {
            let base = 2 * (a * (y + 1) + b);
            for (r, kr) in k.iter().enumerate() {
                for (c, &kv) in kr.iter().enumerate() {
                    // pyamg: row base + off[c], column base + off[r], value K[r][c].
                    if let (Some(i), Some(j)) = (interior(base + off[c]), interior(base + off[r])) {
                        ri.push(i);
                        ci.push(j);
                        vv.push(kv);
                    }
                }
            }
        }
    }
    let nd = 2 * (x - 1) * (y - 1);
    assemble(nd, nd, ri, ci, vv)
}

/// Inverse and determinant of a 4 x 4 matrix (Gauss-Jordan with partial pivoting).
fn inv4(a: [[f64; 4]; 4]) -> ([[f64; 4]; 4], f64) {
    let mut m = a;
    let mut inv = [[0f64; 4]; 4];
    for (i, r) in inv.iter_mut().enumerate() {
        r[i] = 1.0;
    }
    let mut det = 1.0;
    for c in 0..4 {
        let p = (c..4)
            .max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))
            .unwrap();
        if p != c {
            m.swap(p, c);
            inv.swap(p, c);
            det = -det;
        }
        let d = m[c][c];
        det *= d;
        for j in 0..4 {
            m[c][j] /= d;
            inv[c][j] /= d;
        }
        for i in 0..4 {
            if i != c {
                let f = m[i][c];
                for j in 0..4 {
                    m[i][j] -= f * m[c][j];
                    inv[i][j] -= f * inv[c][j];
                }
            }
        }
    }
    (inv, det)
}

/// pyamg's p13d_local: det(A)/6 * Rᵀ C R for one tetrahedron.
fn p1_local(v: [[f64; 3]; 4], lame: f64, mu: f64) -> [[f64; 12]; 12] {
    let mut a = [[1f64; 4]; 4];
    for (t, p) in v.iter().enumerate() {
        for d in 0..3 {
            a[1 + d][t] = p[d];
        }
    }
    let (inv, det) = inv4(a);
    // grad[t][d] = inv(A)[t][1 + d].
    let mut r = [[0f64; 12]; 6];
    for t in 0..4 {
        let g = [inv[t][1], inv[t][2], inv[t][3]];
        for (row, d) in [(0, 0), (3, 1), (4, 2)] {
            r[row][3 * t] = g[d];
        }
        for (row, d) in [(3, 0), (1, 1), (5, 2)] {
            r[row][3 * t + 1] = g[d];
        }
        for (row, d) in [(4, 0), (5, 1), (2, 2)] {
            r[row][3 * t + 2] = g[d];
        }
    }
    let mut c = [[0f64; 6]; 6];
    for (i, row) in c.iter_mut().enumerate().take(3) {
        for (j, x) in row.iter_mut().enumerate().take(3) {
            *x = lame + if i == j { 2.0 * mu } else { 0.0 };
        }
    }
    for (i, row) in c.iter_mut().enumerate().skip(3) {
        row[i] = mu;
    }
    let mut rtc = [[0f64; 6]; 12];
    for i in 0..12 {
        for j in 0..6 {
            rtc[i][j] = (0..6).map(|k| r[k][i] * c[k][j]).sum();
        }
    }
    let s = det / 6.0;
    let mut k = [[0f64; 12]; 12];
    for i in 0..12 {
        for j in 0..12 {
            k[i][j] = s * (0..6).map(|q| rtc[i][q] * r[q][j]).sum::<f64>();
        }
    }
    k
}

/// gen_matrices.py's elasticity_3d: P1 elasticity on n^3 vertices of the unit cube, each
/// cube split into 6 positively oriented Freudenthal tetrahedra (pyamg
/// linear_elasticity_p1). Returns A with its explicit zeros (dense 3 x 3 node blocks, as
/// pyamg's BSR-converted CSR has them) and the 6 rigid body modes (columns).
pub fn elasticity_3d(n: usize) -> (Csr, Vec<Vec<f64>>) {
    let h = 1.0 / (n - 1) as f64;
    let vid = |i: usize, j: usize, k: usize| (i * n + j) * n + k;
    let coord = |v: usize| {
        [
            (v / (n * n)) as f64 * h,
            ((v / n) % n) as f64 * h,
            (v % n) as f64 * h,
        ]
    };
    let perms = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let (lame, mu) = lame_mu();
    let nv = n * n * n;
    let (mut ri, mut ci, mut vv) = (Vec::new(), Vec::new(), Vec::new());
    for perm in perms {
        for i in 0..n - 1 {
            for j in 0..n - 1 {
                for k in 0..n - 1 {
                    let mut off = [0usize; 3];
                    let mut e = [vid(i, j, k), 0, 0, 0];
                    for (s, &ax) in perm.iter().enumerate() {
                        off[ax] += 1;
                        e[s + 1] = vid(i + off[0], j + off[1], k + off[2]);
                    }
                    let p = e.map(coord);
                    let d = |a: usize, b: usize| [0, 1, 2].map(|x| p[a][x] - p[b][x]);
                    let (u, w, z) = (d(1, 0), d(2, 0), d(3, 0));
                    let cr = [
                        u[1] * w[2] - u[2] * w[1],
                        u[2] * w[0] - u[0] * w[2],
                        u[0] * w[1] - u[1] * w[0],
                    ];
                    if cr[0] * z[0] + cr[1] * z[1] + cr[2] * z[2] < 0.0 {
                        e.swap(2, 3);
                    }
                    let kl = p1_local(e.map(coord), lame, mu);
                    let dof = |c: usize| (3 * e[c / 3] + c % 3) as u32;
                    for (r, kr) in kl.iter().enumerate() {
                        for (c, &kv) in kr.iter().enumerate() {
                            // pyamg: row dof[c], column dof[r], value K[r][c].
                            ri.push(dof(c));
                            ci.push(dof(r));
                            vv.push(kv);
                        }
                    }
                }
            }
        }
    }
    let a = assemble(3 * nv, 3 * nv, ri, ci, vv);
    let mut b = vec![vec![0f64; 3 * nv]; 6];
    for v in 0..nv {
        let [x, y, z] = coord(v);
        b[0][3 * v] = 1.0;
        b[1][3 * v + 1] = 1.0;
        b[2][3 * v + 2] = 1.0;
        b[3][3 * v] = -y;
        b[3][3 * v + 1] = x;
        b[4][3 * v] = -z;
        b[4][3 * v + 2] = x;
        b[5][3 * v + 1] = -z;
        b[5][3 * v + 2] = y;
    }
    (a, b)
}

// ----------------------------------------------------------------- random families

/// Pattern (sorted, duplicates merged) with values drawn in CSR order from seed + 1.
fn with_random_values(m: usize, n: usize, ri: Vec<u32>, ci: Vec<u32>, seed: u64) -> Csr {
    let k = ri.len();
    let mut a = assemble(m, n, ri, ci, vec![1.0; k]);
    let mut rng = Rng::new(seed + 1);
    a.val.iter_mut().for_each(|v| *v = rng.value());
    a
}

/// Graph500-style R-MAT: 2^scale vertices, edgefactor * 2^scale edges, labels permuted,
/// symmetrised, self loops dropped, duplicates merged, random values.
pub fn rmat(scale: u32, edgefactor: usize, seed: u64) -> Csr {
    rmat_edges(scale, edgefactor << scale, seed)
}

/// R-MAT with `m` edges drawn (any edge factor).
pub fn rmat_edges(scale: u32, m: usize, seed: u64) -> Csr {
    let (a, b, c) = (0.57, 0.19, 0.19);
    let n = 1usize << scale;
    let ab = a + b;
    let c_norm = c / (1.0 - ab);
    let a_norm = a / ab;
    let mut rng = Rng::new(seed);
    let mut edges = Vec::with_capacity(m);
    for _ in 0..m {
        let (mut i, mut j) = (0usize, 0usize);
        for ib in 0..scale {
            let ii = rng.uniform() > ab;
            let jj = rng.uniform() > if ii { c_norm } else { a_norm };
            i |= (ii as usize) << ib;
            j |= (jj as usize) << ib;
        }
        edges.push((i, j));
    }
    let mut perm: Vec<u32> = (0..n as u32).collect();
    for t in (1..n).rev() {
        perm.swap(t, rng.below(t + 1));
    }
    let (mut ri, mut ci) = (Vec::new(), Vec::new());
    for (i, j) in edges {
        let (r, c) = (perm[i], perm[j]);
        if r != c {
            ri.extend([r, c]);
            ci.extend([c, r]);
        }
    }
    with_random_values(n, n, ri, ci, seed)
}

/// n x n hub matrix: 10% of rows and 10% of columns empty, 1..2*per_row-1 random
/// columns in every other row, one row and one column of `hub` entries.
pub fn hub(n: usize, per_row: usize, hub: usize, seed: u64) -> Csr {
    let mut rng = Rng::new(seed);
    let cols: Vec<u32> = (0..n as u32).filter(|_| rng.uniform() >= 0.1).collect();
    let (hub_row, hub_col) = (rng.below(n), cols[rng.below(cols.len())] as usize);
    let (mut ri, mut ci) = (Vec::new(), Vec::new());
    for i in 0..n {
        if i == hub_row {
            for _ in 0..hub {
                ri.push(i as u32);
                ci.push(cols[rng.below(cols.len())]);
            }
        } else if rng.uniform() >= 0.1 {
            for _ in 0..1 + rng.below(2 * per_row - 1) {
                ri.push(i as u32);
                ci.push(cols[rng.below(cols.len())]);
            }
        }
    }
    for _ in 0..hub {
        ri.push(rng.below(n) as u32);
        ci.push(hub_col as u32);
    }
    with_random_values(n, n, ri, ci, seed)
}

/// n x n power-law matrix: row lengths from a Pareto law (shape 1.6, mean ~3.1, longest
/// rows a few thousand); half the entries within 8 of the diagonal, half in columns
/// drawn half log-uniformly over a random ranking (longest columns tens of thousands),
/// half uniformly.
pub fn zipf(n: usize, seed: u64) -> Csr {
    let mut rng = Rng::new(seed);
    let mut rank: Vec<u32> = (0..n as u32).collect();
    for t in (1..n).rev() {
        rank.swap(t, rng.below(t + 1));
    }
    let ln_n = (n as f64).ln();
    let (mut ri, mut ci) = (Vec::new(), Vec::new());
    for i in 0..n {
        let u = 1.0 - rng.uniform();
        let len = ((1.5 * u.powf(-1.0 / 1.6)) as usize).min(n);
        for _ in 0..len {
            let j = if rng.uniform() < 0.5 {
                (i + rng.below(17)).saturating_sub(8).min(n - 1)
            } else if rng.uniform() < 0.5 {
                let r = ((rng.uniform() * ln_n).exp() as usize).clamp(1, n) - 1;
                rank[r] as usize
            } else {
                rng.below(n)
            };
            ri.push(i as u32);
            ci.push(j as u32);
        }
    }
    with_random_values(n, n, ri, ci, seed)
}

/// n x n circuit-like matrix: the diagonal, `per_row` random off-diagonal entries per
/// row, and `nets` power-net nodes whose rows and columns hold `net_len` entries each.
pub fn circuit(n: usize, per_row: usize, nets: usize, net_len: usize, seed: u64) -> Csr {
    let mut rng = Rng::new(seed);
    let (mut ri, mut ci) = (Vec::new(), Vec::new());
    for i in 0..n {
        ri.push(i as u32);
        ci.push(i as u32);
        for _ in 0..per_row {
            ri.push(i as u32);
            ci.push(rng.below(n) as u32);
        }
    }
    for _ in 0..nets {
        let v = rng.below(n) as u32;
        for _ in 0..net_len {
            let w = rng.below(n) as u32;
            ri.extend([v, w]);
            ci.extend([w, v]);
        }
    }
    with_random_values(n, n, ri, ci, seed)
}

/// m x n, `per_row` uniform random columns in every row, duplicates merged, random
/// values (gen_matrices.py's er_uniform and random_rect).
pub fn random_rows(m: usize, n: usize, per_row: usize, seed: u64) -> Csr {
    let mut rng = Rng::new(seed);
    let mut ri = Vec::with_capacity(m * per_row);
    let mut ci = Vec::with_capacity(m * per_row);
    for i in 0..m {
        for _ in 0..per_row {
            ri.push(i as u32);
            ci.push(rng.below(n) as u32);
        }
    }
    with_random_values(m, n, ri, ci, seed)
}

/// n x n with the given diagonals, random values drawn diagonal after diagonal.
pub fn banded(n: usize, offsets: &[i64], seed: u64) -> Csr {
    let mut rng = Rng::new(seed);
    let (mut ri, mut ci, mut vv) = (Vec::new(), Vec::new(), Vec::new());
    for &o in offsets {
        for t in 0..n - o.unsigned_abs() as usize {
            let (i, j) = if o >= 0 {
                (t, t + o as usize)
            } else {
                (t + o.unsigned_abs() as usize, t)
            };
            ri.push(i as u32);
            ci.push(j as u32);
            vv.push(rng.value());
        }
    }
    assemble(n, n, ri, ci, vv)
}

// ------------------------------------------------------------ smoothed aggregation

/// One smoothed-aggregation level: P, R = Pᵀ, AP = A*P, plus what the tests look at.
// `aggregate` and `t` are read by the tests only.
#[cfg_attr(not(test), allow(dead_code))]
pub struct SaLevel {
    pub p: Csr,
    pub r: Csr,
    pub ap: Csr,
    /// Aggregate of every fine row (all rows are aggregated for our inputs).
    pub aggregate: Vec<usize>,
    pub n_aggregates: usize,
    /// The tentative prolongator (explicit zeros kept, K2 entries a row).
    pub t: Csr,
    pub rho: f64,
    /// The next level's candidates: T^T times the improved candidates (fit_candidates' R).
    pub coarse_b: Vec<Vec<f64>>,
}

/// pyamg's standard_aggregation on the structure of `s` (amg_core's three passes:
/// seed aggregates of free nodes with free neighbourhoods, attach the rest to a
/// neighbouring aggregate, make aggregates of what is left). Returns the aggregate of
/// every row (None: isolated node) and the count.
pub fn standard_aggregation(s: &Csr) -> (Vec<Option<usize>>, usize) {
    let n = s.nrows;
    let nn = n as i64;
    let mut x = vec![0i64; n];
    let mut next: i64 = 1;
    for i in 0..n {
        if x[i] != 0 {
            continue;
        }
        let mut has_neighbors = false;
        let mut has_aggregated = false;
        for p in s.row(i) {
            let j = s.col[p] as usize;
            if j != i {
                has_neighbors = true;
                if x[j] != 0 {
                    has_aggregated = true;
                    break;
                }
            }
        }
        if !has_neighbors {
            x[i] = -nn;
        } else if !has_aggregated {
            x[i] = next;
            for p in s.row(i) {
                x[s.col[p] as usize] = next;
            }
            next += 1;
        }
    }
    for i in 0..n {
        if x[i] != 0 {
            continue;
        }
        for p in s.row(i) {
            let xj = x[s.col[p] as usize];
            if xj > 0 {
                x[i] = -xj;
                break;
            }
        }
    }
    next -= 1;
    for i in 0..n {
        let xi = x[i];
        if xi != 0 {
            x[i] = if xi > 0 {
                xi - 1
            } else if xi == -nn {
                -1
            } else {
                -xi - 1
            };
            continue;
        }
        x[i] = next;
        for p in s.row(i) {
            let j = s.col[p] as usize;
            if x[j] == 0 {
                x[j] = next;
            }
        }
        next += 1;
    }
    let agg = x
        .into_iter()
        .map(|v| (v >= 0).then_some(v as usize))
        .collect();
    (agg, next as usize)
}

fn diagonal(a: &Csr) -> Vec<f64> {
    (0..a.nrows)
        .map(|i| {
            a.row(i)
                .filter(|&p| a.col[p] as usize == i)
                .map(|p| a.val[p])
                .sum()
        })
        .collect()
}

/// pyamg's improve_candidates default: 4 symmetric (forward + backward) Gauss-Seidel
/// sweeps on A x = 0 starting from x.
fn gauss_seidel_symmetric(a: &Csr, dinv: &[f64], x: &mut [f64], sweeps: usize) {
    let relax = |x: &mut [f64], i: usize| {
        let mut rsum = 0.0;
        for p in a.row(i) {
            let j = a.col[p] as usize;
            if j != i {
                rsum += a.val[p] * x[j];
            }
        }
        x[i] = dinv[i] * (0.0 - rsum);
    };
    for _ in 0..sweeps {
        for i in 0..a.nrows {
            relax(x, i);
        }
        for i in (0..a.nrows).rev() {
            relax(x, i);
        }
    }
}

/// pyamg's fit_candidates: for every aggregate (rows in increasing order) a Gram-Schmidt
/// QR of its block of B; columns whose norm falls below 1e-10 of the original are zeroed.
/// T has K2 entries in every aggregated row: columns agg*K2 .. agg*K2+K2.
fn fit_candidates(agg: &[Option<usize>], n_agg: usize, b: &[Vec<f64>]) -> Csr {
    let n = agg.len();
    let k2 = b.len();
    let mut members = vec![Vec::new(); n_agg];
    for (i, a) in agg.iter().enumerate() {
        if let Some(a) = *a {
            members[a].push(i);
        }
    }
    let mut q = vec![0f64; n * k2]; // row-major n x k2
    for rows in &members {
        let mut blk: Vec<Vec<f64>> = (0..k2)
            .map(|c| rows.iter().map(|&i| b[c][i]).collect())
            .collect();
        for bj in 0..k2 {
            let norm0 = blk[bj].iter().map(|v| v * v).sum::<f64>().sqrt();
            let threshold = 1e-10 * norm0;
            for bi in 0..bj {
                let dot: f64 = blk[bj].iter().zip(&blk[bi]).map(|(x, y)| x * y).sum();
                let (lo, hi) = blk.split_at_mut(bj);
                for (x, y) in hi[0].iter_mut().zip(&lo[bi]) {
                    *x -= dot * y;
                }
            }
            let norm = blk[bj].iter().map(|v| v * v).sum::<f64>().sqrt();
            let scale = if norm > threshold { 1.0 / norm } else { 0.0 };
            blk[bj].iter_mut().for_each(|v| *v *= scale);
        }
        for (t, &i) in rows.iter().enumerate() {
            for c in 0..k2 {
                q[i * k2 + c] = blk[c][t];
            }
        }
    }
    let mut row_ptr = vec![0i32];
    let (mut col, mut val) = (Vec::new(), Vec::new());
    for (i, a) in agg.iter().enumerate() {
        if let Some(a) = *a {
            for c in 0..k2 {
                col.push((a * k2 + c) as i32);
                val.push(q[i * k2 + c]);
            }
        }
        row_ptr.push(col.len() as i32);
    }
    Csr {
        nrows: n,
        ncols: n_agg * k2,
        row_ptr,
        col,
        val,
    }
}

/// Largest eigenvalue of the symmetric tridiagonal (alpha, beta) by Sturm bisection and
/// its eigenvector by inverse iteration.
fn tridiagonal_max(alpha: &[f64], beta: &[f64]) -> (f64, Vec<f64>) {
    let k = alpha.len();
    let off = |i: usize| if i < beta.len() { beta[i].abs() } else { 0.0 };
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (i, &al) in alpha.iter().enumerate() {
        let r = off(i) + if i > 0 { off(i - 1) } else { 0.0 };
        lo = lo.min(al - r);
        hi = hi.max(al + r);
    }
    // Number of eigenvalues below x.
    let below = |x: f64| {
        let mut count = 0;
        let mut d = 1.0;
        for i in 0..k {
            let b2 = if i > 0 {
                beta[i - 1] * beta[i - 1]
            } else {
                0.0
            };
            d = alpha[i] - x - if i > 0 { b2 / d } else { 0.0 };
            if d == 0.0 {
                d = -1e-300;
            }
            if d < 0.0 {
                count += 1;
            }
        }
        count
    };
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if below(mid) < k {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let lambda = hi;
    // Inverse iteration with (T - shift I), shift just above lambda; Thomas algorithm.
    let shift = lambda + 1e-10 * lambda.abs().max(1e-300);
    let mut y = vec![1.0; k];
    for _ in 0..3 {
        let mut c = vec![0f64; k];
        let mut d = vec![0f64; k];
        for i in 0..k {
            let sub = if i > 0 { beta[i - 1] } else { 0.0 };
            let denom = alpha[i] - shift - if i > 0 { sub * c[i - 1] } else { 0.0 };
            c[i] = if i + 1 < k { beta[i] / denom } else { 0.0 };
            d[i] = (y[i] - if i > 0 { sub * d[i - 1] } else { 0.0 }) / denom;
        }
        for i in (0..k).rev() {
            y[i] = d[i] - if i + 1 < k { c[i] * y[i + 1] } else { 0.0 };
        }
        let nrm = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        y.iter_mut().for_each(|v| *v /= nrm);
    }
    (lambda, y)
}

/// Estimate of rho(D^-1 A) for A symmetric with a positive diagonal, in the manner of
/// pyamg's approximate_spectral_radius (15 Krylov steps, up to 5 restarts from the Ritz
/// vector, stop when the residual estimate is below 1% of the Ritz value), by Lanczos on
/// the similar D^-1/2 A D^-1/2.
pub fn spectral_radius_dinv_a(a: &Csr, dinv: &[f64], seed: u64) -> f64 {
    let n = a.nrows;
    let sq: Vec<f64> = dinv.iter().map(|d| d.sqrt()).collect();
    let apply = |x: &[f64], y: &mut [f64]| {
        for i in 0..n {
            let s: f64 = a
                .row(i)
                .map(|p| a.val[p] * sq[a.col[p] as usize] * x[a.col[p] as usize])
                .sum();
            y[i] = sq[i] * s;
        }
    };
    let norm = |x: &[f64]| x.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mut rng = Rng::new(seed);
    let mut v0: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
    let maxiter = 15.min(n);
    let mut rho = 0.0;
    for _restart in 0..=5 {
        let nv = norm(&v0);
        v0.iter_mut().for_each(|v| *v /= nv);
        let mut vs = vec![v0.clone()];
        let (mut alpha, mut beta) = (Vec::new(), Vec::new());
        let mut w = vec![0f64; n];
        let mut breakdown = false;
        for j in 0..maxiter {
            apply(&vs[j], &mut w);
            if j > 0 {
                let b = beta[j - 1];
                w.iter_mut().zip(&vs[j - 1]).for_each(|(x, v)| *x -= b * v);
            }
            let al: f64 = w.iter().zip(&vs[j]).map(|(x, v)| x * v).sum();
            w.iter_mut().zip(&vs[j]).for_each(|(x, v)| *x -= al * v);
            alpha.push(al);
            let b = norm(&w);
            beta.push(b);
            if b < 1e-10 * al.abs().max(1e-300) {
                breakdown = true;
                break;
            }
            vs.push(w.iter().map(|x| x / b).collect());
        }
        let k = alpha.len();
        let (lambda, y) = tridiagonal_max(&alpha, &beta[..k - 1]);
        rho = lambda.abs();
        let error = beta[k - 1] * y[k - 1];
        if breakdown || error.abs() / lambda.abs() < 0.01 {
            break;
        }
        v0 = vec![0f64; n];
        for (t, v) in vs.iter().take(k).enumerate() {
            v0.iter_mut().zip(v).for_each(|(x, vi)| *x += y[t] * vi);
        }
    }
    rho
}

/// First level of pyamg's smoothed_aggregation_solver (defaults, see the module docs).
/// `a` carries the explicit zeros pyamg's strength and aggregation see (dense node blocks
/// for elasticity); `b` holds the candidates as columns.
pub fn sa_level(a: &Csr, b: &[Vec<f64>], seed: u64) -> SaLevel {
    sa_level_theta(a, b, 0.0, seed)
}

/// pyamg's symmetric strength of connection: the diagonal and the entries with
/// |a_ij| >= theta * sqrt(|a_ii a_jj|).
fn symmetric_strength(a: &Csr, theta: f64) -> Csr {
    let d = diagonal(a);
    keep_entries(a, |i, p| {
        let j = a.col[p] as usize;
        j == i || a.val[p].abs() >= theta * (d[i] * d[j]).abs().sqrt()
    })
}

/// [`sa_level`] with aggregates of the symmetric strength graph at `theta` (0: the
/// structure of `a`, explicit zeros included, as pyamg's default).
pub fn sa_level_theta(a: &Csr, b: &[Vec<f64>], theta: f64, seed: u64) -> SaLevel {
    let (agg, n_agg) = if theta > 0.0 {
        standard_aggregation(&symmetric_strength(a, theta))
    } else {
        standard_aggregation(a)
    };
    let d = diagonal(a);
    let dinv: Vec<f64> = d
        .iter()
        .map(|&x| if x != 0.0 { 1.0 / x } else { 0.0 })
        .collect();
    let mut b = b.to_vec();
    for col in &mut b {
        gauss_seidel_symmetric(a, &dinv, col, 4);
    }
    let t = fit_candidates(&agg, n_agg, &b);
    let mut coarse_b = vec![vec![0f64; t.ncols]; b.len()];
    for (cb, bc) in coarse_b.iter_mut().zip(&b) {
        for (i, &bi) in bc.iter().enumerate() {
            for p in t.row(i) {
                cb[t.col[p] as usize] += t.val[p] * bi;
            }
        }
    }
    let rho = spectral_radius_dinv_a(a, &dinv, seed);
    let w = (4.0 / 3.0) / rho;
    // D_inv_S = w * (D^-1 A); P = T - D_inv_S T.
    let mut s = a.clone();
    for (i, &di) in dinv.iter().enumerate() {
        for p in s.row(i) {
            s.val[p] = w * (s.val[p] * di);
        }
    }
    let st = multiply(&s, &t);
    let mut row_ptr = vec![0i32];
    let (mut col, mut val) = (Vec::new(), Vec::new());
    for i in 0..t.nrows {
        let (mut p, mut q) = (t.row(i).start, st.row(i).start);
        let (pe, qe) = (t.row(i).end, st.row(i).end);
        while p < pe || q < qe {
            let (j, v) = if q >= qe || (p < pe && t.col[p] < st.col[q]) {
                p += 1;
                (t.col[p - 1], t.val[p - 1])
            } else if p >= pe || st.col[q] < t.col[p] {
                q += 1;
                (st.col[q - 1], -st.val[q - 1])
            } else {
                p += 1;
                q += 1;
                (t.col[p - 1], t.val[p - 1] - st.val[q - 1])
            };
            if v != 0.0 {
                col.push(j);
                val.push(v);
            }
        }
        row_ptr.push(col.len() as i32);
    }
    let p = Csr {
        nrows: t.nrows,
        ncols: t.ncols,
        row_ptr,
        col,
        val,
    };
    let r = transpose(&p);
    let ap = multiply(a, &p);
    SaLevel {
        p,
        r,
        ap,
        aggregate: agg.iter().map(|a| a.unwrap_or(usize::MAX)).collect(),
        n_aggregates: n_agg,
        t,
        rho,
        coarse_b,
    }
}

/// The operators of [`SA_PRODUCT_LEVELS`] levels of a smoothed-aggregation hierarchy of
/// `a` (candidates `b`, strength `theta`), named `{prefix}_{A,P,R,AP,RA}{level}`; the next
/// level's A is (RA)P.
fn sa_hierarchy(
    prefix: &str,
    mut a: Csr,
    mut b: Vec<Vec<f64>>,
    theta: f64,
    seed: u64,
) -> Vec<(String, Csr)> {
    let mut out = Vec::new();
    for l in 0..SA_PRODUCT_LEVELS {
        let lv = sa_level_theta(&a, &b, theta, seed + l as u64);
        eprintln!(
            "[gen] {prefix} level {l}: {} rows, {} aggregates, rho(D^-1 A) ~ {}",
            a.nrows, lv.n_aggregates, lv.rho
        );
        let ra = multiply(&lv.r, &a);
        let next = multiply(&ra, &lv.p);
        for (op, m) in [
            ("A", a),
            ("P", lv.p),
            ("R", lv.r),
            ("AP", lv.ap),
            ("RA", ra),
        ] {
            out.push((format!("{prefix}_{op}{l}"), m));
        }
        a = next;
        b = lv.coarse_b;
    }
    out
}

// ------------------------------------------------------------------ Matrix Market

/// Writes `a` like gen_matrices.py's write_mtx: real general, 1-based, rows sorted,
/// shortest round-trip decimal values (bit-exact on reading). Stored zeros are written
/// (only elast3d_p1 / sa_elast_A have them, standing for the file's rounding noise; see
/// the module docs), so the file holds the structure the benchmark multiplies.
pub fn write_mtx(path: &std::path::Path, a: &Csr, comment: &str) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("mtx.tmp");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    writeln!(f, "%%MatrixMarket matrix coordinate real general")?;
    for line in comment.lines() {
        writeln!(f, "% {line}")?;
    }
    writeln!(f, "{} {} {}", a.nrows, a.ncols, a.nnz())?;
    for i in 0..a.nrows {
        for p in a.row(i) {
            writeln!(f, "{} {} {:?}", i + 1, a.col[p] + 1, a.val[p])?;
        }
    }
    f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// gen_matrices.py's product list (label, A, B) for the matrices in `present`.
pub fn products(present: &[String]) -> Vec<(String, String, String)> {
    let mut names: Vec<&String> = present.iter().collect();
    names.sort();
    let mut out = Vec::new();
    for k in &names {
        let g = group_of(k).unwrap_or("");
        if [
            "lap3d_7pt",
            "lap3d_27pt",
            "elast2d",
            "elast3d",
            "rmat",
            "er",
            "banded",
            "irregular",
            "graphs",
        ]
        .contains(&g)
        {
            out.push((format!("{k}^2"), k.to_string(), "A".to_string()));
        }
    }
    let has = |n: &str| present.iter().any(|p| p == n);
    for g in ["sa_poisson", "sa_elast"] {
        if has(&format!("{g}_A")) {
            out.push((format!("{g}:A*P"), format!("{g}_A"), format!("{g}_P")));
            out.push((format!("{g}:R*(AP)"), format!("{g}_R"), format!("{g}_AP")));
        }
    }
    for (h, _, _, _) in ANISO.iter().chain(&[("elast_sa26", 0, 0.0, 0.0)]) {
        for l in 0..SA_PRODUCT_LEVELS {
            let m = |op: &str| format!("{h}_{op}{l}");
            if !has(&m("A")) {
                continue;
            }
            for (label, x, y) in [
                (format!("{h}:A{l}*P{l}"), "A", "P"),
                (format!("{h}:R{l}*(AP{l})"), "R", "AP"),
                (format!("{h}:R{l}*A{l}"), "R", "A"),
                (format!("{h}:(RA{l})*P{l}"), "RA", "P"),
            ] {
                out.push((label, m(x), m(y)));
            }
        }
    }
    if has("rect_A_200kx2k") {
        out.push((
            "rect:A*B".into(),
            "rect_A_200kx2k".into(),
            "rect_B_2kx50k".into(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(a: &Csr) -> Vec<Vec<f64>> {
        let mut d = vec![vec![0f64; a.ncols]; a.nrows];
        for (i, row) in d.iter_mut().enumerate() {
            for p in a.row(i) {
                row[a.col[p] as usize] += a.val[p];
            }
        }
        d
    }

    fn sorted_rows(a: &Csr) -> bool {
        (0..a.nrows).all(|i| a.col[a.row(i)].windows(2).all(|w| w[0] < w[1]))
    }

    /// Exact symmetry of values (tol = 0) or up to `tol` relative to the largest entry.
    fn assert_symmetric(a: &Csr, tol: f64) {
        assert_eq!(a.nrows, a.ncols);
        let (d, t) = (dense(a), dense(&transpose(a)));
        let big = a.val.iter().fold(0f64, |m, v| m.max(v.abs()));
        for i in 0..a.nrows {
            for j in 0..a.ncols {
                assert!(
                    (d[i][j] - t[i][j]).abs() <= tol * big,
                    "({i},{j}): {} vs {}",
                    d[i][j],
                    t[i][j]
                );
            }
        }
    }

    fn row_sum(a: &Csr, i: usize) -> f64 {
        a.row(i).map(|p| a.val[p]).sum()
    }

    #[test]
    fn laplacians_have_the_stencil_nnz_and_row_sums() {
        for n in [2usize, 3, 5] {
            let a = lap3d_7pt(n);
            assert_eq!(a.nrows, n * n * n);
            assert_eq!(a.nnz(), 7 * n * n * n - 6 * n * n);
            assert!(sorted_rows(&a));
            assert_symmetric(&a, 0.0);
            // Row sum = number of neighbours cut off by the boundary.
            for x in 0..n {
                for y in 0..n {
                    for z in 0..n {
                        let cut = [x, y, z]
                            .iter()
                            .map(|&c| (c == 0) as usize + (c == n - 1) as usize)
                            .sum::<usize>();
                        assert_eq!(row_sum(&a, (x * n + y) * n + z), cut as f64);
                    }
                }
            }
            let b = lap3d_27pt(n);
            assert_eq!(b.nnz(), (3 * n - 2).pow(3));
            assert!(sorted_rows(&b));
            assert_symmetric(&b, 0.0);
            let inner = ((n / 2) * n + n / 2) * n + n / 2;
            if n >= 3 {
                assert_eq!(row_sum(&b, inner), 0.0);
            }
            assert!((0..b.nrows).all(|i| row_sum(&b, i) >= 0.0));
        }
    }

    #[test]
    fn elasticity_2d_is_symmetric_with_q1_structure() {
        let n = 4;
        let a = elasticity_2d(n);
        assert_eq!(a.nrows, 2 * n * n);
        assert!(sorted_rows(&a));
        assert_symmetric(&a, 0.0);
        // Interior node (1,1) of the restricted grid couples to its 9-node neighbourhood:
        // 18 structural entries per dof row (2 x 9), zeros included.
        let node = n + 1;
        assert_eq!(a.row(2 * node).len(), 18);
        // Positive diagonal; rigid translation in x leaves no force on a node whose
        // neighbours are all free (the interior of the restricted grid).
        let d = dense(&a);
        assert!((0..a.nrows).all(|i| d[i][i] > 0.0));
        let fx: f64 = (0..a.ncols).step_by(2).map(|j| d[2 * node][j]).sum();
        assert!(fx.abs() <= 1e-9 * d[2 * node][2 * node], "{fx}");
    }

    #[test]
    fn elasticity_3d_annihilates_the_rigid_body_modes() {
        let n = 4;
        let (a, b) = elasticity_3d(n);
        assert_eq!(a.nrows, 3 * n * n * n);
        assert_eq!(b.len(), 6);
        assert!(sorted_rows(&a));
        assert_symmetric(&a, 1e-14);
        let big = a.val.iter().fold(0f64, |m, v| m.max(v.abs()));
        for mode in &b {
            for i in 0..a.nrows {
                let r: f64 = a.row(i).map(|p| a.val[p] * mode[a.col[p] as usize]).sum();
                assert!(r.abs() <= 1e-10 * big, "row {i}: {r}");
            }
        }
        // Dense 3 x 3 node blocks: every row's length is a multiple of 3.
        assert!((0..a.nrows).all(|i| a.row(i).len() % 3 == 0));
    }

    #[test]
    fn random_families_have_the_requested_shape_and_values() {
        let r = rmat(8, 16, 16016);
        assert_eq!((r.nrows, r.ncols), (256, 256));
        assert!(sorted_rows(&r));
        let d = dense(&r);
        for (i, row) in d.iter().enumerate() {
            assert_eq!(row[i], 0.0, "self loop at {i}");
            for (j, &v) in row.iter().enumerate() {
                assert_eq!(v != 0.0, d[j][i] != 0.0, "pattern not symmetric");
            }
        }
        assert!(r.val.iter().all(|&v| v != 0.0 && v > -1.0 && v < 1.0));
        assert!(r.nnz() > 256 * 8, "{}", r.nnz()); // most of the 2 x 4096 arcs survive

        let e = random_rows(300, 50, 8, 2008);
        assert_eq!((e.nrows, e.ncols), (300, 50));
        assert!(sorted_rows(&e));
        assert!((0..300).all(|i| (1..=8).contains(&e.row(i).len())));
        assert!(e.nnz() < 300 * 8, "some duplicates merge with 50 columns");
        assert!(e.val.iter().all(|&v| v != 0.0 && v > -1.0 && v < 1.0));
        // Same seed, same matrix; another seed, another one.
        assert_eq!(e, random_rows(300, 50, 8, 2008));
        assert_ne!(e, random_rows(300, 50, 8, 2009));

        let b = banded(20, &[-3, -2, -1, 0, 1, 2, 3], 5007);
        assert_eq!(b.nnz(), 7 * 20 - 12);
        assert!(sorted_rows(&b));
        assert!((0..20).all(|i| {
            b.col[b.row(i)]
                .iter()
                .all(|&j| (j as i64 - i as i64).abs() <= 3)
        }));
    }

    #[test]
    fn spectral_radius_of_the_1d_laplacian() {
        // D^-1 A of tridiag(-1, 2, -1): eigenvalues 1 - cos(k pi / (n + 1)).
        let n = 200;
        let mut ri = Vec::new();
        let mut ci = Vec::new();
        let mut vv = Vec::new();
        for i in 0..n {
            for (j, v) in [(i as i64 - 1, -1.0), (i as i64, 2.0), (i as i64 + 1, -1.0)] {
                if (0..n as i64).contains(&j) {
                    ri.push(i as u32);
                    ci.push(j as u32);
                    vv.push(v);
                }
            }
        }
        let a = assemble(n, n, ri, ci, vv);
        let rho = spectral_radius_dinv_a(&a, &vec![0.5; n], 7);
        let exact = 1.0 + (std::f64::consts::PI / (n + 1) as f64).cos();
        assert!(
            rho <= exact * (1.0 + 1e-12) && rho >= 0.97 * exact,
            "{rho} vs {exact}"
        );
    }

    fn check_level(a: &Csr, b: &[Vec<f64>]) -> SaLevel {
        let l = sa_level(a, b, 777);
        let k2 = b.len();
        // Every fine row in exactly one aggregate, P's columns = aggregates x candidates.
        assert!(l.aggregate.iter().all(|&g| g < l.n_aggregates));
        assert!(l.n_aggregates > 1 && l.n_aggregates < a.nrows);
        assert_eq!(l.p.ncols, l.n_aggregates * k2);
        assert_eq!(l.t.ncols, l.p.ncols);
        for i in 0..a.nrows {
            let cols: Vec<usize> = l.t.col[l.t.row(i)].iter().map(|&c| c as usize).collect();
            let g = l.aggregate[i];
            assert_eq!(cols, (g * k2..g * k2 + k2).collect::<Vec<_>>());
        }
        // Tentative prolongator: orthonormal columns (each aggregate's block of B is
        // full rank in these cases).
        let tt = multiply(&transpose(&l.t), &l.t);
        let d = dense(&tt);
        for (i, row) in d.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((v - want).abs() < 1e-12, "TtT[{i}][{j}] = {v}");
            }
        }
        // R = P^T exactly, AP = A * P against a dense product.
        assert_eq!(dense(&l.r), {
            let p = dense(&l.p);
            (0..l.p.ncols)
                .map(|j| (0..l.p.nrows).map(|i| p[i][j]).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        });
        let (da, dp, dap) = (dense(a), dense(&l.p), dense(&l.ap));
        let big = l.ap.val.iter().fold(0f64, |m, v| m.max(v.abs()));
        for i in 0..a.nrows {
            for j in 0..l.p.ncols {
                let r: f64 = (0..a.ncols).map(|k| da[i][k] * dp[k][j]).sum();
                assert!((r - dap[i][j]).abs() <= 1e-12 * big, "AP[{i}][{j}]");
            }
        }
        // 1 <= rho(D^-1 A) <= max row sum of |D^-1 A| (Gershgorin).
        let dg = diagonal(a);
        let gersh = (0..a.nrows)
            .map(|i| a.row(i).map(|p| (a.val[p] / dg[i]).abs()).sum::<f64>())
            .fold(0f64, f64::max);
        assert!(l.rho > 1.0 && l.rho <= gersh, "rho(D^-1 A) = {}", l.rho);
        l
    }

    #[test]
    fn anisotropic_diffusion_stencil_and_hierarchy() {
        // pyamg's diffusion_stencil_2d(epsilon=1e-3, theta=pi/8, type='FE'), row by row.
        let want = [
            [-0.34343325, -0.52003317, 0.00976659],
            [0.1863665, 1.33466667, 0.1863665],
            [0.00976659, -0.52003317, -0.34343325],
        ];
        let n = 12;
        let a = aniso_2d(n, 1e-3, 22.5);
        assert_symmetric(&a, 1e-14);
        let mid = (n / 2) * n + n / 2;
        let d = dense(&a);
        for (dy, row) in want.iter().enumerate() {
            for (dx, &w) in row.iter().enumerate() {
                let j = (mid + dy * n + dx) - n - 1;
                assert!(
                    (d[mid][j] - w).abs() < 1e-7,
                    "stencil[{dy}][{dx}] = {}",
                    d[mid][j]
                );
            }
        }
        // Interior rows sum to zero (constants are in the kernel of the operator).
        assert!(row_sum(&a, mid).abs() < 1e-12);
        let h = sa_hierarchy("t", a.clone(), vec![vec![1.0; a.nrows]], ANISO_THETA, 1);
        let get = |name: &str| &h.iter().find(|(n, _)| n == name).unwrap().1;
        for l in 0..SA_PRODUCT_LEVELS {
            let (al, pl, rl) = (
                get(&format!("t_A{l}")),
                get(&format!("t_P{l}")),
                get(&format!("t_R{l}")),
            );
            assert_eq!(dense(rl), dense(&transpose(pl)));
            assert_eq!(dense(get(&format!("t_AP{l}"))), dense(&multiply(al, pl)));
            assert_eq!(dense(get(&format!("t_RA{l}"))), dense(&multiply(rl, al)));
            assert!(pl.ncols < pl.nrows && pl.ncols > 1);
        }
        // The next level's operator is the Galerkin product of this one.
        let a1 = multiply(&multiply(get("t_R0"), get("t_A0")), get("t_P0"));
        assert_eq!(dense(get("t_A1")), dense(&a1));
        // Strong connections follow the anisotropy: fewer aggregates than theta = 0 gives
        // would mean a looser graph; with theta the aggregates are smaller (line-like).
        let loose = sa_level(&a, &[vec![1.0; a.nrows]], 1);
        assert!(get("t_P0").ncols > loose.n_aggregates);
    }

    #[test]
    fn smoothed_aggregation_poisson_level() {
        let a = lap3d_7pt(6);
        let l = check_level(&a, &[vec![1.0; a.nrows]]);
        // Standard aggregation seeds at row 0: its aggregate is its 7-point neighbourhood.
        // Pass 2 then attaches e.g. 42 = (1,1,0), whose first aggregated neighbour is 6.
        let first: Vec<usize> = (0..a.nrows).filter(|&i| l.aggregate[i] == 0).collect();
        assert_eq!(first[..4], [0, 1, 6, 36]);
        assert!(first.contains(&42));
        assert!(l.rho < 2.0, "Laplacian: rho(D^-1 A) < 2, got {}", l.rho);
        // P = (I - w D^-1 A) T: P's pattern is that of (I + A) T.
        let pat = multiply(&a, &l.t);
        assert!(l.p.nnz() <= pat.nnz() && l.p.nnz() > l.t.nnz());
    }

    #[test]
    fn smoothed_aggregation_elasticity_level() {
        let (a, b) = elasticity_3d(4);
        let l = check_level(&a, &b);
        assert_eq!(l.p.ncols % 6, 0);
    }

    #[test]
    fn aggregation_passes_on_a_path() {
        // Path 0-1-2-3-4-5-6-7-8 plus an isolated node 9. Pass 1 seeds {0,1} at 0,
        // skips 2 (neighbour 1 taken), seeds {2,3,4} at 3, skips 5, seeds {5,6,7} at 6,
        // skips 8; pass 2 attaches 8 to 7's aggregate; 9 has no neighbour: no aggregate.
        let n = 10;
        let (mut ri, mut ci) = (Vec::new(), Vec::new());
        for i in 0..9u32 {
            for j in [i.wrapping_sub(1), i, i + 1] {
                if j < 9 {
                    ri.push(i);
                    ci.push(j);
                }
            }
        }
        ri.push(9);
        ci.push(9);
        let k = ri.len();
        let s = assemble(n, n, ri, ci, vec![1.0; k]);
        let (agg, count) = standard_aggregation(&s);
        assert_eq!(count, 3);
        let want = [0, 0, 1, 1, 1, 2, 2, 2, 2].map(Some);
        assert_eq!(agg[..9], want);
        assert_eq!(agg[9], None);
    }

    #[test]
    fn matrix_market_output_reads_back_bit_exact() {
        let a = random_rows(40, 30, 5, 11);
        let dir = std::env::temp_dir().join(format!("gen15-mtx-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.mtx");
        write_mtx(&path, &a, "test").unwrap();
        let b = crate::mtx::read_mtx(&path).unwrap();
        assert_eq!(a, b);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn product_list_follows_gen_matrices() {
        let names: Vec<String> = ["sa_poisson_A", "lap3d_7pt_64", "rect_A_200kx2k"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let p = products(&names);
        let labels: Vec<&str> = p.iter().map(|(l, _, _)| l.as_str()).collect();
        assert_eq!(
            labels,
            vec![
                "lap3d_7pt_64^2",
                "sa_poisson:A*P",
                "sa_poisson:R*(AP)",
                "rect:A*B"
            ]
        );
    }
}
