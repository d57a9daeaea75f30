#!/usr/bin/env python3
"""Generates include/spgemm.f90, the Fortran 2008 module `spgemm`, from include/spgemm.h.

Every function prototype of the C header becomes a bind(C) interface, every integer
`#define SPGEMM_*` a named constant. Handles, matrices and plans are `type(c_ptr)`; untyped
array arguments (`void *`) are `type(c_ptr), value` so that Fortran callers pass `c_loc(x)`
of their own 1-based arrays without a copy; `T **` outputs are `type(c_ptr)` by reference.

An unknown C type stops the generator with an error instead of guessing, so a new C
function either gets a correct interface or breaks `make check`.

Usage:
  scripts/gen_fortran.py            rewrite include/spgemm.f90
  scripts/gen_fortran.py --check    exit 1 (and print a diff) if include/spgemm.f90 is stale
  scripts/gen_fortran.py --header H --output F    other paths
Python 3 standard library only.
"""

import argparse
import difflib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LINE = 100  # well under the 132 characters of free-form source

# C scalar types and their iso_c_binding Fortran declarations.
SCALARS = {
    "int32_t": "integer(c_int32_t)",
    "int64_t": "integer(c_int64_t)",
    "size_t": "integer(c_size_t)",
    "int": "integer(c_int)",
    "double": "real(c_double)",
    "float": "real(c_float)",
}


class GenError(Exception):
    pass


def parse_header(text):
    """Returns (constants, typedefs, opaque, functions) of the header text.

    constants: list of (name, int value, doc lines)
    typedefs: dict alias -> scalar C type; opaque: set of struct type names
    functions: list of dict(name, ret, params=[(ctype, name)], doc)
    """
    constants, typedefs, opaque, functions = [], {}, set(), []
    doc, stmt = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if stmt:
            stmt += " " + line
        elif line.startswith("//"):
            doc.append(line[2:].strip() if line[2:3] == " " else line[2:].rstrip())
            continue
        elif line.startswith("#"):
            m = re.match(r"#\s*define\s+(SPGEMM_\w+)\s+(.+)$", line)
            if m:
                value = m.group(2).strip()
                if not re.fullmatch(r"-?\d+", value):
                    raise GenError(f"constant {m.group(1)}: value {value!r} is not an integer literal")
                constants.append((m.group(1), int(value), doc))
            doc = []
            continue
        elif not line or line.startswith("/*") or line.startswith("*") or line.startswith("*/"):
            if not line:
                doc = []
            continue
        elif line == 'extern "C" {' or line.startswith("}"):
            doc = []
            continue
        else:
            stmt = line
        if not stmt.endswith(";"):
            continue
        s = re.sub(r"\s+", " ", stmt[:-1]).strip()
        stmt = ""
        m = re.fullmatch(r"typedef struct (\w+) (\w+)", s)
        if m:
            opaque.add(m.group(2))
        elif s.startswith("typedef "):
            m = re.fullmatch(r"typedef (\w+) (\w+)", s)
            if not m or m.group(1) not in SCALARS:
                raise GenError(f"unsupported typedef: {s}")
            typedefs[m.group(2)] = m.group(1)
        else:
            m = re.fullmatch(r"(.+?[\s*])(\w+)\s*\((.*)\)", s)
            if not m:
                raise GenError(f"cannot parse declaration: {s}")
            params = []
            plist = m.group(3).strip()
            if plist and plist != "void":
                for p in plist.split(","):
                    pm = re.fullmatch(r"(.+?[\s*])(\w+)", p.strip())
                    if not pm:
                        raise GenError(f"{m.group(2)}: cannot parse parameter {p.strip()!r}")
                    params.append((norm_type(pm.group(1)), pm.group(2)))
            functions.append(dict(name=m.group(2), ret=norm_type(m.group(1)), params=params, doc=doc))
        doc = []
    return constants, typedefs, opaque, functions


def norm_type(t):
    """'const  spgemm_matrix_t *' -> 'const spgemm_matrix_t *'; '**' kept together."""
    t = t.replace("*", " * ")
    t = re.sub(r"\s+", " ", t).strip()
    return t.replace("* *", "**")


def split_type(ctype):
    """Returns (is_const, base, pointer depth)."""
    words = ctype.split()
    depth = sum(w.count("*") for w in words)
    words = [w for w in words if "*" not in w]
    const = "const" in words
    words = [w for w in words if w != "const"]
    if len(words) != 1:
        raise GenError(f"unsupported C type {ctype!r}")
    return const, words[0], depth


def fortran_param(ctype, typedefs, opaque, where):
    """Fortran declaration (without the name) of a C parameter type."""
    const, base, depth = split_type(ctype)
    scalar = SCALARS.get(typedefs.get(base, base))
    if base in opaque or base == "void":
        if depth == 1:
            return "type(c_ptr), value"  # handle / matrix / plan, or an array: pass c_loc(x)
        if depth == 2:
            return "type(c_ptr), intent(out)"  # the callee writes a pointer
    elif base == "char" and depth == 1 and const:
        return "character(kind=c_char), dimension(*), intent(in)"  # NUL-terminated string
    elif scalar:
        if depth == 0:
            return f"{scalar}, value"
        if depth == 1:
            return f"{scalar}, intent({'in' if const else 'out'})"
    raise GenError(f"{where}: no Fortran mapping for C type {ctype!r}")


def fortran_result(ctype, typedefs, where):
    const, base, depth = split_type(ctype)
    if base == "void" and depth == 0:
        return None
    if depth == 1 and (base == "char" or base == "void"):
        return "type(c_ptr)"  # e.g. a C string: convert with spgemm_c_string
    scalar = SCALARS.get(typedefs.get(base, base))
    if scalar and depth == 0:
        return scalar
    raise GenError(f"{where}: no Fortran mapping for C return type {ctype!r}")


def kinds_used(decls):
    names = set()
    for d in decls:
        names.update(re.findall(r"\b(c_\w+)\b", d))
    return names


def wrap(line, indent):
    """Splits a long line with free-form continuation ('&' at the end of each part)."""
    if len(line) <= MAX_LINE:
        return [line]
    out, cur = [], line
    while len(cur) > MAX_LINE:
        cut = cur.rfind(", ", 0, MAX_LINE - 2)
        if cut <= len(indent):
            raise GenError(f"cannot wrap line: {line}")
        out.append(cur[: cut + 1] + " &")
        cur = indent + "    " + cur[cut + 2 :]
    out.append(cur)
    return out


def comment(lines, indent):
    return [f"{indent}!{(' ' + l) if l else ''}".rstrip() for l in lines]


# Array kinds of the typed helpers: (suffix, Fortran declaration, SPGEMM_* code).
INDEX_KINDS = [("i4", "integer(c_int32_t)", "SPGEMM_INDEX_INT32"),
               ("i8", "integer(c_int64_t)", "SPGEMM_INDEX_INT64")]
VALUE_KINDS = [("r4", "real(c_float)", "SPGEMM_VALUE_FLOAT32"),
               ("r8", "real(c_double)", "SPGEMM_VALUE_FLOAT64"),
               ("c4", "complex(c_float_complex)", "SPGEMM_VALUE_COMPLEX_FLOAT"),
               ("c8", "complex(c_double_complex)", "SPGEMM_VALUE_COMPLEX_DOUBLE")]
# The C functions the helpers call; the helpers are left out of a header without them.
HELPER_NEEDS = ("spgemm_matrix_create_csr_nnz", "spgemm_numeric_sized")


def array_helpers():
    """Generic procedures over whole Fortran arrays, which pass each array's kind and
    size to the length-aware C functions (the library checks them, so a wrong kind or a
    short array is an error status, never a write past the array). Returns (generic
    interface blocks, procedure bodies)."""
    generics, bodies = [], []
    create, numeric = [], []
    for o, otype, ocode in INDEX_KINDS:
        for i, itype, icode in INDEX_KINDS:
            for v, vtype, vcode in VALUE_KINDS:
                suffix = f"{o}_{i}_{v}"
                name = f"spgemm_csr_{suffix}"
                create.append(name)
                bodies += [
                    f"  function {name}(matrix, ncols, row_offsets, col_indices, values, base) &",
                    "      result(status)",
                    "    type(c_ptr), intent(out) :: matrix",
                    "    integer(c_int64_t), intent(in) :: ncols",
                    f"    {otype}, target, contiguous, intent(in) :: row_offsets(:)",
                    f"    {itype}, target, contiguous, intent(in) :: col_indices(:)",
                    f"    {vtype}, target, contiguous, intent(in) :: values(:)",
                    "    integer(c_int32_t), intent(in) :: base",
                    "    integer(c_int32_t) :: status",
                    "    status = spgemm_matrix_create_csr_nnz(matrix, size(row_offsets, kind=c_int64_t) - 1, &",
                    "        ncols, min(size(col_indices, kind=c_int64_t), size(values, kind=c_int64_t)), &",
                    f"        {ocode}, c_loc(row_offsets), {icode}, c_loc(col_indices), &",
                    f"        {vcode}, c_loc(values), base)",
                    f"  end function {name}",
                    "",
                ]
                name = f"spgemm_numeric_{suffix}"
                numeric.append(name)
                bodies += [
                    f"  function {name}(handle, plan, a, b, c_row_offsets, c_col_indices, &",
                    "      c_values) result(status)",
                    "    type(c_ptr), intent(in) :: handle, plan, a, b",
                    f"    {otype}, target, contiguous, intent(inout) :: c_row_offsets(:)",
                    f"    {itype}, target, contiguous, intent(inout) :: c_col_indices(:)",
                    f"    {vtype}, target, contiguous, intent(inout) :: c_values(:)",
                    "    integer(c_int32_t) :: status",
                    "    status = spgemm_numeric_sized(handle, plan, a, b, &",
                    f"        {ocode}, c_loc(c_row_offsets), size(c_row_offsets, kind=c_int64_t), &",
                    f"        {icode}, c_loc(c_col_indices), size(c_col_indices, kind=c_int64_t), &",
                    f"        {vcode}, c_loc(c_values), size(c_values, kind=c_int64_t))",
                    f"  end function {name}",
                    "",
                ]
    for generic, names in (("spgemm_matrix_create_csr_arrays", create),
                           ("spgemm_numeric_arrays", numeric)):
        generics.append(f"  interface {generic}")
        for n in names:
            generics.append(f"    module procedure {n}")
        generics.append(f"  end interface {generic}")
    return generics, bodies


def generate(header_text, header_name="include/spgemm.h"):
    constants, typedefs, opaque, functions = parse_header(header_text)
    if not functions:
        raise GenError("no function prototypes found in the header")

    # Fortran names are case-insensitive: a clash would make the module invalid.
    seen = {}
    for name in [c[0] for c in constants] + [f["name"] for f in functions]:
        key = name.lower()
        if key in seen:
            raise GenError(f"{name} and {seen[key]} are the same Fortran name")
        seen[key] = name

    interfaces, used = [], set(["c_ptr", "c_char", "c_null_char", "c_f_pointer", "c_associated"])
    for f in functions:
        name = f["name"]
        params = [(pn, fortran_param(ct, typedefs, opaque, f"{name}({pn})")) for ct, pn in f["params"]]
        res = fortran_result(f["ret"], typedefs, name)
        pnames = [p for p, _ in params]
        lower = {p.lower() for p in pnames}
        if len(lower) != len(pnames):
            raise GenError(f"{name}: parameter names differ only in case")
        decls = [d for _, d in params] + ([res] if res else [])
        kinds = sorted(kinds_used(decls))
        used.update(kinds)
        body = []
        body += comment(f["doc"], "    ")
        arglist = ", ".join(pnames)
        bind = f"bind(C, name=\"{name}\")"
        if res:
            rname = "status" if "status" not in lower else "res"
            while rname in lower:
                rname += "_"
            head, tail = f"    function {name}({arglist})", f" {bind} result({rname})"
        else:
            head, tail = f"    subroutine {name}({arglist})", f" {bind}"
        if len(head + tail) <= MAX_LINE:
            body.append(head + tail)
        else:
            body += wrap(head + " &", "    ")
            body.append("        " + tail.strip())
        body.append(f"      import :: {', '.join(kinds)}")
        for pn, d in params:
            body.append(f"      {d} :: {pn}")
        if res:
            body.append(f"      {res} :: {rname}")
            body.append(f"    end function {name}")
        else:
            body.append(f"    end subroutine {name}")
        interfaces.append(body)

    helper_names = ["spgemm_c_string", "spgemm_error_message"]
    have = {f["name"] for f in functions}
    generics, array_bodies = [], []
    if all(n in have for n in HELPER_NEEDS):
        generics, array_bodies = array_helpers()
        helper_names += ["spgemm_matrix_create_csr_arrays", "spgemm_numeric_arrays"]
        used.update(["c_loc", "c_int32_t", "c_int64_t", "c_float", "c_double",
                     "c_float_complex", "c_double_complex"])
    public = [c[0] for c in constants] + [f["name"] for f in functions] + helper_names

    out = []
    out += [
        f"! Generated by scripts/gen_fortran.py from {header_name}. Do not edit: run",
        "! `python3 scripts/gen_fortran.py` after changing the C header (`make check` fails",
        "! while this file is stale).",
        "!",
        "! Fortran 2008 interface to libspgemm:  use spgemm",
        "! - Every C function is a bind(C) function of the same name returning",
        "!   integer(c_int32_t) (SPGEMM_STATUS_SUCCESS = 0).",
        "! - Handles, matrices and plans are type(c_ptr).",
        "! - Arrays are passed as type(c_ptr) by value: give c_loc(x) of a TARGET array.",
        "!   Nothing is copied, so the array must stay allocated while the matrix is used.",
        "!   1-based arrays: create matrices with SPGEMM_INDEX_BASE_ONE. Default integer",
        "!   arrays are SPGEMM_INDEX_INT32, integer(c_int64_t) arrays SPGEMM_INDEX_INT64,",
        "!   real(c_double) values SPGEMM_VALUE_FLOAT64, real(c_float) SPGEMM_VALUE_FLOAT32,",
        "!   complex(c_double_complex) SPGEMM_VALUE_COMPLEX_DOUBLE and complex(c_float_complex)",
        "!   SPGEMM_VALUE_COMPLEX_FLOAT (C99 _Complex layout, passed with c_loc as the real",
        "!   ones). Scalars passed by address (alpha, beta of spgemm_spmm_scaled) are c_loc of",
        "!   a TARGET variable of the matrix's value type.",
        "! - Sizes (int64_t in C) are integer(c_int64_t) by value: write 10_c_int64_t or",
        "!   int(n, c_int64_t).",
        "! - spgemm_error_message(handle) returns the last error text as a Fortran string.",
        "! - spgemm_matrix_create_csr_arrays(matrix, ncols, row_offsets, col_indices, values,",
        "!   base) and spgemm_numeric_arrays(handle, plan, a, b, c_row_offsets, c_col_indices,",
        "!   c_values) take whole contiguous TARGET arrays (integer(c_int32_t) or",
        "!   integer(c_int64_t) indices, real or complex values of either kind) and pass their",
        "!   kinds and sizes to spgemm_matrix_create_csr_nnz and spgemm_numeric_sized: nrows is",
        "!   size(row_offsets) - 1, and a kind or length that disagrees with the matrix or plan",
        "!   is an error status with a message, never a write past an array.",
        "! Compile this file with your code (module files are compiler-specific), e.g.",
        "!   gfortran -c spgemm.f90",
        "module spgemm",
    ]
    out += wrap(f"  use, intrinsic :: iso_c_binding, only: {', '.join(sorted(used))}", "  ")
    out += [
        "  implicit none",
        "  private",
    ]
    for p in public:
        out.append(f"  public :: {p}")
    out.append("")
    for name, value, doc in constants:
        kind = "c_int32_t" if -(2**31) <= value < 2**31 else "c_int64_t"
        if kind not in used:
            raise GenError(f"{name}: {kind} constant needs {kind} imported")
        out += comment(doc, "  ")
        out.append(f"  integer({kind}), parameter :: {name} = {value}_{kind}")
    out.append("")
    out.append("  interface")
    for i, body in enumerate(interfaces):
        if i:
            out.append("")
        out += body
    out.append("  end interface")
    if generics:
        out.append("")
        out += generics
    out += [
        "",
        "contains",
        "",
        "  ! Copies a NUL-terminated C string (such as spgemm_status_string's result) into a",
        "  ! Fortran string; a null pointer gives an empty string.",
        "  function spgemm_c_string(p) result(s)",
        "    type(c_ptr), intent(in) :: p",
        "    character(len=:), allocatable :: s",
        "    character(kind=c_char), pointer :: chars(:)",
        "    integer :: n, i",
        "    if (.not. c_associated(p)) then",
        "      s = ''",
        "      return",
        "    end if",
        "    call c_f_pointer(p, chars, [huge(0)])",
        "    n = 0",
        "    do while (chars(n + 1) /= c_null_char)",
        "      n = n + 1",
        "    end do",
        "    allocate(character(len=n) :: s)",
        "    do i = 1, n",
        "      s(i:i) = chars(i)",
        "    end do",
        "  end function spgemm_c_string",
        "",
        "  ! The message of the last failed call on handle (or of this thread's last failed",
        "  ! call without a handle when handle is c_null_ptr), as a Fortran string.",
        "  function spgemm_error_message(handle) result(s)",
        "    type(c_ptr), intent(in) :: handle",
        "    character(len=:), allocatable :: s",
        "    s = spgemm_c_string(spgemm_last_error(handle))",
        "  end function spgemm_error_message",
        "",
    ]
    out += array_bodies
    out += [
        "end module spgemm",
    ]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--header", default=os.path.join(ROOT, "include", "spgemm.h"))
    ap.add_argument("--output", default=os.path.join(ROOT, "include", "spgemm.f90"))
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args()
    with open(args.header, encoding="utf-8") as fh:
        header = fh.read()
    try:
        text = generate(header)
    except GenError as e:
        print(f"gen_fortran: {args.header}: {e}", file=sys.stderr)
        return 2
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as fh:
                current = fh.read()
        except FileNotFoundError:
            current = ""
        if current != text:
            sys.stdout.writelines(
                difflib.unified_diff(current.splitlines(True), text.splitlines(True), args.output, "generated")
            )
            print(f"{args.output} is stale: run python3 scripts/gen_fortran.py", file=sys.stderr)
            return 1
        print(f"{os.path.relpath(args.output)} is current ({text.count('bind(C')} interfaces)")
        return 0
    with open(args.output, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
