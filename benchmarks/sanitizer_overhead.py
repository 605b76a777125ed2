"""The runtime sanitizer's overhead on small CPU training loops.

    python benchmarks/sanitizer_overhead.py                 # MLP and CNN, 300 steps, 3 rounds
    python benchmarks/sanitizer_overhead.py --steps 500 --rounds 5 --threads 2 --json out.json

Each round times every workload without and then with ``torchcopy_lint.sanitize(mode="collect")``
(after untimed warm-up steps), so a shared machine's drift hits both alike; the slowdown factor
is the median over rounds of (time with) / (time without). The workloads:

- **mlp**: 784-256-128-10 with ReLU, batch 64, SGD with momentum;
- **cnn**: two 3x3 convolutions (16 and 32 channels) with BatchNorm, in-place ReLU and max
  pooling on 28x28 inputs, batch 32, Adam, gradient clipping.

The loops are clean: the sanitizer must also report no hazard on them (checked here).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torchcopy_lint  # noqa: E402


def mlp() -> Callable[[], float]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = torch.randn(64, 784), torch.randint(0, 10, (64,))

    def step() -> float:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.item()

    return step


def cnn() -> Callable[[], float]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(32 * 7 * 7, 10),
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(32, 1, 28, 28), torch.randint(0, 10, (32,))

    def step() -> float:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    return step


WORKLOADS = {"mlp": mlp, "cnn": cnn}


def timed(make: Callable[[], Callable[[], float]], steps: int, warmup: int, sanitized: bool) -> tuple[float, int]:
    """Seconds for ``steps`` steps (after ``warmup``), and the hazards reported."""
    step = make()
    for _ in range(warmup):
        step()
    if not sanitized:
        start = time.perf_counter()
        for _ in range(steps):
            step()
        return time.perf_counter() - start, 0
    with torchcopy_lint.sanitize(mode="collect") as report:
        for _ in range(warmup):
            step()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        seconds = time.perf_counter() - start
    return seconds, len(report)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: steadier on a shared machine)")
    parser.add_argument("--json", metavar="FILE", help="also write the numbers as JSON")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    results: dict[str, dict[str, list[float]]] = {name: {"plain": [], "sanitized": [], "factor": []} for name in WORKLOADS}
    hazards = 0
    for round_ in range(args.rounds):
        for name, make in WORKLOADS.items():
            plain, _ = timed(make, args.steps, args.warmup, sanitized=False)
            sanitized, found = timed(make, args.steps, args.warmup, sanitized=True)
            hazards += found
            results[name]["plain"].append(plain)
            results[name]["sanitized"].append(sanitized)
            results[name]["factor"].append(sanitized / plain)
            print(f"round {round_ + 1} {name}: {plain / args.steps * 1e3:.2f} ms/step plain, {sanitized / args.steps * 1e3:.2f} ms/step sanitized, x{sanitized / plain:.2f}", flush=True)
    print(f"\ntorch {torch.__version__}, {args.threads} thread(s), {args.steps} steps, median of {args.rounds} round(s); hazards reported: {hazards}")
    print("| workload | plain ms/step | sanitized ms/step | slowdown |")
    print("|---|---:|---:|---:|")
    for name, numbers in results.items():
        plain = statistics.median(numbers["plain"]) / args.steps * 1e3
        sanitized = statistics.median(numbers["sanitized"]) / args.steps * 1e3
        print(f"| {name} | {plain:.2f} | {sanitized:.2f} | {statistics.median(numbers['factor']):.2f}x |")
    if args.json:
        Path(args.json).write_text(json.dumps({"torch": torch.__version__, "threads": args.threads, "steps": args.steps, "results": results, "hazards": hazards}, indent=2))
    return 1 if hazards else 0


if __name__ == "__main__":
    sys.exit(main())
