"""Regenerate the README's example outputs from real runs (and check that they are current).

    python tools/readme_examples.py          # run every example command, rewrite its output in README.md
    python tools/readme_examples.py --check  # exit 1 if an output is stale (the tests run this)

An example is a console block right after a marker comment::

    <!-- example: torchcopy-lint --output-format full examples/train_snapshot_bugs.py -->
    ```console
    $ torchcopy-lint --output-format full examples/train_snapshot_bugs.py
    ...output, written by this tool...
    ```

The command runs with this checkout's package (``torchcopy-lint`` and ``flake8``
as ``python -m ...``), no colour, in a scratch copy of ``examples/`` (so no cache
is left in the checkout), with stdout and stderr merged as a terminal shows them.
A marker may add options after ``|``:

- ``needs=torch``: the example runs only where torch is installed (``--check``
  reports it as skipped elsewhere);
- ``elide=REGEX``: consecutive output lines matching REGEX are shown as one ``...``;
- ``mask=REGEX``: parts matching REGEX (timings, the machine) are compared as
  equal whatever they say, so ``--check`` does not fail on another machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
_EXAMPLE = re.compile(r"^<!-- example: (?P<spec>.+?) -->\n```console\n(?P<body>.*?)^```$", re.M | re.S)
PROGRAMS = {"torchcopy-lint": ["-m", "torchcopy_lint"], "flake8": ["-m", "flake8"]}


@dataclass
class Example:
    command: str
    needs: list[str] = field(default_factory=list)
    elide: list[str] = field(default_factory=list)
    mask: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, spec: str) -> "Example":
        command, *options = [part.strip() for part in spec.split(" | ")]
        example = cls(command)
        for option in options:
            key, _, value = option.partition("=")
            getattr(example, key).append(value)
        return example

    def available(self) -> bool:
        return all(importlib.util.find_spec(module) is not None for module in self.needs)

    def run(self) -> str:
        program, *arguments = shlex.split(self.command)
        env = dict(os.environ)
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        env.update({"NO_COLOR": "1", "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"})
        env.pop("FORCE_COLOR", None)
        with tempfile.TemporaryDirectory() as scratch:
            shutil.copytree(REPO / "examples", Path(scratch) / "examples", ignore=shutil.ignore_patterns("__pycache__", ".torchcopy_lint_cache"))
            result = subprocess.run([sys.executable, *PROGRAMS[program], *arguments], cwd=scratch, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=900)
        return self.shown(result.stdout)

    def shown(self, output: str) -> str:
        lines: list[str] = []
        for line in output.splitlines():
            if any(re.search(pattern, line) for pattern in self.elide):
                if not lines or lines[-1] != "...":
                    lines.append("...")
                continue
            lines.append(line)
        return "\n".join(lines)

    def same(self, shown: str, fresh: str) -> bool:
        def masked(text: str) -> str:
            for pattern in self.mask:
                text = re.sub(pattern, "<masked>", text)
            return text

        return masked(shown) == masked(fresh)


def block(example: Example, output: str) -> str:
    return f"$ {example.command}\n{output}\n" if output else f"$ {example.command}\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare, write nothing, exit 1 when an output is stale")
    parser.add_argument("--readme", type=Path, default=README)
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    stale: list[str] = []
    skipped: list[Example] = []
    pieces: list[str] = []
    last = 0
    for match in _EXAMPLE.finditer(text):
        example = Example.parse(match.group("spec"))
        if not example.available():
            skipped.append(example)
            continue
        fresh = block(example, example.run())
        if not example.same(match.group("body"), fresh):
            stale.append(example.command)
        pieces.append(text[last : match.start("body")] + fresh)
        last = match.end("body")
    pieces.append(text[last:])
    for example in skipped:
        print(f"skipped (needs {', '.join(example.needs)}): {example.command}", file=sys.stderr)
    if args.check:
        for command in stale:
            print(f"README example is stale: {command} (run: python tools/readme_examples.py)", file=sys.stderr)
        return 1 if stale else 0
    if stale:
        args.readme.write_text("".join(pieces), encoding="utf-8")
        print(f"rewrote {len(stale)} example(s) in {args.readme.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
