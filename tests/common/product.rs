//! C as plain 0-based vectors for comparisons: conversion of the library's typed outputs,
//! the reference product in the same form, and row sorting for unsorted results. Shared by
//! the CPU and GPU SpGEMM suites so both compare against exactly the same expectations.

use super::{Csr, RefScalar, Typed, reference_op};
use spgemm::Result;
use spgemm::types::{Complex32, Complex64, ValueType};
use spgemm::{Handle, Op};
use spgemm::{IndexVec, OffsetVec, ValueVec};
use spgemm::{OutputFormat, Plan};

/// C as 0-based vectors with values as bit patterns for exact comparison.
#[derive(Debug, PartialEq)]
pub struct Out {
    pub ptr: Vec<usize>,
    pub col: Vec<usize>,
    pub bits: Vec<u128>,
}

pub fn offsets_to_usize(o: &OffsetVec, base: usize) -> Vec<usize> {
    match o {
        OffsetVec::I32(v) => v.iter().map(|&x| x as usize - base).collect(),
        OffsetVec::I64(v) => v.iter().map(|&x| x as usize - base).collect(),
        OffsetVec::U64(v) => v.iter().map(|&x| x as usize - base).collect(),
    }
}

/// The library's output arrays (with index base `base`) as an [`Out`].
pub fn collect_out(off: &OffsetVec, idx: &IndexVec, val: Option<&ValueVec>, base: usize) -> Out {
    let col = columns(idx, base);
    let bits = match val {
        None => vec![],
        Some(ValueVec::F32(v)) => v.iter().map(|x| x.bits()).collect(),
        Some(ValueVec::F64(v)) => v.iter().map(|x| x.bits()).collect(),
        Some(ValueVec::C32(v)) => v.iter().map(|x| x.bits()).collect(),
        Some(ValueVec::C64(v)) => v.iter().map(|x| x.bits()).collect(),
    };
    Out {
        ptr: offsets_to_usize(off, base),
        col,
        bits,
    }
}

/// Numeric phase of `plan` into freshly allocated output arrays of `format`, as the ABI
/// does, with values only when `with_values`.
pub fn numeric_out(
    h: &Handle,
    plan: &Plan,
    a: &Typed,
    b: &Typed,
    format: OutputFormat,
    with_values: bool,
) -> Result<Out> {
    let mut off = OffsetVec::zeroed(format.offsets, plan.nrows() + 1)?;
    spgemm::write_row_offsets(plan, off.as_mut())?;
    let mut idx = IndexVec::zeroed(format.indices, plan.nnz())?;
    let mut val = if with_values {
        Some(ValueVec::zeroed(a.vt, plan.nnz())?)
    } else {
        None
    };
    spgemm::numeric(
        h,
        plan,
        &a.any(),
        &b.any(),
        idx.as_mut(),
        val.as_mut().map(|v| v.as_mut()),
    )?;
    Ok(collect_out(&off, &idx, val.as_ref(), format.base))
}

/// C's columns in `idx`, 0-based (`base` taken off).
pub fn columns(idx: &IndexVec, base: usize) -> Vec<usize> {
    match idx {
        IndexVec::I32(v) => v.iter().map(|&x| x as usize - base).collect(),
        IndexVec::I64(v) => v.iter().map(|&x| x as usize - base).collect(),
    }
}

/// C as a reused plan's numeric call left it in the caller's arrays: the plan's row
/// offsets, `idx` 0-based and the bits of the f64 values `val`.
pub fn plan_output(plan: &Plan, idx: &IndexVec, val: &ValueVec, base: usize) -> Out {
    let bits = match val {
        ValueVec::F32(v) => v.iter().map(|x| x.bits()).collect(),
        ValueVec::F64(v) => v.iter().map(|x| x.bits()).collect(),
        ValueVec::C32(v) => v.iter().map(|x| x.bits()).collect(),
        ValueVec::C64(v) => v.iter().map(|x| x.bits()).collect(),
    };
    Out {
        ptr: plan.row_offsets().unwrap().to_vec(),
        col: columns(idx, base),
        bits,
    }
}

/// Moves entry `t` of C's columns in `idx` to the next column (mod `ncols`): a changed
/// structure still in range.
pub fn bump_column(idx: &mut IndexVec, t: usize, ncols: usize) {
    match idx {
        IndexVec::I32(v) => v[t] = (v[t] + 1) % (ncols as i32),
        IndexVec::I64(v) => v[t] = (v[t] + 1) % (ncols as i64),
    }
}

/// The reference product in value type `vt`, values left out unless `with_values`.
pub fn expected(a: &Csr, b: &Csr, vt: ValueType, with_values: bool) -> Out {
    expected_op(a, Op::NonTranspose, b, Op::NonTranspose, vt, with_values)
}

/// The reference op(A)*op(B) in value type `vt`, values left out unless `with_values`.
pub fn expected_op(a: &Csr, op_a: Op, b: &Csr, op_b: Op, vt: ValueType, with_values: bool) -> Out {
    fn run<T: RefScalar>(
        a: &Csr,
        op_a: Op,
        b: &Csr,
        op_b: Op,
    ) -> (Vec<usize>, Vec<usize>, Vec<u128>) {
        let (p, c, v) = reference_op::<T>(a, op_a, b, op_b);
        (p, c, v.iter().map(|x| x.bits()).collect())
    }
    let (ptr, col, bits) = match vt {
        ValueType::Float32 => run::<f32>(a, op_a, b, op_b),
        ValueType::Float64 => run::<f64>(a, op_a, b, op_b),
        ValueType::Complex32 => run::<Complex32>(a, op_a, b, op_b),
        ValueType::Complex64 => run::<Complex64>(a, op_a, b, op_b),
    };
    Out {
        ptr,
        col,
        bits: if with_values { bits } else { vec![] },
    }
}

/// Sorts each row of an unsorted result so it can be compared with the reference.
pub fn sort_rows(o: &Out) -> Out {
    let mut col = o.col.clone();
    let mut bits = o.bits.clone();
    for i in 0..o.ptr.len() - 1 {
        let (s, e) = (o.ptr[i], o.ptr[i + 1]);
        let mut pairs: Vec<(usize, u128)> = (s..e)
            .map(|p| (o.col[p], *o.bits.get(p).unwrap_or(&0)))
            .collect();
        pairs.sort_unstable();
        for (k, (c, v)) in pairs.into_iter().enumerate() {
            col[s + k] = c;
            if !bits.is_empty() {
                bits[s + k] = v;
            }
        }
    }
    Out {
        ptr: o.ptr.clone(),
        col,
        bits,
    }
}
