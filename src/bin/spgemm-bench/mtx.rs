//! Matrix Market reader for the benchmark only (not part of the library or its ABI).
//!
//! Reads `coordinate` files with `real`, `integer` or `pattern` fields and `general`,
//! `symmetric` or `skew-symmetric` symmetry into a 0-based CSR matrix with int32 offsets
//! and column indices and f64 values. Like the peer drivers' reader (anchors/src/common.h):
//! the off-diagonal half of a symmetric file is mirrored (negated for skew-symmetric),
//! pattern entries get the value 1, columns are sorted within each row and duplicate
//! entries are summed in file order, so every library multiplies exactly the same matrix.

use std::path::Path;

/// A CSR matrix owned by the benchmark (0-based, columns sorted, no duplicates).
#[derive(Clone, Debug, PartialEq)]
pub struct Csr {
    pub nrows: usize,
    pub ncols: usize,
    pub row_ptr: Vec<i32>,
    pub col: Vec<i32>,
    pub val: Vec<f64>,
}

impl Csr {
    pub fn nnz(&self) -> usize {
        self.col.len()
    }
    pub fn row(&self, i: usize) -> std::ops::Range<usize> {
        self.row_ptr[i] as usize..self.row_ptr[i + 1] as usize
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Real,
    Pattern,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Symmetry {
    General,
    Symmetric,
    Skew,
}

pub fn read_mtx(path: &Path) -> Result<Csr, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let coo = parse_coo(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    // The file text goes before the CSR is built: peak memory is part of what the
    // benchmark reports, and the peers' reader frees its buffer at the same point.
    drop(bytes);
    coo.into_csr()
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Entries as read (0-based), mirrored for symmetric files.
pub struct Coo {
    pub nrows: usize,
    pub ncols: usize,
    pub row: Vec<u32>,
    pub col: Vec<u32>,
    pub val: Vec<f64>,
}

impl Coo {
    pub fn into_csr(self) -> Result<Csr, String> {
        coo_to_csr(self.nrows, self.ncols, self.row, self.col, self.val)
    }
}

/// Byte cursor over the file body.
struct Cursor<'a> {
    b: &'a [u8],
    p: usize,
}

impl<'a> Cursor<'a> {
    fn skip_ws(&mut self) {
        while self.p < self.b.len() && self.b[self.p].is_ascii_whitespace() {
            self.p += 1;
        }
    }
    /// The next whitespace-separated token (empty at the end of the input).
    fn token(&mut self) -> &'a [u8] {
        self.skip_ws();
        let s = self.p;
        while self.p < self.b.len() && !self.b[self.p].is_ascii_whitespace() {
            self.p += 1;
        }
        &self.b[s..self.p]
    }
    fn int(&mut self, what: &str) -> Result<i64, String> {
        let t = self.token();
        let (neg, digits) = match t.first() {
            Some(b'-') => (true, &t[1..]),
            Some(b'+') => (false, &t[1..]),
            _ => (false, t),
        };
        if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
            return Err(format!(
                "expected an integer for {what}, found {:?}",
                String::from_utf8_lossy(t)
            ));
        }
        let v = digits
            .iter()
            .fold(0i64, |acc, &d| acc * 10 + (d - b'0') as i64);
        Ok(if neg { -v } else { v })
    }
    fn real(&mut self, what: &str) -> Result<f64, String> {
        let t = self.token();
        std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| {
                format!(
                    "expected a number for {what}, found {:?}",
                    String::from_utf8_lossy(t)
                )
            })
    }
}

#[cfg(test)]
pub fn parse_mtx(bytes: &[u8]) -> Result<Csr, String> {
    parse_coo(bytes)?.into_csr()
}

pub fn parse_coo(bytes: &[u8]) -> Result<Coo, String> {
    let nl = bytes
        .iter()
        .position(|&c| c == b'\n')
        .unwrap_or(bytes.len());
    let header = String::from_utf8_lossy(&bytes[..nl]).to_ascii_lowercase();
    let words: Vec<&str> = header.split_whitespace().collect();
    if words.first() != Some(&"%%matrixmarket") || words.len() < 5 {
        return Err("not a Matrix Market file (first line must be '%%MatrixMarket matrix coordinate FIELD SYMMETRY')".into());
    }
    if words[1] != "matrix" || words[2] != "coordinate" {
        return Err(format!(
            "only 'matrix coordinate' files are supported, found '{} {}'",
            words[1], words[2]
        ));
    }
    let field = match words[3] {
        "real" | "integer" | "double" => Field::Real,
        "pattern" => Field::Pattern,
        f => {
            return Err(format!(
                "field '{f}' is not supported (real, integer, pattern)"
            ));
        }
    };
    let symmetry = match words[4] {
        "general" => Symmetry::General,
        "symmetric" => Symmetry::Symmetric,
        "skew-symmetric" => Symmetry::Skew,
        s => {
            return Err(format!(
                "symmetry '{s}' is not supported (general, symmetric, skew-symmetric)"
            ));
        }
    };
    // Skip the header and comment lines.
    let mut p = (nl + 1).min(bytes.len());
    loop {
        while p < bytes.len() && (bytes[p] == b'\n' || bytes[p] == b'\r') {
            p += 1;
        }
        if p < bytes.len() && bytes[p] == b'%' {
            p = bytes[p..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(bytes.len(), |q| p + q + 1);
        } else {
            break;
        }
    }
    let mut c = Cursor { b: bytes, p };
    let m = c.int("the row count")?;
    let n = c.int("the column count")?;
    let nz = c.int("the entry count")?;
    if m < 0 || n < 0 || nz < 0 || m > i32::MAX as i64 || n > i32::MAX as i64 {
        return Err(format!(
            "size line {m} {n} {nz}: sizes must be non-negative and fit int32"
        ));
    }
    let (m, n, nz) = (m as usize, n as usize, nz as usize);
    let mirrored = symmetry != Symmetry::General;
    let cap = if mirrored { 2 * nz } else { nz };
    let mut ri: Vec<u32> = Vec::with_capacity(cap);
    let mut ci: Vec<u32> = Vec::with_capacity(cap);
    let mut vv: Vec<f64> = Vec::with_capacity(cap);
    for t in 0..nz {
        let i = c
            .int("a row index")
            .map_err(|e| format!("entry {}: {e}", t + 1))?;
        let j = c
            .int("a column index")
            .map_err(|e| format!("entry {}: {e}", t + 1))?;
        let v = match field {
            Field::Real => c
                .real("a value")
                .map_err(|e| format!("entry {}: {e}", t + 1))?,
            Field::Pattern => 1.0,
        };
        if i < 1 || i as usize > m || j < 1 || j as usize > n {
            return Err(format!(
                "entry {}: ({i}, {j}) is outside the {m} x {n} matrix",
                t + 1
            ));
        }
        let (i, j) = (i as u32 - 1, j as u32 - 1);
        ri.push(i);
        ci.push(j);
        vv.push(v);
        if mirrored && i != j {
            ri.push(j);
            ci.push(i);
            vv.push(if symmetry == Symmetry::Skew { -v } else { v });
        }
    }
    Ok(Coo {
        nrows: m,
        ncols: n,
        row: ri,
        col: ci,
        val: vv,
    })
}

/// Counting sort by row, stable sort by column within rows, duplicates summed in input
/// order; the triplets are freed as soon as they are scattered and rows are compacted in
/// place, so the peak is the triplets plus one CSR copy (as in the peers' reader).
pub fn coo_to_csr(
    m: usize,
    n: usize,
    ri: Vec<u32>,
    ci: Vec<u32>,
    vv: Vec<f64>,
) -> Result<Csr, String> {
    let k = ri.len();
    if k > i32::MAX as usize {
        return Err(format!("{k} entries: more than int32 offsets can address"));
    }
    let mut start = vec![0usize; m + 1];
    for &i in &ri {
        start[i as usize + 1] += 1;
    }
    for r in 0..m {
        start[r + 1] += start[r];
    }
    let mut pos = start.clone();
    let mut col = vec![0i32; k];
    let mut val = vec![0f64; k];
    for t in 0..k {
        let q = &mut pos[ri[t] as usize];
        col[*q] = ci[t] as i32;
        val[*q] = vv[t];
        *q += 1;
    }
    drop((ri, ci, vv, pos));
    let mut row_ptr = Vec::with_capacity(m + 1);
    let mut pairs: Vec<(i32, f64)> = Vec::new();
    let mut w = 0usize;
    row_ptr.push(0i32);
    for r in 0..m {
        pairs.clear();
        pairs.extend((start[r]..start[r + 1]).map(|t| (col[t], val[t])));
        // Stable, so duplicates are summed in file order (as the peers' reader does).
        pairs.sort_by_key(|&(j, _)| j);
        let row_begin = w;
        for &(j, v) in &pairs {
            if w > row_begin && col[w - 1] == j {
                val[w - 1] += v;
            } else {
                col[w] = j;
                val[w] = v;
                w += 1;
            }
        }
        row_ptr.push(w as i32);
    }
    col.truncate(w);
    val.truncate(w);
    Ok(Csr {
        nrows: m,
        ncols: n,
        row_ptr,
        col,
        val,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn general_with_duplicates_and_comments() {
        let f = b"%%MatrixMarket matrix coordinate real general\n% c\n%\n3 4 5\n3 4 1.5\n1 2 2\n1 2 0.25\n2 1 -1e1\n1 1 3\n";
        let a = parse_mtx(f).unwrap();
        assert_eq!(a.nrows, 3);
        assert_eq!(a.ncols, 4);
        assert_eq!(a.row_ptr, vec![0, 2, 3, 4]);
        assert_eq!(a.col, vec![0, 1, 0, 3]);
        assert_eq!(a.val, vec![3.0, 2.25, -10.0, 1.5]);
    }

    #[test]
    fn symmetric_pattern_and_skew() {
        let f = b"%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n";
        let a = parse_mtx(f).unwrap();
        assert_eq!(a.row_ptr, vec![0, 2, 3]);
        assert_eq!(a.col, vec![0, 1, 0]);
        assert_eq!(a.val, vec![1.0, 1.0, 1.0]);
        let f = b"%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 4\n";
        let a = parse_mtx(f).unwrap();
        assert_eq!(a.col, vec![1, 0]);
        assert_eq!(a.val, vec![-4.0, 4.0]);
    }

    #[test]
    fn bad_inputs_are_named() {
        let e = parse_mtx(b"%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n")
            .unwrap_err();
        assert!(e.contains("entry 1") && e.contains("outside"), "{e}");
        let e = parse_mtx(b"%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n")
            .unwrap_err();
        assert!(e.contains("entry 2"), "{e}");
        let e = parse_mtx(b"%%MatrixMarket matrix array real general\n2 2\n").unwrap_err();
        assert!(e.contains("coordinate"), "{e}");
        assert!(parse_mtx(b"hello").is_err());
    }
}
