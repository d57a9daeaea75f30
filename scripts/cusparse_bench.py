#!/usr/bin/env python3
"""cuSPARSE SpGEMM through CuPy (cupyx.scipy.sparse csr @ csr), for docs/GPU.md.

usage: cusparse_bench.py A.mtx[.gz] [B.mtx[.gz]|A] [reps]
Prints one JSON line: device-resident time (median) and time with host copies (A, B in,
C out), as libspgemm's host-array API pays them.
"""
import json, sys, time
import numpy as np
import scipy.io, scipy.sparse as sp
import cupy as cp
import cupyx.scipy.sparse as csp

a_path = sys.argv[1]
b_path = sys.argv[2] if len(sys.argv) > 2 else "A"
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
A = sp.csr_matrix(scipy.io.mmread(a_path), dtype=np.float64)
B = A if b_path == "A" else sp.csr_matrix(scipy.io.mmread(b_path), dtype=np.float64)
A.sort_indices(); B.sort_indices()

def dev(M):
    return csp.csr_matrix(M)

dA, dB = dev(A), dev(B)
C = dA @ dB  # warm-up
cp.cuda.Device().synchronize()
t_dev = []
for _ in range(reps):
    t = time.perf_counter(); C = dA @ dB; cp.cuda.Device().synchronize(); t_dev.append((time.perf_counter() - t) * 1e3)
t_host = []
for _ in range(reps):
    t = time.perf_counter()
    C = dev(A) @ dev(B)
    Ch = C.get()
    t_host.append((time.perf_counter() - t) * 1e3)
flops = int(np.diff(B.indptr)[A.indices].sum())
name = a_path.split("/")[-1].split(".")[0] + "*" + (a_path if b_path == "A" else b_path).split("/")[-1].split(".")[0]
print(json.dumps({"product": name, "backend": "cusparse(cupy %s)" % cp.__version__, "nnz_c": int(C.nnz),
                  "flops": flops, "device_ms": float(np.median(t_dev)), "with_copies_ms": float(np.median(t_host)),
                  "gflops_device": 2 * flops / (np.median(t_dev) * 1e-3) / 1e9,
                  "checksum": float(Ch.sum())}))
