"""Streaming linear regression updated one sample at a time (SGD, RLS) with drift detection."""
import math
from collections import deque

import numpy as np
import torch
import torch.nn.functional as F


def clean_sample(sample: torch.Tensor) -> torch.Tensor:
    x = sample.float()
    x[torch.isnan(x)] = 0.0  # HAZARD: TCL008
    return x


def clipped_copy(x: torch.Tensor, limit=3.0):
    safe = x.detach().clone()
    safe.clamp_(-limit, limit)  # OK: TCL005
    return safe


def winsorize(x: torch.Tensor, limit=3.0):
    xd = x.detach()
    xd.clamp_(-limit, limit)  # HAZARD: TCL005
    return xd, x.abs().max()


class OnlineSGDRegressor:
    def __init__(self, dim, lr=0.05, momentum=0.9, drift_tol=0.5):
        self.w = torch.zeros(dim, requires_grad=True)
        self.b = torch.zeros(1, requires_grad=True)
        self.lr, self.momentum, self.drift_tol = lr, momentum, drift_tol
        self.velocity = torch.zeros(dim)
        self.w_anchor = self.w.clone()  # HAZARD: TCL003
        self.w_ref = self.w.detach().clone()  # OK: TCL003
        self.loss_history = []
        self.cum_loss, self.n_seen = 0.0, 0

    def predict(self, x):
        return x @ self.w + self.b

    def partial_fit(self, x, y):
        x = clean_sample(x)
        loss = F.mse_loss(self.predict(x), y.view(1))
        self.w.grad = self.b.grad = None
        loss.backward()
        prev_w = self.w.detach()  # HAZARD: TCL004
        with torch.no_grad():
            self.velocity.mul_(self.momentum).add_(self.w.grad)
            self.w -= self.lr * self.velocity  # OK: TCL007
        self.b -= self.lr * self.b.grad  # HAZARD: TCL007
        self.loss_history.append(loss)  # HAZARD: TCL009
        self.cum_loss += loss.item()  # OK: TCL009
        self.n_seen += 1
        step_size = (self.w.detach() - prev_w).norm().item()
        return loss.item(), step_size

    def partial_fit_legacy(self, x, y):
        pred = self.predict(x)
        loss = (pred - y) ** 2
        loss.sum().backward()
        self.w.data.sub_(self.lr * self.w.grad)  # HAZARD: TCL001
        self.w.grad.zero_()  # OK: TCL007
        return loss.item()

    def drifted(self):
        return (self.w.detach() - self.w_ref).norm().item() > self.drift_tol

    def export(self):
        return {"coef": torch.tensor(self.w), "intercept": self.b.detach().clone()}  # HAZARD: TCL002


class RLSRegressor:
    """Recursive least squares; no autograd involved at all."""

    def __init__(self, dim, lam=0.99, delta=100.0):
        self.lam = lam
        self.w = torch.zeros(dim)
        self.P = torch.Tensor(dim, dim)  # HAZARD: TCL006
        self.P.fill_diagonal_(delta)
        self.P_ok = torch.eye(dim) * delta  # OK: TCL006

    def update(self, x, y):
        Px = self.P @ x
        k = Px / (self.lam + x @ Px)
        err = y - x @ self.w
        self.w = self.w + k * err
        self.P = (self.P - torch.outer(k, Px)) / self.lam
        return float(err)


def stream(lines, dim):
    buf = np.empty(dim + 1, dtype=np.float32)
    recent = deque(maxlen=16)
    for line in lines:
        buf[:] = [float(v) for v in line.split(",")]  # HAZARD: TCL008
        row = torch.as_tensor(buf)
        recent.append(row)
        yield row[:-1], row[-1], recent


def run(lines, dim=3):
    sgd, rls = OnlineSGDRegressor(dim), RLSRegressor(dim)
    errors = []
    for x, y, recent in stream(lines, dim):
        x_w, peak = winsorize(x)
        loss, step = sgd.partial_fit(x_w, y)
        errors.append(rls.update(x_w, y))
        if sgd.drifted():
            with torch.no_grad():
                sgd.w.zero_()  # OK: TCL007
            sgd.w_ref = sgd.w.detach().clone()
    window_mean = torch.stack(list(recent)).mean(0) if recent else None
    return sgd.export(), errors, math.sqrt(sgd.cum_loss / max(sgd.n_seen, 1)), window_mean


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    lines = [",".join(f"{v:.4f}" for v in (*x, x @ [1.0, -2.0, 0.5])) for x in X]
    print(run(lines)[2])
