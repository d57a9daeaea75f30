#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/ for fuzz/spgemm_fuzz.c.

    python3 fuzz/make_corpus.py [OUTDIR]      (default: fuzz/corpus next to this script)

Each seed is a byte string in the harness's input format (see the reader functions in
spgemm_fuzz.c: options byte, problem, then operations with their argument bytes). The seeds
cover every option, shape class, type, base and operation once or more, and name what they
exercise; libFuzzer mutates from there. Deterministic: running it again gives the same files.
"""
import os
import sys

# operation codes: the OP_* enum of spgemm_fuzz.c (19 operations, op byte % 19)
(OP_OPTIONS, OP_THREADS, OP_PROBLEM, OP_CORRUPT, OP_CORRUPT2, OP_REPAIR, OP_SYMBOLIC, OP_SYMBOLIC2,
 OP_NUMERIC, OP_NUMERIC2, OP_VALUES, OP_STRUCT_NUMERIC, OP_MULTIPLY, OP_SPMM, OP_SPMM_AN, OP_ANALYSIS,
 OP_RESTRUCT, OP_QUERY, OP_CACHE) = range(19)

ALG = {"auto": 0, "kkdense": 1, "kklp": 2, "kkmem": 3}
CORR = {"off+1": 0, "off-1": 1, "negoff": 2, "swap": 3, "idx+1": 4, "idx-1": 5, "negidx": 6,
        "idxrange": 7, "dup": 8, "zero": 9, "nan": 10, "wild": 11, "first": 12, "last": 13}


def options(validation=1, sorted_=1, alg="auto", threads=1):
    """The options byte: validation, sorted output, algorithm, threads (1-3)."""
    return bytes([(validation & 1) | ((sorted_ & 1) << 1) | (ALG[alg] << 2) | (((threads - 1) % 3) << 4)])


def explicit(rows, nrows_cap=None):
    """An explicit matrix: rows of (column byte, value byte); columns are taken modulo ncols
    by the harness, value bytes < 224 index a table of small exact numbers (0 -> 1.0,
    1 -> -1.0, 2 -> 2.0, 3 -> 0.5, 5 -> 0.0), 224.. are NaN/Inf/zero/extremes."""
    out = bytearray([1])  # mode byte: bit 0 = explicit
    for r in rows:
        assert len(r) <= 4
        out.append(len(r))
        for col, val in r:
            out += bytes([col, val])
    return bytes(out)


def seeded(seed, maxrow_code=2, dups=True, sorted_=False, specials=False):
    """A generated matrix: 4 seed bytes, row lengths up to maxrow_code+1 (x4 above 8)."""
    mode = (int(dups) << 1) | (int(sorted_) << 2) | (int(specials) << 3) | (maxrow_code << 4)
    return bytes([mode & 0xFE]) + seed.to_bytes(4, "little")


def problem(a, b, ot=0, it=0, vt=1, shape=(0, 1, 1, 1), base_a=0, base_b=0, a_pattern=False,
            b_pattern=False, null_empty=False, mismatch=None, dim_mismatch=False):
    """Problem bytes: types, bases, pattern flags, shape class with its dimension bytes, A, B.
    shape = (class byte, dimension bytes...) as the harness reads them."""
    b0 = ot | (it << 2) | (vt << 3) | (int(null_empty) << 4)
    b1 = base_a | (base_b << 1) | ((3 if a_pattern else 0) << 2) | ((3 if b_pattern else 0) << 4)
    if dim_mismatch:
        b1 |= 0x70
    if mismatch is not None:  # 0: offset type, 1: index type, 2: value type of B differs
        b1 = (b1 & ~0x06) | 0x88 | (mismatch << 1)
    cls = shape[0]
    dims = bytes(shape[1:])
    return bytes([b0, b1, cls]) + dims + a + b


def tiny(m, n, k):
    """Shape class 0 (dimensions 0..4, one byte each)."""
    return (0, m, n, k)


def small(m, n, k):
    """Shape class 6 (dimensions 0..16)."""
    return (6, m, n, k)


def op(code, *args):
    return bytes([code]) + bytes(args)


SEEDS = {}


def seed(name, *parts):
    SEEDS[name] = b"".join(parts)


A2 = explicit([[(0, 0), (2, 2)], [], [(1, 3), (1, 1), (0, 0)]])       # 3x3: empty row, duplicate
B2 = explicit([[(1, 0), (0, 2)], [(2, 1)], [(0, 3), (1, 0), (1, 2)]])

# valid two-phase products and reuse, every type combination and base
for ot in range(3):
    for it in range(2):
        for vt in range(2):
            seed(f"types-o{ot}-i{it}-v{vt}", options(1, 1, "auto", 1 + (ot + it) % 3),
                 problem(A2, B2, ot=ot, it=it, vt=vt, shape=tiny(3, 3, 3), base_a=it, base_b=vt),
                 op(OP_SYMBOLIC, ot | (it << 2) | ((ot & 1) << 3)), op(OP_NUMERIC, 0), op(OP_VALUES, 3, 7),
                 op(OP_NUMERIC, 1), op(OP_NUMERIC, 1), op(OP_NUMERIC, 3, 0))
for alg in ALG:
    for val in (0, 1):
        for srt in (0, 1):
            seed(f"alg-{alg}-val{val}-sorted{srt}", options(val, srt, alg, 1 + srt + val),
                 problem(seeded(11 + ALG[alg]), seeded(23 + val, 3), shape=small(12, 9, 14)),
                 op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0), op(OP_MULTIPLY, 5), op(OP_QUERY))
# shapes: 0 x n, n x 0, 1 x 1, zero inner dimension, tall (partitions over 3 threads), huge k
seed("shape-0xn", options(1, 1, "kkdense", 2), problem(explicit([]), explicit([[(0, 0)], [(1, 1)]]),
     shape=(13, 0, 1, 2)), op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0), op(OP_SPMM, 0b00011000, 0, 0, 5))
seed("shape-nx0", options(0, 1, "kklp", 3), problem(explicit([[], [], []]), explicit([]), shape=(13, 2, 2, 0)),
     op(OP_MULTIPLY, 9), op(OP_SYMBOLIC, 1), op(OP_NUMERIC, 0), op(OP_SPMM, 0b00010110, 0, 9, 1))
seed("shape-inner0", options(1, 0, "kkmem", 1), problem(explicit([[], []]), explicit([]), shape=(13, 1, 1, 2)),
     op(OP_SYMBOLIC, 2), op(OP_NUMERIC, 0), op(OP_SPMM, 0b00001001, 0, 0, 3))
seed("shape-1x1", options(1, 1, "auto", 1), problem(explicit([[(0, 0), (0, 2), (0, 3)]]),
     explicit([[(0, 1), (0, 0)]]), shape=(15,)), op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0), op(OP_MULTIPLY, 0))
seed("shape-tall-3threads", options(1, 1, "auto", 3), problem(seeded(99, 3), seeded(7, 4), shape=(12, 200, 3, 20, 40)),
     op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0), op(OP_VALUES, 1, 3), op(OP_NUMERIC, 1), op(OP_THREADS, 1),
     op(OP_NUMERIC, 1), op(OP_SPMM, 0b00101000, 1, 1, 9))
seed("shape-medium-unsorted", options(0, 0, "kklp", 2), problem(seeded(5, 6, specials=True), seeded(6, 5),
     shape=(10, 150, 40, 180)), op(OP_SYMBOLIC, 4), op(OP_NUMERIC, 0), op(OP_STRUCT_NUMERIC, 0))
for i, kcode in enumerate(range(6)):
    seed(f"shape-hugek-{i}", options(1, i & 1, ["auto", "kklp", "kkmem"][i % 3], 1 + i % 3),
         problem(explicit([[(0, 0)], [(1, 1), (0, 2)]]), explicit([[(0, 0), (200, 2)], [(130, 3)]]),
                 it=i & 1, ot=i % 3, shape=(14, 1, 1, kcode)),
         op(OP_SYMBOLIC, (i & 1) << 2 | 1), op(OP_NUMERIC, 0), op(OP_MULTIPLY, 4 | (i & 1) << 3))
# pattern-only products, values missing where numeric needs them, NULL arrays of empty matrices
seed("pattern-only", options(1, 1, "auto", 2), problem(A2, B2, shape=tiny(3, 3, 3), a_pattern=True, b_pattern=True),
     op(OP_SYMBOLIC, 0), op(OP_STRUCT_NUMERIC, 0), op(OP_NUMERIC, 0), op(OP_MULTIPLY, 0), op(OP_SPMM, 0, 0, 0, 0))
seed("pattern-b-only", options(1, 1, "kkmem", 1), problem(A2, B2, shape=tiny(3, 3, 3), b_pattern=True),
     op(OP_MULTIPLY, 2), op(OP_SYMBOLIC, 0), op(OP_STRUCT_NUMERIC, 0))
seed("null-empty", options(1, 1, "auto", 1), problem(explicit([[], []]), explicit([[], []]), shape=tiny(2, 2, 2),
     null_empty=True), op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0), op(OP_MULTIPLY, 0), op(OP_SPMM, 0b00001000, 0, 0, 0))
# O(1) errors: type and dimension mismatches
for mm in range(3):
    seed(f"type-mismatch-{mm}", options(mm & 1, 1, "auto", 1), problem(A2, B2, shape=tiny(3, 3, 3), mismatch=mm),
         op(OP_SYMBOLIC, 0), op(OP_MULTIPLY, 0))
seed("dim-mismatch", options(0, 1, "kkdense", 2), problem(A2, B2, shape=tiny(3, 3, 3), dim_mismatch=True),
     op(OP_SYMBOLIC, 0), op(OP_MULTIPLY, 0))
# bytes a corruption kind reads after its row and entry bytes
EXTRA = {CORR["negoff"]: (1,), CORR["first"]: (0,), CORR["last"]: (4,), CORR["negidx"]: (2,),
         CORR["idxrange"]: (1,), CORR["wild"]: (0x10, 0, 0, 0x80, 0, 0, 0, 0, 1) * 3}
# corruptions, validation on and off, each followed by the harness's probe product
for name, code in CORR.items():
    for val in (1, 0):
        seed(f"corrupt-{name}-val{val}", options(val, 1, "auto", 1),
             problem(A2, B2, shape=tiny(3, 3, 3), ot=code % 3, it=code & 1),
             op(OP_SYMBOLIC, 0), op(OP_CORRUPT, (code << 1) | (code & 1), 2, 3, *EXTRA.get(code, ())),
             op(OP_NUMERIC, 1), op(OP_SYMBOLIC, 0), op(OP_MULTIPLY, 0), op(OP_SPMM, 0b00001000, 0, 0, 0),
             op(OP_REPAIR), op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0))
# reuse across a legal change of structure (plan mismatch), C arrays changed by the caller
seed("restructure-mismatch", options(1, 1, "kklp", 2), problem(seeded(3), seeded(4), shape=small(10, 10, 10)),
     op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0), op(OP_RESTRUCT, 0, 1), op(OP_NUMERIC, 1), op(OP_OPTIONS, 0),
     op(OP_NUMERIC, 1))
seed("scribble-c", options(1, 1, "kkmem", 1), problem(seeded(8), seeded(9), shape=small(10, 10, 10)),
     op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0), op(OP_NUMERIC, 1), op(OP_NUMERIC, 1), op(OP_NUMERIC, 3, 2),
     op(OP_NUMERIC, 3, 5))
# reuse from the third call on (the plan keeps a digest of C's indices), then fresh C arrays
seed("reuse-then-fresh-arrays", options(1, 1, "auto", 1), problem(seeded(61, 3), seeded(62, 3), shape=small(12, 12, 12)),
     op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0), op(OP_NUMERIC, 1), op(OP_NUMERIC, 1), op(OP_NUMERIC, 1), op(OP_NUMERIC, 0),
     op(OP_THREADS, 2), op(OP_NUMERIC, 1), op(OP_NUMERIC, 0))
# SpMM: both ops and layouts, analysis reuse and mismatch, alpha 0 with X NULL, bad ld
seed("spmm-analysis", options(1, 1, "auto", 2), problem(seeded(31, 3), seeded(32, 3), shape=small(9, 7, 5)),
     op(OP_ANALYSIS, 0b000), op(OP_SPMM_AN, 0b00100000, 0b101, 0x12, 4), op(OP_VALUES, 1, 9),
     op(OP_SPMM_AN, 0b00100000, 0, 0x01, 5), op(OP_ANALYSIS, 0b011), op(OP_SPMM_AN, 0b00011011, 0, 0, 6),
     op(OP_RESTRUCT, 1, 3), op(OP_SPMM_AN, 0b00011011, 0, 0, 6))
seed("spmm-transpose-colmajor", options(0, 1, "auto", 3), problem(seeded(41, 4), seeded(42), shape=small(16, 11, 3)),
     op(OP_SPMM, 0b00101110, 0b1010, 0x11, 1), op(OP_SPMM, 0b00010011, 0, 0x49, 2), op(OP_SPMM, 0b00100110, 0x70, 0, 3))
seed("spmm-nan-alpha-beta", options(1, 1, "auto", 1), problem(A2, B2, shape=tiny(3, 3, 3)),
     op(OP_SPMM, 0b00010000, 0, 0x07, 1), op(OP_SPMM, 0b00010000, 0, 0x38, 2), op(OP_SPMM, 0b00011000, 0, 0x41, 3))
seed("cache-and-threads", options(1, 1, "auto", 1), problem(seeded(51), seeded(52), shape=small(16, 16, 16)),
     op(OP_CACHE, 0), op(OP_MULTIPLY, 0), op(OP_CACHE, 20), op(OP_MULTIPLY, 0), op(OP_THREADS, 2), op(OP_MULTIPLY, 1),
     op(OP_CACHE, 1), op(OP_PROBLEM), bytes([0, 0, 0, 1, 2, 1]) + explicit([[(0, 0)]]) + explicit([[(1, 0)], [(0, 0)]]),
     op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0))
# the cases: validation off, one thread, KKDENSE (a) and (b), then AUTO's product (c)
seed("issue27-a", options(0, 1, "kkdense", 1),
     problem(explicit([[(0, 0), (0, 0), (0, 0)]]), explicit([[(0, 0), (0, 0), (0, 0)]]), shape=(15,)),
     op(OP_SYMBOLIC, 0), op(OP_CORRUPT, (CORR["idx+1"] << 1) | 1, 0, 1), op(OP_NUMERIC, 0))
seed("issue27-b", options(0, 1, "kkdense", 1),
     problem(explicit([[(1, 0), (1, 0), (0, 0)], []]), explicit([[(0, 0)], [(0, 0), (0, 0)]]), shape=tiny(2, 2, 3)),
     op(OP_CORRUPT, (CORR["idx-1"] << 1) | 1, 0, 0), op(OP_SYMBOLIC, 0))
seed("issue27-c", options(0, 1, "auto", 1),
     problem(explicit([[(1, 0), (0, 0)]]), explicit([[(0, 0), (0, 0)], [(0, 0), (0, 0), (1, 0)]]), shape=tiny(1, 2, 3)),
     op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0))

# memory limit (issue 27): each product call once under a 1-byte limit first (symbolic bit 5,
# numeric bit 7, multiply bit 4, analysis bit 5), then as usual; valid and corrupt inputs
for val, alg in ((1, "auto"), (0, "kkdense"), (1, "kklp"), (0, "kkmem")):
    seed(f"memory-limit-{alg}-val{val}", options(val, 1, alg, 2),
         problem(seeded(71 + val, 3), seeded(73, 3), shape=small(12, 10, 14)),
         op(OP_SYMBOLIC, 1 << 5), op(OP_NUMERIC, 1 << 7), op(OP_NUMERIC, 1 | 1 << 7), op(OP_NUMERIC, 1 | 1 << 7),
         op(OP_STRUCT_NUMERIC, 1 << 7), op(OP_MULTIPLY, 1 << 4), op(OP_ANALYSIS, 0b010 | 1 << 5),
         op(OP_CORRUPT, (CORR["idx+1"] << 1) | 1, 2, 3), op(OP_NUMERIC, 1 | 1 << 7), op(OP_SYMBOLIC, 1 << 5),
         op(OP_REPAIR), op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 0))
# spgemm_numeric_sized (bits 5-6 of numeric's byte): exact capacities, one column too few
seed("numeric-sized", options(1, 1, "auto", 1), problem(seeded(81, 3), seeded(82, 3), shape=small(12, 12, 12)),
     op(OP_SYMBOLIC, 0), op(OP_NUMERIC, 1 << 5), op(OP_NUMERIC, 1 | 3 << 5), op(OP_NUMERIC, 1 | 2 << 5),
     op(OP_STRUCT_NUMERIC, 1 << 5), op(OP_STRUCT_NUMERIC, 1 | 3 << 5), op(OP_NUMERIC, 1 | 1 << 5))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        os.remove(os.path.join(out, f))
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(SEEDS)} seeds to {out}")


if __name__ == "__main__":
    main()
