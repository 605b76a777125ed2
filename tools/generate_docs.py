"""Regenerate the parts of the docs that come from the rule catalogue.

    python tools/generate_docs.py          # rewrite README.md's rule table and docs/rules.md
    python tools/generate_docs.py --check  # exit 1 if they are out of date (the tests run this)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from torchcopy_lint.registry import all_rules  # noqa: E402

START, END = "<!-- rules-table:start -->", "<!-- rules-table:end -->"


def rules_table(link_prefix: str) -> str:
    lines = ["| Code | Name | Default | Fix | What it flags |", "|---|---|---|---|---|"]
    for rule in all_rules().values():
        spec = rule.spec
        default = "on" if spec.default else "opt-in"
        lines.append(f"| [{spec.code}]({link_prefix}{spec.path.name}) | `{spec.name}` | {default} | {spec.fix} | {spec.summary} |")
    return "\n".join(lines) + "\n"


def render_readme(text: str) -> str:
    before, _, rest = text.partition(START)
    _, _, after = rest.partition(END)
    return f"{before}{START}\n{rules_table('rules/')}{END}{after}"


def render_rules_page() -> str:
    return (
        "# Rules\n\n"
        "Generated from the catalogue in [`rules/`](../rules) by `python tools/generate_docs.py`; "
        "each rule's page there is its documentation, its test corpus and its runtime claim. "
        "`torchcopy-lint explain CODE` prints the same page.\n\n"
        "Rules marked opt-in run only when selected (`--extend-select TCL1`, or `--select ALL`).\n\n"
        + rules_table("../rules/")
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    targets = {
        REPO / "README.md": render_readme((REPO / "README.md").read_text(encoding="utf-8")),
        REPO / "docs" / "rules.md": render_rules_page(),
    }
    stale = [path for path, text in targets.items() if not path.exists() or path.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"{path.relative_to(REPO)} is out of date: run python tools/generate_docs.py", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(targets[path], encoding="utf-8")
        print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
