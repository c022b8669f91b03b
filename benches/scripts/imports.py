#!/usr/bin/env python3
"""How a crate's modules import each other: circles and upward imports.

    python3 benches/scripts/imports.py crates/zescope-sampler/src [-v]

Reads every `.rs` file under the crate's `src` (each file one module: `lib.rs` the root,
`a/mod.rs` the module `a`, `a/b.rs` the module `a::b`) and every path it names that starts with
`crate::`, `super::`, `self::` or the name of one of its own child modules (in `use` lines and
in code, not in comments nor in its `#[cfg(test)] mod` of unit tests), and resolves each
to the file of the longest module prefix it names. The crate root is left out (it only declares
modules and re-exports them). Then:

- circles: sets of two or more files that import each other, directly or through others (the
  strongly connected components of the import graph), and how many files they hold;
- upward imports: imports from a file inside a folder `F/` to a file outside `F/` that itself
  imports something inside `F/` (the folder is not a floor below what it imports; a folder's
  file importing its own `mod.rs`, or anything that never imports the folder back, is not
  counted).

`-v` lists the circles and the upward imports. Prints one line per measure; the numbers are
what docs/architecture.md quotes.
"""

import os
import re
import sys


def module_of(rel):
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())


def use_paths(text):
    """Every `crate::…`/`super::…`/`self::…` path, with `use` groups `{a, b::c}` expanded."""
    out = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        out.extend(expand(re.sub(r"\s+", "", m.group(1))))
    code = re.sub(r"\buse\s+[^;]+;", "", text)
    for m in re.finditer(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", code):
        out.append(m.group(1))
    return out


def expand(tree):
    """`a::{b, c::{d, e}}` -> [`a::b`, `a::c::d`, `a::c::e`]."""
    i = tree.find("{")
    if i < 0:
        return [tree.split(" as ")[0]]
    prefix, inner = tree[:i], tree[i + 1 : tree.rfind("}")]
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    items.append(cur)
    out = []
    for it in filter(None, items):
        out.extend(expand(prefix + it) if it != "self" else [prefix.rstrip(":")])
    return out


def resolve(path, here, is_mod_file, modules):
    segs = path.split("::")
    if segs[0] == "crate":
        base, segs = (), segs[1:]
    else:
        base = here if is_mod_file else here[:-1]
        if segs[0] == "self":
            base = here
            segs = segs[1:]
        while segs and segs[0] == "super":
            base = base[:-1]
            segs = segs[1:]
    full = base + tuple(segs)
    for n in range(len(full), 0, -1):
        if full[:n] in modules:
            return full[:n]
    return None


def sccs(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
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
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    src = sys.argv[1]
    verbose = "-v" in sys.argv[2:]
    files = {}
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith(".rs"):
                rel = os.path.relpath(os.path.join(root, n), src)
                files[module_of(rel)] = rel
    modules = set(files)
    edges = {}
    for mod, rel in files.items():
        if mod == ():
            continue
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            text = strip_comments(f.read())
        # a file's unit tests (`#[cfg(test)] mod tests`, at its end) are not what it imports
        text = re.split(r"#\[cfg\(test\)\]\s*mod\s", text)[0]
        is_mod_file = os.path.basename(rel) == "mod.rs"
        for p in use_paths(text):
            if p.split("::")[0] not in ("crate", "super", "self"):
                # `use child::X` in a module's own file names its child module
                if mod + (p.split("::")[0],) not in modules:
                    continue
                p = "self::" + p
            target = resolve(p, mod, is_mod_file, modules)
            if target and target != mod and target != ():
                edges.setdefault(mod, set()).add(target)
    name = lambda m: files[m]
    circles = [sorted(map(name, c)) for c in sccs([m for m in modules if m != ()], edges) if len(c) > 1]
    upward = []
    for a, targets in edges.items():
        for b in targets:
            # every folder holding `a` that does not hold `b`
            for n in range(1, len(a)):
                folder = a[:n]
                if b[:n] == folder:
                    continue
                if any(t[: len(folder)] == folder for t in edges.get(b, ())):
                    upward.append((name(a), name(b), "/".join(folder) + "/"))
                    break
    print(f"files {len(files)}")
    print(f"circles {len(circles)} (files in them: {sum(map(len, circles))})")
    print(f"upward imports {len(upward)}")
    if verbose:
        for c in circles:
            print("circle:", " ".join(c))
        for a, b, folder in sorted(upward):
            print(f"upward: {a} -> {b} (which imports {folder})")


if __name__ == "__main__":
    main()
