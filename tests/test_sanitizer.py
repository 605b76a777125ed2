"""The runtime sanitizer (torchcopy_lint/sanitizer/): each rule's hazard caught in running code,
with real torch on the CPU (CUDA variants skip without a GPU)."""

from __future__ import annotations

import copy
import io
import subprocess
import sys
import warnings
import weakref
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")

from conftest import REPO  # noqa: E402
from torchcopy_lint.catalogue import Example, load_catalogue  # noqa: E402
from torchcopy_lint.engine import lint_source  # noqa: E402
from torchcopy_lint.registry import all_rules  # noqa: E402
from torchcopy_lint.runtime.claims import ClaimPair, RuleClaims, rule_claims  # noqa: E402
from torchcopy_lint.runtime.mutants import mutants  # noqa: E402
from torchcopy_lint.runtime.runner import child_env  # noqa: E402
from torchcopy_lint.sanitizer import TorchCopyHazard, TorchCopyHazardWarning  # noqa: E402
from torchcopy_lint.sanitizer.claims import programs_for, run_programs, verdicts  # noqa: E402
from torchcopy_lint.sanitizer.messages import NOT_OBSERVABLE  # noqa: E402
from torchcopy_lint.sanitizer.session import Sanitizer  # noqa: E402

import torchcopy_lint  # noqa: E402

RULES = [rule_claims(spec) for spec in load_catalogue().values()]
CLAIM_RULES = [rule for rule in RULES if rule.pairs and rule.code not in NOT_OBSERVABLE]
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]


def _cuda_or_skip(device: str) -> None:
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA device")


@pytest.fixture(scope="module", params=DEVICES)
def claim_results(request: pytest.FixtureRequest) -> tuple[str, dict]:
    _cuda_or_skip(request.param)
    return request.param, run_programs(programs_for(RULES, request.param, unobservable=True))


# -- the catalogue's claims ----------------------------------------------------------------

# Hazards the sanitizer sees at run time that the static linter does not flag, with why:
RUNTIME_ONLY = {
    # `legacy = torch.Tensor(plain)` returns `plain` itself, a detached alias of `scaled`, which
    # requires grad: the check's `legacy[0] = 100.0` writes into `scaled`.
    ("TCL002", "claim"): {("TCL005", 14)},
}


def _runtime(result: dict) -> set[tuple[str, int]]:
    return {(hazard["code"], hazard["line"]) for hazard in result["hazards"]}


def _static(source: str) -> set[tuple[str, int]]:
    found = lint_source(source, "claim.py", set(all_rules()))
    return {(finding.code, finding.line) for finding in found if finding.code not in NOT_OBSERVABLE}


@pytest.mark.parametrize("rule", [rule for rule in RULES if rule.pairs], ids=lambda rule: rule.code)
def test_claims_report_what_the_linter_reports_at_the_same_lines(rule, claim_results) -> None:
    """Every claim program reports its rule's code at exactly the lines the static rule flags (its
    markers), every fixed program is clean of it, and nothing else is reported beyond the static
    findings of the other rules, except the run-time-only hazards listed (and explained) above."""
    _device, results = claim_results
    for pair in rule.pairs:
        for kind, example in (("claim", pair.flagged), ("claim-fixed", pair.fixed)):
            result = results[f"{rule.code}-{kind}-{pair.index}"]
            assert result["status"] == "observed", result
            program = pair.program(example.source)  # the scenario, then the shared check: what runs
            assert _runtime(result) == _static(program) | RUNTIME_ONLY.get((rule.code, kind), set()), (kind, result["hazards"])
        marked = {(rule.code, line) for line in pair.flagged.marked_lines(rule.code)}
        if rule.code not in NOT_OBSERVABLE:
            assert {found for found in _runtime(results[f"{rule.code}-claim-{pair.index}"]) if found[0] == rule.code} == marked


@pytest.mark.parametrize("rule", [rule for rule in RULES if rule.pairs], ids=lambda rule: rule.code)
def test_the_sanitizer_does_not_change_what_a_claim_observes(rule, claim_results) -> None:
    """Under the sanitizer (collect mode) every claim still observes its hazard and every fixed
    program still observes none: the hooks and modes change no value, no error, no liveness."""
    results = claim_results[1]
    for pair in rule.pairs:
        assert results[f"{rule.code}-claim-{pair.index}"]["hazard"] is True, results[f"{rule.code}-claim-{pair.index}"]
        assert results[f"{rule.code}-claim-fixed-{pair.index}"]["hazard"] is False


def test_rules_it_cannot_observe_are_named_with_a_reason() -> None:
    page = (REPO / "docs" / "sanitizer.md").read_text()
    for code, why in NOT_OBSERVABLE.items():
        assert code in load_catalogue()
        assert why and code in page



def test_verdicts_per_rule(claim_results) -> None:
    """What verify's sanitizer column shows: every rule with a claim is flagged, the rest n/a."""
    statuses = {code: verdict.status for code, verdict in verdicts(RULES, claim_results[1]).items()}
    assert statuses == {rule.code: "n/a" if rule.code in NOT_OBSERVABLE or rule.no_claim else "flags" for rule in RULES}


def _hazards(*lines: int, code: str = "TCL001") -> list[dict]:
    return [{"code": code, "line": line} for line in lines]


@pytest.mark.parametrize(
    ("claim", "fixed", "status"),
    [
        ({"status": "observed", "hazards": _hazards(5)}, {"status": "observed", "hazards": []}, "flags"),
        # reported only in the check (line 8 of the program): not where the claim's marker is
        ({"status": "observed", "hazards": _hazards(8)}, {"status": "observed", "hazards": []}, "missed"),
        ({"status": "observed", "hazards": _hazards(5, 8)}, {"status": "observed", "hazards": []}, "noisy"),
        ({"status": "observed", "hazards": _hazards(5)}, {"status": "observed", "hazards": _hazards(9)}, "noisy"),
        ({"status": "observed", "hazards": _hazards(5) + _hazards(7, code="TCL005")}, {"status": "observed", "hazards": _hazards(7, code="TCL005")}, "flags"),
        ({"status": "error", "message": "boom", "hazards": _hazards(5)}, {"status": "observed", "hazards": []}, "error"),
    ],
)
def test_a_verdict_is_anchored_on_the_claim_s_markers(claim: dict, fixed: dict, status: str) -> None:
    """The claim program is the scenario and its check: the rule counts as flagged only at the
    scenario's marked lines (TCL001's claim: line 5), never anywhere else in the program."""
    (rule,) = [rule for rule in RULES if rule.code == "TCL001"]
    assert rule.pairs[0].marked == (5,)
    verdict = verdicts([rule], {"TCL001-claim-1": claim, "TCL001-claim-fixed-1": fixed})["TCL001"]
    assert verdict.status == status, verdict


def test_a_claim_without_markers_is_never_flagged() -> None:
    (rule,) = [rule for rule in RULES if rule.code == "TCL001"]
    pair = rule.pairs[0]
    unmarked = replace(rule, pairs=(replace(pair, flagged=Example("claim", pair.flagged.source.replace("# TCL001", ""), 1)),))
    results = {"TCL001-claim-1": {"status": "observed", "hazards": []}, "TCL001-claim-fixed-1": {"status": "observed", "hazards": []}}
    assert verdicts([unmarked], results)["TCL001"].status == "missed"


# Mutants (runtime/mutants.py) the sanitizer column must not flag. Not "fixed-hunk-N": with one of
# several marked lines fixed, the rest are still hazards the sanitizer rightly flags at their markers.
SANITIZER_MUTATIONS = ("swapped", "moved-", "raises-", "fixed-says-no-hazard")


def test_the_sanitizer_column_flags_no_mutant() -> None:
    """The claim and its fixed form swapped, a marked line moved off the path that runs (its hazard
    then happens on another line), broken, or the fixed scenario pronouncing its own verdict: the
    sanitizer's verdict on each of these, run as verify runs them, is never ``flags``."""
    cases, programs = [], []
    for rule in CLAIM_RULES:
        for pair in rule.pairs:
            for mutant in mutants(pair):
                if not mutant.name.rsplit(" ", 1)[-1].startswith(SANITIZER_MUTATIONS):
                    continue
                claims = replace(rule, pairs=(mutant.pair,))
                cases.append((mutant.name, claims))
                programs += [{**program, "name": f"{mutant.name}/{program['name']}"} for program in programs_for([claims], "cpu")]
    assert {name.split(" ", 1)[0] for name, _claims in cases} == {rule.code for rule in CLAIM_RULES}
    results = run_programs(programs)
    for name, claims in cases:
        own = {key.split("/", 1)[1]: result for key, result in results.items() if key.startswith(name + "/")}
        verdict = verdicts([claims], own)[claims.code]
        assert verdict.status != "flags", (name, verdict)


def _one_pair(scenario: str, check: str) -> RuleClaims:
    example = Example("claim", scenario, 1)
    pair = ClaimPair("TCL005", "detached-inplace", 1, example, Example("claim-fixed", scenario, 1), REPO, Example("claim-check", check, 1))
    return RuleClaims("TCL005", "detached-inplace", REPO, (pair,))


def test_a_sanitized_program_runs_as_verify_runs_it() -> None:
    """Scenario, then check in the same namespace, its lines numbered on from the scenario's (a
    hazard in the check is reported at its line of the whole program); only the check gets
    ``observed``, so a scenario cannot pronounce its own verdict here either."""
    scenario = "import torch\nw = torch.ones(3, requires_grad=True)\nd = w.detach()\n"
    check = "d.mul_(2)\nobserved(hazard=bool(w[0] == 2), evidence='written through d')\n"
    rule = _one_pair(scenario, check)
    (program, _fixed) = programs_for([rule], "cpu")
    assert (program["source"], program["check"]) == (scenario, check)
    result = run_programs([program])["TCL005-claim-1"]
    assert (result["status"], result["hazard"]) == ("observed", True), result
    assert [(hazard["code"], hazard["line"]) for hazard in result["hazards"]] == [("TCL005", 4)]
    assert _static(rule.pairs[0].program(scenario)) == {("TCL005", 4)}  # what the test above lints

    verdict_in_scenario = _one_pair(scenario + "observed(hazard=True, evidence='my own verdict')\n", "pass\n")
    (program, _fixed) = programs_for([verdict_in_scenario], "cpu")
    result = run_programs([program])["TCL005-claim-1"]
    assert result["status"] == "error" and "observed" in result["message"], result


# -- the pitfall: saved-tensor hooks switch off autograd's own version check ---------------

def _write_after_save():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    x.detach().mul_(2)
    y.sum().backward()
    return x.grad


def test_bare_saved_tensor_hooks_lose_autograd_s_error() -> None:
    """Why the sanitizer must redo the check: with plain hooks the wrong gradient comes back silently."""
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _write_after_save()
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        grad = _write_after_save()
    assert grad.tolist() == [4.0, 8.0, 12.0]  # 2 * (2x): the values changed under autograd's nose


@pytest.mark.parametrize("mode", ["collect", "warn"])
def test_autograd_s_error_still_surfaces_under_the_sanitizer(mode: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TorchCopyHazardWarning)
        with Sanitizer(mode) as report, pytest.raises(RuntimeError, match="modified by an inplace operation"):
            _write_after_save()
    assert report.codes == {"TCL005"}


def test_saved_outputs_are_not_kept_alive_by_the_hooks() -> None:
    """An op that saves its own output (exp) must not make a reference cycle through the hooks."""
    w = torch.ones(3, requires_grad=True)
    alive = []
    with Sanitizer("collect"):
        for _ in range(3):
            out = (w * 2).exp()
            alive.append(weakref.ref(out))
            out.sum().backward()
        del out
    assert sum(ref() is not None for ref in alive) == 0


# -- modes, locations, once per line ---------------------------------------------------------

def _alias_write() -> None:
    x = torch.zeros(3, requires_grad=True)
    d = x.detach()
    d.add_(1)  # the hazard's line


ALIAS_LINE = _alias_write.__code__.co_firstlineno + 3


def test_collect_mode_reports_the_user_line_once() -> None:
    with Sanitizer("collect") as report:
        for _ in range(3):
            _alias_write()
    assert len(report) == 1
    (hazard,) = report
    assert (hazard.code, hazard.file, hazard.line, hazard.function) == ("TCL005", __file__, ALIAS_LINE, "_alias_write")
    assert hazard.message == load_catalogue()["TCL005"].summary
    assert f"taken at {hazard.where.rsplit(':', 1)[0]}:{ALIAS_LINE - 1}" in hazard.observation
    assert report.as_dict()["hazards"][0]["line"] == ALIAS_LINE


def test_warn_mode_warns_at_the_user_line() -> None:
    with pytest.warns(TorchCopyHazardWarning, match="TCL005") as caught, Sanitizer():
        _alias_write()
    assert [(w.filename, w.lineno) for w in caught if w.category is TorchCopyHazardWarning] == [(__file__, ALIAS_LINE)]


def test_raise_mode_raises_at_the_hazard() -> None:
    with pytest.raises(TorchCopyHazard, match="TCL005") as raised, Sanitizer("raise"):
        _alias_write()
    assert raised.value.hazard.line == ALIAS_LINE


def test_decorator_and_lazy_entry_point() -> None:
    decorator = torchcopy_lint.sanitize(mode="collect")

    @decorator
    def train() -> None:
        _alias_write()

    train()
    train()
    assert [h.code for h in decorator.report] == ["TCL005"]
    with pytest.raises(ValueError, match="mode"):
        torchcopy_lint.sanitize(mode="loud")


def test_importing_the_entry_point_does_not_import_torch() -> None:
    probe = "import sys, torchcopy_lint; s = torchcopy_lint.sanitize; import torchcopy_lint.sanitize as m; print(callable(s), m is s, 'torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=child_env(0), cwd=REPO)
    assert result.stdout.split() == ["True", "True", "False"], result.stderr


# -- each hazard, beyond the claims ------------------------------------------------------------

def test_optimizer_step_changes_a_state_dict_snapshot() -> None:
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with Sanitizer("collect") as report:
        best = model.state_dict()  # snapshot line
        model(torch.ones(2, 3)).sum().backward()
        optimizer.step()
    (hazard,) = report
    assert hazard.code == "TCL004" and "state_dict() (key 'weight')" in hazard.observation
    assert "torch/optim/sgd.py" in hazard.observation.replace("\\", "/")
    assert best["weight"].data_ptr() == model.weight.data_ptr()


def test_deep_copied_state_dict_and_detached_clones_are_clean() -> None:
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with Sanitizer("collect") as report:
        best = copy.deepcopy(model.state_dict())
        before = model.weight.detach().clone()
        for _ in range(3):
            optimizer.zero_grad()
            model(torch.ones(2, 3)).sum().backward()
            optimizer.step()
        model.load_state_dict(best)
    assert not report.hazards, report.render_text()
    assert before.shape == model.weight.shape


def test_maybe_alias_site_that_only_ever_copies_is_clean() -> None:
    def bump(x: torch.Tensor) -> None:
        flat = x.reshape(-1)
        flat[0] = 1.0

    with Sanitizer("collect") as report:
        for _ in range(2):
            bump(torch.zeros(3, 2).t())  # always a copy
    assert not report.hazards


def test_legacy_stand_ins_behave_like_the_classes_and_are_removed() -> None:
    real = torch.FloatTensor
    with Sanitizer("collect") as report:
        assert isinstance(torch.ones(2), torch.FloatTensor)
        assert not isinstance(torch.ones(2, dtype=torch.int64), torch.FloatTensor)
        assert torch.ones(2).type(torch.DoubleTensor).dtype == torch.float64
        assert torch.LongTensor([1.7]).tolist() == [1]
        subclass = type("Mine", (torch.Tensor,), {})
        assert type(torch.ones(2).as_subclass(subclass)) is subclass
    assert torch.FloatTensor is real and "__new__" not in torch.Tensor.__dict__
    assert [h.code for h in report] == ["TCL006"]


def test_clone_kept_across_backward_calls() -> None:
    w = torch.nn.Parameter(torch.ones(3))
    with Sanitizer("collect") as report:
        anchor = w.clone()  # kept: gradients flow back through it
        for _ in range(3):
            (w - anchor).pow(2).sum().backward()
    assert report.codes == {"TCL003"}


def test_loss_for_logging_with_item_or_detach_is_clean() -> None:
    w = torch.randn(4, 4, requires_grad=True)
    with Sanitizer("collect") as report:
        total, kept = 0.0, torch.zeros(())
        for _ in range(3):
            loss = (w @ w).pow(2).mean()
            loss.backward()
            total += loss.item()
            kept = kept + loss.detach()
    assert not report.hazards


# -- real training loops: no false alarm, the same numbers -----------------------------------------

def _cnn_losses(steps: int = 4) -> list[float]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Dropout(0.1), torch.nn.Linear(4 * 4 * 4, 3),
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(8, 1, 8, 8), torch.randint(0, 3, (8,))
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    model.eval()
    with torch.no_grad():
        model(x)
    return losses


def test_training_loop_is_clean_and_unchanged() -> None:
    plain = _cnn_losses()
    with Sanitizer("collect") as report:
        sanitized = _cnn_losses()
    assert not report.hazards, report.render_text()
    assert sanitized == plain


# -- the examples ------------------------------------------------------------------------------------

def _train_example(name: str):
    sys.path.insert(0, str(REPO / "examples"))
    try:
        module = __import__(name)
    finally:
        sys.path.pop(0)
    torch.manual_seed(0)
    batches = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(3)]
    with Sanitizer("collect") as report:
        module.train(torch.nn.Linear(4, 2), batches)
    return report


def test_buggy_example_script_under_the_sanitizer() -> None:
    """TCL003, TCL009, TCL004 happen at run time; the `.data` write (TCL001 statically) comes after
    training, when no graph holds the parameters: no wrong gradient, nothing to report."""
    report = _train_example("train_snapshot_bugs")
    assert [(h.code, h.line) for h in report] == [("TCL003", 15), ("TCL009", 25), ("TCL004", 30)]


def test_fixed_example_script_is_clean() -> None:
    assert not _train_example("train_snapshot_fixed").hazards


def test_example_notebook_under_the_sanitizer() -> None:
    from torchcopy_lint.notebook import Notebook

    source = Notebook((REPO / "examples" / "notebook_bugs.ipynb").read_bytes()).source
    with Sanitizer("collect") as report, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        exec(compile(source, "notebook_bugs.ipynb", "exec"), {"__name__": "__main__"})  # noqa: S102
    assert report.codes == {"TCL002"}
