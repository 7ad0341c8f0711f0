#!/usr/bin/env python3
"""List C++/CUDA functions whose bodies run over a number of lines (80 by default).

A body is found by balancing braces with comments, strings and character literals blanked out; a
brace opens a function body when the text before it, back to the last ';', '{' or '}', has a
parameter list and is no control statement. Lambdas and local classes count as part of the
function around them. A comment `// long: REASON` on the line above the signature, in it, or on
the body's first line marks a function that stays long (a hot kernel): it is listed apart.

usage: tools/long_functions.py [--max N] PATH...   (folders are searched for .cpp .cu .hpp .cuh)
"""
import argparse
import pathlib
import re
import sys

SUFFIXES = {".cpp", ".cu", ".hpp", ".cuh", ".h"}
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else)\b")
CONTAINER = re.compile(r"\b(namespace|class|struct|union|enum)\b|extern\s+\"C\"")


def blank_comments_and_strings(text):
    """Same length and line breaks as text, with comments and literals replaced by spaces."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delim_end = text.find("(", i)
            close = ")" + text[i + 2:delim_end] + '"'
            j = text.find(close, delim_end)
            j = n if j < 0 else j + len(close)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def function_name(head):
    """The name before the last top-level parameter list of a signature."""
    depth, close = 0, head.rfind(")")
    for k in range(close, -1, -1):
        depth += {")": 1, "(": -1}.get(head[k], 0)
        if depth == 0:
            name = re.search(r"([~\w:]+|operator\s*\S+)\s*$", head[:k])
            return name.group(1) if name else "?"
    return "?"


def functions(path):
    """(name, first line, line count, reason) of each outermost function body in path."""
    raw = path.read_text(errors="replace")
    raw_lines = raw.splitlines()
    text = blank_comments_and_strings(raw)
    text = re.sub(r"^[ \t]*#.*$", lambda m: " " * len(m.group(0)), text, flags=re.M)
    found = []
    stack = []  # kinds of the open braces: "container", "function" or "other"
    head_start = 0
    for i, c in enumerate(text):
        if c == "{":
            head = text[head_start:i]
            if "function" in stack or "other" in stack:
                kind = "other"
            elif CONTAINER.search(head) and "(" not in head.split("{")[0].split("=")[0].replace("enum class", ""):
                kind = "container"
            elif "(" in head and not CONTROL.match(head) and not head.rstrip().endswith(("=", ",")):
                kind = "function"
            else:
                kind = "other"
            if kind == "function":
                first = text.count("\n", 0, i) + 1
                sig_line = text.count("\n", 0, head_start) + 1 + (head[: len(head) - len(head.lstrip())].count("\n"))
                stack.append(("function", first, sig_line, function_name(head)))
            else:
                stack.append((kind,))
            head_start = i + 1
        elif c == "}":
            if stack:
                top = stack.pop()
                if top[0] == "function":
                    last = text.count("\n", 0, i) + 1
                    _, first, sig_line, name = top
                    marks = (re.search(r"//\s*long:\s*(.*)", line) for line in raw_lines[max(0, sig_line - 2): first + 1])
                    reason = next((m for m in marks if m), None)
                    found.append((name, sig_line, last - first + 1, reason.group(1) if reason else None))
            head_start = i + 1
        elif c == ";":
            head_start = i + 1
    stack_kinds = [s[0] for s in stack]
    return found, stack_kinds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=80)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    files = []
    for p in map(pathlib.Path, args.paths):
        files += sorted(f for f in p.rglob("*") if f.suffix in SUFFIXES) if p.is_dir() else [p]
    long_ones, kept = [], []
    for f in files:
        found, unclosed = functions(f)
        if unclosed:
            print(f"{f}: braces do not balance ({len(unclosed)} open at the end)", file=sys.stderr)
        for name, line, count, reason in found:
            if count > args.max:
                (kept if reason else long_ones).append((count, f"{f}:{line}", name, reason))
    for count, where, name, _ in sorted(long_ones, reverse=True):
        print(f"{count:5d}  {where}  {name}")
    for count, where, name, reason in sorted(kept, reverse=True):
        print(f"{count:5d}  {where}  {name}  (kept: {reason})")
    return 1 if long_ones else 0


if __name__ == "__main__":
    sys.exit(main())
