#!/usr/bin/python3
"""The docs say only what exists: every relative link and #anchor in README.md and docs/*.md
resolves, every docs/ or tools/ path they name is in the checkout, every rdmamesh flag they name
is in `rdmamesh --help`, and README.md stays short (a newcomer reads it whole).

  tests/host/docs_test.py BUILD/rdmamesh"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README_MAX_LINES = 250
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def prose(text):
    """The text outside fenced code blocks (console samples there hold `#` lines and paths)."""
    out, fenced = [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
            continue
        out.append("" if fenced else line)
    return "\n".join(out)


def anchors(path):
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", prose(open(path).read()), re.M)}


def check_links(path):
    text = prose(open(path).read())
    here = os.path.dirname(path)
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        target = m.group(1)
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(here, file)) if file else path
        if not os.path.exists(dest):
            fail(f"{os.path.relpath(path, ROOT)}: link to {target}: no such file")
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            fail(f"{os.path.relpath(path, ROOT)}: link to {target}: no such heading")
    for m in re.finditer(r"(?<![\w/.-])((?:docs|tools|jobs|analysis)/[\w./-]*\w)", text):
        p = m.group(1)
        if "*" in p or "<" in p:
            continue
        if not os.path.exists(os.path.join(ROOT, p)):
            fail(f"{os.path.relpath(path, ROOT)}: names {p}, which is not in the checkout")


def named_flags(path):
    """Flags the docs give rdmamesh: in a line that runs it, after the word rdmamesh, and in the
    flag table's first column (| `-s, --size N` |)."""
    flags = set()
    for line in open(path).read().split("\n"):
        cell = re.match(r"\| `(-\w, )?(--[a-z][\w-]*)", line)
        if cell and "running.md" in path:
            flags.add(cell.group(2))
        # rdmamesh run with flags: what follows it up to a closing backtick, a comment, a pipe
        for m in re.finditer(r"(?:^|[\s/`])rdmamesh( -[^`#|;&]*)", line):
            flags.update(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", m.group(1)))
    return flags


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    helptext = subprocess.run([sys.argv[1], "--help"], capture_output=True, text=True).stdout
    known = set(re.findall(r"(--[a-z][\w-]*)", helptext))
    if "--pattern" not in known:
        sys.exit(f"docs_test: {sys.argv[1]} --help printed no flags")
    pages = [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
    for page in pages:
        check_links(page)
        for flag in sorted(named_flags(page) - known):
            fail(f"{os.path.relpath(page, ROOT)}: names rdmamesh {flag}, which --help does not list")
    lines = open(pages[0]).read().count("\n")
    if lines > README_MAX_LINES:
        fail(f"README.md: {lines} lines, more than {README_MAX_LINES}: move the detail to a docs/ page")
    print(f"docs: {len(pages)} pages, {len(known)} flags in --help, {len(failures)} problem(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
