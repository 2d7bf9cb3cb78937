#!/usr/bin/env python3
"""Reports import cycles between the modules of src/, at every level of the module tree.

For each module it collects what it refers to: `use` declarations and qualified paths
(`crate::`, `super::`, `self::`, a child module or an imported name), resolved through
re-exports to the module that defines the item, and with --docs also the intra-doc links
in `///` and `//!` comments (rustdoc resolves them, so they are references too). Test
code (`#[cfg(test)]` items) is left out: tests may reach anywhere.

A reference from a module under A to a module under B, where A and B are siblings (two
children of one parent), is an edge A -> B at that parent's level. A parent using its
children, or a child using its ancestors, is not a cycle: that is what a module tree is.
Exit status 1 when some level has a cycle, with the references that make it.

    python3 tools/modcycles.py [--docs] [SRC]
"""

import re
import sys
from collections import defaultdict
from pathlib import Path

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_files(src):
    """{module path tuple: file} for every module file under src (lib.rs is ())."""
    mods = {}
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts == ["lib"] or parts == ["main"]:
            if parts == ["lib"]:
                mods[()] = f
            continue
        if parts[-1] == "mod":
            parts = parts[:-1]
        mods[tuple(parts)] = f
    return mods


def skip_item(text, i):
    """Index just past the item starting at i: up to its `;` or its balanced `{...}`."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = skip_string(text, i)
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == ";" and depth == 0:
            return i + 1
        i += 1
    return n


def skip_string(text, i):
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == '"':
            return j + 1
        j += 1
    return j


def strip(text, docs):
    """Text without test-only items, string literals and comments (doc comments are kept,
    as text, when `docs`); newlines are kept so line numbers stay right."""
    out = []
    i, n = 0, len(text)
    test_attr = re.compile(r"#\[cfg\((test|any\(test[^\]]*)\)\]")
    while i < n:
        m = test_attr.match(text, i)
        if m:
            end = skip_item(text, m.end())
            out.append("\n" * text.count("\n", i, end))
            i = end
            continue
        if text.startswith("///", i) or text.startswith("//!", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end] if docs else "")
            i = end
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
            continue
        if text[i] == '"' or (text[i] == "r" and re.match(r'r#*"', text[i:i + 4]) and
                              (i == 0 or not re.match(r"\w", text[i - 1]))):
            if text[i] == "r":
                hashes = re.match(r"r(#*)\"", text[i:]).group(1)
                end = text.find('"' + hashes, i + len(hashes) + 2)
                end = n if end < 0 else end + 1 + len(hashes)
            else:
                end = skip_string(text, i)
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
            continue
        if text[i] == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            end = text.find("'", i + 2) + 1
            out.append("' '")
            i = end
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def expand_use(tree):
    """`a::{b, c::{d, self}, e as f}` -> [(['a','b'], 'b'), (['a','c','d'], 'd'), ...]."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+", "@", tree))
    results = []

    def walk(prefix, s):
        # split s at top-level commas
        parts, depth, cur = [], 0, ""
        for c in s:
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            if c == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += c
        if cur:
            parts.append(cur)
        for p in parts:
            if "{" in p:
                head, rest = p.split("{", 1)
                rest = rest[: rest.rfind("}")]
                head_segs = [x for x in head.split("::") if x]
                walk(prefix + head_segs, rest)
            else:
                alias = None
                if "@" in p:
                    p, alias = p.split("@", 1)
                segs = prefix + [x for x in p.split("::") if x]
                if not segs:
                    continue
                if segs[-1] == "*":
                    results.append((segs, "*"))
                    continue
                if segs[-1] == "self":
                    segs = segs[:-1]
                if segs:
                    results.append((segs, alias or segs[-1]))

    walk([], tree)
    return results


class Crate:
    def __init__(self, src, docs):
        self.files = module_files(src)
        self.docs = docs
        self.text = {m: strip(f.read_text(), docs) for m, f in self.files.items()}
        self.children = defaultdict(set)
        for m in self.files:
            if m:
                self.children[m[:-1]].add(m[-1])
        # Test-only modules (`#[cfg(test)] mod testing;`) vanish with the stripping of
        # their declaration: drop the files whose declaration is gone.
        for m in list(self.files):
            if m and not re.search(r"\bmod\s+" + m[-1] + r"\s*;", self.text[m[:-1]]):
                del self.files[m]
                del self.text[m]
                self.children[m[:-1]].discard(m[-1])
        self.imports = {m: {} for m in self.files}
        self.uses = {m: [] for m in self.files}
        for m, text in self.text.items():
            for um in re.finditer(r"\buse\s+([^;]+);", text):
                line = text.count("\n", 0, um.start()) + 1
                for segs, name in expand_use(um.group(1)):
                    absolute = self.absolute(m, segs)
                    if absolute is None:
                        continue
                    if name != "*":
                        self.imports[m][name] = absolute
                    self.uses[m].append((absolute, line))

    def absolute(self, m, segs):
        """Absolute path of `segs` written in module m, or None for an extern crate."""
        if not segs:
            return None
        head = segs[0]
        if head == "crate":
            return tuple(segs[1:])
        if head == "self":
            return m + tuple(segs[1:])
        if head == "super":
            base = m
            while segs and segs[0] == "super":
                base = base[:-1]
                segs = segs[1:]
            return base + tuple(segs)
        if head in self.children[m]:
            return m + tuple(segs)
        return None

    def resolve(self, path, seen=None):
        """The module that defines the item at absolute `path`."""
        seen = seen or set()
        cur = ()
        for i, seg in enumerate(path):
            if seg in self.children[cur] and cur + (seg,) in self.files:
                cur = cur + (seg,)
                continue
            target = self.imports.get(cur, {}).get(seg)
            if target and (cur, seg) not in seen:
                seen.add((cur, seg))
                return self.resolve(target + tuple(path[i + 1:]), seen)
            return cur
        return cur

    def references(self, m):
        """(module referred to, line) for everything module m refers to."""
        text = self.text[m]
        refs = [(self.resolve(a), line) for a, line in self.uses[m]]
        names = set(self.children[m]) | set(self.imports[m])
        pat = re.compile(r"(?<![\w:])((?:crate|super|self|" + "|".join(
            sorted(names) or ["crate"]) + r")(?:::" + IDENT + r")+)")
        for pm in pat.finditer(text):
            segs = pm.group(1).split("::")
            line = text.count("\n", 0, pm.start()) + 1
            if segs[0] in self.imports[m] and segs[0] not in ("crate", "super", "self"):
                absolute = self.imports[m][segs[0]] + tuple(segs[1:])
            else:
                absolute = self.absolute(m, segs)
            if absolute is not None:
                refs.append((self.resolve(absolute), line))
        return refs


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    docs = "--docs" in sys.argv
    src = Path(args[0] if args else "src")
    crate = Crate(src, docs)
    # level (parent module) -> child -> child -> [(from module, line, to module)]
    levels = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for m in crate.files:
        for target, line in crate.references(m):
            k = 0
            while k < min(len(m), len(target)) and m[k] == target[k]:
                k += 1
            if k == len(m) or k == len(target):
                continue  # an ancestor or a descendant
            parent = m[:k]
            levels[parent][m[k]][target[k]].append((m, line, target))
    cycles = 0
    for parent in sorted(levels):
        graph = levels[parent]
        nodes = set(graph) | {t for s in graph.values() for t in s}
        edges = {v: sorted(graph.get(v, {})) for v in nodes}
        for comp in sccs(nodes, edges):
            if len(comp) < 2:
                continue
            cycles += 1
            where = "::".join(parent) or "crate"
            print(f"cycle in {where}: {' <-> '.join(sorted(comp))}")
            for a in sorted(comp):
                for b in sorted(comp):
                    for frm, line, to in graph[a].get(b, [])[:3]:
                        f = crate.files[frm]
                        print(f"  {a} -> {b}: {f}:{line} refers to {'::'.join(to) or 'crate'}")
    total = sum(len(s) for lv in levels.values() for s in lv.values())
    print(f"{len(crate.files)} modules, {total} sibling dependencies, {cycles} cycles"
          + (" (doc links included)" if docs else ""))
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
