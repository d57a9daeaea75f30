#!/usr/bin/env python3
"""Checks that every function the layer's headers declare has MKL's signature.

  check_signatures.py MKL.aux OURS.aux [--ilp64]

The inputs are gcc -aux-info outputs of a file that includes mkl_spblas.h/mkl.h, one against
MKL's headers and one against the layer's. Parameter names and top-level const qualifiers are
not part of a function's type and are ignored. With --ilp64 each layer _64 entry point must
also match MKL's plain name (which MKL's ILP64 interface serves), since the layer's header maps
the plain names to _64 under MKL_ILP64. Functions that exist only in the layer (its
spgemm_mkl_ extras) are listed, not failed.
"""
import re
import sys


def load(path):
    sigs = {}
    for line in open(path, encoding="utf-8"):
        m = re.search(r"extern (.+?)\s*\b(\w+) \((.*)\);", line)
        if not m:
            continue
        ret, name, args = m.groups()
        params = []
        for a in args.split(","):
            a = " ".join(a.split())
            if "*" not in a:
                a = a.replace("const ", "")  # top-level const of a by-value parameter
            else:
                a = re.sub(r"\*\s*const$", "*", a)  # const pointer itself: top-level too
            params.append(a)
        sigs[name] = (" ".join(ret.split()), tuple(params))
    return sigs


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    mkl, ours, ilp64 = load(sys.argv[1]), load(sys.argv[2]), "--ilp64" in sys.argv[3:]
    bad, checked = 0, 0
    for name, sig in sorted(ours.items()):
        if name.startswith("spgemm_mkl_"):
            print(f"layer-only: {name}")
            continue
        if not (name.startswith("mkl_sparse_") or name.startswith("MKL_")):
            continue
        checked += 1
        if name not in mkl:
            print(f"not declared by MKL: {name}")
            bad += 1
        elif mkl[name] != sig:
            print(f"differs: {name}\n  MKL:   {mkl[name]}\n  layer: {sig}")
            bad += 1
        if ilp64 and name.endswith("_64") and mkl.get(name[:-3]) != sig:
            print(f"ILP64: {name} differs from MKL's {name[:-3]}")
            bad += 1
    print(f"signatures: {checked} checked, {bad} problem(s)")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
