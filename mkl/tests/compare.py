#!/usr/bin/env python3
"""Compare two outputs of mkl_api_test (e.g. real MKL's golden file and the layer's output).

Lines must correspond one to one. A line whose second field is "values" holds numbers: its
first two fields must match exactly and each number must be within RTOL of the expected one,
relatively: |a - b| <= RTOL * max(|a|, |b|), or <= RTOL * (largest magnitude on the expected
line) for entries that cancelled to near zero; NaN equals NaN (either sign), infinities must
match exactly. Every other line (statuses, sizes, structure, flags) must match exactly.

  compare.py EXPECTED ACTUAL [--rtol 1e-12] [--max-report N]   exit 0 when they match, 1 if not
  compare.py --self-test [GOLDEN...]   checks that planted differences are caught (exit 0 if so)
"""
import argparse
import math
import sys

RTOL = 1e-12


def _num(tok):
    try:
        return float(tok)
    except ValueError:
        return None


def _close(a, b, rtol, floor):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    d = abs(a - b)
    return d <= rtol * max(abs(a), abs(b)) or d <= rtol * floor


def compare_lines(exp, act, rtol=RTOL):
    """Returns a list of human-readable differences (empty when the outputs match)."""
    diffs = []
    if len(exp) != len(act):
        diffs.append(f"line count: expected {len(exp)}, got {len(act)}")
    for n, (e, a) in enumerate(zip(exp, act), start=1):
        et, at = e.split(), a.split()
        if len(et) >= 2 and et[1] == "values":
            if et[:2] != at[:2] or len(et) != len(at):
                diffs.append(f"line {n}: expected {e!r}, got {a!r}")
                continue
            ev = [_num(t) for t in et[2:]]
            av = [_num(t) for t in at[2:]]
            if any(x is None for x in ev + av):
                diffs.append(f"line {n}: non-numeric token in values line: {a!r}")
                continue
            finite = [abs(x) for x in ev if math.isfinite(x)]
            floor = max(finite) if finite else 0.0
            for i, (x, y) in enumerate(zip(ev, av)):
                if not _close(x, y, rtol, floor):
                    diffs.append(f"line {n} ({et[0]}) value {i}: expected {et[2 + i]}, got {at[2 + i]}")
                    break
        elif et != at:
            diffs.append(f"line {n}: expected {e!r}, got {a!r}")
    return diffs


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def self_test(goldens):
    """Plants differences the comparator must catch, and tolerable ones it must accept."""
    base = [
        "config sizeof(MKL_INT)=4",
        "d.x status FULL_MULT=SUCCESS",
        "d.x rowptr 0 2 3",
        "d.x colind 0 4 1",
        "d.x values 1.5 -0.25 3.0000000000000004",
        "d.y values nan 1e-30 2",
        "end",
    ]
    must_fail = {
        "status changed": (1, "d.x status FULL_MULT=INVALID_VALUE"),
        "structure changed": (3, "d.x colind 0 3 1"),
        "value off by 1e-9 relative": (4, "d.x values 1.5000000015 -0.25 3.0000000000000004"),
        "value count changed": (4, "d.x values 1.5 -0.25"),
        "NaN against a number": (5, "d.y values 0 1e-30 2"),
        "non-number in values": (5, "d.y values nan x 2"),
    }
    must_pass = {
        "identical": None,
        "value off by 1e-14 relative": (4, "d.x values 1.500000000000015 -0.25 3.0000000000000004"),
        "NaN of the other sign": (5, "d.y values -nan 1e-30 2"),
        "cancelled entry within the line's scale": (5, "d.y values nan 1e-13 2"),
    }
    bad = 0
    for name, change in must_fail.items():
        act = list(base)
        act[change[0]] = change[1]
        if not compare_lines(base, act):
            print(f"self-test FAILED: not caught: {name}")
            bad += 1
    if not compare_lines(base, base[:-1]):
        print("self-test FAILED: not caught: missing line")
        bad += 1
    for name, change in must_pass.items():
        act = list(base)
        if change:
            act[change[0]] = change[1]
        d = compare_lines(base, act)
        if d:
            print(f"self-test FAILED: rejected {name}: {d[0]}")
            bad += 1
    # on real golden files: the first values line perturbed by 1e-9 must fail, by 1e-15 pass
    for g in goldens:
        lines = _read(g)
        idx = next((i for i, l in enumerate(lines) if len(l.split()) > 2 and l.split()[1] == "values"
                    and any(_num(t) not in (None, 0.0) for t in l.split()[2:])), None)
        if idx is None:
            print(f"self-test FAILED: {g} has no values line")
            bad += 1
            continue
        toks = lines[idx].split()
        j = next(k for k in range(2, len(toks)) if _num(toks[k]) not in (None, 0.0))
        for factor, should_fail in ((1 + 1e-9, True), (1 + 1e-15, False)):
            t2 = list(toks)
            t2[j] = repr(float(toks[j]) * factor)
            act = list(lines)
            act[idx] = " ".join(t2)
            caught = bool(compare_lines(lines, act))
            if caught != should_fail:
                print(f"self-test FAILED on {g}: factor {factor} {'not caught' if should_fail else 'rejected'}")
                bad += 1
        stat = next((i for i, l in enumerate(lines) if "=SUCCESS" in l), None)
        if stat is not None:
            act = list(lines)
            act[stat] = act[stat].replace("=SUCCESS", "=NOT_SUPPORTED", 1)
            if not compare_lines(lines, act):
                print(f"self-test FAILED on {g}: status change not caught")
                bad += 1
    print("compare.py self-test: " + ("ok" if bad == 0 else f"{bad} problem(s)"))
    return 0 if bad == 0 else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*")
    ap.add_argument("--rtol", type=float, default=RTOL)
    ap.add_argument("--max-report", type=int, default=20)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.files)
    if len(args.files) != 2:
        ap.error("need EXPECTED and ACTUAL")
    diffs = compare_lines(_read(args.files[0]), _read(args.files[1]), args.rtol)
    for d in diffs[: args.max_report]:
        print(d)
    if len(diffs) > args.max_report:
        print(f"... {len(diffs) - args.max_report} more")
    print(f"{args.files[1]}: {'matches' if not diffs else f'{len(diffs)} difference(s) from'} {args.files[0]}")
    return 0 if not diffs else 1


if __name__ == "__main__":
    sys.exit(main())
