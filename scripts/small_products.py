#!/usr/bin/env python3
"""Small SpGEMM products through the C ABI from Python (ctypes), against scipy.sparse's A @ B
in the same process, the way a scripting caller uses the library: one handle kept, CSR
descriptors over the caller's numpy arrays made for each product.

  scripts/small_products.py [--lib [LABEL=]PATH ...] [--threads 0] [--rounds 15]
                            [--batch-ms 4] [--sizes 10,30,...] [--json FILE]
  scripts/small_products.py --summary RUN1.jsonl RUN2.jsonl ...   (medians over runs)

Each --lib (default: this tree's target/release/libspgemm.so) is loaded into this process;
two builds, e.g. main's and a branch's, are measured side by side: batches of every variant
are interleaved round by round, so machine noise hits all of them alike. Without scipy in the running interpreter the script makes a virtual
environment under target/small-products-venv, installs numpy and scipy there and re-runs
itself with it.

Per input (random n x n with about 5 entries per row, and the 5-point 2D Laplacian on a
sqrt(n) x sqrt(n) grid; C = A*B with B another random matrix, resp. C = L*L) it reports
microseconds per product (median over the rounds of each batch's mean) and products per
second, for:

  scipy      A @ B (a csr_matrix; scipy's own kernel is serial)
  multiply   spgemm_multiply into library-owned arrays, C copied out into numpy arrays,
             C and the descriptors destroyed (the one-shot call of a scripting caller)
  unsorted   the same on a second handle with spgemm_set_sorted_output(h, 0): rows in
             first-touch order, as scipy's A @ B leaves them
  sym+num    spgemm_symbolic (row offsets into a numpy array), spgemm_plan_get_nnz,
             numpy arrays for C, spgemm_numeric, plan and descriptors destroyed
  reuse      spgemm_numeric on a plan kept from a first product, into the same numpy arrays
             (new values each time through the same descriptors: AMG's repeated R*A*P)
  call       spgemm_get_num_threads: the floor of one ctypes call into the library

Every variant's result is checked against scipy's (same structure, values to 1e-12).
"work" is the library's measure of a product's size (multiplications + rows and entries of A
and B): products up to 2^15 run serially on the calling thread (src/cpu/small.rs), one-call
products (spgemm_multiply) up to 2^15 * t / (t - 1) on a handle of t > 1 threads (2^16 on 2).
"""
import argparse
import ctypes as ct
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def ensure_scipy():
    try:
        import numpy  # noqa: F401
        import scipy.sparse  # noqa: F401
        return
    except ImportError:
        pass
    venv = os.path.join(ROOT, "target", "small-products-venv")
    py = os.path.join(venv, "bin", "python")
    if os.environ.get("SMALL_PRODUCTS_VENV") == "1":
        sys.exit("numpy/scipy still missing inside " + venv)
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", venv])
    if subprocess.call([py, "-c", "import numpy, scipy.sparse"], stderr=subprocess.DEVNULL):
        subprocess.check_call([py, "-m", "pip", "install", "-q", "numpy", "scipy"])
    env = dict(os.environ, SMALL_PRODUCTS_VENV="1")
    os.execve(py, [py, os.path.abspath(__file__)] + sys.argv[1:], env)


ensure_scipy()

import numpy as np  # noqa: E402
import scipy  # noqa: E402
import scipy.sparse as sp  # noqa: E402

INT32, INT64 = 0, 1
F64 = 1
BASE0 = 0
VP = ct.c_void_p


class Lib:
    """One loaded libspgemm with the prototypes a ctypes caller declares."""

    def __init__(self, path, threads, sorted_output=True):
        self.path = path
        L = self.L = ct.CDLL(os.path.abspath(path))
        S = ct.c_int32
        i64, i32 = ct.c_int64, ct.c_int32
        proto = {
            "spgemm_create": [ct.POINTER(VP)],
            "spgemm_destroy": [VP],
            "spgemm_set_num_threads": [VP, i32],
            "spgemm_set_sorted_output": [VP, i32],
            "spgemm_get_num_threads": [VP, ct.POINTER(i32)],
            "spgemm_matrix_create_csr_nnz": [ct.POINTER(VP), i64, i64, i64, i32, VP, i32, VP,
                                             i32, VP, i32],
            "spgemm_matrix_destroy": [VP],
            "spgemm_matrix_get_info": [VP, ct.POINTER(i64), ct.POINTER(i64), ct.POINTER(i64),
                                       ct.POINTER(i32), ct.POINTER(i32), ct.POINTER(i32),
                                       ct.POINTER(i32)],
            "spgemm_matrix_export_csr": [VP, ct.POINTER(VP), ct.POINTER(VP), ct.POINTER(VP)],
            "spgemm_multiply": [VP, VP, VP, i32, i32, i32, ct.POINTER(VP)],
            "spgemm_symbolic": [VP, VP, VP, i32, i32, i32, VP, ct.POINTER(VP)],
            "spgemm_plan_get_nnz": [VP, ct.POINTER(i64)],
            "spgemm_numeric": [VP, VP, VP, VP, VP, VP],
            "spgemm_plan_destroy": [VP],
        }
        for name, args in proto.items():
            f = getattr(L, name)
            f.argtypes = args
            f.restype = S
        L.spgemm_last_error.argtypes = [VP]
        L.spgemm_last_error.restype = ct.c_char_p
        self.h = VP()
        self.ok(L.spgemm_create(ct.byref(self.h)))
        if threads:
            self.ok(L.spgemm_set_num_threads(self.h, threads))
        if not sorted_output:
            self.ok(L.spgemm_set_sorted_output(self.h, 0))
        n = ct.c_int32()
        self.ok(L.spgemm_get_num_threads(self.h, ct.byref(n)))
        self.threads = n.value

    def ok(self, status):
        if status != 0:
            raise RuntimeError(f"{self.path}: status {status}: "
                               f"{self.L.spgemm_last_error(self.h).decode()}")

    def desc(self, m):
        """A CSR descriptor over a scipy matrix's arrays (int32 indices, float64 values)."""
        d = VP()
        self.ok(self.L.spgemm_matrix_create_csr_nnz(
            ct.byref(d), m.shape[0], m.shape[1], m.nnz, INT32, m.indptr.ctypes.data, INT32,
            m.indices.ctypes.data, F64, m.data.ctypes.data, BASE0))
        return d


def copy_out(ptr, n, dtype):
    out = np.empty(n, dtype)
    if n:
        ct.memmove(out.ctypes.data, ptr, out.nbytes)
    return out


def multiply(lib, a, b):
    L = lib.L
    da, db = lib.desc(a), lib.desc(b)
    c = VP()
    try:
        lib.ok(L.spgemm_multiply(lib.h, da, db, INT32, INT32, BASE0, ct.byref(c)))
        m, n, nnz = ct.c_int64(), ct.c_int64(), ct.c_int64()
        L.spgemm_matrix_get_info(c, ct.byref(m), ct.byref(n), ct.byref(nnz), None, None, None,
                                 None)
        p, i, v = VP(), VP(), VP()
        L.spgemm_matrix_export_csr(c, ct.byref(p), ct.byref(i), ct.byref(v))
        out = (copy_out(p.value, m.value + 1, np.int32), copy_out(i.value, nnz.value, np.int32),
               copy_out(v.value, nnz.value, np.float64))
    finally:
        L.spgemm_matrix_destroy(c)
        L.spgemm_matrix_destroy(da)
        L.spgemm_matrix_destroy(db)
    return out


def sym_num(lib, a, b):
    L = lib.L
    da, db = lib.desc(a), lib.desc(b)
    plan = VP()
    try:
        indptr = np.empty(a.shape[0] + 1, np.int32)
        lib.ok(L.spgemm_symbolic(lib.h, da, db, INT32, INT32, BASE0, indptr.ctypes.data,
                                 ct.byref(plan)))
        nnz = ct.c_int64()
        L.spgemm_plan_get_nnz(plan, ct.byref(nnz))
        cols = np.empty(nnz.value, np.int32)
        vals = np.empty(nnz.value, np.float64)
        lib.ok(L.spgemm_numeric(lib.h, plan, da, db, cols.ctypes.data, vals.ctypes.data))
    finally:
        L.spgemm_plan_destroy(plan)
        L.spgemm_matrix_destroy(da)
        L.spgemm_matrix_destroy(db)
    return indptr, cols, vals


class Reuse:
    """A plan and C's arrays kept across products with the same structure."""

    def __init__(self, lib, a, b):
        self.lib, self.a, self.b = lib, a, b
        self.da, self.db = lib.desc(a), lib.desc(b)
        self.plan = VP()
        self.indptr = np.empty(a.shape[0] + 1, np.int32)
        lib.ok(lib.L.spgemm_symbolic(lib.h, self.da, self.db, INT32, INT32, BASE0,
                                     self.indptr.ctypes.data, ct.byref(self.plan)))
        nnz = ct.c_int64()
        lib.L.spgemm_plan_get_nnz(self.plan, ct.byref(nnz))
        self.cols = np.empty(nnz.value, np.int32)
        self.vals = np.empty(nnz.value, np.float64)
        # Bound once: a caller's loop does not look the function up each time.
        self.numeric = lib.L.spgemm_numeric
        self.args = (lib.h, self.plan, self.da, self.db, self.cols.ctypes.data,
                     self.vals.ctypes.data)

    def __call__(self):
        s = self.numeric(*self.args)
        if s:
            self.lib.ok(s)
        return self.indptr, self.cols, self.vals

    def close(self):
        L = self.lib.L
        L.spgemm_plan_destroy(self.plan)
        L.spgemm_matrix_destroy(self.da)
        L.spgemm_matrix_destroy(self.db)


def inputs(sizes, seed):
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        dens = min(1.0, 5.0 / n)
        a = sp.random(n, n, density=dens, format="csr", random_state=rng, dtype=np.float64)
        b = sp.random(n, n, density=dens, format="csr", random_state=rng, dtype=np.float64)
        out.append((f"random {n}", a, b))
    for n in sizes:
        g = max(2, int(round(n ** 0.5)))
        t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(g, g))
        lap = (sp.kron(t, sp.eye(g)) + sp.kron(sp.eye(g), t)).tocsr()
        lap.sort_indices()
        out.append((f"lap2d {g}x{g}", lap, lap))
    for _, a, b in out:
        for m in (a, b):
            m.indptr = m.indptr.astype(np.int32)
            m.indices = m.indices.astype(np.int32)
    return out


def same(c, ref, what):
    indptr, cols, vals = c
    got = sp.csr_matrix((vals, cols, indptr), shape=ref.shape)
    got.sort_indices()
    r = ref.copy()
    r.sort_indices()
    if not (np.array_equal(got.indptr, r.indptr) and np.array_equal(got.indices, r.indices)
            and np.allclose(got.data, r.data, rtol=1e-12, atol=0)):
        sys.exit(f"{what}: result differs from scipy's")


def timed(f, reps):
    t0 = time.perf_counter_ns()
    for _ in range(reps):
        f()
    return (time.perf_counter_ns() - t0) / reps / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", action="append",
                    help="[LABEL=]PATH of a libspgemm.so to load (repeatable)")
    ap.add_argument("--threads", type=int, default=0, help="handle threads (0: library default)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--batch-ms", type=float, default=4.0)
    ap.add_argument("--sizes", default="10,30,100,300,1000,3000,20000")
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--json")
    ap.add_argument("--summary", nargs="+", metavar="JSONL",
                    help="print the medians over runs written by --json, and exit")
    o = ap.parse_args()
    if o.summary:
        summary(o.summary)
        return
    specs = o.lib or ["target/release/libspgemm.so"]
    names = [sp.split("=", 1)[0] if "=" in sp else os.path.relpath(sp, ROOT) for sp in specs]
    paths = [sp.split("=", 1)[1] if "=" in sp else sp for sp in specs]
    libs = [Lib(p, o.threads) for p in paths]
    unsorted_libs = [Lib(p, o.threads, sorted_output=False) for p in paths]
    sizes = [int(s) for s in o.sizes.split(",")]
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}; "
          f"{os.cpu_count()} CPUs; threads per handle: "
          + ", ".join(f"{n}={lb.threads}" for n, lb in zip(names, libs)) + "\n", flush=True)
    results = []
    for label, a, b in inputs(sizes, o.seed):
        ref = a @ b
        variants = [("scipy", None, lambda a=a, b=b: a @ b)]
        reuses = []
        for name, lib, ulib in zip(names, libs, unsorted_libs):
            r = Reuse(lib, a, b)
            reuses.append(r)
            same(multiply(lib, a, b), ref, f"{label} {name} multiply")
            same(multiply(ulib, a, b), ref, f"{label} {name} unsorted")
            same(sym_num(lib, a, b), ref, f"{label} {name} sym+num")
            same(r(), ref, f"{label} {name} reuse")
            n = ct.c_int32()
            variants += [
                ("multiply", name, lambda lib=lib, a=a, b=b: multiply(lib, a, b)),
                ("unsorted", name, lambda lib=ulib, a=a, b=b: multiply(lib, a, b)),
                ("sym+num", name, lambda lib=lib, a=a, b=b: sym_num(lib, a, b)),
                ("reuse", name, r),
                ("call", name, lambda f=lib.L.spgemm_get_num_threads, h=lib.h, p=ct.byref(n):
                 f(h, p)),
            ]
        # Repetitions per batch from one warm-up batch, then interleaved rounds.
        reps = []
        for _, _, f in variants:
            f()
            t = timed(f, 3)
            reps.append(max(1, int(o.batch_ms * 1e3 / max(t, 0.05))))
        times = [[] for _ in variants]
        for _ in range(o.rounds):
            for t, (_, _, f), k in zip(times, variants, reps):
                t.append(timed(f, k))
        for r in reuses:
            same(r(), ref, f"{label} reuse after timing")
            r.close()
        flops = int(np.diff(b.indptr)[a.indices].sum())
        work = flops + a.shape[0] + b.shape[0] + a.nnz + b.nnz
        row = {"input": label, "m": a.shape[0], "nnzA": a.nnz, "nnzB": b.nnz, "nnzC": ref.nnz,
               "flops": flops, "work": work}
        for (kind, name, _), t in zip(variants, times):
            key = kind if name is None else f"{kind}@{name}"
            row[key] = {"us": statistics.median(t), "min_us": min(t)}
        results.append(row)
        report([row], names, header=(len(results) == 1))
    if o.json:
        with open(o.json, "w") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")


def report(rows, names, header):
    """Markdown: per input, scipy's time, then per library its variants in microseconds (the
    multiply's speed-up over scipy: scipy's time / its time), then products per second."""
    cols = ["multiply", "x scipy", "unsorted", "sym+num", "reuse", "call"]
    if header:
        h = "| input | nnz(C) | work | scipy us |"
        for n in names:
            h += "".join(f" {n} {c}{'' if c == 'x scipy' else ' us'} |" for c in cols)
        h += " scipy /s |" + "".join(f" {n} multiply /s |" for n in names)
        print(h)
        print("|" + "---|" * (h.count("|") - 1))
    for r in rows:
        s = r["scipy"]["us"]
        line = f"| {r['input']} | {r['nnzC']} | {r['work']} | {s:.1f} |"
        for n in names:
            t = {c: r[f"{c}@{n}"]["us"] for c in ["multiply", "unsorted", "sym+num", "reuse", "call"]}
            line += (f" {t['multiply']:.1f} | {s / t['multiply']:.2f}x | {t['unsorted']:.1f} |"
                     f" {t['sym+num']:.1f} | {t['reuse']:.1f} | {t['call']:.2f} |")
        line += f" {1e6 / s:,.0f} |" + "".join(f" {1e6 / r[f'multiply@{n}']['us']:,.0f} |"
                                              for n in names)
        print(line, flush=True)


def summary(paths):
    """Markdown of several runs (JSON lines of --json): per input the median over the runs of
    each time, the first library (the baseline) and the last one side by side, and the last
    one's speed-up over scipy in each run."""
    runs = [[json.loads(line) for line in open(p) if line.strip()] for p in paths]
    libs = sorted({k.split("@", 1)[1] for k in runs[0][0] if "@" in k},
                  key=lambda n: list(runs[0][0]).index(f"multiply@{n}"))
    base, this = libs[0], libs[-1]
    print(f"| input | nnz(C) | work | scipy `A @ B` | {base}: multiply | {this}: multiply | "
          f"{this} vs scipy (each run) | {this}: unsorted | {this}: sym+num | {base}: reuse | "
          f"{this}: reuse | products/s: scipy / {base} / {this} |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
    for i, r0 in enumerate(runs[0]):
        def med(k):
            return statistics.median(run[i][k]["us"] for run in runs)
        s, bm, tm = med("scipy"), med(f"multiply@{base}"), med(f"multiply@{this}")
        each = " ".join(f"{run[i]['scipy']['us'] / run[i][f'multiply@{this}']['us']:.2f}"
                        for run in runs)
        print(f"| {r0['input']} | {r0['nnzC']:,} | {r0['work']:,} | {s:.1f} | {bm:.1f} | {tm:.1f} "
              f"| **{s / tm:.2f}x** ({each}) | {med(f'unsorted@{this}'):.1f} "
              f"| {med(f'sym+num@{this}'):.1f} | {med(f'reuse@{base}'):.1f} "
              f"| {med(f'reuse@{this}'):.1f} | {1e6 / s:,.0f} / {1e6 / bm:,.0f} / {1e6 / tm:,.0f} |")


if __name__ == "__main__":
    main()
