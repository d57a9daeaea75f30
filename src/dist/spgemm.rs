//! Distributed SpGEMM: C = op(A) * B for row-distributed matrices (PETSc's MPIAIJ and
//! Tpetra's contiguous row maps: each rank owns a block of rows with global column ids),
//! and R*A*P or P^T*A*P as two products chained in one plan. The symbolic phase finds
//! which rows of B the local rows of op(A) reference, fetches their structure from their
//! owners once, renumbers op(A)'s columns to the fetched rows and plans the local product
//! on the node; each numeric phase moves only values (B's needed rows, and A's entries for
//! op(A) = A^T) and reruns the node's numeric phase. Every entry of C is summed in the
//! order of op(A)'s row, exactly as the serial product of the gathered matrices sums it,
//! so the result is bitwise the serial one at every rank count (docs/DISTRIBUTED.md).

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::comm::{DistComm, agree};
use super::halo::{Counts, ask, renumber};
use super::layout::Ranges;
use super::node::{DistIdx, DistScalar, NodeSpgemm};
use super::options::SpgemmStats;
use super::plan::{DistMatrix, check_named};
use super::raw::{self, OwnedComm};
use crate::common::csr::{AnyCsr, CsrRef, OffsetSlice, prefix};
use crate::common::options::{Op, OutputFormat};
use crate::common::slices::{IndexSliceMut, OffsetSliceMut, ValueSliceMut};
use crate::error::{Result, Status, err};
use crate::types::{Idx, IndexType};

/// What a numeric call's matrix must still look like (checked against the symbolic call's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Facts {
    global_rows: usize,
    global_cols: usize,
    row_start: usize,
    local_rows: usize,
    nnz: usize,
    base: usize,
    offsets: IndexType,
}

impl Facts {
    fn of<O: Idx, I: Idx, V>(a: &DistMatrix<'_, O, I, V>) -> Facts {
        Facts {
            global_rows: a.global_rows,
            global_cols: a.global_cols,
            row_start: a.row_start,
            local_rows: a.local_rows,
            nnz: a.col_indices.len(),
            base: a.base,
            offsets: O::KIND,
        }
    }
}

/// This rank's rows of a row-distributed matrix: `csr` holds global rows `start ..` with
/// global column ids; the ranks' row blocks are `rows` (every rank's start, in rank order).
struct Part<'a, O: Idx, I: Idx, V: DistScalar> {
    start: usize,
    rows: &'a [usize],
    csr: CsrRef<'a, O, I, V>,
}

/// The rows of op(A) this rank owns when op(A) = A^T: A's entries moved to the owners of
/// their columns and sorted there by column (stable: within a row of A^T, increasing row
/// of A, as the serial transpose orders them).
struct Transpose<I, V> {
    /// `sbuf[s] = values[src[s]]`: A's entries in the order they are sent.
    send_src: Vec<usize>,
    counts: Counts,
    sbuf: Vec<V>,
    rbuf: Vec<V>,
    /// `vals[t] = rbuf[recv_src[t]]`.
    recv_src: Vec<usize>,
    offs: Vec<i64>,
    cols: Vec<I>,
    vals: Vec<V>,
}

/// Rows of B this rank's product needs: the requests it serves and what it received.
struct Import<I, V> {
    /// Local rows of B sent, peer after peer (self included).
    send_rows: Vec<usize>,
    counts: Counts,
    sbuf: Vec<V>,
    /// The needed rows of B in increasing global row, 0-based, global column ids.
    offs: Vec<i64>,
    cols: Vec<I>,
    vals: Vec<V>,
}

/// One product op(A) * B: the transpose (if any), op(A)'s rows with columns renumbered
/// to positions in the imported rows, the import, and the node's plan.
struct Product<I, V, P> {
    tr: Option<Transpose<I, V>>,
    a_offs: Vec<i64>,
    a_cols: Vec<I>,
    imp: Import<I, V>,
    node: P,
    nnz: usize,
    rows: usize,
    row_start: usize,
    ncols: usize,
    rows_imported: u64,
    flops: u64,
    bytes: (u64, u64),
}

/// R*A*P's intermediate A*P, kept for reuse: A's rows, P's columns.
struct Intermediate<I, V> {
    offs: Vec<i64>,
    cols: Vec<I>,
    vals: Vec<V>,
}

enum Stages<I, V, P> {
    One(Box<Product<I, V, P>>),
    Rap {
        ap: Box<Product<I, V, P>>,
        inter: Intermediate<I, V>,
        rap: Box<Product<I, V, P>>,
    },
}

/// A plan for C = op(A) * B or C = op(R) * A * P across the ranks of a communicator, reused
/// while only values change. Created and used collectively; dropping it is collective (it
/// frees its duplicate of the communicator).
pub struct SpgemmPlan<I: DistIdx, V: DistScalar, P> {
    stages: Stages<I, V, P>,
    facts: Vec<Facts>,
    digests: Option<Vec<u64>>,
    format: OutputFormat,
    global_nnz: u64,
    stats: SpgemmStats,
    world: OwnedComm,
}

/// The same outcome on every rank, prefixed with what was being done.
fn agreed<T>(w: &SimpleCommunicator, r: Result<T>) -> Result<T> {
    agree(w, r)
}

/// The rank owning global row `g` of a matrix whose ranks start at `starts` (p + 1 entries).
fn owner(starts: &[usize], g: usize) -> usize {
    starts.partition_point(|&s| s <= g) - 1
}

/// Symbolic transpose of this rank's rows of A (its columns owned by ranks as `cols`
/// says): the rows of A^T this rank owns. Collective.
fn transpose_symbolic<O: Idx, I: DistIdx, V: DistScalar>(
    w: &SimpleCommunicator,
    a: &Part<'_, O, I, V>,
    cols: &[usize],
) -> Result<(Transpose<I, V>, (u64, u64))> {
    let p = w.size() as usize;
    let me = w.rank() as usize;
    let csr = &a.csr;
    let global_rows = *a.rows.last().expect("p + 1 starts");
    // A^T's column ids are A's global rows.
    let ok = if global_rows > 0 && I::try_from_usize(global_rows - 1).is_none() {
        err(
            Status::IndexOverflow,
            format!(
                "A^T has {global_rows} columns, more than {} indices address",
                I::KIND.name()
            ),
        )
    } else {
        Ok(())
    };
    agreed(w, ok)?;
    let mut count = vec![0usize; p];
    let dest: Vec<u32> = csr
        .col_indices()
        .iter()
        .map(|&c| {
            let q = owner(cols, csr.col_of(c));
            count[q] += 1;
            q as u32
        })
        .collect();
    let counts = Counts::exchange(w, &count, "A^T entries")?;
    let mut at = vec![0usize; p];
    for q in 1..p {
        at[q] = at[q - 1] + count[q - 1];
    }
    let nnz = csr.nnz();
    let mut send_src = vec![0usize; nnz];
    let mut pairs = vec![0u64; 2 * nnz];
    for i in 0..csr.nrows() {
        for e in csr.row_range(i) {
            let q = dest[e] as usize;
            let s = at[q];
            at[q] += 1;
            send_src[s] = e;
            pairs[2 * s] = (a.start + i) as u64;
            pairs[2 * s + 1] = csr.col(e) as u64;
        }
    }
    let two = agreed(w, counts.times(2, "A^T entries"))?;
    let mut got = vec![0u64; two.recv_len];
    two.run(w, &pairs, &mut got);
    // Rows of A^T here: the columns this rank owns; a counting sort by row, stable.
    let (c0, c1) = (cols[me], cols[me + 1]);
    let n_in = counts.recv_len;
    let mut offs = vec![0i64; c1 - c0 + 1];
    for e in 0..n_in {
        offs[got[2 * e + 1] as usize - c0 + 1] += 1;
    }
    for t in 0..c1 - c0 {
        offs[t + 1] += offs[t];
    }
    let mut next: Vec<i64> = offs[..c1 - c0].to_vec();
    let mut recv_src = vec![0usize; n_in];
    let mut tcols = vec![I::try_from_usize(0).expect("0 fits"); n_in];
    for e in 0..n_in {
        let t = got[2 * e + 1] as usize - c0;
        let d = next[t] as usize;
        next[t] += 1;
        recv_src[d] = e;
        tcols[d] = I::try_from_usize(got[2 * e] as usize).expect("checked above");
    }
    let (s, r) = two.others();
    let wsz = 8;
    Ok((
        Transpose {
            send_src,
            sbuf: vec![V::ZERO; counts.send_len],
            rbuf: vec![V::ZERO; counts.recv_len],
            vals: vec![V::ZERO; n_in],
            counts,
            recv_src,
            offs,
            cols: tcols,
        },
        (s * wsz, r * wsz),
    ))
}

impl<I: DistIdx, V: DistScalar> Transpose<I, V> {
    /// Moves A's current values to the rows of A^T. Collective.
    fn values(&mut self, w: &SimpleCommunicator, a: &[V]) {
        for (s, &e) in self.sbuf.iter_mut().zip(&self.send_src) {
            *s = a[e];
        }
        self.counts.run_sparse(w, &self.sbuf, &mut self.rbuf);
        for (v, &r) in self.vals.iter_mut().zip(&self.recv_src) {
            *v = self.rbuf[r];
        }
    }
}

/// An import, the rows it fetched from other ranks, and its bytes (sent, received).
type Imported<I, V> = (Import<I, V>, u64, (u64, u64));

/// The rows of B that op(A)'s columns `needed` (sorted, 0-based global rows of B) name:
/// requests to their owners, the structure back. Collective.
fn import_symbolic<OB: Idx, I: DistIdx, V: DistScalar>(
    w: &SimpleCommunicator,
    needed: &[usize],
    b: &Part<'_, OB, I, V>,
) -> Result<Imported<I, V>> {
    let p = w.size() as usize;
    let me = w.rank() as usize;
    let (req, send_rows) = ask(w, needed, &b.rows[..=p])?;
    let lens: Vec<u64> = send_rows.iter().map(|&r| b.csr.row_len(r) as u64).collect();
    // The lengths travel as the rows did (the request counts, reversed).
    let back = Counts {
        send: req.recv.clone(),
        recv: req.send.clone(),
        send_len: req.recv_len,
        recv_len: req.send_len,
        me,
    };
    let mut got_lens = vec![0u64; back.recv_len];
    back.run(w, &lens, &mut got_lens);
    // Entries per peer: the lengths of the rows each piece holds.
    let per_peer = |counts: &[i32], lens: &[u64]| -> Vec<usize> {
        let mut pos = 0;
        counts
            .iter()
            .map(|&n| {
                let n = n as usize;
                let sum = lens[pos..pos + n].iter().map(|&l| l as usize).sum();
                pos += n;
                sum
            })
            .collect()
    };
    let send_n = per_peer(&back.send.0, &lens);
    let recv_n = per_peer(&back.recv.0, &got_lens);
    let counts = agreed(
        w,
        Counts::new(&send_n, &recv_n, me, "imported entries of B"),
    )?;
    let mut scols = Vec::with_capacity(counts.send_len);
    for &r in &send_rows {
        scols.extend(
            b.csr
                .row_cols(r)
                .iter()
                .map(|&c| I::try_from_usize(b.csr.col_of(c)).expect("fits: a column of B")),
        );
    }
    let zero = I::try_from_usize(0).expect("0 fits");
    let mut cols = vec![zero; counts.recv_len];
    counts.run(w, &scols, &mut cols);
    let mut offs = Vec::with_capacity(needed.len() + 1);
    offs.push(0i64);
    let mut acc = 0i64;
    for &l in &got_lens {
        acc += l as i64;
        offs.push(acc);
    }
    let remote = (0..p)
        .filter(|&q| q != me)
        .map(|q| back.recv.0[q] as u64)
        .sum();
    let w_i = std::mem::size_of::<I>() as u64;
    let (rs, rr) = req.others();
    let (ls, lr) = back.others();
    let (cs, cr) = counts.others();
    let bytes = (rs * 8 + ls * 8 + cs * w_i, rr * 8 + lr * 8 + cr * w_i);
    Ok((
        Import {
            send_rows,
            sbuf: vec![V::ZERO; counts.send_len],
            vals: vec![V::ZERO; counts.recv_len],
            counts,
            offs,
            cols,
        },
        remote,
        bytes,
    ))
}

impl<I: DistIdx, V: DistScalar> Import<I, V> {
    /// Moves B's current values of the needed rows here. Collective.
    fn values<OB: Idx>(&mut self, w: &SimpleCommunicator, b: &CsrRef<'_, OB, I, V>, vals: &[V]) {
        let mut pos = 0;
        for &r in &self.send_rows {
            let rr = b.row_range(r);
            let n = rr.len();
            self.sbuf[pos..pos + n].copy_from_slice(&vals[rr]);
            pos += n;
        }
        self.counts.run_sparse(w, &self.sbuf, &mut self.vals);
    }

    fn erased(&self, ncols: usize) -> AnyCsr<'_> {
        AnyCsr {
            nrows: self.offs.len() - 1,
            ncols,
            base: 0,
            offsets: OffsetSlice::I64(&self.offs),
            indices: I::erase(&self.cols),
            values: Some(V::erase(&self.vals)),
            value_type: V::erase(&self.vals).kind(),
        }
    }
}

/// A 0-based local CSR the backend built, erased for the node.
fn erased<'a, I: DistIdx, V: DistScalar>(
    offs: &'a [i64],
    cols: &'a [I],
    vals: &'a [V],
    ncols: usize,
) -> AnyCsr<'a> {
    AnyCsr {
        nrows: offs.len() - 1,
        ncols,
        base: 0,
        offsets: OffsetSlice::I64(offs),
        indices: I::erase(cols),
        values: Some(V::erase(vals)),
        value_type: V::erase(vals).kind(),
    }
}

/// The symbolic phase of op(A) * B, op(A) this rank's rows (`a`, or its transpose).
/// Collective.
#[allow(clippy::too_many_arguments)]
fn product_symbolic<N: NodeSpgemm, OA: Idx, OB: Idx, I: DistIdx, V: DistScalar>(
    w: &SimpleCommunicator,
    node: &N,
    op: Op,
    a: &Part<'_, OA, I, V>,
    a_cols: &[usize],
    b: &Part<'_, OB, I, V>,
    format: OutputFormat,
    c_offsets: Option<OffsetSliceMut<'_>>,
) -> Result<Product<I, V, N::Plan>> {
    let me = w.rank() as usize;
    let mut bytes = (0u64, 0u64);
    let (tr, rows, row_start) = match op {
        Op::NonTranspose => (None, a.csr.nrows(), a.start),
        _ => {
            let (t, b2) = transpose_symbolic(w, a, a_cols)?;
            bytes = b2;
            (Some(t), a_cols[me + 1] - a_cols[me], a_cols[me])
        }
    };
    let b_rows = *b.rows.last().expect("p + 1 starts");
    // op(A)'s rows: offsets from 0, raw columns with their base.
    let (a_offs, raw_cols, base): (Vec<i64>, &[I], usize) = match &tr {
        None => (
            a.csr
                .row_offsets()
                .iter()
                .map(|&o| (o.to_usize() - a.csr.base()) as i64)
                .collect(),
            a.csr.col_indices(),
            a.csr.base(),
        ),
        Some(t) => (t.offs.clone(), &t.cols[..], 0),
    };
    let (needed, a_cols_new) = agreed(w, renumber(raw_cols, base, b_rows))?;
    let (imp, rows_imported, b2) = import_symbolic(w, &needed, b)?;
    bytes = (bytes.0 + b2.0, bytes.1 + b2.1);
    let ncols = b.csr.ncols();
    let planned = (|| {
        let zeros = vec![V::ZERO; a_cols_new.len()];
        let ae = erased(&a_offs, &a_cols_new, &zeros, needed.len());
        let be = imp.erased(ncols);
        let plan = node.spgemm_symbolic(&ae, &be, format)?;
        if let Some(out) = c_offsets {
            node.spgemm_row_offsets(&plan, out)?;
        }
        Ok(plan)
    })();
    let plan = agreed(w, planned)?;
    let nnz = node.spgemm_nnz(&plan);
    let flops = node.spgemm_flops(&plan);
    Ok(Product {
        flops,
        tr,
        a_offs,
        a_cols: a_cols_new,
        imp,
        node: plan,
        nnz,
        rows,
        row_start,
        ncols,
        rows_imported,
        bytes,
    })
}

impl<I: DistIdx, V: DistScalar, P: Send> Product<I, V, P> {
    /// Moves the values this product needs (A's for a transpose, B's needed rows) and
    /// fills C. `a_vals` are the values of A's local rows, `b` B's. Returns (seconds moving
    /// values, seconds in the node). Collective up to the node's product; its error is the
    /// caller's to agree.
    fn numeric<N: NodeSpgemm<Plan = P>, OB: Idx>(
        &mut self,
        w: &SimpleCommunicator,
        node: &N,
        a_vals: &[V],
        b: (&CsrRef<'_, OB, I, V>, &[V]),
        cols: IndexSliceMut<'_>,
        vals: ValueSliceMut<'_>,
    ) -> (f64, f64, Result<()>) {
        let t0 = Instant::now();
        if let Some(t) = &mut self.tr {
            t.values(w, a_vals);
        }
        self.imp.values(w, b.0, b.1);
        let t1 = Instant::now();
        let av = match &self.tr {
            Some(t) => &t.vals[..],
            None => a_vals,
        };
        let ae = erased(&self.a_offs, &self.a_cols, av, self.imp.offs.len() - 1);
        let be = self.imp.erased(self.ncols);
        let r = node.spgemm_numeric(&self.node, &ae, &be, cols, Some(vals));
        let t2 = Instant::now();
        ((t1 - t0).as_secs_f64(), (t2 - t1).as_secs_f64(), r)
    }

    /// C's column indices alone, from the structure the symbolic phase imported (no MPI).
    fn structure<N: NodeSpgemm<Plan = P>>(&self, node: &N, cols: IndexSliceMut<'_>) -> Result<()> {
        let a_vals = vec![V::ZERO; self.a_cols.len()];
        let ae = erased(&self.a_offs, &self.a_cols, &a_vals, self.imp.offs.len() - 1);
        let be = self.imp.erased(self.ncols);
        node.spgemm_numeric(&self.node, &ae, &be, cols, None)
    }

    /// Bytes of values one numeric call moves (sent, received), self excluded.
    fn value_bytes(&self) -> (u64, u64) {
        let w = std::mem::size_of::<V>() as u64;
        let (s, r) = self.imp.counts.others();
        let (ts, tr) = self.tr.as_ref().map_or((0, 0), |t| t.counts.others());
        ((s + ts) * w, (r + tr) * w)
    }
}

/// A caller's matrix as the backend reads it: checked (each rank, then together), its
/// row ranges and, when `digest`, its structure digest. Collective.
fn checked<'a, N: NodeSpgemm, O: Idx, I: DistIdx, V: DistScalar>(
    w: &SimpleCommunicator,
    node: &N,
    m: &DistMatrix<'a, O, I, V>,
    name: &str,
) -> Result<(Ranges, u64, CsrRef<'a, O, I, V>)> {
    let (r, d) = check_named(w, node, m, name)?;
    let csr = m.local()?;
    Ok((r, d, csr))
}

/// The value slice of a checked matrix (present: `DistMatrix` always has values).
fn values_of<'a, O: Idx, I: Idx, V: DistScalar>(m: &DistMatrix<'a, O, I, V>) -> &'a [V] {
    m.values
}

fn dims_err(what: String) -> Result<()> {
    err(Status::DimensionMismatch, what)
}

/// That op(A) * B is defined.
fn check_dims<O: Idx, I: Idx, V>(
    op: Op,
    (na, a): (&str, &DistMatrix<'_, O, I, V>),
    (nb, b): (&str, &DistMatrix<'_, O, I, V>),
) -> Result<()> {
    let inner = match op {
        Op::NonTranspose => a.global_cols,
        _ => a.global_rows,
    };
    if inner != b.global_rows {
        return dims_err(format!(
            "{}{na} is {} x {} and {nb} is {} x {}: inner dimensions differ",
            if op == Op::NonTranspose { "" } else { "op(" },
            a.global_rows,
            a.global_cols,
            b.global_rows,
            b.global_cols
        ));
    }
    Ok(())
}

/// The column ranges of a matrix (its x_range on every rank; the rows of op(A) = A^T).
fn col_ranges(r: &Ranges) -> &[usize] {
    &r.xrows
}

impl<I: DistIdx, V: DistScalar, P: Send> SpgemmPlan<I, V, P> {
    /// Symbolic phase of C = op(A) * B (op N, T or C; C is A^T for real values). Writes
    /// this rank's row offsets of C (its rows of op(A), in `format`) into `c_offsets`.
    /// Collective over `comm`; the same status on every rank.
    #[allow(clippy::too_many_arguments)]
    pub fn product<N: NodeSpgemm<Plan = P>, O: Idx>(
        comm: &DistComm,
        node: &N,
        op: Op,
        a: &DistMatrix<'_, O, I, V>,
        b: &DistMatrix<'_, O, I, V>,
        format: OutputFormat,
        validate: bool,
        c_offsets: OffsetSliceMut<'_>,
    ) -> Result<Self> {
        let t0 = Instant::now();
        raw::mpi_usable()?;
        let world = raw::dup_of(comm.raw())?;
        let w = world.comm();
        agreed(w, check_dims(op, ("A", a), ("B", b)))?;
        let (ra, da, ca) = checked(w, node, a, "A")?;
        let (rb, db, cb) = checked(w, node, b, "B")?;
        let pa = Part {
            start: a.row_start,
            rows: &ra.rows,
            csr: ca,
        };
        let pb = Part {
            start: b.row_start,
            rows: &rb.rows,
            csr: cb,
        };
        let prod = product_symbolic(
            w,
            node,
            op,
            &pa,
            col_ranges(&ra),
            &pb,
            format,
            Some(c_offsets),
        )?;
        let mut plan = SpgemmPlan {
            facts: vec![Facts::of(a), Facts::of(b)],
            digests: validate.then(|| vec![da, db]),
            format,
            global_nnz: 0,
            stats: SpgemmStats::default(),
            stages: Stages::One(Box::new(prod)),
            world,
        };
        plan.finish(t0);
        Ok(plan)
    }

    /// Symbolic phase of C = op(R) * A * P (op N: R*A*P; op T: P^T*A*P with R = P, as an
    /// AMG setup forms the coarse operator): A*P first (kept in the plan), then op(R)
    /// times it. Writes this rank's row offsets of C into `c_offsets`. Collective.
    #[allow(clippy::too_many_arguments)]
    pub fn rap<N: NodeSpgemm<Plan = P>, O: Idx>(
        comm: &DistComm,
        node: &N,
        op: Op,
        r: &DistMatrix<'_, O, I, V>,
        a: &DistMatrix<'_, O, I, V>,
        p: &DistMatrix<'_, O, I, V>,
        format: OutputFormat,
        validate: bool,
        c_offsets: OffsetSliceMut<'_>,
    ) -> Result<Self> {
        let t0 = Instant::now();
        raw::mpi_usable()?;
        let world = raw::dup_of(comm.raw())?;
        let w = world.comm();
        let dims = check_dims(Op::NonTranspose, ("A", a), ("P", p)).and_then(|()| {
            let inner = match op {
                Op::NonTranspose => r.global_cols,
                _ => r.global_rows,
            };
            if inner != a.global_rows {
                return dims_err(format!(
                    "op(R) has {inner} columns and A {} rows: inner dimensions differ",
                    a.global_rows
                ));
            }
            Ok(())
        });
        agreed(w, dims)?;
        let (rr, dr, cr) = checked(w, node, r, "R")?;
        let (ra, da, ca) = checked(w, node, a, "A")?;
        let (rp, dp, cp) = checked(w, node, p, "P")?;
        let pa = Part {
            start: a.row_start,
            rows: &ra.rows,
            csr: ca,
        };
        let pp = Part {
            start: p.row_start,
            rows: &rp.rows,
            csr: cp,
        };
        // A*P into the plan's arrays: 64-bit offsets, P's index type, 0-based.
        let inner_format = OutputFormat {
            offsets: IndexType::Int64,
            indices: I::KIND,
            base: 0,
        };
        let mut ap_offs = vec![0i64; ca.nrows() + 1];
        let ap = product_symbolic(
            w,
            node,
            Op::NonTranspose,
            &pa,
            col_ranges(&ra),
            &pp,
            inner_format,
            Some(OffsetSliceMut::I64(&mut ap_offs)),
        )?;
        let zero = I::try_from_usize(0).expect("0 fits");
        let inter = Intermediate {
            cols: vec![zero; ap.nnz],
            vals: vec![V::ZERO; ap.nnz],
            offs: ap_offs,
        };
        // The structure of A*P, for the second product's symbolic phase (no values yet).
        let mut inter = inter;
        let ap = ap;
        let structure = ap.structure(node, I::erase_mut(&mut inter.cols));
        agreed(w, structure)?;
        let ap_csr = CsrRef::new(
            ca.nrows(),
            p.global_cols,
            0,
            &inter.offs[..],
            &inter.cols[..],
            Some(&inter.vals[..]),
        )?;
        let pap = Part {
            start: a.row_start,
            rows: &ra.rows,
            csr: ap_csr,
        };
        let pr = Part {
            start: r.row_start,
            rows: &rr.rows,
            csr: cr,
        };
        let rap = product_symbolic(
            w,
            node,
            op,
            &pr,
            col_ranges(&rr),
            &pap,
            format,
            Some(c_offsets),
        )?;
        let mut plan = SpgemmPlan {
            facts: vec![Facts::of(r), Facts::of(a), Facts::of(p)],
            digests: validate.then(|| vec![dr, da, dp]),
            format,
            global_nnz: 0,
            stats: SpgemmStats::default(),
            stages: Stages::Rap {
                ap: Box::new(ap),
                inter,
                rap: Box::new(rap),
            },
            world,
        };
        plan.finish(t0);
        Ok(plan)
    }

    /// Global nnz and the symbolic statistics (one allreduce).
    fn finish(&mut self, t0: Instant) {
        let products: Vec<&Product<I, V, P>> = match &self.stages {
            Stages::One(p) => vec![p],
            Stages::Rap { ap, rap, .. } => vec![ap, rap],
        };
        let mut st = SpgemmStats::default();
        for p in &products {
            st.rows_imported += p.rows_imported;
            st.flops += p.flops;
            st.symbolic_bytes_sent += p.bytes.0;
            st.symbolic_bytes_received += p.bytes.1;
            let (s, r) = p.value_bytes();
            st.numeric_bytes_sent += s;
            st.numeric_bytes_received += r;
        }
        let mine = self.nnz() as u64;
        let mut all = 0u64;
        self.world
            .comm()
            .all_reduce_into(&mine, &mut all, SystemOperation::sum());
        self.global_nnz = all;
        st.symbolic_s = t0.elapsed().as_secs_f64();
        self.stats = st;
    }

    fn last(&self) -> &Product<I, V, P> {
        match &self.stages {
            Stages::One(p) => p,
            Stages::Rap { rap, .. } => rap,
        }
    }

    /// Entries of C on this rank.
    pub fn nnz(&self) -> usize {
        self.last().nnz
    }
    /// Entries of C on all ranks.
    pub fn global_nnz(&self) -> u64 {
        self.global_nnz
    }
    /// This rank's rows of C: (first global row, count).
    pub fn rows(&self) -> (usize, usize) {
        let l = self.last();
        (l.row_start, l.rows)
    }
    /// Global columns of C.
    pub fn ncols(&self) -> usize {
        self.last().ncols
    }
    pub fn format(&self) -> OutputFormat {
        self.format
    }
    /// Matrices the plan multiplies (2, or 3 for R*A*P).
    pub fn operands(&self) -> usize {
        self.facts.len()
    }
    pub fn stats(&self) -> SpgemmStats {
        self.stats
    }
    /// Numeric phase with the current values of `mats` (A, B; or R, A, P), the matrices of
    /// the symbolic phase (the same structure: `Status::PlanMismatch` otherwise, checked
    /// with digests when the plan was made with validation). Fills this rank's column
    /// indices (global) and values of C. Collective.
    pub fn numeric<N: NodeSpgemm<Plan = P>, O: Idx>(
        &mut self,
        node: &N,
        mats: &[&DistMatrix<'_, O, I, V>],
        pre: Result<()>,
        cols: IndexSliceMut<'_>,
        vals: ValueSliceMut<'_>,
    ) -> Result<()> {
        let t0 = Instant::now();
        raw::mpi_usable()?;
        let names: &[&str] = if mats.len() == 3 {
            &["R", "A", "P"]
        } else {
            &["A", "B"]
        };
        let checks = pre.and_then(|()| self.check_same(node, names, mats));
        let csrs = agree(self.world.comm(), checks)?;
        let w = self.world.comm();
        let (mut imp_s, mut loc_s);
        let r = match &mut self.stages {
            Stages::One(p) => {
                let (i, l, r) = p.numeric(
                    w,
                    node,
                    values_of(mats[0]),
                    (&csrs[1], values_of(mats[1])),
                    cols,
                    vals,
                );
                (imp_s, loc_s) = (i, l);
                r
            }
            Stages::Rap { ap, inter, rap } => {
                let (i, l, r) = ap.numeric(
                    w,
                    node,
                    values_of(mats[1]),
                    (&csrs[2], values_of(mats[2])),
                    I::erase_mut(&mut inter.cols),
                    V::erase_mut(&mut inter.vals),
                );
                (imp_s, loc_s) = (i, l);
                agree(w, r)?;
                let ap_csr = CsrRef::new(
                    ap.rows,
                    ap.ncols,
                    0,
                    &inter.offs[..],
                    &inter.cols[..],
                    Some(&inter.vals[..]),
                )?;
                let (i, l, r) = rap.numeric(
                    w,
                    node,
                    values_of(mats[0]),
                    (&ap_csr, &inter.vals[..]),
                    cols,
                    vals,
                );
                imp_s += i;
                loc_s += l;
                r
            }
        };
        agree(w, r)?;
        self.stats.numeric_s = t0.elapsed().as_secs_f64();
        self.stats.import_s = imp_s;
        self.stats.local_s = loc_s;
        Ok(())
    }

    /// This rank's checks of a numeric call's matrices against the plan's (no MPI).
    fn check_same<'a, N: NodeSpgemm, O: Idx>(
        &self,
        node: &N,
        names: &[&str],
        mats: &[&DistMatrix<'a, O, I, V>],
    ) -> Result<Vec<CsrRef<'a, O, I, V>>> {
        if mats.len() != self.facts.len() {
            return err(
                Status::InvalidValue,
                format!(
                    "the plan multiplies {} matrices, {} given",
                    self.facts.len(),
                    mats.len()
                ),
            );
        }
        let mut out = Vec::with_capacity(mats.len());
        for (n, m) in mats.iter().enumerate() {
            let f = Facts::of(m);
            if f != self.facts[n] {
                return err(
                    Status::PlanMismatch,
                    format!(
                        "{}: {} x {} rows {}+{} with {} entries (base {}, {} offsets), the \
                         plan was made for {} x {} rows {}+{} with {} entries (base {}, {} offsets)",
                        names[n],
                        f.global_rows,
                        f.global_cols,
                        f.row_start,
                        f.local_rows,
                        f.nnz,
                        f.base,
                        f.offsets.name(),
                        self.facts[n].global_rows,
                        self.facts[n].global_cols,
                        self.facts[n].row_start,
                        self.facts[n].local_rows,
                        self.facts[n].nnz,
                        self.facts[n].base,
                        self.facts[n].offsets.name()
                    ),
                );
            }
            let csr = m.local().map_err(|e| prefix(names[n], e))?;
            if let Some(d) = &self.digests {
                let now = node.local(|| csr.validate_and_digest(names[n]))?;
                if now != d[n] {
                    return err(
                        Status::PlanMismatch,
                        format!(
                            "{}: this rank's structure differs from the symbolic phase's \
                             (only values may change between numeric calls)",
                            names[n]
                        ),
                    );
                }
            }
            out.push(csr);
        }
        Ok(out)
    }
}
