#!/usr/bin/env python3
"""No function of a built library calls libm's fma or fmaf.

A kernel's fused multiply-add must be an instruction. Code compiled without the FMA target
feature turns `mul_add` into a call of the software routine (one call per entry of a
product), which is what a closure kept out of line by LLVM gets when it is defined in a
function without `#[target_feature]`: the SpMV's row closure did that and ran 5x slower
on AMD Zen 5 (docs/DESIGN-NOTES.md, cpu::spmm::spmv). Calls are found by disassembly:
direct calls to fma/fmaf (or their PLT entries) and indirect calls through a GOT slot
that holds their address.

    scripts/check_fma_calls.py target/release/libspgemm.so [more binaries]
"""
import re
import subprocess
import sys

NAMES = ("fma", "fmaf")


def calls(path):
    dis = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", path], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    addr = {}
    for line in dis:
        m = re.match(r"^([0-9a-f]+) <(fmaf?)(@plt)?>:$", line)
        if m:
            addr[int(m.group(1), 16)] = m.group(2)
    # GOT slots filled with those addresses (R_X86_64_RELATIVE in a PIE or shared object).
    rel = subprocess.run(["readelf", "-rW", path], capture_output=True, text=True).stdout
    slots = set()
    for line in rel.splitlines():
        p = line.split()
        if len(p) >= 4 and p[2].endswith("RELATIVE"):
            try:
                if int(p[3], 16) in addr:
                    slots.add(int(p[0], 16))
            except ValueError:
                pass
    hits = {}
    fn = None
    for line in dis:
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            fn = m.group(1)
            continue
        if "call" not in line or fn in NAMES or (fn or "").startswith(("fma@", "fmaf@")):
            continue
        m = re.search(r"call\s+[0-9a-f]+ <(fmaf?)(@plt)?>", line)
        g = re.search(r"# ([0-9a-f]+) <", line)
        if m or (g and int(g.group(1), 16) in slots):
            hits[fn] = hits.get(fn, 0) + 1
    return hits


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    bad = 0
    for path in sys.argv[1:]:
        hits = calls(path)
        # The routines' own internals (compiler_builtins dispatch) are not callers to flag.
        hits = {f: n for f, n in hits.items() if "compiler_builtins" not in f}
        for f, n in sorted(hits.items(), key=lambda x: -x[1]):
            print(f"{path}: {f} calls fma/fmaf {n} times")
        bad += len(hits)
        if not hits:
            print(f"{path}: no calls of libm's fma/fmaf")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
