//! The distributed SpGEMM checks (`spgemm-dist-check --spgemm`): C = op(A) * B and
//! op(R) * A * P on random, power-law and banded matrices, square and rectangular, with
//! ranks owning no rows, 1-based and 64-bit inputs, f32 and f64, compared with the serial
//! product of the whole matrices bitwise (every rank builds the same global matrices from
//! one seed and passes its rows), then reuse with new values, then bad input: the same
//! status on every rank.

use super::*;
use spgemm::types::IndexType;
use spgemm::{
    IndexSliceMut, OffsetSliceMut, OutputFormat, dist_rap_symbolic, dist_spgemm_numeric,
    dist_spgemm_symbolic, numeric, symbolic_op, write_row_offsets,
};

/// The same structure with new values.
fn revalue(g: &Global, seed: u64) -> Global {
    let mut r = Rng(seed);
    Global {
        m: g.m,
        n: g.n,
        offs: g.offs.clone(),
        cols: g.cols.clone(),
        vals: g.vals.iter().map(|_| r.val()).collect(),
    }
}

fn make(kind: usize, m: usize, n: usize, seed: u64) -> Global {
    if n == 0 {
        return Global {
            m,
            n,
            offs: vec![0; m + 1],
            cols: Vec::new(),
            vals: Vec::new(),
        };
    }
    match kind {
        0 => gen_matrix(m, n, false, seed),
        1 => gen_matrix(m, n, true, seed),
        _ => gen_banded(m, n, 2, seed),
    }
}

/// A whole matrix in 64-bit CSR for the serial reference.
struct Whole<V> {
    offs: Vec<i64>,
    cols: Vec<i64>,
    vals: Vec<V>,
    n: usize,
}

impl<V: Val> Whole<V> {
    fn of(g: &Global) -> Whole<V> {
        Whole {
            offs: g.offs.iter().map(|&o| o as i64).collect(),
            cols: g.cols.iter().map(|&c| c as i64).collect(),
            vals: g.vals.iter().map(|&v| V::from_f64(v)).collect(),
            n: g.n,
        }
    }
    fn any(&self) -> AnyCsr<'_> {
        AnyCsr {
            nrows: self.offs.len() - 1,
            ncols: self.n,
            base: 0,
            offsets: OffsetSlice::I64(&self.offs),
            indices: IndexSlice::I64(&self.cols),
            values: Some(V::erase(&self.vals)),
            value_type: V::KIND,
        }
    }
}

/// A CSR result: offsets from 0, global columns, values.
struct Rows<V> {
    offs: Vec<i64>,
    cols: Vec<i64>,
    vals: Vec<V>,
}

fn format(base: usize) -> OutputFormat {
    OutputFormat {
        offsets: IndexType::Int64,
        indices: IndexType::Int64,
        base,
    }
}

/// The serial product op(A) * B through the public API.
fn serial<V: Val>(h: &Handle, op: Op, a: &Whole<V>, b: &Whole<V>) -> Result<Rows<V>> {
    let plan = symbolic_op(h, op, &a.any(), Op::NonTranspose, &b.any(), format(0))?;
    let mut offs = vec![0i64; plan.nrows() + 1];
    write_row_offsets(&plan, OffsetSliceMut::I64(&mut offs))?;
    let mut cols = vec![0i64; plan.nnz()];
    let mut vals = vec![V::ZERO; plan.nnz()];
    numeric(
        h,
        &plan,
        &a.any(),
        &b.any(),
        IndexSliceMut::I64(&mut cols),
        Some(V::erase_mut(&mut vals)),
    )?;
    Ok(Rows { offs, cols, vals })
}

/// Row i of a result as (column, value bits), sorted by column.
fn row_of<V: Val>(r: &Rows<V>, i: usize, base: i64) -> Vec<(i64, u64)> {
    let (s, e) = ((r.offs[i] - base) as usize, (r.offs[i + 1] - base) as usize);
    let mut v: Vec<(i64, u64)> = (s..e)
        .map(|p| (r.cols[p] - base, V::to_f64(r.vals[p]).to_bits()))
        .collect();
    v.sort_unstable();
    v
}

/// That this rank's rows `c0..` of the distributed result equal the serial rows bitwise.
fn same<V: Val>(
    mine: &Rows<V>,
    base: usize,
    whole: &Rows<V>,
    c0: usize,
) -> std::result::Result<(), String> {
    for i in 0..mine.offs.len() - 1 {
        let a = row_of(mine, i, base as i64);
        let b = row_of(whole, c0 + i, 0);
        if a != b {
            return Err(format!(
                "row {}: {} entries, serial {}; first difference at {:?}",
                c0 + i,
                a.len(),
                b.len(),
                a.iter().zip(&b).position(|(x, y)| x != y)
            ));
        }
    }
    Ok(())
}

/// One rank's rows of a global matrix in the case's types and base.
struct Mine<O, I, V> {
    offs: Vec<O>,
    cols: Vec<I>,
    vals: Vec<V>,
    row_start: usize,
    x_range: (usize, usize),
}

impl<O: Idx + Erase, I: Idx + Erase, V: Val> Mine<O, I, V> {
    fn new(g: &Global, rows: &[usize], xr: &[usize], me: usize, base: usize) -> Self {
        let (r0, r1) = (rows[me], rows[me + 1]);
        let l = local_rows::<O, I>(g, r0, r1, base);
        Mine {
            offs: l.offs,
            cols: l.cols,
            vals: g.vals[g.offs[r0]..g.offs[r1]]
                .iter()
                .map(|&v| V::from_f64(v))
                .collect(),
            row_start: r0,
            x_range: (xr[me], xr[me + 1] - xr[me]),
        }
    }
    fn view<'a>(&'a self, comm: &'a DistComm, g: &Global, base: usize) -> DistMatrix<'a> {
        dist_matrix(
            comm,
            (g.m, g.n),
            self.row_start,
            Some(self.x_range),
            base,
            &self.offs,
            &self.cols,
            &self.vals,
        )
    }
}

#[derive(Clone, Copy, Debug)]
struct SpCase {
    /// 0: op(A) * B; 1: R*A*P; 2: P^T*A*P.
    what: usize,
    op: Op,
    kinds: (usize, usize),
    dims: (usize, usize, usize),
    dist: (usize, usize),
    types: usize,
    f32: bool,
    base: usize,
    c_base: usize,
    seed: u64,
    /// The handle validates (the plan then reads the caller's arrays in place where it can,
    /// and checks their digests at every numeric call); off: the plan's copies.
    validate: bool,
}

/// The distributed product of a case (symbolic, numeric, numeric again with new values),
/// each compared with the serial product.
/// Runs one case; returns the rows of op(A) multiplied in place (plan statistics) and this
/// rank's rows of C.
fn run_sp<V: Val, O: Idx + Erase, I: Idx + Erase>(
    comm: &DistComm,
    h: &Handle,
    c: &SpCase,
) -> std::result::Result<(u64, usize), String> {
    let p = comm.size();
    let me = comm.rank();
    let (m, k, n) = c.dims;
    let e = |x: spgemm::Error| x.to_string();
    let s = c.seed;
    // The matrices of the case, as (global, row ranges, column ranges).
    let globals: Vec<Global> = match c.what {
        0 => {
            let a = match c.op {
                Op::NonTranspose => make(c.kinds.0, m, k, s),
                _ => make(c.kinds.0, k, m, s),
            };
            vec![a, make(c.kinds.1, k, n, s + 1)]
        }
        1 => vec![
            make(c.kinds.1, n, m, s + 2),
            make(c.kinds.0, m, m, s),
            make(2, m, n, s + 1),
        ],
        _ => {
            let pp = make(2, m, n, s + 1);
            vec![
                Global {
                    m: pp.m,
                    n: pp.n,
                    offs: pp.offs.clone(),
                    cols: pp.cols.clone(),
                    vals: pp.vals.clone(),
                },
                make(c.kinds.0, m, m, s),
                pp,
            ]
        }
    };
    let split = |g: &Global, kind: usize| (ranges(g.m, p, kind), ranges(g.n, p, (kind + 1) % 3));
    let parts: Vec<(Vec<usize>, Vec<usize>)> = globals
        .iter()
        .enumerate()
        .map(|(i, g)| split(g, if i % 2 == 0 { c.dist.0 } else { c.dist.1 }))
        .collect();
    let mine: Vec<Mine<O, I, V>> = globals
        .iter()
        .zip(&parts)
        .map(|(g, (r, x))| Mine::new(g, r, x, me, c.base))
        .collect();
    let views: Vec<DistMatrix<'_>> = mine
        .iter()
        .zip(&globals)
        .map(|(l, g)| l.view(comm, g, c.base))
        .collect();
    let refs: Vec<&DistMatrix<'_>> = views.iter().collect();
    // The rows of C here.
    let (c0, c_rows) = match (c.what, c.op) {
        (0, Op::NonTranspose) | (1, Op::NonTranspose) => {
            let r = &parts[0].0;
            (r[me], r[me + 1] - r[me])
        }
        _ => {
            let x = &parts[0].1;
            (x[me], x[me + 1] - x[me])
        }
    };
    let whole = |gs: &[Global]| -> Result<Rows<V>> {
        let w: Vec<Whole<V>> = gs.iter().map(Whole::of).collect();
        match c.what {
            0 => serial(h, c.op, &w[0], &w[1]),
            _ => {
                let ap = serial(h, Op::NonTranspose, &w[1], &w[2])?;
                let ap = Whole {
                    offs: ap.offs,
                    cols: ap.cols,
                    vals: ap.vals,
                    n: w[2].n,
                };
                serial(h, c.op, &w[0], &ap)
            }
        }
    };
    let fmt = format(c.c_base);
    let mut offs = vec![0i64; c_rows + 1];
    let mut plan = match c.what {
        0 => dist_spgemm_symbolic(
            h,
            c.op,
            refs[0],
            refs[1],
            fmt,
            OffsetSliceMut::I64(&mut offs),
        ),
        _ => dist_rap_symbolic(
            h,
            c.op,
            (refs[0], refs[1], refs[2]),
            fmt,
            OffsetSliceMut::I64(&mut offs),
        ),
    }
    .map_err(e)?;
    if plan.rows() != (c0, c_rows) || plan.nnz() as i64 != offs[c_rows] - c.c_base as i64 {
        return Err(format!(
            "plan rows {:?} nnz {}, expected rows {:?} and the offsets' {}",
            plan.rows(),
            plan.nnz(),
            (c0, c_rows),
            offs[c_rows]
        ));
    }
    let in_place = plan.stats().rows_in_place;
    let mut cols = vec![0i64; plan.nnz()];
    let mut vals = vec![V::ZERO; plan.nnz()];
    dist_spgemm_numeric(
        h,
        &mut plan,
        &refs,
        IndexSliceMut::I64(&mut cols),
        V::erase_mut(&mut vals),
    )
    .map_err(e)?;
    let want = whole(&globals).map_err(e)?;
    let got = Rows { offs, cols, vals };
    same(&got, c.c_base, &want, c0).map_err(|x| format!("first numeric: {x}"))?;
    if plan.global_nnz() != want.cols.len() as u64 {
        return Err(format!(
            "global nnz {} against the serial {}",
            plan.global_nnz(),
            want.cols.len()
        ));
    }
    // Reuse: new values, same structure, three times (the node plans' replays build their
    // slot maps on the third numeric call and read them on the fourth).
    let mut got = got;
    for round in 0..3u64 {
        let new: Vec<Global> = globals
            .iter()
            .enumerate()
            .map(|(i, g)| revalue(g, s * 31 + i as u64 + 1000 * round))
            .collect();
        let mine2: Vec<Mine<O, I, V>> = new
            .iter()
            .zip(&parts)
            .map(|(g, (r, x))| Mine::new(g, r, x, me, c.base))
            .collect();
        let views2: Vec<DistMatrix<'_>> = mine2
            .iter()
            .zip(&new)
            .map(|(l, g)| l.view(comm, g, c.base))
            .collect();
        let refs2: Vec<&DistMatrix<'_>> = views2.iter().collect();
        dist_spgemm_numeric(
            h,
            &mut plan,
            &refs2,
            IndexSliceMut::I64(&mut got.cols),
            V::erase_mut(&mut got.vals),
        )
        .map_err(e)?;
        let want2 = whole(&new).map_err(e)?;
        same(&got, c.c_base, &want2, c0).map_err(|x| format!("reuse {round}: {x}"))?;
    }
    Ok((in_place, c_rows))
}

fn dispatch(comm: &DistComm, h: &Handle, c: &SpCase) -> std::result::Result<(u64, usize), String> {
    match (c.f32, c.types) {
        (false, 0) => run_sp::<f64, i32, i32>(comm, h, c),
        (false, 1) => run_sp::<f64, i64, i64>(comm, h, c),
        (false, _) => run_sp::<f64, u64, i32>(comm, h, c),
        (true, 0) => run_sp::<f32, i32, i32>(comm, h, c),
        (true, 1) => run_sp::<f32, i64, i64>(comm, h, c),
        (true, _) => run_sp::<f32, u64, i32>(comm, h, c),
    }
}

/// Every case, then the error checks. Returns the number of cases.
pub fn run_all(
    world: &SimpleCommunicator,
    comm: &DistComm,
    h: &mut Handle,
    rep: &mut Report,
) -> usize {
    let me = comm.rank();
    let mut cases = Vec::new();
    let mut seed = 1000u64;
    for what in 0..3 {
        let ops: &[Op] = match what {
            0 => &[Op::NonTranspose, Op::Transpose],
            1 => &[Op::NonTranspose],
            _ => &[Op::Transpose],
        };
        for &op in ops {
            for kinds in [(0, 0), (1, 0), (2, 1), (0, 2)] {
                for dims in [(61, 61, 61), (47, 90, 33), (120, 17, 75)] {
                    seed += 1;
                    cases.push(SpCase {
                        what,
                        op,
                        kinds,
                        dims,
                        dist: ((seed % 3) as usize, ((seed / 3) % 3) as usize),
                        types: (seed % 3) as usize,
                        f32: seed % 4 == 1,
                        base: (seed % 2) as usize,
                        c_base: ((seed / 2) % 2) as usize,
                        seed,
                        validate: !seed.is_multiple_of(5),
                    });
                }
            }
        }
    }
    // Ranks owning nothing of a tiny product, and an empty matrix.
    for dims in [(3, 2, 4), (0, 5, 3), (4, 0, 2)] {
        seed += 1;
        cases.push(SpCase {
            what: 0,
            op: Op::NonTranspose,
            kinds: (0, 0),
            dims,
            dist: (1, 1),
            types: 1,
            f32: false,
            base: 1,
            c_base: 0,
            seed,
            validate: true,
        });
    }
    // Rows of op(A) reading only this rank's rows of B are multiplied in place: all of
    // them at one rank; at several, some products mix such rows and imported ones.
    let (mut all_in_place, mut split) = (true, false);
    for c in &cases {
        h.options.validate = c.validate;
        let r = dispatch(comm, h, c);
        h.options.validate = true;
        if let Err(e) = &r {
            eprintln!("rank {me}: {c:?}: {e}");
        }
        if let Ok((k, rows)) = r
            && c.what == 0
        {
            all_in_place &= k as usize == rows;
            split |= k > 0 && (k as usize) < rows;
        }
        rep.check(all_ok(world, r.is_ok()), "spgemm case");
    }
    if comm.size() == 1 {
        rep.check(all_ok(world, all_in_place), "one rank: every row in place");
    } else {
        let any = statuses(world, split as i32).iter().any(|&s| s != 0);
        rep.check(any, "several ranks: rows in place beside imported ones");
    }
    errors(world, comm, h, rep);
    cases.len()
}

/// Bad input: the same status on every rank, and the communicator still usable.
fn errors(world: &SimpleCommunicator, comm: &DistComm, h: &Handle, rep: &mut Report) {
    let p = comm.size();
    let me = comm.rank();
    let m = 30 + p;
    let ga = gen_matrix(m, m, false, 7);
    let rows = ranges(m, p, 0);
    let a: Mine<i32, i32, f64> = Mine::new(&ga, &rows, &rows, me, 0);
    let av = a.view(comm, &ga, 0);
    let c_rows = rows[me + 1] - rows[me];
    let expect = |name: &str, r: Result<()>, want: Status, rep: &mut Report| {
        expect_status(world, name, &r, want, rep)
    };
    let sym = |b: &DistMatrix<'_>, fmt: OutputFormat| -> Result<()> {
        let mut offs = vec![0i64; c_rows + 1];
        let mut o32 = vec![0i32; c_rows + 1];
        let out = if fmt.offsets == IndexType::Int32 {
            OffsetSliceMut::I32(&mut o32)
        } else {
            OffsetSliceMut::I64(&mut offs)
        };
        dist_spgemm_symbolic(h, Op::NonTranspose, &av, b, fmt, out).map(|_| ())
    };
    // Inner dimensions differ: B has one row more.
    let gb = gen_matrix(m + 1, m, false, 8);
    let rb = ranges(m + 1, p, 0);
    let b: Mine<i32, i32, f64> = Mine::new(&gb, &rb, &rows, me, 0);
    expect(
        "inner dimensions differ",
        sym(&b.view(comm, &gb, 0), format(0)),
        Status::DimensionMismatch,
        rep,
    );
    // A column index out of range on one rank of B.
    let bad_rank = 1.min(p - 1);
    let mut bb: Mine<i32, i32, f64> = Mine::new(&ga, &rows, &rows, me, 0);
    if me == bad_rank && !bb.cols.is_empty() {
        bb.cols[0] = m as i32 + 5;
    }
    let r = sym(&bb.view(comm, &ga, 0), format(0));
    let st = code(&r);
    let all = statuses(world, st);
    rep.check(
        all_ok(world, st != 0 && all.iter().all(|&s| s == all[0])),
        "bad column index on one rank",
    );
    // Overlapping row ranges (rank 1 starts one row early), when there are two ranks.
    if p > 1 {
        let mut ov: Mine<i32, i32, f64> = Mine::new(&ga, &rows, &rows, me, 0);
        if me == 1 {
            ov.row_start -= 1;
        }
        expect(
            "overlapping row ranges",
            sym(&ov.view(comm, &ga, 0), format(0)),
            Status::InvalidValue,
            rep,
        );
    }
    // Another value type for B than for A.
    let b32: Mine<i32, i32, f32> = Mine::new(&ga, &rows, &rows, me, 0);
    expect(
        "value types differ",
        sym(&b32.view(comm, &ga, 0), format(0)),
        Status::TypeMismatch,
        rep,
    );
    // C's columns do not fit int32 indices: B with 3e9 columns (64-bit ids).
    let wide = 3_000_000_000usize;
    let gw = Global {
        m,
        n: wide,
        offs: ga.offs.clone(),
        cols: ga.cols.iter().map(|&c| c * 1000 + 7).collect(),
        vals: ga.vals.clone(),
    };
    let wr = ranges(wide, p, 0);
    let bw: Mine<i64, i64, f64> = Mine::new(&gw, &rows, &wr, me, 0);
    let a64: Mine<i64, i64, f64> = Mine::new(&ga, &rows, &rows, me, 0);
    let fmt32 = OutputFormat {
        offsets: IndexType::Int32,
        indices: IndexType::Int32,
        base: 0,
    };
    let mut o32 = vec![0i32; c_rows + 1];
    let r = dist_spgemm_symbolic(
        h,
        Op::NonTranspose,
        &a64.view(comm, &ga, 0),
        &bw.view(comm, &gw, 0),
        fmt32,
        OffsetSliceMut::I32(&mut o32),
    )
    .map(|_| ());
    expect("C's columns overflow int32", r, Status::IndexOverflow, rep);
    // A numeric call whose B changed structure on one rank: PLAN_MISMATCH everywhere.
    let mut offs = vec![0i64; c_rows + 1];
    let b_ok: Mine<i32, i32, f64> = Mine::new(&ga, &rows, &rows, me, 0);
    let plan = dist_spgemm_symbolic(
        h,
        Op::NonTranspose,
        &av,
        &b_ok.view(comm, &ga, 0),
        format(0),
        OffsetSliceMut::I64(&mut offs),
    );
    rep.check(all_ok(world, plan.is_ok()), "plan for the mismatch check");
    if let Ok(mut plan) = plan {
        let mut b2: Mine<i32, i32, f64> = Mine::new(&ga, &rows, &rows, me, 0);
        if me == bad_rank
            && let Some(r) = (0..c_rows).find(|&i| b2.offs[i + 1] > b2.offs[i])
        {
            let q = b2.offs[r] as usize;
            b2.cols[q] = ((b2.cols[q] as usize + 1) % m) as i32;
        }
        let mut cols = vec![0i64; plan.nnz()];
        let mut vals = vec![0f64; plan.nnz()];
        let bv = b2.view(comm, &ga, 0);
        let r = dist_spgemm_numeric(
            h,
            &mut plan,
            &[&av, &bv],
            IndexSliceMut::I64(&mut cols),
            ValueSliceMut::F64(&mut vals),
        );
        let changed = statuses(world, (b2.cols != b_ok.cols) as i32);
        let want = if changed.iter().any(|&x| x != 0) {
            Status::PlanMismatch
        } else {
            Status::Success
        };
        expect("structure changed on one rank", r, want, rep);
        // Too few operands for the plan.
        let r = dist_spgemm_numeric(
            h,
            &mut plan,
            &[&av],
            IndexSliceMut::I64(&mut cols),
            ValueSliceMut::F64(&mut vals),
        );
        expect(
            "a plan of two operands given one",
            r,
            Status::InvalidValue,
            rep,
        );
    }
}
