#!/usr/bin/env python3
"""Every public function of the Python package has type hints (STYLE.md,
issue 29): a function or method whose name has no leading underscore, at
module level or in a class without one, annotates each parameter (self and
cls aside, *args and **kwargs included) and its return. Functions nested in
functions are private to them and not checked. One line per miss; exit 1 if
any. Ruff's ANN rules cannot say this: they check private functions too.

usage: py_hints.py [DIR...]   (default: python/mtpcheck)"""
from __future__ import annotations

import ast
import pathlib
import sys


def misses(body: list[ast.stmt], path: str, prefix: str = "") -> list[str]:
    """The unannotated parts of the public functions in `body`, one line each."""
    out = []
    for n in body:
        if isinstance(n, ast.ClassDef) and not n.name.startswith("_"):
            out += misses(n.body, path, prefix + n.name + ".")
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and not n.name.startswith("_"):
            a = n.args
            params = a.posonlyargs + a.args + a.kwonlyargs
            if prefix and params and params[0].arg in ("self", "cls"):
                params = params[1:]
            missing = [p.arg for p in params if p.annotation is None]
            missing += ["*" + s.arg for s in (a.vararg,) if s is not None and s.annotation is None]
            missing += ["**" + s.arg for s in (a.kwarg,) if s is not None and s.annotation is None]
            if n.returns is None:
                missing.append("the return")
            if missing:
                out.append("%s:%d: %s%s: no type hint on %s"
                           % (path, n.lineno, prefix, n.name, ", ".join(missing)))
    return out


def main(argv: list[str]) -> int:
    found = []
    for d in argv or ["python/mtpcheck"]:
        for p in sorted(pathlib.Path(d).rglob("*.py")):
            found += misses(ast.parse(p.read_text(encoding="utf-8"), str(p)).body, str(p))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
