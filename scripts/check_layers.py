#!/usr/bin/env python3
"""Checks the imports of src/ against the layers of docs/ARCHITECTURE.md.

Reads every `crate::...` path of every file under src/ (in `use` lines and in code; comments,
strings and `#[cfg(test)]` modules at the end of a file are left out, and src/unit_tests/ and
src/bin/ are not library code), maps it to the file that defines the module it names, and
fails on:
  - an import from a module into a layer its row of the table does not list;
  - a cycle of imports between files.

  scripts/check_layers.py [--src DIR] [--doc FILE]    check (exit 1 on a violation)
  scripts/check_layers.py --self-test                 plant violations in a copy, expect them
"""
import argparse
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP_DIRS = {"unit_tests", "bin"}


def read_rules(doc):
    """{module: set of modules it may import} from the layer table of the architecture page."""
    text = open(doc).read()
    start = text.index("<!-- layers:")
    rules = {}
    for line in text[start:].splitlines()[1:]:
        if not line.startswith("|"):
            if rules:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "---") or cells[0].startswith("-"):
            continue
        mods = re.findall(r"`([a-z_]+)`", cells[1])
        allowed = set(re.findall(r"`([a-z_]+)`", cells[2]))
        for m in mods:
            rules[m] = allowed
    if not rules:
        sys.exit(f"{doc}: no layer table found")
    return rules


def strip_code(text):
    """The text without comments, string literals and a trailing `#[cfg(test)] mod tests`."""
    m = re.search(r"^#\[cfg\(test\)\]\s*\nmod \w+ \{", text, re.M)
    if m:
        text = text[: m.start()]
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""')
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            j = text.index("'", i + 2 if text[i + 1] != "\\" else i + 3)
            out.append("' '")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def module_of(rel):
    """src-relative file path -> module path (tuple of names)."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def expand_use(body):
    """Paths named by the body of a `use crate::...;` (braces expanded)."""
    body = re.sub(r"\s+", "", body)
    paths = []

    def walk(prefix, s):
        depth, cur, items = 0, "", []
        for ch in s:
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            if ch == "," and depth == 0:
                items.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            items.append(cur)
        for it in items:
            m = re.match(r"^([^{]*?)(?:::)?\{(.*)\}$", it)
            if m:
                walk(prefix + [p for p in m.group(1).split("::") if p], m.group(2))
            else:
                name = it.split(" as ")[0]
                paths.append(prefix + [p for p in name.split("::") if p and p != "self"])

    walk([], body)
    return paths


def imports_of(text, module, is_dir):
    """Module paths (lists of names, without `crate`) that the file's `crate::`, `super::`
    and `self::` paths name; `module` is the file's module path and `is_dir` whether the file
    is a `mod.rs` (whose `self` is its directory)."""
    code = strip_code(text)
    here = list(module)
    parent = here[:-1]
    found = []
    for kw, base in (("crate", []), ("super", parent), ("self", here)):
        for m in re.finditer(r"\buse\s+" + kw + r"::(\{[^;]*\}|[^;]*);", code):
            found += [base + p for p in expand_use(m.group(1))]
        rest = re.sub(r"\buse\s+" + kw + r"::[^;]*;", "", code)
        for m in re.finditer(r"(?<![:\w])" + kw + r"((?:::[A-Za-z_][A-Za-z0-9_]*)+)", rest):
            found.append(base + [p for p in m.group(1).split("::") if p])
    if is_dir:
        # In a mod.rs, `use child::...` names a child module of this directory.
        children = set(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", code, re.M))
        for m in re.finditer(r"\buse\s+(\w+)::(\{[^;]*\}|[^;]*);", code):
            if m.group(1) in children:
                found += [here + [m.group(1)] + p for p in expand_use(m.group(2))]
    return found


def scan(src):
    files = {}
    for dirpath, dirnames, filenames in os.walk(src):
        rel_dir = os.path.relpath(dirpath, src)
        if rel_dir.split(os.sep)[0] in SKIP_DIRS:
            dirnames[:] = []
            continue
        for f in filenames:
            if f.endswith(".rs"):
                rel = os.path.normpath(os.path.join(rel_dir, f))
                files[rel] = module_of(rel)
    return files


def resolve(path, modules):
    """The longest module prefix of `path` that is a file's module."""
    for k in range(len(path), 0, -1):
        if tuple(path[:k]) in modules:
            return tuple(path[:k])
    return None


def check(src, doc):
    rules = read_rules(doc)
    files = scan(src)
    by_module = {m: f for f, m in files.items()}
    problems, edges = [], {f: set() for f in files}
    for f, mod in sorted(files.items()):
        if not mod:
            continue  # lib.rs declares the layers
        layer = mod[0]
        allowed = rules.get(layer)
        if allowed is None:
            problems.append(f"src/{f}: module `{layer}` has no row in the layer table")
            continue
        text = open(os.path.join(src, f)).read()
        for path in imports_of(text, mod, os.path.basename(f) == "mod.rs"):
            if not path:
                continue
            target = path[0]
            if target != layer and target not in allowed:
                problems.append(
                    f"src/{f}: imports crate::{'::'.join(path)} (layer `{layer}` may import "
                    f"only {', '.join(sorted(allowed)) or 'nothing'})"
                )
            t = resolve(path, by_module)
            if t is not None and by_module[t] != f:
                edges[f].add(by_module[t])
    # Tarjan's strongly connected components: any with two or more files is a cycle.
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in sccs:
        problems.append("import cycle: " + " <-> ".join(f"src/{c}" for c in comp))
    return problems, len(files), sum(len(e) for e in edges.values())


def self_test():
    """Plants a layer violation, a backend importing a peer, an ABI importing a backend and
    a cycle in a copy of src/, and checks that each is reported (and the clean copy is not)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        shutil.copytree(os.path.join(ROOT, "src"), src)
        doc = os.path.join(ROOT, "docs", "ARCHITECTURE.md")
        base, _, _ = check(src, doc)
        if base:
            sys.exit("self-test: the unmodified tree already has problems:\n" + "\n".join(base))
        plants = {
            "cpu/select.rs": "use crate::exec::Plan;\n",
            "cuda/limits.rs": "use crate::cpu::Ctx;\n",
            "ffi/boundary.rs": "use crate::cpu::spgemm::CpuPlan;\n",
            "common/slices.rs": "use crate::common::check::check_nnz;\n",
        }
        for f, line in plants.items():
            p = os.path.join(src, f)
            text = open(p).read()
            open(p, "w").write(line + text)
        found, _, _ = check(src, doc)
        expect = [
            ("src/cpu/select.rs: imports crate::exec",),
            ("src/cuda/limits.rs: imports crate::cpu",),
            ("src/ffi/boundary.rs: imports crate::cpu",),
            ("import cycle:", "src/common/check.rs", "src/common/slices.rs"),
        ]
        missing = [
            " ".join(e)
            for e in expect
            if not any(x.startswith(e[0]) and all(w in x for w in e[1:]) for x in found)
        ]
        if missing:
            sys.exit("self-test: not reported: " + "; ".join(missing) + "\nfound:\n" + "\n".join(found))
    print(f"check_layers self-test: all {len(expect)} planted violations reported")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=os.path.join(ROOT, "src"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "ARCHITECTURE.md"))
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        self_test()
        return
    problems, nfiles, nedges = check(a.src, a.doc)
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"layers: {nfiles} files, {nedges} file-to-file imports, no cycle, none against the layer table")


if __name__ == "__main__":
    main()
