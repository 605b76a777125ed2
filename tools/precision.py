"""Precision on real code: run the rules over well-known PyTorch code and review what they report.

    python tools/precision.py collect   # prepare the corpora, run every rule, count findings
    python tools/precision.py sample    # pick findings to review, write the review file
    python tools/precision.py render    # docs/precision.md from the counts and the classifications

``collect`` prepares the corpora under a cache directory outside the repository
(``--cache``, default /tmp/torchcopy-corpora): torch's own source from the
installed site-packages (linted in place, never copied), and the sources of timm,
torchvision, lightning and transformers, downloaded as wheels with ``pip download
--no-deps`` at pinned versions (``--latest`` takes the newest instead) and unzipped.
Nothing from a corpus is ever written into the repository. It then runs
``python -m torchcopy_lint --no-cache --isolated --format json --select ALL`` on
each corpus and stores per corpus: files, lines, findings (every rule), files
that could not be checked (syntax errors in third-party code are counted apart;
an internal error makes the command fail). The default-rule counts are those
of the default-on rules; ``--check-default-run`` also runs the default selection
and checks that it reports exactly those findings.

``sample`` takes, per rule over all corpora, every finding when there are fewer
than 200 and a seeded random sample of 50 otherwise, and writes
``<cache>/review.md`` (path:line, message, the code around it) and
``<cache>/review-template.csv`` (the rows still to classify, verdict empty): fill in
verdict and note, append the rows to ``docs/precision-review.csv`` and ``render``.

``render`` reads the classifications (``docs/precision-review.csv``: corpus, path,
line, code, line_hash, occurrence, verdict, note; verdict is one of hazard,
deliberate, false-positive) and writes ``docs/precision.md``. A classification is
keyed by corpus, corpus-relative path, rule and a hash of the flagged source line
(plus an occurrence number for identical lines), not by line number, so it
survives unrelated edits and version bumps; classifications that match no current
finding are counted as stale.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import hashlib
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CACHE = Path(os.environ.get("TORCHCOPY_CORPORA", "/tmp/torchcopy-corpora"))
CLASSIFICATION = REPO / "docs" / "precision-review.csv"
OUTPUT = REPO / "docs" / "precision.md"
VERDICTS = ("hazard", "deliberate", "false-positive")
CSV_FIELDS = ("corpus", "path", "line", "code", "line_hash", "occurrence", "verdict", "note")
SAMPLE_ALL_BELOW = 200
SAMPLE_SIZE = 50
SEED = 20240601
CONTEXT = 3

# PyPI projects and the versions the committed review used; ``--latest`` ignores the pins.
# torchvision's wheel is platform-specific: only its Python sources are used, never imported.
WHEEL_CORPORA = {
    "timm": "1.0.31",
    "torchvision": "0.29.1",
    "lightning": "2.6.6",
    "transformers": "5.23.0",
}


# -- corpora -----------------------------------------------------------------------

@dataclass
class Corpus:
    name: str
    version: str
    root: Path  # paths are reported relative to this
    packages: list[str]  # what is linted, relative to root
    source: str  # where it came from


def torch_corpus() -> Corpus:
    purelib = Path(sysconfig.get_paths()["purelib"])
    spec_root = purelib / "torch"
    try:  # the torch that ``python`` imports, without importing it
        import importlib.util

        found = importlib.util.find_spec("torch")
        if found is not None and found.origin:
            spec_root = Path(found.origin).parent
    except (ImportError, ValueError):
        pass
    version = "unknown"
    version_file = spec_root / "version.py"
    if version_file.is_file():
        match = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", version_file.read_text(encoding="utf-8"), re.M)
        if match:
            version = match.group(1)
    return Corpus("torch", version, spec_root.parent, ["torch"], "the installed torch (site-packages)")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wheel_corpus(name: str, pin: str | None, cache: Path) -> Corpus:
    """Download ``name``'s wheel (no dependencies) and unzip it under the cache."""
    downloads = cache / "wheels"
    downloads.mkdir(parents=True, exist_ok=True)
    requirement = f"{name}=={pin}" if pin else name
    wheel = _find_wheel(downloads, name, pin)
    if wheel is None:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check", "--dest", str(downloads), requirement]
        print(f"[precision] {' '.join(command[2:])}", file=sys.stderr)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        wheel = _find_wheel(downloads, name, pin)
        if wheel is None:
            raise SystemExit(f"pip download {requirement} produced no wheel in {downloads}")
    version = wheel.name.split("-")[1]
    root = cache / f"{name}-{version}"
    marker = root / ".unpacked"
    if not marker.exists():
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                top = member.split("/", 1)[0]
                if member.endswith(".py") and "/" in member and not top.endswith((".dist-info", ".data")):
                    archive.extract(member, root)
        marker.write_text(wheel.name + "\n", encoding="utf-8")
    packages = sorted(p.name for p in root.iterdir() if p.is_dir())
    return Corpus(name, version, root, packages, f"{wheel.name} (sha256 {_sha256(wheel)[:16]})")


def _find_wheel(directory: Path, name: str, pin: str | None) -> Path | None:
    normalized = name.replace("-", "_").lower()
    candidates = []
    for wheel in directory.glob("*.whl"):
        parts = wheel.name.split("-")
        if parts[0].lower() == normalized and (pin is None or parts[1] == pin):
            candidates.append(wheel)
    if not candidates:
        return None
    return max(candidates, key=lambda path: path.stat().st_mtime)


# -- running the linter --------------------------------------------------------------

def _discover(corpus: Corpus) -> list[Path]:
    """The files the linter checks (its own discovery, so the counts match)."""
    sys.path.insert(0, str(REPO))
    try:
        from torchcopy_lint.discovery import discover_plainly

        return sorted(discover_plainly([str(corpus.root / p) for p in corpus.packages], corpus.root).files)
    except (ImportError, TypeError):  # pragma: no cover - the API moved: count plainly
        return sorted(path for p in corpus.packages for path in (corpus.root / p).rglob("*.py"))


def _count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        data = handle.read()
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def run_linter(corpus: Corpus, select: str | None, jobs: int | None) -> tuple[list[dict], list[str], float]:
    """(findings, cannot-check lines, seconds) for one corpus."""
    command = [sys.executable, "-m", "torchcopy_lint", "--no-cache", "--isolated", "--format", "json", "--exit-zero"]
    if select:
        command += ["--select", select]
    if jobs:
        command += ["--jobs", str(jobs)]
    command += corpus.packages
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    started = _dt.datetime.now()
    result = subprocess.run(command, cwd=corpus.root, env=env, capture_output=True, text=True)
    seconds = (_dt.datetime.now() - started).total_seconds()
    if result.returncode not in (0, 1, 2) or not result.stdout.strip().startswith("["):
        raise SystemExit(f"torchcopy_lint failed on {corpus.name} (exit {result.returncode}):\n{result.stderr[-4000:]}")
    findings = json.loads(result.stdout)
    errors = [line for line in result.stderr.splitlines() if ": cannot check: " in line]
    return findings, errors, seconds


def classify_error(line: str) -> str:
    reason = line.split(": cannot check: ", 1)[1]
    if reason.startswith("internal error"):
        return "internal"
    if reason.startswith("syntax error") or "too deeply nested" in reason:
        return "syntax"
    return "other"


def rule_table() -> dict[str, dict]:
    """Every rule: name and whether it is on by default, as the linter lists them now."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-m", "torchcopy_lint", "rules", "--format", "json"], env=env, capture_output=True, text=True, check=True)
    return {rule["code"]: {"name": rule["name"], "default": rule["default"]} for rule in json.loads(result.stdout)}


def linter_revision() -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "torchcopy_lint", "rules"], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        return sha + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cmd_collect(args: argparse.Namespace) -> int:
    cache: Path = args.cache
    results_dir = cache / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    wanted = set(args.corpus or ["torch", *WHEEL_CORPORA])
    unknown = wanted - {"torch", *WHEEL_CORPORA}
    if unknown:
        raise SystemExit(f"unknown corpus: {', '.join(sorted(unknown))}")
    corpora = []
    if "torch" in wanted:
        corpora.append(torch_corpus())
    for name, pin in WHEEL_CORPORA.items():
        if name in wanted:
            corpora.append(wheel_corpus(name, None if args.latest else pin, cache))
    internal_total = 0
    sources = SourceCache()
    for corpus in corpora:
        files = _discover(corpus)
        lines = sum(_count_lines(path) for path in files)
        print(f"[precision] {corpus.name} {corpus.version}: {len(files)} files, {lines} lines", file=sys.stderr)
        rules = rule_table()  # per corpus: rules may land while a long collection runs
        default_codes = sorted(code for code, info in rules.items() if info["default"])
        findings, errors, seconds = run_linter(corpus, "ALL", args.jobs)
        kinds = Counter(classify_error(line) for line in errors)
        internal_total += kinds["internal"]
        record = {
            "corpus": corpus.name,
            "version": corpus.version,
            "source": corpus.source,
            "root": str(corpus.root),
            "packages": corpus.packages,
            "files": len(files),
            "lines": lines,
            "seconds": round(seconds, 1),
            "rules": rules,
            "linter": linter_revision(),
            "collected": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "errors": {"internal": kinds["internal"], "syntax": kinds["syntax"], "other": kinds["other"]},
            "error_lines": errors,
            "findings": [_slim(f, corpus.root, sources) for f in findings],
        }
        if args.check_default_run:
            default_findings, _errors, _seconds = run_linter(corpus, ",".join(default_codes), args.jobs)
            expected = sorted(_identity(f) for f in findings if f["code"] in default_codes)
            got = sorted(_identity(f) for f in default_findings)
            record["default_run_matches"] = expected == got
            if expected != got:
                only_all = Counter(item[3] for item in set(expected) - set(got))
                only_default = Counter(item[3] for item in set(got) - set(expected))
                record["default_run_difference"] = {"only_in_ALL_run": dict(only_all), "only_in_default_run": dict(only_default)}
                print(f"[precision] {corpus.name}: the default-rule run differs from the ALL run: {record['default_run_difference']}", file=sys.stderr)
        (results_dir / f"{corpus.name}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        counts = Counter(f["code"] for f in findings)
        print(f"[precision] {corpus.name}: {dict(sorted(counts.items()))}; errors {dict(kinds)}; {seconds:.0f}s", file=sys.stderr)
        for line in errors:
            if classify_error(line) == "internal":
                print(f"  {line}", file=sys.stderr)
    if internal_total:
        print(f"[precision] {internal_total} internal errors: fix them before trusting the counts", file=sys.stderr)
        return 1
    return 0


def _slim(finding: dict, root: Path, sources: "SourceCache") -> dict:
    slim = {key: finding[key] for key in ("path", "line", "column", "code", "message")}
    slim["path"] = Path(slim["path"]).as_posix()
    lines = sources.lines(root / slim["path"])
    slim["line_hash"] = line_hash(lines[slim["line"] - 1] if 0 < slim["line"] <= len(lines) else "")
    return slim


def _identity(finding: dict) -> tuple:
    return (finding["path"], finding["line"], finding["column"], finding["code"])


# -- keys, sampling and the review file ------------------------------------------------

def load_results(results_dir: Path) -> dict[str, dict]:
    records = {}
    for path in sorted(results_dir.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        records[record["corpus"]] = record
    return records


def line_hash(text: str) -> str:
    return hashlib.sha1(" ".join(text.split()).encode("utf-8")).hexdigest()[:12]


class SourceCache:
    def __init__(self) -> None:
        self._lines: dict[Path, list[str]] = {}

    def lines(self, path: Path) -> list[str]:
        if path not in self._lines:
            try:
                self._lines[path] = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._lines[path] = []
        return self._lines[path]


def keyed_findings(records: dict[str, dict], sources: SourceCache) -> list[dict]:
    """Every finding with its stable key: (corpus, path, code, line_hash, occurrence)."""
    keyed = []
    for corpus, record in records.items():
        root = Path(record["root"])
        seen: Counter = Counter()
        for finding in sorted(record["findings"], key=lambda f: (f["path"], f["line"], f["column"], f["code"])):
            digest = finding.get("line_hash")
            if digest is None:
                lines = sources.lines(root / finding["path"])
                digest = line_hash(lines[finding["line"] - 1] if 0 < finding["line"] <= len(lines) else "")
            base = (corpus, finding["path"], finding["code"], digest)
            occurrence = seen[base]
            seen[base] += 1
            keyed.append({**finding, "corpus": corpus, "line_hash": digest, "occurrence": occurrence, "key": (*base, occurrence)})
    return keyed


def sample_findings(keyed: list[dict], seed: int = SEED) -> list[dict]:
    """Per rule over all corpora: every finding below the threshold, else a seeded sample."""
    by_rule: dict[str, list[dict]] = defaultdict(list)
    for finding in keyed:
        by_rule[finding["code"]].append(finding)
    chosen = []
    for code in sorted(by_rule):
        group = sorted(by_rule[code], key=lambda f: f["key"])
        if len(group) >= SAMPLE_ALL_BELOW:
            group = sorted(random.Random(f"{seed}-{code}").sample(group, SAMPLE_SIZE), key=lambda f: f["key"])
        chosen.extend(group)
    return chosen


def load_classification(path: Path) -> dict[tuple, dict]:
    if not path.exists():
        return {}
    rows = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if not row.get("corpus") or row["corpus"].startswith("#"):
                continue
            verdict = row.get("verdict", "").strip()
            if verdict and verdict not in VERDICTS:
                raise SystemExit(f"{path}: unknown verdict {verdict!r} for {row['path']}:{row['line']} (use {', '.join(VERDICTS)})")
            key = (row["corpus"], row["path"], row["code"], row.get("line_hash", ""), int(row.get("occurrence") or 0))
            rows[key] = {**row, "verdict": verdict}
    return rows


def _context(lines: list[str], line: int) -> str:
    start, end = max(1, line - CONTEXT), min(len(lines), line + CONTEXT)
    return "\n".join(f"{'>' if number == line else ' '}{number:5d}  {lines[number - 1]}" for number in range(start, end + 1))


def cmd_sample(args: argparse.Namespace) -> int:
    records = load_results(args.cache / "results")
    if not records:
        raise SystemExit(f"no results under {args.cache / 'results'}: run `collect` first")
    sources = SourceCache()
    keyed = keyed_findings(records, sources)
    chosen = sample_findings(keyed)
    classified = load_classification(args.classification)
    totals = Counter(f["code"] for f in keyed)
    picked = Counter(f["code"] for f in chosen)
    out = io.StringIO()
    out.write("# Findings to review\n\n")
    out.write("Classify each as hazard (the rule's hazard, really there), deliberate (the pattern the rule "
              "describes, used on purpose) or false-positive (not the rule's pattern, e.g. not a tensor).\n\n")
    for code in sorted(picked):
        out.write(f"- {code}: {picked[code]} of {totals[code]} findings\n")
    todo = []
    for finding in chosen:
        row = classified.get(finding["key"])
        status = f"classified: {row['verdict']} ({row['note']})" if row and row["verdict"] else "TODO"
        root = Path(records[finding["corpus"]]["root"])
        out.write(f"\n## {finding['code']} {finding['corpus']}:{finding['path']}:{finding['line']}  [{status}]\n\n")
        out.write(f"{finding['message']}\n\n```\n{_context(sources.lines(root / finding['path']), finding['line'])}\n```\n")
        if not (row and row["verdict"]):
            todo.append(finding)
    review = args.cache / "review.md"
    review.write_text(out.getvalue(), encoding="utf-8")
    (args.cache / "review.json").write_text(json.dumps([{k: v for k, v in f.items() if k != "key"} for f in chosen], indent=1) + "\n", encoding="utf-8")
    template = args.cache / "review-template.csv"
    with template.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, CSV_FIELDS)
        writer.writeheader()
        for finding in todo:
            writer.writerow({field: finding.get(field, "") for field in CSV_FIELDS} | {"verdict": "", "note": ""})
    print(f"[precision] {len(chosen)} sampled findings ({len(todo)} unclassified): {review}; template {template}", file=sys.stderr)
    return 0


# -- render --------------------------------------------------------------------------

def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "–"


def render(records: dict[str, dict], classification: dict[tuple, dict], sources: SourceCache | None = None) -> str:
    sources = sources or SourceCache()
    rules: dict[str, dict] = {}
    for record in records.values():
        rules.update(record["rules"])
    codes = sorted(rules)
    default_codes = [c for c in codes if rules[c]["default"]]
    optin_codes = [c for c in codes if not rules[c]["default"]]
    keyed = keyed_findings(records, sources)
    sampled = {f["key"] for f in sample_findings(keyed)}
    by_key = {f["key"]: f for f in keyed}
    current = [(key, row) for key, row in classification.items() if key in by_key and row["verdict"]]
    stale = [key for key, row in classification.items() if key not in by_key and row["verdict"]]

    out = io.StringIO()
    w = out.write
    w("# Precision on real code\n\n")
    w("Generated by `python tools/precision.py render` from the findings `python tools/precision.py collect` "
      "gathered and the classifications in [`precision-review.csv`](precision-review.csv); do not edit by hand. "
      "Re-run: `collect`, `sample` (writes the review file to the cache), classify, `render`.\n\n")
    linters = sorted({r.get("linter", "?") for r in records.values()})
    dates = sorted({r.get("collected", "?") for r in records.values()})
    w(f"Linter revision: {', '.join(linters)}; collected {', '.join(dates)}; rules: {', '.join(codes)}.\n\n")

    w("## Corpora\n\n| Corpus | Version | Source | Files | Lines | Syntax errors | Other errors | Internal errors |\n|---|---|---|---:|---:|---:|---:|---:|\n")
    for name, record in records.items():
        errors = record["errors"]
        w(f"| {name} | {record['version']} | {record['source']} | {record['files']:,} | {record['lines']:,} | {errors['syntax']} | {errors['other']} | {errors['internal']} |\n")
    w("\n")

    counts = {name: Counter(f["code"] for f in record["findings"]) for name, record in records.items()}

    def table(title: str, selected: list[str]) -> None:
        w(f"## {title}\n\n")
        if not selected:
            w("No such rules yet.\n\n")
            return
        w("| Corpus | " + " | ".join(selected) + " | Total | per 10k lines |\n|---|" + "---:|" * (len(selected) + 2) + "\n")
        total_lines = 0
        for name, record in records.items():
            row = [counts[name][c] for c in selected]
            total_lines += record["lines"]
            w(f"| {name} | " + " | ".join(str(v) for v in row) + f" | {sum(row)} | {10000 * sum(row) / max(1, record['lines']):.1f} |\n")
        row = [sum(counts[name][c] for name in records) for c in selected]
        w("| **all** | " + " | ".join(f"**{v}**" for v in row) + f" | **{sum(row)}** | {10000 * sum(row) / max(1, total_lines):.1f} |\n\n")

    table("Findings, default rules", default_codes)
    table("Findings, opt-in rules (`--select ALL`)", optin_codes)

    w("## Review\n\n")
    w(f"Per rule over all corpora, every finding is reviewed when there are fewer than {SAMPLE_ALL_BELOW}, "
      f"else a seeded random sample of {SAMPLE_SIZE}. *hazard*: the rule's hazard, really there; *deliberate*: "
      "the pattern the rule describes, used on purpose (a true positive the author would `noqa`); "
      "*false positive*: not the rule's pattern (e.g. not a tensor). FP % is of the classified findings; "
      "the estimate scales it to all findings.\n\n")
    w("| Rule | Findings | To review | Classified | Hazard | Deliberate | False positive | FP % | Est. FPs |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    verdicts: dict[str, Counter] = defaultdict(Counter)
    for key, row in current:
        verdicts[key[2]][row["verdict"]] += 1
    for code in codes:
        total = sum(counts[name][code] for name in records)
        review = sum(1 for key in sampled if key[2] == code)
        got = verdicts[code]
        classified = sum(got.values())
        fp = got["false-positive"]
        estimate = f"{round(fp / classified * total)}" if classified else "–"
        w(f"| {code} {rules[code]['name']} | {total} | {review} | {classified} | {got['hazard']} | {got['deliberate']} | {fp} | {_pct(fp, classified)} | {estimate} |\n")
    if stale:
        per_rule = ", ".join(f"{code}: {count}" for code, count in sorted(Counter(key[2] for key in stale).items()))
        w(f"\n{len(stale)} classification(s) match no current finding ({per_rule}): the code or the rule changed "
          "(e.g. a false positive the rule no longer reports); they are kept in the CSV as a record and not counted.\n")
    w("\n## Notes per rule\n\n")
    notes: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for key, row in sorted(current):
        notes[key[2]][row["verdict"]].append((key, row))
    for code in codes:
        if code not in notes:
            continue
        w(f"### {code} {rules[code]['name']}\n\n")
        for verdict in ("false-positive", "deliberate", "hazard"):
            entries = notes[code].get(verdict, [])
            if not entries:
                continue
            w(f"**{verdict}** ({len(entries)}):\n\n")
            grouped: dict[str, list[str]] = defaultdict(list)
            for key, row in entries:
                grouped[row["note"].strip() or "(no note)"].append(f"{key[0]}:{key[1]}:{by_key[key]['line']}")
            for note, where in sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0])):
                shown = ", ".join(f"`{place}`" for place in where[:4]) + (f" and {len(where) - 4} more" if len(where) > 4 else "")
                w(f"- {note} ({len(where)}): {shown}\n")
            w("\n")
    return out.getvalue()


def cmd_render(args: argparse.Namespace) -> int:
    records = load_results(args.cache / "results")
    if not records:
        raise SystemExit(f"no results under {args.cache / 'results'}: run `collect` first")
    text = render(records, load_classification(args.classification))
    args.output.write_text(text, encoding="utf-8")
    print(f"[precision] wrote {args.output}", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"corpora, results and the review file (default {DEFAULT_CACHE})")
    parser.add_argument("--classification", type=Path, default=CLASSIFICATION, help="the committed verdicts (CSV)")
    commands = parser.add_subparsers(dest="command", required=True)
    collect = commands.add_parser("collect", help="prepare corpora and count findings")
    collect.add_argument("--corpus", action="append", help="only these corpora (torch, " + ", ".join(WHEEL_CORPORA) + ")")
    collect.add_argument("--latest", action="store_true", help="download the newest versions instead of the pinned ones")
    collect.add_argument("--jobs", type=int, default=None, help="linter worker processes")
    collect.add_argument("--check-default-run", action="store_true", help="also run the default rules alone and compare")
    commands.add_parser("sample", help="write the review file")
    render_parser = commands.add_parser("render", help="write docs/precision.md")
    render_parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    if str(args.cache.resolve()).startswith(str(REPO)):
        raise SystemExit("the cache must be outside the repository (third-party code is never committed)")
    return {"collect": cmd_collect, "sample": cmd_sample, "render": cmd_render}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
