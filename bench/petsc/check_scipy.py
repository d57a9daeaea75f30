#!/usr/bin/env python3
"""Independent check of build/petsc_dist's JSON lines with scipy (not part of make check).

    python3 bench/petsc/check_scipy.py RESULTS.jsonl

For every successful line, recomputes from its inputs: nnzC (structural: the product of the
patterns, so an exact cancellation still counts as stored, as in PETSc), sumabsC (sum of
|c_ij|, relative tolerance 1e-10) and flops (scalar multiplications; ptap/rap: A*P plus
P^T*(AP) or R*(AP)). Lines of the same product at different np or algorithms must agree too,
which the per-line check implies. Needs numpy and scipy (e.g. in a venv). Exit 1 on a
mismatch.
"""
import json
import sys

import numpy as np
import scipy.io
import scipy.sparse as sp

_cache = {}


def load(path):
    if path not in _cache:
        m = scipy.io.mmread(path)
        m = sp.csr_matrix(m, dtype=np.float64)
        m.sum_duplicates()
        _cache[path] = m
    return _cache[path]


def pattern(m):
    p = m.copy()
    p.data = np.ones_like(p.data)
    return p


def flops_ab(a, b):
    # sum over k of nnz(column k of A) * nnz(row k of B)
    colcnt = np.bincount(a.indices, minlength=a.shape[1])
    rowcnt = np.diff(b.indptr)
    return int(np.dot(colcnt.astype(np.int64), rowcnt.astype(np.int64)))


def xmat(n, k):
    i = np.arange(n, dtype=np.int64)[:, None]
    j = np.arange(k, dtype=np.int64)[None, :]
    return ((7 * i + 13 * j) % 17 - 8) / 8.0


def expected(rec):
    mode, ins = rec["mode"], rec["inputs"]
    if mode == "spmm":
        a = load(ins[0])
        k = rec["K"]
        y = a @ xmat(a.shape[1], k)
        return a.shape[0] * k, float(np.abs(y).sum()), a.nnz * k
    if mode == "mm" or mode == "atb":
        a = load(ins[0])
        b = a if ins[1] == "A" else load(ins[1])
        if mode == "atb":
            a = a.T.tocsr()
        c = a @ b
        cp = pattern(a) @ pattern(b)
        return cp.nnz, float(np.abs(c.data).sum()), flops_ab(a, b)
    if mode == "ptap":
        a, p = load(ins[0]), load(ins[1])
        r = p.T.tocsr()
    elif mode == "rap":
        r, a, p = load(ins[0]), load(ins[1]), load(ins[2])
    else:
        raise ValueError(mode)
    ap = a @ p
    app = pattern(a) @ pattern(p)
    c = r @ ap
    cp = pattern(r) @ app
    return cp.nnz, float(np.abs(c.data).sum()), flops_ab(a, p) + flops_ab(r, app)


def main():
    bad = 0
    n = 0
    for line in open(sys.argv[1]):
        line = line.strip()
        if not line.startswith("{"):
            continue
        rec = json.loads(line)
        if rec.get("lib") != "petsc" or "error" in rec:
            continue
        nnz, sumabs, flops = expected(rec)
        ok = (rec["nnzC"] == nnz and rec["flops"] == flops
              and abs(rec["sumabsC"] - sumabs) <= 1e-10 * max(1.0, abs(sumabs)))
        n += 1
        tag = "ok  " if ok else "FAIL"
        print(f"{tag} {rec['mode']:4} np={rec['np']} alg={rec['alg']:9} {' '.join(rec['inputs'])}"
              f"{' K=' + str(rec['K']) if 'K' in rec else ''}: nnzC {rec['nnzC']} vs {nnz},"
              f" sumabsC {rec['sumabsC']:.15g} vs {sumabs:.15g}, flops {rec['flops']} vs {flops}")
        bad += not ok
    print(f"{n} lines checked, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
