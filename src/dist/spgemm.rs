//! Distributed SpGEMM: C = op(A) * B for row-distributed matrices (PETSc's MPIAIJ and
//! Tpetra's contiguous row maps: each rank owns a block of rows with global column ids),
//! and R*A*P or P^T*A*P as two products chained in one plan. The symbolic phase finds
//! which rows of B the local rows of op(A) reference, fetches their structure from their
//! owners once, renumbers op(A)'s columns to the fetched rows and plans the local product
//! on the node; each numeric phase moves only values (B's needed rows, and A's entries for
//! op(A) = A^T) and reruns the node's numeric phase. Every entry of C is summed in the
//! order of op(A)'s row, exactly as the serial product of the gathered matrices sums it,
//! so the result is bitwise the serial one at every rank count (docs/DISTRIBUTED.md).

use std::ops::Range;
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
    /// The entries other ranks send and receive (this rank's own pieces are empty).
    counts: Counts,
    sbuf: Vec<V>,
    rbuf: Vec<V>,
    /// Where each value of A^T comes from (see [`Sources`]).
    recv_src: Sources,
    /// A's local entries when the plan was made (the sources below it are A's).
    own: usize,
    offs: Vec<i64>,
    cols: Vec<I>,
    vals: Vec<V>,
}

/// Rows of B this rank's product needs: the requests it serves and what it received.
struct Import<I, V> {
    /// Local rows of B sent, peer after peer (self included).
    send_rows: Vec<usize>,
    /// Those of `send_rows` this rank asked itself for (copied, not sent).
    own_rows: Range<usize>,
    counts: Counts,
    sbuf: Vec<V>,
    /// The needed rows of B in increasing global row, 0-based, global column ids.
    offs: Vec<i64>,
    cols: Vec<I>,
    vals: Vec<V>,
}

/// Consecutive local rows of op(A) multiplied by one node plan into their own consecutive
/// part of C. Rows whose columns all name this rank's own rows of B read B in place (no
/// copy, and no wait: they are multiplied while the other rows' values travel); the
/// others read the imported rows. Each row is one row of the node's product, summed in
/// op(A)'s order, so the split changes no value.
struct Segment<I, P> {
    rows: Range<usize>,
    /// op(A)'s entries of these rows (positions in its local arrays).
    entries: Range<usize>,
    /// The rows' offsets from `base` and their columns renumbered to rows of the segment's
    /// B (`inner` of them); `cols` None: the caller's columns of op(A) at `entries`, which
    /// need no renumbering (see [`Borrow`]).
    offs: Vec<i64>,
    cols: Option<Vec<I>>,
    base: usize,
    inner: usize,
    own: bool,
    node: P,
    nnz: usize,
}

impl<I: DistIdx, P> Segment<I, P> {
    /// The segment's rows of op(A) for the node, with their values (`av`: all of op(A)'s)
    /// or without; `a_cols`: all of op(A)'s columns in this call.
    fn a<'s, V: DistScalar>(&'s self, a_cols: &'s [I], av: Option<&'s [V]>) -> AnyCsr<'s> {
        let vals = av.map(|v| &v[self.entries.clone()]);
        let cols = match &self.cols {
            Some(c) => &c[..],
            None => &a_cols[self.entries.clone()],
        };
        erased(&self.offs, cols, vals, self.inner, self.base)
    }
}

/// This rank's rows of B as own segments read them: offsets from `base` and global column
/// ids (`cols` None: the caller's, read in place as the values of each numeric call are).
struct OwnRows<I> {
    offs: Vec<i64>,
    cols: Option<Vec<I>>,
    base: usize,
}

impl<I: DistIdx> OwnRows<I> {
    /// The rows for the node; `b_cols`: B's columns in this call.
    fn erased<'s, V: DistScalar>(
        &'s self,
        b_cols: &'s [I],
        vals: Option<&'s [V]>,
        ncols: usize,
    ) -> AnyCsr<'s> {
        let cols = self.cols.as_deref().unwrap_or(b_cols);
        erased(&self.offs, cols, vals, ncols, self.base)
    }
}

/// Which operands' arrays the node plans may read in place at every numeric call (instead
/// of the plan's copies): those whose structure cannot differ from the symbolic phase's,
/// because the plan owns them or checks their digests before each call (validation on).
/// A node plan replays on the structure it was made for and checks nothing itself.
#[derive(Clone, Copy)]
struct Borrow {
    a: bool,
    b: bool,
}

/// Rows of op(A) reading only own rows of B are multiplied in place when their longest
/// run holds at least 1 / OWN_SHARE of the rows (a shorter one is not worth a node plan).
const OWN_SHARE: usize = 8;

/// One product op(A) * B: the transpose (if any), op(A)'s rows in segments, the import
/// of the rows of B the other segments need, and this rank's rows of B for its own.
struct Product<I, V, P> {
    tr: Option<Transpose<I, V>>,
    segs: Vec<Segment<I, P>>,
    own: Option<OwnRows<I>>,
    imp: Import<I, V>,
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
    agree(w, ok)?;
    // Entries whose column this rank owns stay here: no pairs, no copy through MPI
    // (at one rank that is every entry).
    let (c0, c1) = (cols[me], cols[me + 1]);
    let dest = |g: usize| {
        if (c0..c1).contains(&g) {
            me
        } else {
            owner(cols, g)
        }
    };
    // Entries per other rank (this rank's own are not sent: its count stays 0), and this
    // rank's own per row of A^T (the counting sort's counts).
    let mut count = vec![0usize; p];
    let mut offs = vec![0i64; c1 - c0 + 1];
    for &c in csr.col_indices() {
        let g = csr.col_of(c);
        let q = dest(g);
        if q == me {
            offs[g - c0 + 1] += 1;
        } else {
            count[q] += 1;
        }
    }
    let counts = Counts::exchange(w, &count, "A^T entries")?;
    let mut at = vec![0usize; p];
    for q in 1..p {
        at[q] = at[q - 1] + count[q - 1];
    }
    let mut send_src = vec![0usize; counts.send_len];
    let mut pairs = vec![0u64; 2 * counts.send_len];
    if counts.send_len > 0 {
        for i in 0..csr.nrows() {
            for e in csr.row_range(i) {
                let g = csr.col(e);
                let q = dest(g);
                if q != me {
                    let s = at[q];
                    at[q] += 1;
                    send_src[s] = e;
                    pairs[2 * s] = (a.start + i) as u64;
                    pairs[2 * s + 1] = g as u64;
                }
            }
        }
    }
    let two = agree(w, counts.times(2, "A^T entries"))?;
    let mut got = vec![0u64; two.recv_len];
    two.run_sparse(w, &pairs, &mut got, || ());
    drop(pairs);
    // Rows of A^T here: the columns this rank owns; a counting sort by row, stable, over
    // the received entries in rank order with this rank's own between the lower and the
    // higher ranks' (where its empty piece lies).
    let own_n = offs.iter().sum::<i64>() as usize;
    let n_got = counts.recv_len;
    let lower = counts.own().1.start;
    for e in 0..n_got {
        offs[got[2 * e + 1] as usize - c0 + 1] += 1;
    }
    let n_in = n_got + own_n;
    for t in 0..c1 - c0 {
        offs[t + 1] += offs[t];
    }
    let got = Received {
        pairs: &got,
        lower,
        c0,
    };
    let (recv_src, tcols) = if csr.nnz().saturating_add(n_got) <= u32::MAX as usize {
        let (s, t) = place_sources::<u32, _, _, _>(&offs, &got, a, (c0, c1));
        (Sources::Narrow(s), t)
    } else {
        let (s, t) = place_sources::<usize, _, _, _>(&offs, &got, a, (c0, c1));
        (Sources::Wide(s), t)
    };
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
            own: csr.nnz(),
            offs,
            cols: tcols,
        },
        (s * wsz, r * wsz),
    ))
}

/// Where each value of A^T comes from: source `s` below A's local entries is entry `s` of
/// A (this rank's own, read in place), above it entry `s - nnz(A)` of the receive buffer.
/// 32-bit where every source fits: half the bytes each numeric call reads.
enum Sources {
    Narrow(Vec<u32>),
    Wide(Vec<usize>),
}

/// A source index of [`Sources`].
trait Source: Copy {
    fn at(s: usize) -> Self;
    fn get(self) -> usize;
}

impl Source for u32 {
    #[inline(always)]
    fn at(s: usize) -> Self {
        s as u32
    }
    #[inline(always)]
    fn get(self) -> usize {
        self as usize
    }
}

impl Source for usize {
    #[inline(always)]
    fn at(s: usize) -> Self {
        s
    }
    #[inline(always)]
    fn get(self) -> usize {
        self
    }
}

/// The (row of A, column) pairs a transpose received, in rank order; this rank's own
/// entries belong between the first `lower` (the lower ranks') and the rest.
struct Received<'g> {
    pairs: &'g [u64],
    lower: usize,
    c0: usize,
}

/// The counting sort of A^T's rows (`offs`: their offsets): each entry's source (see
/// [`Sources`]) and its column of A^T (a global row of A), stable over the received
/// entries in rank order with this rank's own (from `a`, columns `c0..c1`) in their place.
fn place_sources<S: Source, O: Idx, I: DistIdx, V: DistScalar>(
    offs: &[i64],
    got: &Received<'_>,
    a: &Part<'_, O, I, V>,
    (c0, c1): (usize, usize),
) -> (Vec<S>, Vec<I>) {
    let csr = &a.csr;
    let own = csr.nnz();
    let n = *offs.last().expect("rows + 1 offsets") as usize;
    let mut next: Vec<i64> = offs[..offs.len() - 1].to_vec();
    let mut src = vec![S::at(0); n];
    let mut cols = vec![I::try_from_usize(0).expect("0 fits"); n];
    let mut place = |t: usize, s: usize, row: usize| {
        let d = next[t] as usize;
        next[t] += 1;
        src[d] = S::at(s);
        cols[d] = I::try_from_usize(row).expect("checked above");
    };
    let n_got = got.pairs.len() / 2;
    let received = |e: usize| {
        (
            got.pairs[2 * e + 1] as usize - got.c0,
            got.pairs[2 * e] as usize,
        )
    };
    for e in 0..got.lower {
        let (t, row) = received(e);
        place(t, own + e, row);
    }
    for i in 0..csr.nrows() {
        for e in csr.row_range(i) {
            let g = csr.col(e);
            if (c0..c1).contains(&g) {
                place(g - c0, e, a.start + i);
            }
        }
    }
    for e in got.lower..n_got {
        let (t, row) = received(e);
        place(t, own + e, row);
    }
    (src, cols)
}

/// `vals[t]` from its source (see [`Sources`]).
fn gather<S: Source, V: Copy>(vals: &mut [V], src: &[S], a: &[V], rbuf: &[V], own: usize) {
    for (v, &s) in vals.iter_mut().zip(src) {
        let s = s.get();
        *v = if s < own { a[s] } else { rbuf[s - own] };
    }
}

impl<I: DistIdx, V: DistScalar> Transpose<I, V> {
    /// Moves A's current values to the rows of A^T. Collective.
    fn values(&mut self, w: &SimpleCommunicator, a: &[V]) {
        (self.sbuf.iter_mut().zip(&self.send_src)).for_each(|(x, &e)| *x = a[e]);
        self.counts.run_sparse(w, &self.sbuf, &mut self.rbuf, || ());
        let own = self.own;
        match &self.recv_src {
            Sources::Narrow(s) => gather(&mut self.vals, s, a, &self.rbuf, own),
            Sources::Wide(s) => gather(&mut self.vals, s, a, &self.rbuf, own),
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
    let counts = agree(
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
    let own_start = req.recv.0[..me].iter().map(|&n| n as usize).sum::<usize>();
    Ok((
        Import {
            own_rows: own_start..own_start + req.recv.0[me] as usize,
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
    /// Packs B's current values of the rows others asked for, and copies those this rank
    /// asked itself for in place (no MPI; [`Counts::run_sparse`] moves the rest).
    fn pack<OB: Idx>(&mut self, b: &CsrRef<'_, OB, I, V>, vals: &[V]) {
        let (so, ro) = self.counts.own();
        let mut pos = 0;
        for (k, &r) in self.send_rows.iter().enumerate() {
            let rr = b.row_range(r);
            let n = rr.len();
            let to = if self.own_rows.contains(&k) {
                let at = ro.start + pos - so.start;
                &mut self.vals[at..at + n]
            } else {
                &mut self.sbuf[pos..pos + n]
            };
            to.copy_from_slice(&vals[rr]);
            pos += n;
        }
    }

    /// The imported rows for the node, with their values or (`with_values` false) as a
    /// structure alone.
    fn erased(&self, ncols: usize, with_values: bool) -> AnyCsr<'_> {
        let vals = with_values.then_some(&self.vals[..]);
        erased(&self.offs, &self.cols, vals, ncols, 0)
    }
}

/// A local CSR for the node (offsets and columns from `base`), erased (`vals` None: its
/// structure alone, for the phases that read no values).
fn erased<'a, I: DistIdx, V: DistScalar>(
    offs: &'a [i64],
    cols: &'a [I],
    vals: Option<&'a [V]>,
    ncols: usize,
    base: usize,
) -> AnyCsr<'a> {
    AnyCsr {
        nrows: offs.len() - 1,
        ncols,
        base,
        offsets: OffsetSlice::I64(offs),
        indices: I::erase(cols),
        values: vals.map(V::erase),
        value_type: V::erase(&[]).kind(),
    }
}

/// The symbolic phase of op(A) * B, op(A) this rank's rows (`a`, or its transpose).
/// `structure`: [`Product::structure`] follows (the node may keep C's columns for it).
/// `borrow`: whose arrays the numeric calls may read in place. Collective.
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
    structure: bool,
    borrow: Borrow,
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
    let from_zero: Vec<i64>;
    let (a_offs, raw_cols, base): (&[i64], &[I], usize) = match &tr {
        None => {
            from_zero = (a.csr.row_offsets().iter())
                .map(|&o| (o.to_usize() - a.csr.base()) as i64)
                .collect();
            (&from_zero, a.csr.col_indices(), a.csr.base())
        }
        Some(t) => (&t.offs, &t.cols[..], 0),
    };
    let col = |c: I| c.to_usize().wrapping_sub(base);
    let entries = |r: &Range<usize>| a_offs[r.start] as usize..a_offs[r.end] as usize;
    let own_rows = b.start..b.start + b.csr.nrows();
    let reads_own = |i: usize| {
        raw_cols[entries(&(i..i + 1))]
            .iter()
            .all(|&c| own_rows.contains(&col(c)))
    };
    let blocks: Vec<(Range<usize>, bool)> = match longest_run(rows, reads_own) {
        Some(r) if r.len() * OWN_SHARE >= rows => {
            [(0..r.start, false), (r.clone(), true), (r.end..rows, false)]
                .into_iter()
                .filter(|(x, _)| !x.is_empty())
                .collect()
        }
        _ => vec![(0..rows, false)],
    };
    let remote: Vec<&[I]> = blocks
        .iter()
        .filter(|(_, own)| !own)
        .map(|(r, _)| &raw_cols[entries(r)])
        .collect();
    let (needed, renumbered) = agree(w, renumber(&remote, base, b_rows))?;
    let (imp, rows_imported, b2) = import_symbolic(w, &needed, b)?;
    bytes = (bytes.0 + b2.0, bytes.1 + b2.1);
    let ncols = b.csr.ncols();
    // B's columns are global ids already: borrowed, they keep B's base (and so do the
    // offsets, whose type may differ from the segments' 64-bit ones and is copied).
    let own = blocks.iter().any(|&(_, o)| o).then(|| {
        let b_base = if borrow.b { b.csr.base() } else { 0 };
        OwnRows {
            offs: (b.csr.row_offsets().iter())
                .map(|&o| (o.to_usize() - b.csr.base() + b_base) as i64)
                .collect(),
            cols: (!borrow.b).then(|| {
                (b.csr.col_indices().iter())
                    .map(|&c| I::try_from_usize(b.csr.col_of(c)).expect("fits: a column of B"))
                    .collect()
            }),
            base: b_base,
        }
    });
    // op(A)'s own columns need no renumbering when they are A's and B's own rows start
    // at global row 0 (one rank, or the first with only own rows).
    let a_in_place = borrow.a && tr.is_none() && own_rows.start == 0;
    // The segments' offsets are shifted into the caller's format below.
    let node_format = OutputFormat {
        offsets: IndexType::Int64,
        ..format
    };
    let mut renumbered = renumbered.into_iter();
    let mut segs = Vec::with_capacity(blocks.len());
    let planned = (|| {
        for (r, is_own) in blocks {
            let e = entries(&r);
            let in_place = is_own && a_in_place;
            let seg_base = if in_place { base } else { 0 };
            let offs: Vec<i64> = a_offs[r.start..=r.end]
                .iter()
                .map(|&o| o - a_offs[r.start] + seg_base as i64)
                .collect();
            let (cols, inner): (Option<Vec<I>>, usize) = if in_place {
                (None, own_rows.len())
            } else if is_own {
                // A local row of B is below a column of op(A), which fits I. (An exact-size
                // map: collecting into Option<Vec> would grow the vector by doubling.)
                let local = |c: I| {
                    I::try_from_usize(col(c) - own_rows.start).expect("below a column of op(A)")
                };
                let cols = raw_cols[e.clone()].iter().map(|&c| local(c)).collect();
                (Some(cols), own_rows.len())
            } else {
                let cols = renumbered.next().expect("one per block without own rows");
                (Some(cols), needed.len())
            };
            let seg_cols = cols.as_deref().unwrap_or(&raw_cols[e.clone()]);
            let ae = erased::<I, V>(&offs, seg_cols, None, inner, seg_base);
            let node_plan = match &own {
                Some(o) if is_own => {
                    let be = o.erased::<V>(b.csr.col_indices(), None, ncols);
                    node.spgemm_symbolic(&ae, &be, node_format, structure)?
                }
                _ => {
                    let be = imp.erased(ncols, false);
                    node.spgemm_symbolic(&ae, &be, node_format, structure)?
                }
            };
            segs.push(Segment {
                nnz: node.spgemm_nnz(&node_plan),
                rows: r,
                entries: e,
                offs,
                cols,
                base: seg_base,
                inner,
                own: is_own,
                node: node_plan,
            });
        }
        match c_offsets {
            Some(out) => write_offsets(node, &segs, &format, out),
            None => Ok(()),
        }
    })();
    agree(w, planned)?;
    Ok(Product {
        nnz: segs.iter().map(|s| s.nnz).sum(),
        flops: segs.iter().map(|s| node.spgemm_flops(&s.node)).sum(),
        tr,
        segs,
        own,
        imp,
        rows,
        row_start,
        ncols,
        rows_imported,
        bytes,
    })
}

/// The longest run of consecutive rows `0..rows` for which `f` holds (None: no such row).
fn longest_run(rows: usize, f: impl Fn(usize) -> bool) -> Option<Range<usize>> {
    let mut best: Option<Range<usize>> = None;
    let mut start = 0;
    for i in 0..=rows {
        if i < rows && f(i) {
            continue;
        }
        if i > start && best.as_ref().is_none_or(|b| i - start > b.len()) {
            best = Some(start..i);
        }
        start = i + 1;
    }
    best
}

/// C's row offsets in `format` from the segments' node plans (64-bit, from the format's
/// base): each segment's shifted by the entries of the segments before it.
fn write_offsets<N: NodeSpgemm, I>(
    node: &N,
    segs: &[Segment<I, N::Plan>],
    format: &OutputFormat,
    mut out: OffsetSliceMut<'_>,
) -> Result<()> {
    let rows = segs.last().map_or(0, |s| s.rows.end);
    crate::common::check::check_nnz(format, segs.iter().map(|s| s.nnz).sum())?;
    let (len, kind) = match &out {
        OffsetSliceMut::I32(o) => (o.len(), IndexType::Int32),
        OffsetSliceMut::I64(o) => (o.len(), IndexType::Int64),
        OffsetSliceMut::U64(o) => (o.len(), IndexType::SizeT),
    };
    if kind != format.offsets {
        return err(
            Status::TypeMismatch,
            "C: row offsets type differs from the plan's",
        );
    }
    if len != rows + 1 {
        return err(
            Status::InvalidValue,
            format!(
                "C: row offsets array has {len} entries, expected {}",
                rows + 1
            ),
        );
    }
    let mut shift = 0i64;
    let mut tmp = Vec::new();
    for s in segs {
        tmp.clear();
        tmp.resize(s.rows.len() + 1, 0i64);
        node.spgemm_row_offsets(&s.node, OffsetSliceMut::I64(&mut tmp))?;
        let r = s.rows.start..=s.rows.end;
        // In range: the total was checked against the format above.
        match &mut out {
            OffsetSliceMut::I32(o) => o[r]
                .iter_mut()
                .zip(&tmp)
                .for_each(|(d, &x)| *d = (x + shift) as i32),
            OffsetSliceMut::I64(o) => o[r].iter_mut().zip(&tmp).for_each(|(d, &x)| *d = x + shift),
            OffsetSliceMut::U64(o) => o[r]
                .iter_mut()
                .zip(&tmp)
                .for_each(|(d, &x)| *d = (x + shift) as u64),
        }
        shift += s.nnz as i64;
    }
    Ok(())
}

/// C's arrays cut into the segments' parts (the last takes the rest, whose length its node
/// checks).
type Part2<'c> = (IndexSliceMut<'c>, Option<ValueSliceMut<'c>>);

fn parts<'c, I, P>(
    segs: &[Segment<I, P>],
    cols: IndexSliceMut<'c>,
    vals: Option<ValueSliceMut<'c>>,
) -> Vec<Part2<'c>> {
    let mut out = Vec::with_capacity(segs.len());
    let (mut c, mut v) = (cols, vals);
    for s in &segs[..segs.len() - 1] {
        let (c0, c1) = c.split_at(s.nnz);
        let (v0, v1) = match v {
            Some(v) => {
                let (x, y) = v.split_at(s.nnz);
                (Some(x), Some(y))
            }
            None => (None, None),
        };
        out.push((c0, v0));
        (c, v) = (c1, v1);
    }
    out.push((c, v));
    out
}

impl<I: DistIdx, V: DistScalar, P: Send> Product<I, V, P> {
    /// Moves the values this product needs (A's for a transpose, B's needed rows) and
    /// fills C, the segments reading own rows of B while the imported values travel.
    /// `a_vals` are the values of A's local rows, `b` B's. Returns (seconds moving values
    /// or waiting for them, seconds in the node). `a_cols`: A's columns in this call.
    /// Collective up to the node's product; its error is the caller's to agree.
    #[allow(clippy::too_many_arguments)]
    fn numeric<N: NodeSpgemm<Plan = P>, OB: Idx>(
        &mut self,
        w: &SimpleCommunicator,
        node: &N,
        a_cols: &[I],
        a_vals: &[V],
        b: (&CsrRef<'_, OB, I, V>, &[V]),
        cols: IndexSliceMut<'_>,
        vals: ValueSliceMut<'_>,
    ) -> (f64, f64, Result<()>) {
        let t0 = Instant::now();
        if let Some(t) = &mut self.tr {
            t.values(w, a_vals);
        }
        self.imp.pack(b.0, b.1);
        let av: &[V] = match &self.tr {
            Some(t) => &t.vals,
            None => a_vals,
        };
        let own_b = (self.own.as_ref()).map(|o| o.erased(b.0.col_indices(), Some(b.1), self.ncols));
        let (mut first, mut then) = (Vec::new(), Vec::new());
        for (s, part) in self.segs.iter().zip(parts(&self.segs, cols, Some(vals))) {
            if s.own {
                first.push((s, part))
            } else {
                then.push((s, part))
            }
        }
        let run = |s: &Segment<I, P>, be: &AnyCsr<'_>, (c, v): Part2<'_>| {
            node.spgemm_numeric(&s.node, &s.a(a_cols, Some(av)), be, c, v)
        };
        let imp = &mut self.imp;
        let (r, own_s) = imp.counts.run_sparse(w, &imp.sbuf, &mut imp.vals, || {
            let t = Instant::now();
            let r = first
                .into_iter()
                .try_for_each(|(s, part)| run(s, own_b.as_ref().expect("own rows kept"), part));
            (r, t.elapsed().as_secs_f64())
        });
        let t1 = Instant::now();
        let be = self.imp.erased(self.ncols, true);
        let r = r.and_then(|()| then.into_iter().try_for_each(|(s, part)| run(s, &be, part)));
        let node_s = own_s + t1.elapsed().as_secs_f64();
        (t0.elapsed().as_secs_f64() - node_s, node_s, r)
    }

    /// C's column indices alone, from the structure the symbolic phase imported (no MPI);
    /// the numeric calls into the same `cols` then compute values only (see
    /// [`NodeSpgemm::spgemm_numeric`]). `a_cols`, `b_cols`: A's and B's columns.
    fn structure<N: NodeSpgemm<Plan = P>>(
        &self,
        node: &N,
        (a_cols, b_cols): (&[I], &[I]),
        cols: IndexSliceMut<'_>,
    ) -> Result<()> {
        let own_b = (self.own.as_ref()).map(|o| o.erased::<V>(b_cols, None, self.ncols));
        let be = self.imp.erased(self.ncols, false);
        for (s, (c, v)) in self.segs.iter().zip(parts(&self.segs, cols, None)) {
            let b = match &own_b {
                Some(o) if s.own => o,
                _ => &be,
            };
            node.spgemm_numeric(&s.node, &s.a::<V>(a_cols, None), b, c, v)?;
        }
        Ok(())
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
/// row and column blocks and, when the handle validates, its structure digest.
struct Operand<'a, O: Idx, I: Idx, V: DistScalar> {
    start: usize,
    ranges: Ranges,
    digest: u64,
    csr: CsrRef<'a, O, I, V>,
}

impl<O: Idx, I: Idx, V: DistScalar> Operand<'_, O, I, V> {
    fn part(&self) -> Part<'_, O, I, V> {
        Part {
            start: self.start,
            rows: &self.ranges.rows,
            csr: self.csr,
        }
    }
}

/// The plan's communicator and its checked operands.
type Checked<'a, O, I, V> = (OwnedComm, Vec<Operand<'a, O, I, V>>);

/// The start of both symbolic phases: the plan's own duplicate of `comm`, the verdict on
/// the shapes agreed, then each named matrix checked. Collective.
fn setup<'a, N: NodeSpgemm, O: Idx, I: DistIdx, V: DistScalar>(
    comm: &DistComm,
    node: &N,
    dims: Result<()>,
    mats: &[(&str, &DistMatrix<'a, O, I, V>)],
) -> Result<Checked<'a, O, I, V>> {
    raw::mpi_usable()?;
    let world = raw::dup_of(comm.raw())?;
    let w = world.comm();
    agree(w, dims)?;
    let mut ops = Vec::with_capacity(mats.len());
    for &(name, m) in mats {
        let (ranges, digest) = check_named(w, node, m, name)?;
        ops.push(Operand {
            start: m.row_start,
            ranges,
            digest,
            csr: m.local()?,
        });
    }
    Ok((world, ops))
}

/// Whether two operands are the same arrays (not merely equal ones).
fn same_arrays<O: Idx, I: Idx, V>(
    a: &DistMatrix<'_, O, I, V>,
    b: &DistMatrix<'_, O, I, V>,
) -> bool {
    std::ptr::eq(a.row_offsets, b.row_offsets)
        && std::ptr::eq(a.col_indices, b.col_indices)
        && (a.base, a.local_rows, a.global_cols) == (b.base, b.local_rows, b.global_cols)
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
        let dims = check_dims(op, ("A", a), ("B", b));
        let (world, ops) = setup(comm, node, dims, &[("A", a), ("B", b)])?;
        let [oa, ob] = &ops[..] else {
            unreachable!("two operands")
        };
        let w = world.comm();
        let prod = product_symbolic(
            w,
            node,
            op,
            &oa.part(),
            &oa.ranges.xrows,
            &ob.part(),
            format,
            Some(c_offsets),
            false,
            Borrow {
                a: validate,
                b: validate,
            },
        )?;
        let stages = Stages::One(Box::new(prod));
        Ok(Self::assemble(
            world,
            &[a, b],
            &ops,
            validate,
            format,
            stages,
            t0,
        ))
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
        let (world, ops) = setup(comm, node, dims, &[("R", r), ("A", a), ("P", p)])?;
        let [or, oa, op_] = &ops[..] else {
            unreachable!("three operands")
        };
        let w = world.comm();
        // A*P into the plan's arrays: 64-bit offsets, P's index type, 0-based.
        let inner_format = OutputFormat {
            offsets: IndexType::Int64,
            indices: I::KIND,
            base: 0,
        };
        let mut ap_offs = vec![0i64; oa.csr.nrows() + 1];
        let ap = product_symbolic(
            w,
            node,
            Op::NonTranspose,
            &oa.part(),
            &oa.ranges.xrows,
            &op_.part(),
            inner_format,
            Some(OffsetSliceMut::I64(&mut ap_offs)),
            true,
            Borrow {
                a: validate,
                b: validate,
            },
        )?;
        let zero = I::try_from_usize(0).expect("0 fits");
        let mut inter = Intermediate {
            cols: vec![zero; ap.nnz],
            vals: vec![V::ZERO; ap.nnz],
            offs: ap_offs,
        };
        // The structure of A*P, for the second product's symbolic phase (no values yet).
        let caller_cols = (oa.csr.col_indices(), op_.csr.col_indices());
        agree(
            w,
            ap.structure(node, caller_cols, I::erase_mut(&mut inter.cols)),
        )?;
        let ap_csr = CsrRef::new(
            oa.csr.nrows(),
            p.global_cols,
            0,
            &inter.offs[..],
            &inter.cols[..],
            Some(&inter.vals[..]),
        )?;
        let pap = Part {
            start: oa.start,
            rows: &oa.ranges.rows,
            csr: ap_csr,
        };
        let rap = product_symbolic(
            w,
            node,
            op,
            &or.part(),
            &or.ranges.xrows,
            &pap,
            format,
            Some(c_offsets),
            false,
            // A*P is the plan's own.
            Borrow {
                a: validate,
                b: true,
            },
        )?;
        let stages = Stages::Rap {
            ap: Box::new(ap),
            inter,
            rap: Box::new(rap),
        };
        Ok(Self::assemble(
            world,
            &[r, a, p],
            &ops,
            validate,
            format,
            stages,
            t0,
        ))
    }

    /// The plan of checked operands `ops` (of `mats`) and its stages, with the global
    /// statistics (collective).
    fn assemble<O: Idx>(
        world: OwnedComm,
        mats: &[&DistMatrix<'_, O, I, V>],
        ops: &[Operand<'_, O, I, V>],
        validate: bool,
        format: OutputFormat,
        stages: Stages<I, V, P>,
        t0: Instant,
    ) -> Self {
        let mut plan = SpgemmPlan {
            facts: mats.iter().map(|m| Facts::of(m)).collect(),
            digests: validate.then(|| ops.iter().map(|o| o.digest).collect()),
            format,
            global_nnz: 0,
            stats: SpgemmStats::default(),
            stages,
            world,
        };
        plan.finish(t0);
        plan
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
            st.rows_in_place += (p.segs.iter())
                .filter(|s| s.own)
                .map(|s| s.rows.len() as u64)
                .sum::<u64>();
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
                    csrs[0].col_indices(),
                    mats[0].values,
                    (&csrs[1], mats[1].values),
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
                    csrs[1].col_indices(),
                    mats[1].values,
                    (&csrs[2], mats[2].values),
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
                    csrs[0].col_indices(),
                    mats[0].values,
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
                // The arrays of an operand checked above (P given as R in P^T*A*P) have its
                // digest: no second pass over them.
                let seen = mats[..n].iter().position(|o| same_arrays(o, m));
                let now = match seen {
                    Some(k) => d[k],
                    None => node.local(|| csr.validate_and_digest(names[n]))?,
                };
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
