"""Precision on real code: run the rules over well-known PyTorch code and review what they report.

    python tools/precision.py prepare-user --mirrors DIR  # user-level corpora from git mirrors, at pinned commits
    python tools/precision.py collect   # prepare the corpora, run every rule, count findings
    python tools/precision.py sample    # pick findings to review, write the review file
    python tools/precision.py render    # docs/precision.md from the counts and the classifications

``collect`` prepares the corpora under a cache directory outside the repository
(``--cache``, default /tmp/torchcopy-corpora): torch's own source from the
installed site-packages (linted in place, never copied), and the sources of timm,
torchvision, lightning and transformers, downloaded as wheels with ``pip download
--no-deps`` at pinned versions (``--latest`` takes the newest instead) and unzipped.
Nothing from a corpus is ever written into the repository.

Beside those libraries, ``collect`` checks *user-level* code: training scripts,
tutorials and research repositories (``USER_CORPORA``: a GitHub repository at a
pinned commit each). No network reaches GitHub from here, so they are prepared
out of band: ``prepare-user --mirrors DIR`` takes ``DIR/<owner>+<name>/repo`` (a
bare git directory, e.g. what a mirror or ``git clone --mirror`` made) and writes
the ``.py`` and ``.ipynb`` files of the pinned commit to ``<user-root>/<name>``
(``--user-root``, outside the repository); ``collect`` checks that tree.

``collect`` runs ``python -m torchcopy_lint --no-cache --isolated --format json
--select ALL`` on each corpus and stores per corpus: files, lines, findings
(every rule), files that could not be checked (JSON entries with ``code: null``
and "cannot check" lines on stderr; syntax errors in third-party code are counted
apart; an internal error makes the command fail). The default-rule counts are
those of the default-on rules; ``--check-default-run`` also runs the default
selection and checks that it reports exactly those findings. ``--baseline DIR``
also runs the linter checked out at DIR (an older revision, e.g. ``git worktree
add DIR <rev>``) the same way and stores its per-rule counts, which ``render``
shows as before/after per corpus.

``sample`` takes, per group (libraries, user-level code) and rule, every finding
when there are fewer than 200 and a seeded random sample otherwise (50 for
libraries, 60 for user-level code), and writes
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
SAMPLE_SIZES = {"library": SAMPLE_SIZE, "user": 60}
GROUP_TITLES = {"library": "Libraries", "user": "User-level code"}
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


# User-level code: name -> (GitHub repository, pinned commit, what is linted under its root).
# PyTorch's tutorials come from PyTorchKorea/tutorials-kr, the Korean translation of
# pytorch/tutorials (same code, translated prose): pytorch/tutorials' snapshot, with
# its images, is too large to fetch here. moco's newest commit deletes every file:
# the pin is the commit before it.
USER_CORPORA = {
    "pytorch-examples": ("pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8", ["."]),
    "pytorch-tutorials": ("PyTorchKorea/tutorials-kr", "84b7db6e020c098cf38a0dfaf036007c24057bb1",
                          ["beginner_source", "intermediate_source", "advanced_source", "recipes_source", "unstable_source"]),
    "cleanrl": ("vwxyzjn/cleanrl", "fe8d8a03c41a7ef5b523e2e354bd01c363e786bb", ["."]),
    "pytorch-gan": ("eriklindernoren/PyTorch-GAN", "36d3c77e5ff20ebe0aeefd322326a134a279b93e", ["."]),
    "moco": ("facebookresearch/moco", "132aea9da9bb995a411c915c0420be3db62052f3", ["."]),
    "dino": ("facebookresearch/dino", "7c446df5b9f45747937fb0d72314eb9f7b66930a", ["."]),
    "continual-learning": ("GMvandeVen/continual-learning", "e6d795aa81b9cef742b8de76cb71222d4d1ce00b", ["."]),
    "swa": ("timgaripov/swa", "411b2fcad59bec60c6c9eb1eb19ab906540e5ea2", ["."]),
    "maml": ("dragen1860/MAML-Pytorch", "98a00d41724c133bd29619a2fb2cc46dd128a368", ["."]),
    "knowledge-distillation": ("haitongli/knowledge-distillation-pytorch", "9937528f0be0efa979c745174fbcbe9621cea8b7", ["."]),
}
USER_SUFFIXES = (".py", ".ipynb")


# -- corpora -----------------------------------------------------------------------

@dataclass
class Corpus:
    name: str
    version: str
    root: Path  # paths are reported relative to this
    packages: list[str]  # what is linted, relative to root
    source: str  # where it came from
    group: str = "library"  # "library" or "user"


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


def _mirror_dir(mirrors: Path, repo: str) -> Path:
    owner, name = repo.split("/")
    for candidate in (mirrors / f"{owner}+{name}" / "repo", mirrors / f"{owner}+{name}", mirrors / f"{name}.git"):
        if candidate.is_dir():
            return candidate
    raise SystemExit(f"no git directory for {repo} under {mirrors}")


def prepare_user_corpus(name: str, mirrors: Path, user_root: Path) -> Path:
    """Write the pinned commit's Python files and notebooks of one user-level corpus to ``user_root/name``.

    Blobs a mirror lacks (large files) are skipped with a warning; only sources are wanted.
    """
    repo, commit, _packages = USER_CORPORA[name]
    git_dir = _mirror_dir(mirrors, repo)
    target = user_root / name
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    written = 0
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        _mode, kind, sha = meta.decode().split()
        path = raw_path.decode("utf-8", "surrogateescape")
        if kind != "blob" or not path.endswith(USER_SUFFIXES):
            continue
        blob = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "blob", sha], capture_output=True)
        if blob.returncode != 0:
            print(f"[precision] {name}: {path}: not in the mirror, skipped", file=sys.stderr)
            continue
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(blob.stdout)
        written += 1
    (target / ".commit").write_text(f"{repo} {commit}\n", encoding="utf-8")
    print(f"[precision] {name}: {written} files of {repo}@{commit[:12]} in {target}", file=sys.stderr)
    return target


def user_corpus(name: str, user_root: Path) -> Corpus:
    repo, commit, packages = USER_CORPORA[name]
    root = user_root / name
    marker = root / ".commit"
    if not marker.is_file() or marker.read_text(encoding="utf-8").split() != [repo, commit]:
        raise SystemExit(f"{root} is not {repo}@{commit[:12]}: run `prepare-user --mirrors DIR --user-root {user_root}` first")
    return Corpus(name, commit[:12], root, packages, f"github.com/{repo}", group="user")


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
    """Lines of a source file; of a notebook, the lines of its code cells (not its JSON)."""
    with path.open("rb") as handle:
        data = handle.read()
    if path.suffix == ".ipynb":
        try:
            cells = json.loads(data).get("cells", [])
        except (ValueError, AttributeError):
            return 0
        code = ["".join(cell["source"]) if isinstance(cell.get("source"), list) else cell.get("source", "") for cell in cells if cell.get("cell_type") == "code"]
        return sum(len(text.splitlines()) for text in code)
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def run_linter(corpus: Corpus, select: str | None, jobs: int | None, linter: Path = REPO) -> tuple[list[dict], list[str], float]:
    """(findings, cannot-check lines, seconds) for one corpus, with the linter checked out at ``linter``."""
    command = [sys.executable, "-m", "torchcopy_lint", "--no-cache", "--isolated", "--format", "json", "--exit-zero"]
    if select:
        command += ["--select", select]
    if jobs:
        command += ["--jobs", str(jobs)]
    command += corpus.packages
    env = dict(os.environ)
    env["PYTHONPATH"] = str(linter) + os.pathsep + env.get("PYTHONPATH", "")
    started = _dt.datetime.now()
    result = subprocess.run(command, cwd=corpus.root, env=env, capture_output=True, text=True)
    seconds = (_dt.datetime.now() - started).total_seconds()
    if result.returncode not in (0, 1, 2) or not result.stdout.strip().startswith("["):
        raise SystemExit(f"torchcopy_lint failed on {corpus.name} (exit {result.returncode}):\n{result.stderr[-4000:]}")
    findings, errors = split_output(json.loads(result.stdout), result.stderr)
    return findings, errors, seconds


def split_output(records: list[dict], stderr: str) -> tuple[list[dict], list[str]]:
    """Findings apart from files that could not be checked.

    Newer linters report such a file in the JSON as an entry with ``code: null``
    (and on stderr); older ones only on stderr. Each file is counted once.
    """
    findings = [record for record in records if record.get("code")]
    errors = {record["path"]: f"{record['path']}: {record['message']}" for record in records if not record.get("code")}
    for line in stderr.splitlines():
        if ": cannot check: " in line:
            errors.setdefault(line.split(": cannot check: ", 1)[0], line)
    return findings, sorted(errors.values())


def classify_error(line: str) -> str:
    reason = line.split(": cannot check: ", 1)[1]
    if reason.startswith("internal error"):
        return "internal"
    if reason.startswith("syntax error") or "too deeply nested" in reason:
        return "syntax"
    return "other"


def rule_table(linter: Path = REPO) -> dict[str, dict]:
    """Every rule: name and whether it is on by default, as the linter at ``linter`` lists them."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(linter) + os.pathsep + env.get("PYTHONPATH", "")
    result = subprocess.run([sys.executable, "-m", "torchcopy_lint", "rules", "--format", "json"], env=env, capture_output=True, text=True, check=True)
    return {rule["code"]: {"name": rule["name"], "default": rule["default"]} for rule in json.loads(result.stdout)}


def linter_revision(linter: Path = REPO) -> str:
    try:
        sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=linter, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "torchcopy_lint", "rules"], cwd=linter, capture_output=True, text=True, check=True).stdout.strip()
        return sha + ("+uncommitted changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cmd_collect(args: argparse.Namespace) -> int:
    cache: Path = args.cache
    results_dir = cache / "results"
    results_dir.mkdir(parents=True, exist_ok=True)
    known = {"torch", *WHEEL_CORPORA, *USER_CORPORA}
    wanted = set(args.corpus or known)
    unknown = wanted - known
    if unknown:
        raise SystemExit(f"unknown corpus: {', '.join(sorted(unknown))}")
    corpora = []
    if "torch" in wanted:
        corpora.append(torch_corpus())
    for name, pin in WHEEL_CORPORA.items():
        if name in wanted:
            corpora.append(wheel_corpus(name, None if args.latest else pin, cache))
    for name in USER_CORPORA:
        if name in wanted:
            corpora.append(user_corpus(name, args.user_root))
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
            "group": corpus.group,
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
        if args.baseline:
            base_findings, base_errors, base_seconds = run_linter(corpus, "ALL", args.jobs, args.baseline)
            record["baseline"] = {
                "linter": linter_revision(args.baseline),
                "rules": rule_table(args.baseline),
                "counts": dict(sorted(Counter(f["code"] for f in base_findings).items())),
                "cannot_check": len(base_errors),
                "seconds": round(base_seconds, 1),
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
        if "baseline" in record:
            print(f"[precision] {corpus.name} with {record['baseline']['linter']}: {record['baseline']['counts']}", file=sys.stderr)
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
            keyed.append({**finding, "corpus": corpus, "group": record.get("group", "library"), "line_hash": digest, "occurrence": occurrence, "key": (*base, occurrence)})
    return keyed


def sample_findings(keyed: list[dict], seed: int = SEED) -> list[dict]:
    """Per group (libraries, user-level code) and rule over its corpora: every finding below
    the threshold, else a seeded sample (the libraries' sample is the one it always was)."""
    by_rule: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for finding in keyed:
        by_rule[finding.get("group", "library"), finding["code"]].append(finding)
    chosen = []
    for group_name, code in sorted(by_rule):
        group = sorted(by_rule[group_name, code], key=lambda f: f["key"])
        if len(group) >= SAMPLE_ALL_BELOW:
            salt = f"{seed}-{code}" if group_name == "library" else f"{seed}-{group_name}-{code}"
            group = sorted(random.Random(salt).sample(group, SAMPLE_SIZES[group_name]), key=lambda f: f["key"])
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
    totals = Counter((f["group"], f["code"]) for f in keyed)
    picked = Counter((f["group"], f["code"]) for f in chosen)
    out = io.StringIO()
    out.write("# Findings to review\n\n")
    out.write("Classify each as hazard (the rule's hazard, really there), deliberate (the pattern the rule "
              "describes, used on purpose) or false-positive (not the rule's pattern, e.g. not a tensor).\n\n")
    for group, code in sorted(picked):
        out.write(f"- {GROUP_TITLES[group]}, {code}: {picked[group, code]} of {totals[group, code]} findings\n")
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


def _groups(records: dict[str, dict]) -> dict[str, dict[str, dict]]:
    """Records per group, libraries first."""
    grouped: dict[str, dict[str, dict]] = {}
    for group in GROUP_TITLES:
        members = {name: record for name, record in records.items() if record.get("group", "library") == group}
        if members:
            grouped[group] = members
    return grouped


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
    groups = _groups(records)
    several = len(groups) > 1

    out = io.StringIO()
    w = out.write
    w("# Precision on real code\n\n")
    w("Generated by `python tools/precision.py render` from the findings `python tools/precision.py collect` "
      "gathered and the classifications in [`precision-review.csv`](precision-review.csv); do not edit by hand. "
      "Re-run: `prepare-user` (user-level corpora), `collect`, `sample` (writes the review file to the cache), classify, `render`.\n\n")
    linters = sorted({r.get("linter", "?") for r in records.values()})
    dates = sorted({r.get("collected", "?") for r in records.values()})
    w(f"Linter revision: {', '.join(linters)}; collected {', '.join(dates)}; rules: {', '.join(codes)}.\n\n")

    def heading(group: str) -> None:
        if several:
            w(f"### {GROUP_TITLES[group]}\n\n")

    w("## Corpora\n\n")
    if "user" in groups:
        w("Libraries are PyPI wheels (torch: the installed one); user-level code is training scripts, tutorials and "
          "research repositories from GitHub at the commit shown (their `.py` files and notebooks; "
          "lines of a notebook are those of its code cells).\n\n")
    for group, members in groups.items():
        heading(group)
        version = "Version" if group == "library" else "Commit"
        w(f"| Corpus | {version} | Source | Files | Lines | Syntax errors | Other errors | Internal errors |\n|---|---|---|---:|---:|---:|---:|---:|\n")
        for name, record in members.items():
            errors = record["errors"]
            w(f"| {name} | {record['version']} | {record['source']} | {record['files']:,} | {record['lines']:,} | {errors['syntax']} | {errors['other']} | {errors['internal']} |\n")
        if several:
            w(f"| **all** | | | {sum(r['files'] for r in members.values()):,} | {sum(r['lines'] for r in members.values()):,} | "
              f"{sum(r['errors']['syntax'] for r in members.values())} | {sum(r['errors']['other'] for r in members.values())} | "
              f"{sum(r['errors']['internal'] for r in members.values())} |\n")
        w("\n")

    counts = {name: Counter(f["code"] for f in record["findings"]) for name, record in records.items()}

    def table(title: str, selected: list[str]) -> None:
        w(f"## {title}\n\n")
        if not selected:
            w("No such rules yet.\n\n")
            return
        for group, members in groups.items():
            heading(group)
            w("| Corpus | " + " | ".join(selected) + " | Total | per 10k lines |\n|---|" + "---:|" * (len(selected) + 2) + "\n")
            total_lines = 0
            for name, record in members.items():
                row = [counts[name][c] for c in selected]
                total_lines += record["lines"]
                w(f"| {name} | " + " | ".join(str(v) for v in row) + f" | {sum(row)} | {10000 * sum(row) / max(1, record['lines']):.1f} |\n")
            row = [sum(counts[name][c] for name in members) for c in selected]
            w("| **all** | " + " | ".join(f"**{v}**" for v in row) + f" | **{sum(row)}** | {10000 * sum(row) / max(1, total_lines):.1f} |\n\n")

    table("Findings, default rules", default_codes)
    table("Findings, opt-in rules (`--select ALL`)", optin_codes)
    before_after(w, groups, counts, default_codes, heading)

    w("## Review\n\n")
    w(f"Per group (libraries, user-level code) and rule, every finding is reviewed when there are fewer than {SAMPLE_ALL_BELOW}, "
      f"else a seeded random sample ({SAMPLE_SIZES['library']} for libraries, {SAMPLE_SIZES['user']} for user-level code). "
      "*hazard*: the rule's hazard, really there; *deliberate*: "
      "the pattern the rule describes, used on purpose (a true positive the author would `noqa`); "
      "*false positive*: not the rule's pattern (e.g. not a tensor). FP % is of the classified findings; "
      "the estimate scales it to all findings.\n\n")
    verdicts: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for key, row in current:
        verdicts[records[key[0]].get("group", "library"), key[2]][row["verdict"]] += 1
    for group, members in groups.items():
        heading(group)
        w("| Rule | Findings | To review | Classified | Hazard | Deliberate | False positive | FP % | Est. FPs |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
        for code in codes:
            total = sum(counts[name][code] for name in members)
            review = sum(1 for key in sampled if key[2] == code and key[0] in members)
            got = verdicts[group, code]
            classified = sum(got.values())
            fp = got["false-positive"]
            estimate = f"{round(fp / classified * total)}" if classified else "–"
            w(f"| {code} {rules[code]['name']} | {total} | {review} | {classified} | {got['hazard']} | {got['deliberate']} | {fp} | {_pct(fp, classified)} | {estimate} |\n")
        w("\n")
    if stale:
        per_rule = ", ".join(f"{code}: {count}" for code, count in sorted(Counter(key[2] for key in stale).items()))
        w(f"{len(stale)} classification(s) match no current finding ({per_rule}): the code or the rule changed "
          "(e.g. a false positive the rule no longer reports); they are kept in the CSV as a record and not counted.\n\n")
    for group, members in groups.items():
        notes: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
        for key, row in sorted(current):
            if key[0] in members:
                notes[key[2]][row["verdict"]].append((key, row))
        if not notes:
            continue
        w(f"## Notes per rule{': ' + GROUP_TITLES[group].lower() if several else ''}\n\n")
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
    return out.getvalue().rstrip("\n") + "\n"


def before_after(w, groups: dict[str, dict[str, dict]], counts: dict[str, Counter], codes: list[str], heading) -> None:
    """Per corpus and default rule: the baseline linter's count, then this one's (``a → b`` where they differ)."""
    baselines = {name: record["baseline"] for members in groups.values() for name, record in members.items() if "baseline" in record}
    if not baselines:
        return
    w("## Before and after\n\n")
    revisions = sorted({b["linter"] for b in baselines.values()})
    w(f"Default-rule findings of the baseline linter ({', '.join(revisions)}) → this one, run the same way "
      "(`--select ALL`, the counts of the rules that are on by default now); one number where they agree. "
      "*Cannot check*: files either linter reported as not checkable "
      "(the baseline does not read notebooks and does not count them).\n\n")

    def cell(old: int, new: int) -> str:
        return str(new) if old == new else f"{old} → {new}"

    for group, members in groups.items():
        names = [name for name in members if name in baselines]
        if not names:
            continue
        heading(group)
        w("| Corpus | " + " | ".join(codes) + " | Total | Cannot check |\n|---|" + "---:|" * (len(codes) + 2) + "\n")
        totals_old, totals_new = Counter(), Counter()
        for name in names:
            old = Counter(baselines[name]["counts"])
            totals_old.update({c: old[c] for c in codes})
            totals_new.update({c: counts[name][c] for c in codes})
            errors = members[name]["errors"]
            w(f"| {name} | " + " | ".join(cell(old[c], counts[name][c]) for c in codes)
              + f" | {cell(sum(old[c] for c in codes), sum(counts[name][c] for c in codes))}"
              + f" | {cell(baselines[name]['cannot_check'], sum(errors.values()))} |\n")
        w("| **all** | " + " | ".join(f"**{cell(totals_old[c], totals_new[c])}**" for c in codes)
          + f" | **{cell(sum(totals_old.values()), sum(totals_new.values()))}** | |\n\n")


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
    parser.add_argument("--user-root", type=Path, default=None, help="where the user-level corpora are written and read (default: CACHE/user)")
    commands = parser.add_subparsers(dest="command", required=True)
    collect = commands.add_parser("collect", help="prepare corpora and count findings")
    collect.add_argument("--corpus", action="append", help="only these corpora (torch, " + ", ".join([*WHEEL_CORPORA, *USER_CORPORA]) + ")")
    collect.add_argument("--baseline", type=Path, default=None, help="also run the linter checked out at this directory (before/after counts)")
    collect.add_argument("--latest", action="store_true", help="download the newest versions instead of the pinned ones")
    collect.add_argument("--jobs", type=int, default=None, help="linter worker processes")
    collect.add_argument("--check-default-run", action="store_true", help="also run the default rules alone and compare")
    prepare = commands.add_parser("prepare-user", help="write the user-level corpora from git mirrors at their pinned commits")
    prepare.add_argument("--mirrors", type=Path, required=True, help="DIR with <owner>+<name>/repo git directories")
    prepare.add_argument("--corpus", action="append", help="only these (" + ", ".join(USER_CORPORA) + ")")
    commands.add_parser("sample", help="write the review file")
    render_parser = commands.add_parser("render", help="write docs/precision.md")
    render_parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    if args.user_root is None:
        args.user_root = args.cache / "user"
    for where in (args.cache, args.user_root):
        if str(where.resolve()).startswith(str(REPO)):
            raise SystemExit("the cache must be outside the repository (third-party code is never committed)")
    return {"prepare-user": cmd_prepare_user, "collect": cmd_collect, "sample": cmd_sample, "render": cmd_render}[args.command](args)


def cmd_prepare_user(args: argparse.Namespace) -> int:
    wanted = args.corpus or list(USER_CORPORA)
    unknown = set(wanted) - set(USER_CORPORA)
    if unknown:
        raise SystemExit(f"unknown user-level corpus: {', '.join(sorted(unknown))}")
    for name in wanted:
        prepare_user_corpus(name, args.mirrors, args.user_root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
