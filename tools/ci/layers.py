#!/usr/bin/env python3
"""The harness's layering (docs/ARCHITECTURE.md, "Subsystems"): measures it
and fails on a broken rule.

A subsystem is a folder of harness/src (and reports/). Its public header,
<folder>/<folder>.h, opens with a comment holding the line
    May depend on: core, ops        (or: May depend on: nothing)
Checks, from the sources alone:
  1. every subsystem folder has its public header and that line, naming only
     subsystems that exist, and the declared graph has no circle;
  2. every #include "..." of a harness file is its own folder's header (a
     subfolder's, such as ops/rows/, by a path from the file), a public API
     header (mtp/...), or another subsystem's public header
     ("judge/judge.h") that its "May depend on" line names: never another
     folder's private header;
and, with --objects BUILD_DIR (the object files of a build, read with nm):
  3. no two C files use each other's symbols, directly or through others
     (a file-level import circle; KNOWN_CIRCLES lists the ones not broken
     yet), and every symbol a subsystem uses from another is allowed by its
     "May depend on" line.
Prints each subsystem's level (0: depends on nothing) and its files.
Usage: tools/ci/layers.py [--objects BUILD_DIR] [--graph]
Exit 0: clean; 1: a rule is broken (one line per breach); 2: usage.
"""
import collections
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SRC = os.path.join(ROOT, "harness", "src")
# Folders outside harness/src that are subsystems of the harness binary.
EXTRA = {"reports": os.path.join(ROOT, "reports")}
# Files outside these folders compiled into a subsystem's library (as
# "folder/file.c" under their own folder's name, the way objects are named).
EXTRA_FILES = {"ref/backend_ref.c": "backends"}  # kernels/ref/
# File-level circles known and not yet broken: frozenset of "folder/file.c"
# -> the one move that breaks it (none today). Any other circle fails, and
# so does an entry here that no longer exists (delete it).
KNOWN_CIRCLES = {}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)
DEPS_RE = re.compile(r"^\s*\*?\s*May depend on:\s*(.*)$", re.MULTILINE)


def subsystems():
    subs = {}
    for name in sorted(os.listdir(SRC)):
        path = os.path.join(SRC, name)
        if os.path.isdir(path):
            subs[name] = path
    subs.update(EXTRA)
    return subs


def files_of(path):
    """The C files of a subsystem folder and of its subfolders (ops/rows/),
    as paths relative to the folder."""
    out = []
    for d, _, names in os.walk(path):
        out += [os.path.relpath(os.path.join(d, f), path) for f in names
                if f.endswith((".c", ".h"))]
    return sorted(out)


def own_header(path, f, inc):
    """Whether an include of file f (relative to subsystem folder path) names
    a header of the same folder by a path from f ("rows.h", "../ref_io.h",
    "rows/rows.h")."""
    full = os.path.normpath(os.path.join(path, os.path.dirname(f), inc))
    return full.startswith(path + os.sep) and os.path.isfile(full)


def rel(path):
    return os.path.relpath(path, ROOT)


def declared_deps(subs, errors):
    deps = {}
    for name, path in subs.items():
        header = os.path.join(path, name + ".h")
        if not os.path.isfile(header):
            errors.append(f"{rel(path)}: no public header {name}.h")
            deps[name] = set()
            continue
        with open(header, encoding="utf-8") as f:
            top = f.read().split("*/", 1)[0]
        m = DEPS_RE.search(top)
        if not m:
            errors.append(f"{rel(header)}: no 'May depend on:' line in its top comment")
            deps[name] = set()
            continue
        words = [w for w in re.split(r"[\s,.]+", m.group(1)) if w]
        listed = set() if words == ["nothing"] else set(words)
        for w in sorted(listed - set(subs)):
            errors.append(f"{rel(header)}: May depend on names '{w}', not a subsystem")
        deps[name] = listed & set(subs)
    return deps


def circles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def levels(graph):
    memo = {}

    def level(v, seen=()):
        if v in memo:
            return memo[v]
        if v in seen:
            return 0
        memo[v] = 1 + max((level(w, seen + (v,)) for w in graph[v]), default=-1)
        return memo[v]

    return {v: level(v) for v in graph}


def check_includes(subs, deps, errors):
    """Rule 2; returns the include edges between subsystems."""
    edges = collections.defaultdict(set)
    for name, path in subs.items():
        for f in files_of(path):
            with open(os.path.join(path, f), encoding="utf-8") as fh:
                text = fh.read()
            for inc in INCLUDE_RE.findall(text):
                where = f"{rel(os.path.join(path, f))}: #include \"{inc}\""
                if inc.startswith("mtp/"):
                    continue  # the public API (harness/include/mtp)
                if own_header(path, f, inc):
                    continue  # this folder's, by a path from the file
                if "/" not in inc or inc.startswith("../"):
                    errors.append(f"{where}: not a header of {rel(path)}")
                    continue
                other, header = inc.split("/", 1)
                if other not in subs or other == name:
                    errors.append(f"{where}: name a header of this folder without its folder, "
                                  "or another subsystem's as folder/folder.h")
                    continue
                if header != other + ".h":
                    errors.append(f"{where}: {other}'s private header (use {other}/{other}.h)")
                    continue
                edges[name].add(other)
                if other not in deps[name]:
                    errors.append(f"{where}: {name} may not depend on {other} "
                                  f"({rel(path)}/{name}.h, May depend on)")
    return edges


def object_graph(build, subs):
    """File-level symbol graph of the harness objects of a build."""
    owner = {}  # source file name -> subsystem
    for name, path in subs.items():
        for f in files_of(path):
            if f.endswith(".c"):
                owner[f"{name}/{f}"] = name
    owner.update(EXTRA_FILES)
    defs, uses = {}, {}
    for obj in glob.glob(os.path.join(build, "**", "*.c.o"), recursive=True):
        parts = obj.replace(os.sep, "/").split("/")
        key = f"{parts[-2]}/{parts[-1][:-2]}"
        if key not in owner:  # a subfolder's file: ops/rows/rmsnorm.c
            key = f"{parts[-3]}/{key}"
        if key not in owner:
            continue
        # only the subsystem's own library (stale objects of other targets
        # may lie in an old build folder)
        lib = "mtp_base" if owner[key] == "core" else f"mtp_{owner[key]}"
        if f"{lib}.dir" not in parts:
            continue
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        uses.setdefault(key, set())
        for line in out.splitlines():
            p = line.split()
            if len(p) == 2 and p[0] == "U":
                uses[key].add(p[1])
            elif len(p) == 3 and p[1] in "TDBRCV":
                defs[p[2]] = key
    graph = {k: {defs[s] for s in u if s in defs and defs[s] != k} for k, u in uses.items()}
    return graph, owner, defs, uses


def main(argv):
    build, show_graph = None, False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--objects" and args:
            build = args.pop(0)
        elif a == "--graph":
            show_graph = True
        else:
            print(__doc__.strip().splitlines()[-2], file=sys.stderr)
            return 2
    errors = []
    subs = subsystems()
    loose = [f for f in os.listdir(SRC) if os.path.isfile(os.path.join(SRC, f))]
    for f in sorted(loose):
        errors.append(f"harness/src/{f}: outside every subsystem folder")
    deps = declared_deps(subs, errors)
    for c in circles(deps):
        errors.append("declared subsystem circle: " + " <-> ".join(c))
    check_includes(subs, deps, errors)
    if build:
        graph, owner, defs, uses = object_graph(build, subs)
        if not graph:
            errors.append(f"{build}: no harness object files (build it first)")
        found = circles(graph)
        for c in found:
            why = KNOWN_CIRCLES.get(frozenset(c))
            if why:
                print("known import circle: " + " <-> ".join(c) + f" (to do: {why})")
            else:
                errors.append("import circle: " + " <-> ".join(c))
        for k in KNOWN_CIRCLES:
            if graph and sorted(k) not in found:
                errors.append("KNOWN_CIRCLES lists a circle that is gone: "
                              + " <-> ".join(sorted(k)) + " (delete the entry)")
        allowed = {s: set(deps[s]) for s in subs}
        for f, targets in sorted(graph.items()):
            for t in sorted(targets):
                a, b = owner[f], owner[t]
                if a != b and b not in allowed[a]:
                    syms = sorted(s for s in uses[f] if defs.get(s) == t)
                    errors.append(f"{f} uses {t} ({', '.join(syms[:3])}): "
                                  f"{a} may not depend on {b}")
        used = collections.defaultdict(set)
        for f, targets in graph.items():
            for g in targets:
                if owner[g] != owner[f]:
                    used[owner[f]].add(owner[g])
        for s in sorted(subs):
            for d in sorted(deps[s] - used[s]):
                print(f"note: {s} declares {d} but uses none of its symbols "
                      "(an include of its headers may still need it)")
        if show_graph:
            lv = levels(graph)
            for f in sorted(graph, key=lambda k: (lv[k], k)):
                print(f"  file level {lv[f]:2d} {f} -> {' '.join(sorted(graph[f]))}")
    lv = levels(deps)
    for s in sorted(subs, key=lambda k: (lv[k], k)):
        print(f"level {lv[s]:2d} {s:9s} may depend on: {' '.join(sorted(deps[s])) or '-'}"
              f"  ({len(files_of(subs[s]))} files)")
    for e in errors:
        print("layers: " + e)
    if errors:
        print(f"layers: FAILED ({len(errors)} breaches)")
        return 1
    known = f" ({len(KNOWN_CIRCLES)} known file circles left)" if build and KNOWN_CIRCLES else ""
    print(f"layers: {len(subs)} subsystems, no subsystem circle, no new file circle, "
          f"every dependency declared{known}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
