#!/usr/bin/env python3
"""Lists Rust functions longer than a limit (default 120 lines), longest first.

A function runs from its `fn` line to the line of its matching closing brace; braces in
strings, chars and comments are skipped. Test functions count too.

    python3 tools/fnlen.py [--limit N] [PATH...]
"""
import re
import sys
from pathlib import Path


def code_only(text):
    """Text with comments, strings and char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        m = re.match(r'r(#*)"', text[i:i + 10]) if text[i] == "r" and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")) else None
        if m:
            close = '"' + m.group(1)
            j = text.find(close, i + len(m.group(0)))
            j = n if j < 0 else j + len(close)
            out.append("\n" * text.count("\n", i, j))
            i = j
            continue
        if text[i] == '"' or (text[i] == "b" and text.startswith('b"', i)):
            j = i + (2 if text[i] == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append("\n" * text.count("\n", i, j + 1))
            i = j + 1
            continue
        if text[i] == "'":
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                i += len(m.group(0))
                out.append(" ")
                continue
        out.append(text[i])
        i += 1
    return "".join(out)


def functions(path):
    text = code_only(path.read_text())
    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", text):
        start = text.count("\n", 0, m.start()) + 1
        j = m.end()
        depth = 0
        # the body starts at the first `{` outside parentheses/angle brackets; a `;`
        # first means a declaration without a body (trait item, extern)
        paren = 0
        while j < len(text):
            c = text[j]
            if c in "([":
                paren += 1
            elif c in ")]":
                paren -= 1
            elif c == ";" and paren == 0:
                break
            elif c == "{" and paren == 0:
                break
            j += 1
        if j >= len(text) or text[j] == ";":
            continue
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        end = text.count("\n", 0, j) + 1
        yield m.group(1), start, end - start + 1


def main():
    args = sys.argv[1:]
    limit = 120
    if "--limit" in args:
        k = args.index("--limit")
        limit = int(args[k + 1])
        del args[k:k + 2]
    roots = [Path(a) for a in (args or ["src", "tests"])]
    found = []
    longest = None
    for root in roots:
        files = [root] if root.is_file() else sorted(root.rglob("*.rs"))
        for f in files:
            for name, line, length in functions(f):
                if longest is None or length > longest[0]:
                    longest = (length, f, line, name)
                if length > limit:
                    found.append((length, f, line, name))
    for length, f, line, name in sorted(found, reverse=True):
        print(f"{length:5} {f}:{line} {name}")
    if longest:
        print(f"longest: {longest[0]} lines, {longest[1]}:{longest[2]} {longest[3]}; "
              f"{len(found)} over {limit}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
