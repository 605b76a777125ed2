"""``verify`` output: one JSON-able document, rendered as text, json or markdown.

The document is the single model: ``--format json`` prints it as is, and the text
and markdown renderers read only the document, so a saved JSON report can be
rendered again (the tests compare docs/verification.md that way).

Format 2 added the autofix: each result's ``autofix`` (``{"status", "evidence"}``,
status one of ``runner.AUTOFIX_STATUSES``), each claim's ``autofix`` (with the
autofixed program and its run) and the document's ``autofix_summary``. The
renderers read format 1 documents too (their autofix shows as n/a).

Format 3 added, per claim, ``errors`` (what failed, also beside a refutation, which
now outranks an error in the verdict) and, per program run, ``unreached`` (the
claim's marked lines that had not run when its check called ``observed()``).

``sanitizer`` (absent with ``--no-sanitizer``): ``{device: {code: {"status", "evidence"}}}``
from ``sanitizer.claims.sanitizer_column``, each claim and fixed program (scenario, then the
shared check) run once more under the runtime sanitizer; status one of
``sanitizer.claims.STATUSES``. The renderers show it as a last column when present.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from torchcopy_lint.runtime.runner import AUTOFIX_STATUSES, NOT_APPLICABLE, SKIPPED, VERDICTS, Cell, exit_status

DOCUMENT_VERSION = 3


def build_document(
    environment: dict[str, Any],
    devices: Sequence[str],
    unavailable: dict[str, str],
    cells: Sequence[Cell],
    seconds: float,
    sanitizer: dict[str, dict[str, dict[str, str]]] | None = None,
) -> dict[str, Any]:
    counts = {verdict: sum(cell.verdict == verdict for cell in cells) for verdict in VERDICTS}
    autofix_counts = {status: sum(cell.autofix.status == status for cell in cells) for status in AUTOFIX_STATUSES}
    ran = [device for device in devices if device not in unavailable]
    document = {
        "format_version": DOCUMENT_VERSION,
        "environment": environment,
        "devices": list(devices),
        "unavailable": dict(unavailable),
        "cuda_verified": any(device.split(":")[0] == "cuda" for device in ran),
        "results": [cell.as_dict() for cell in cells],
        "summary": counts,
        "autofix_summary": autofix_counts,
        "exit_status": exit_status(cells),
        "seconds": round(seconds, 2),
    }
    if sanitizer is not None:
        document["sanitizer"] = sanitizer
    return document


def _rules(document: dict[str, Any]) -> list[tuple[str, str, str]]:
    seen: dict[str, tuple[str, str, str]] = {}
    for result in document["results"]:
        seen.setdefault(result["code"], (result["code"], result["name"], result["file"]))
    return list(seen.values())


def _cell(document: dict[str, Any], code: str, device: str) -> dict[str, Any]:
    for result in document["results"]:
        if result["code"] == code and result["device"] == device:
            return result
    raise KeyError((code, device))


def _label(result: dict[str, Any]) -> str:
    if result["verdict"] == SKIPPED:
        return f"skipped ({result['evidence']})"
    return str(result["verdict"])


def _autofix(result: dict[str, Any]) -> dict[str, Any]:
    return result.get("autofix") or {"status": NOT_APPLICABLE, "evidence": ""}


def _autofix_label(document: dict[str, Any], code: str) -> str:
    """The rule's autofix status: one word when every device agrees, else per device."""
    statuses = {device: _autofix(_cell(document, code, device))["status"] for device in document["devices"]}
    distinct = list(dict.fromkeys(statuses.values()))
    if len(distinct) == 1:
        return distinct[0]
    return "; ".join(f"{status} on {', '.join(d for d, s in statuses.items() if s == status)}" for status in distinct)


def _sanitizer_label(document: dict[str, Any], code: str) -> str:
    """The sanitizer column (``document["sanitizer"]``, from ``sanitizer.claims.sanitizer_column``):
    one word when every device agrees, else per device; empty for documents without it."""
    columns = document.get("sanitizer")
    if not columns:
        return ""
    statuses = {device: column.get(code, {}).get("status", "n/a") for device, column in columns.items()}
    distinct = list(dict.fromkeys(statuses.values()))
    if len(distinct) == 1:
        return distinct[0]
    return "; ".join(f"{status} on {', '.join(d for d, s in statuses.items() if s == status)}" for status in distinct)


def _sanitizer_evidence(document: dict[str, Any], code: str) -> list[tuple[str, str, str]]:
    return [(device, column[code]["status"], column[code]["evidence"]) for device, column in (document.get("sanitizer") or {}).items() if code in column]


def _cuda_line(document: dict[str, Any]) -> str:
    """The plain statement that CUDA was not verified, when no CUDA device ran."""
    if document["cuda_verified"]:
        return ""
    env = document["environment"]
    if "cuda" in env.get("available_devices", []):
        why = "a CUDA device is available but was not selected (--device)"
    elif env.get("torch_cuda") is None and not env.get("torch_hip"):
        why = f"no CUDA device was available to this run (torch {env['torch']} is a CPU-only build)"
    else:
        why = "torch reports no CUDA device available to this run"
    return f"CUDA has not been verified yet: {why}. These results say nothing about CUDA behaviour."


def _summary_line(document: dict[str, Any]) -> str:
    counts = document["summary"]
    rules = len(_rules(document))
    devices = len(document["devices"])
    parts = ", ".join(f"{counts[verdict]} {verdict}" for verdict in VERDICTS)
    autofix = document.get("autofix_summary")
    if autofix:
        parts += "; autofix: " + ", ".join(f"{autofix[status]} {status}" for status in AUTOFIX_STATUSES if autofix.get(status))
    return f"{rules} rule(s) x {devices} device(s): {parts}"


def _versions(env: dict[str, Any]) -> list[tuple[str, str]]:
    cuda = env.get("torch_cuda") or ("none (CPU-only build)" if not env.get("torch_hip") else "none")
    rows = [
        ("torchcopy-lint", env["torchcopy_lint"]),
        ("PyTorch", env["torch"]),
        ("CUDA (torch build)", cuda),
    ]
    if env.get("torch_hip"):
        rows.append(("HIP (torch build)", env["torch_hip"]))
    if env.get("cudnn"):
        rows.append(("cuDNN", env["cudnn"]))
    rows.append(("CUDA driver", env.get("cuda_driver") or "none found"))
    rows.append(("Python", env["python"]))
    rows.append(("Platform", env["platform"]))
    if "threads_per_program" in env:
        rows.append(("Torch CPU threads per program", str(env["threads_per_program"])))
    for kind, names in env.get("device_names", {}).items():
        rows.append((f"Device {kind}", "; ".join(names)))
    return rows


# -- text ---------------------------------------------------------------------------

def render_text(document: dict[str, Any]) -> str:
    env = document["environment"]
    devices = document["devices"]
    out = [f"torchcopy-lint verify: torch {env['torch']}, Python {env['python']}"]
    out += [f"  {key}: {value}" for key, value in _versions(env) if key not in ("torchcopy-lint", "PyTorch", "Python")]
    out.append("")
    rules = _rules(document)
    labels = {(code, device): _label(_cell(document, code, device)) for code, _name, _file in rules for device in devices}
    fixes = {code: _autofix_label(document, code) for code, _name, _file in rules}
    name_width = max([len(name) for _code, name, _file in rules] + [4])
    widths = [max([len(device)] + [len(labels[(code, device)]) for code, _n, _f in rules]) for device in devices]
    sanitizer = "sanitizer" in document
    fix_width = max([len(label) for label in fixes.values()] + [7])
    header = f"{'rule':<6}  {'name':<{name_width}}  " + "  ".join(f"{device:<{width}}" for device, width in zip(devices, widths)) + f"  {'autofix':<{fix_width}}"
    out.append((header + ("  sanitizer" if sanitizer else "")).rstrip())
    for code, name, _file in rules:
        row = f"{code:<6}  {name:<{name_width}}  " + "  ".join(f"{labels[(code, device)]:<{width}}" for device, width in zip(devices, widths))
        out.append(f"{row}  {fixes[code]:<{fix_width}}  {_sanitizer_label(document, code)}".rstrip())
    out.append("")
    for code, _name, _file in rules:
        for device in devices:
            result = _cell(document, code, device)
            out.append(f"{code} on {device}: {result['verdict']}: {result['evidence']}")
        for device, status, evidence in _sanitizer_evidence(document, code):
            out.append(f"{code} sanitizer on {device}: {status}: {evidence}")
    out.append("")
    out.append(f"{_summary_line(document)} ({document['seconds']:.1f} s)")
    cuda = _cuda_line(document)
    if cuda:
        out.append(cuda)
    return "\n".join(out) + "\n"


# -- json ---------------------------------------------------------------------------

def render_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


# -- markdown -----------------------------------------------------------------------

_MD_SPECIAL = str.maketrans({char: "\\" + char for char in "\\`*_<>|"})


def _md(text: str) -> str:
    return str(text).translate(_MD_SPECIAL)


def render_markdown(document: dict[str, Any]) -> str:
    env = document["environment"]
    devices = document["devices"]
    out = [
        "# Verification",
        "",
        "This page is generated by `torchcopy-lint verify --format markdown`; do not edit it by hand.",
        "Every rule's claim (the `python claim` and `python claim-fixed` scenarios in its catalogue file,",
        "each followed by the rule's one `python claim-check`, the same observation for both)",
        "was run with real PyTorch on each device below, each program in its own subprocess, seeded,",
        "and both scenarios were linted with the rule itself. A rule is **confirmed** on a device when the",
        "shared check saw the hazard after the flagged scenario and not after the fixed one, the flagged",
        "scenario's `# TCLNNN` lines had run (traced) when the check saw it, and the rule fired exactly at",
        "those markers and stayed silent on the fixed scenario. A refutation is shown even where something",
        "else failed beside it (the evidence names both). The claims are mutation-tested in the test suite",
        "(`tests/test_verify_mutants.py`): swapping claim and fixed form, applying one fix, moving a marked",
        "line off the path that runs, breaking it: no mutant may be confirmed.",
        "For a rule with an autofix, the flagged program was also passed through the rule's own fix",
        "(`--fix`; `--unsafe-fixes` too for a rule whose fix is unsafe) and run the same way: the autofix is",
        "**proven** on a device when it changed the claim, the result lints clean, and it no longer exhibited",
        "the hazard that the flagged program exhibited there; a rule is confirmed only if its autofix is proven.",
        "A fix that is not proven this way is not offered as safe. Rules without an autofix show n/a.",
        "",
        "## Environment",
        "",
        "| | |",
        "|---|---|",
    ]
    out += [f"| {_md(key)} | {_md(value)} |" for key, value in _versions(env)]
    out.append(f"| Devices run | {_md(', '.join(device for device in devices if device not in document['unavailable']) or 'none')} |")
    cuda = _cuda_line(document)
    if cuda:
        out += ["", f"> **{_md(cuda.split(':', 1)[0])}:**{_md(cuda.split(':', 1)[1])}"]
    sanitizer = "sanitizer" in document
    extra = " Sanitizer |" if sanitizer else ""
    out += ["", "## Results", "", "| Rule | " + " | ".join(_md(device) for device in devices) + " | Autofix |" + extra, "|---|" + "---|" * (len(devices) + 1 + sanitizer)]
    rules = _rules(document)
    for code, name, file in rules:
        labels = [_md(_label(_cell(document, code, device))) for device in devices]
        column = f" {_md(_sanitizer_label(document, code))} |" if sanitizer else ""
        out.append(f"| [{code}](../rules/{file}) `{name}` | " + " | ".join(labels) + f" | {_md(_autofix_label(document, code))} |" + column)
    if sanitizer:
        out += [
            "",
            "The Sanitizer column runs each claim and fixed program (its scenario, then the shared check) once more under the",
            "runtime sanitizer (docs/sanitizer.md): **flags** means it reported the rule at exactly the claim's `# TCLNNN` lines",
            "and nowhere in the fixed program; **missed**: a marked line was not reported; **noisy**: the rule was reported",
            "where nothing is marked (the fixed program, or another line of the claim's, its check included); n/a names why",
            "it cannot see the rule.",
        ]
    out += ["", _md(_summary_line(document)) + ".", "", "## Evidence", ""]
    for code, _name, _file in rules:
        for device in devices:
            result = _cell(document, code, device)
            out.append(f"- **{code} on {_md(device)}: {result['verdict']}.** {_md(result['evidence'])}")
        for device, status, evidence in _sanitizer_evidence(document, code):
            out.append(f"- **{code} sanitizer on {_md(device)}: {status}.** {_md(evidence)}")
    return "\n".join(out) + "\n"


RENDERERS = {"text": render_text, "json": render_json, "markdown": render_markdown}
