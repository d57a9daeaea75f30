//! Independent checks of a product C = A*B computed by the library: the benchmark must not
//! report a time for a wrong result. Everything here is deliberately simple and serial.

use crate::mtx::Csr;

/// Neumaier-compensated sum of the values and of their absolute values (as the peers'
/// drivers compute `sumC` / `sumabsC`).
pub fn checksums(v: &[f64]) -> (f64, f64) {
    let (mut s, mut c, mut sa, mut ca) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for &x in v {
        let t = s + x;
        c += if s.abs() >= x.abs() {
            (s - t) + x
        } else {
            (x - t) + s
        };
        s = t;
        let y = x.abs();
        let ta = sa + y;
        ca += if sa >= y {
            (sa - ta) + y
        } else {
            (y - ta) + sa
        };
        sa = ta;
    }
    (s + c, sa + ca)
}

/// `x <= limit`, false for NaN (a NaN difference is a failed comparison).
pub fn within(x: f64, limit: f64) -> bool {
    x <= limit
}

/// Scalar multiplications of A*B (Gustavson): sum over entries a_ij of nnz(B row j).
pub fn multiplications(a: &Csr, b: &Csr) -> u64 {
    a.col
        .iter()
        .map(|&j| (b.row_ptr[j as usize + 1] - b.row_ptr[j as usize]) as u64)
        .sum()
}

/// Multiplications of each row of A*B.
pub fn row_multiplications(a: &Csr, b: &Csr) -> Vec<u64> {
    (0..a.nrows)
        .map(|i| {
            a.row(i)
                .map(|p| {
                    let j = a.col[p] as usize;
                    (b.row_ptr[j + 1] - b.row_ptr[j]) as u64
                })
                .sum()
        })
        .collect()
}

/// C's row offsets as the library wrote them (0-based).
#[derive(Clone, Copy)]
pub enum Offsets<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl Offsets<'_> {
    fn at(&self, i: usize) -> i64 {
        match self {
            Offsets::I32(v) => v[i] as i64,
            Offsets::I64(v) => v[i],
        }
    }
    fn len(&self) -> usize {
        match self {
            Offsets::I32(v) => v.len(),
            Offsets::I64(v) => v.len(),
        }
    }
}

/// C as read back from the library's output arrays.
pub struct Product<'a> {
    pub ncols: usize,
    pub row_ptr: Offsets<'a>,
    pub col: &'a [i32],
    pub val: &'a [f64],
}

impl Product<'_> {
    fn row(&self, i: usize) -> std::ops::Range<usize> {
        self.row_ptr.at(i) as usize..self.row_ptr.at(i + 1) as usize
    }
}

/// Structure of C: offsets monotone and consistent, columns in range, no column twice in a
/// row, rows sorted when `sorted` was asked for. Returns whether every row is sorted.
/// (No O(n) marker array: its memory would count in the reported peak RSS.)
pub fn structure(c: &Product<'_>, sorted: bool) -> Result<bool, String> {
    let m = c.row_ptr.len() - 1;
    let last = c.row_ptr.at(m);
    if c.row_ptr.at(0) != 0
        || last < 0
        || last as usize != c.col.len()
        || c.col.len() != c.val.len()
    {
        return Err(format!(
            "C offsets [{}..{last}] do not match {} columns / {} values",
            c.row_ptr.at(0),
            c.col.len(),
            c.val.len()
        ));
    }
    let mut all_sorted = true;
    let mut buf: Vec<i32> = Vec::new();
    for i in 0..m {
        if c.row_ptr.at(i) > c.row_ptr.at(i + 1) {
            return Err(format!("C row offsets decrease at row {i}"));
        }
        let cols = &c.col[c.row(i)];
        if let Some(&j) = cols.iter().find(|&&j| j < 0 || j as usize >= c.ncols) {
            return Err(format!("C row {i}: column {j} outside [0, {})", c.ncols));
        }
        if cols.windows(2).all(|w| w[0] < w[1]) {
            continue;
        }
        if sorted {
            return Err(format!("C row {i}: columns not strictly increasing"));
        }
        all_sorted = false;
        buf.clear();
        buf.extend_from_slice(cols);
        buf.sort_unstable();
        if let Some(w) = buf.windows(2).find(|w| w[0] == w[1]) {
            return Err(format!("C row {i}: column {} appears twice", w[0]));
        }
    }
    Ok(all_sorted)
}

/// sum(C) computed without forming C: sum_i sum_k a_ik * rowsum(B_k); also the bound
/// sum_ik |a_ik| * rowsumabs(B_k) >= sum |C| (and the scale for rounding tolerances).
pub fn sum_reference(a: &Csr, b: &Csr) -> (f64, f64) {
    let row_sums: Vec<(f64, f64)> = (0..b.nrows)
        .map(|k| {
            let r = b.row(k);
            let (s, sa) = checksums(&b.val[r]);
            (s, sa)
        })
        .collect();
    let mut terms = Vec::with_capacity(a.nnz());
    let mut bound = 0.0f64;
    for p in 0..a.nnz() {
        let (s, sa) = row_sums[a.col[p] as usize];
        terms.push(a.val[p] * s);
        bound += a.val[p].abs() * sa;
    }
    (checksums(&terms).0, bound)
}

/// Compares sumC / sumabsC with the independent reference.
pub fn sums(sum_c: f64, sumabs_c: f64, reference: (f64, f64)) -> Result<(), String> {
    let (sum_ref, bound) = reference;
    // Both sides are rounded sums of the same exact products; 1e-9 of the absolute scale
    // is far above rounding (nnz * eps) and far below any real error.
    let tol = 1e-9 * bound + f64::MIN_POSITIVE;
    if !within((sum_c - sum_ref).abs(), tol) {
        return Err(format!(
            "sumC {sum_c:e} differs from sum_ik a_ik*rowsum(B_k) = {sum_ref:e} (tolerance {tol:e})"
        ));
    }
    if !within(sumabs_c, bound * (1.0 + 1e-9) + f64::MIN_POSITIVE) {
        return Err(format!(
            "sumabsC {sumabs_c:e} exceeds the bound sum_ik |a_ik|*rowsumabs(B_k) = {bound:e}"
        ));
    }
    Ok(())
}

/// Rows to recompute: evenly spaced ones plus the heaviest (most multiplications).
pub fn sample_rows(row_mults: &[u64], count: usize) -> Vec<usize> {
    let m = row_mults.len();
    if m == 0 {
        return Vec::new();
    }
    let mut rows: Vec<usize> = if m <= count {
        (0..m).collect()
    } else {
        (0..count)
            .map(|t| t * (m - 1) / (count - 1).max(1))
            .collect()
    };
    let heaviest = (0..m).max_by_key(|&i| row_mults[i]).unwrap_or(0);
    rows.push(heaviest);
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// Recomputes the given rows of A*B the obvious way (all products, sorted by column,
/// summed) and compares with C's rows: same columns, values within rounding.
pub fn rows(a: &Csr, b: &Csr, c: &Product<'_>, rows: &[usize]) -> Result<(), String> {
    let mut terms: Vec<(i32, f64, f64)> = Vec::new();
    let mut got: Vec<(i32, f64)> = Vec::new();
    for &i in rows {
        terms.clear();
        for p in a.row(i) {
            let k = a.col[p] as usize;
            for q in b.row(k) {
                let x = a.val[p] * b.val[q];
                terms.push((b.col[q], x, x.abs()));
            }
        }
        terms.sort_by_key(|t| t.0);
        let mut want: Vec<(i32, f64, f64)> = Vec::new();
        for &(j, x, ax) in &terms {
            match want.last_mut() {
                Some(w) if w.0 == j => {
                    w.1 += x;
                    w.2 += ax;
                }
                _ => want.push((j, x, ax)),
            }
        }
        got.clear();
        got.extend(c.row(i).map(|p| (c.col[p], c.val[p])));
        got.sort_by_key(|g| g.0);
        if got.len() != want.len() {
            return Err(format!(
                "C row {i}: {} entries, reference has {}",
                got.len(),
                want.len()
            ));
        }
        for (g, w) in got.iter().zip(&want) {
            if g.0 != w.0 {
                return Err(format!(
                    "C row {i}: column {} where the reference has {}",
                    g.0, w.0
                ));
            }
            let tol = 1e-12 * w.2 * (terms.len() as f64).max(1.0) + f64::MIN_POSITIVE;
            let same_nan = g.1.is_nan() && w.1.is_nan();
            if !same_nan && !within((g.1 - w.1).abs(), tol) {
                return Err(format!("C({i}, {}) = {:e}, reference {:e}", g.0, g.1, w.1));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mtx::coo_to_csr;

    fn small() -> (Csr, Csr) {
        // A = [1 2; 0 3], B = [4 0 5; 6 7 0]
        let a = coo_to_csr(2, 2, vec![0, 0, 1], vec![0, 1, 1], vec![1.0, 2.0, 3.0]).unwrap();
        let b = coo_to_csr(
            2,
            3,
            vec![0, 0, 1, 1],
            vec![0, 2, 0, 1],
            vec![4.0, 5.0, 6.0, 7.0],
        )
        .unwrap();
        (a, b)
    }

    #[test]
    fn reference_checks_accept_right_and_reject_wrong() {
        let (a, b) = small();
        // C = [16 14 5; 18 21 0]
        let row_ptr = Offsets::I64(&[0i64, 3, 5]);
        let col = [2, 0, 1, 1, 0];
        let mut val = [5.0, 16.0, 14.0, 21.0, 18.0];
        let c = Product {
            ncols: 3,
            row_ptr,
            col: &col,
            val: &val,
        };
        assert_eq!(multiplications(&a, &b), 6);
        assert!(!structure(&c, false).unwrap());
        assert!(structure(&c, true).is_err());
        rows(&a, &b, &c, &[0, 1]).unwrap();
        let (s, sa) = checksums(c.val);
        sums(s, sa, sum_reference(&a, &b)).unwrap();
        val[3] = 20.0;
        let c = Product {
            ncols: 3,
            row_ptr,
            col: &col,
            val: &val,
        };
        assert!(rows(&a, &b, &c, &[1]).is_err());
        let (s, sa) = checksums(c.val);
        assert!(sums(s, sa, sum_reference(&a, &b)).is_err());
        let dup = [2, 0, 0, 1, 0];
        let c = Product {
            ncols: 3,
            row_ptr,
            col: &dup,
            val: &val,
        };
        assert!(structure(&c, false).is_err());
    }

    #[test]
    fn sample_includes_heaviest_row() {
        let r = sample_rows(&[1, 1, 9, 1, 1, 1, 1], 3);
        assert!(r.contains(&2) && r.contains(&0) && r.contains(&6));
    }
}
