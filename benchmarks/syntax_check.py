"""What Python's own syntax check costs next to LibCST's parse, per file, in one process.

torchcopy-lint compiles every file with ``compile(..., PyCF_ONLY_AST)`` (see
torchcopy_lint/source.py) so that every invalid file is reported; LibCST parses
only the files the pre-filter lets through. This times, over every ``*.py``
under TARGET (every STEP-th file with ``--step``), reading and decoding once:

- ``symtable``: the deep-nesting guard the ast compile replaced (no ast objects);
- ``ast compile``: ``compile(text, path, "exec", PyCF_ONLY_AST)``, twice (warm second run);
- ``full compile``: to bytecode;
- ``and/or count``: the regular expression that bounds and/or chains (source.py);
- ``libcst``: ``libcst.parse_module`` of every file.

    python benchmarks/syntax_check.py /path/to/site-packages/torch
    python benchmarks/syntax_check.py --step 4 /path/to/site-packages/torch

Measured 2026-11-23 on torch 2.13.0's 2,285 files (46.4 M characters), Python 3.11,
one process on a shared 2-core machine: symtable 8.75 s (4.7% of LibCST), ast compile
15.74 s / 13.04 s (8.5% / 7.1%), full compile 10.60 s (5.7%), and/or count 1.24 s,
LibCST 184.80 s.
"""

from __future__ import annotations

import argparse
import ast
import io
import os
import re
import symtable
import sys
import time
import tokenize
from collections.abc import Callable

import libcst as cst

_BOOLEAN_OPERATOR = re.compile(r"(?<![A-Za-z_])(?:and|or)(?![A-Za-z0-9_])")  # as torchcopy_lint.source


def sources(target: str, step: int) -> list[tuple[str, str]]:
    paths = []
    for folder, subdirs, names in os.walk(target):
        subdirs[:] = sorted(name for name in subdirs if name != "__pycache__")
        paths += [os.path.join(folder, name) for name in sorted(names) if name.endswith(".py")]
    texts = []
    for path in paths[::step]:
        with open(path, "rb") as stream:
            data = stream.read()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        texts.append((path, data.decode(encoding)))
    return texts


def timed(texts: list[tuple[str, str]], work: Callable[[str, str], object]) -> float:
    start = time.perf_counter()
    for path, text in texts:
        try:
            work(text, path)
        except (SyntaxError, RecursionError, ValueError, cst.ParserSyntaxError):
            pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target")
    parser.add_argument("--step", type=int, default=1)
    args = parser.parse_args()
    sys.setrecursionlimit(20_000)
    texts = sources(args.target, args.step)
    stages = {
        "symtable": lambda text, path: symtable.symtable(text, path, "exec"),
        "ast compile": lambda text, path: compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True),
        "ast compile again": lambda text, path: compile(text, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True),
        "full compile": lambda text, path: compile(text, path, "exec", dont_inherit=True),
        "and/or count": lambda text, path: len(_BOOLEAN_OPERATOR.findall(text)),
        "libcst": lambda text, path: cst.parse_module(text),
    }
    seconds = {name: timed(texts, work) for name, work in stages.items()}
    print(f"{len(texts)} files, {sum(len(text) for _, text in texts):,} characters")
    for name, value in seconds.items():
        print(f"{name:18s} {value:8.2f} s  {value / seconds['libcst'] * 100:5.1f}% of libcst")


if __name__ == "__main__":
    main()
