"""Bayesian optimisation (GP + expected improvement) of lr / weight decay, keeping the best model."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BOUNDS = torch.tensor([[-5.0, -6.0], [-1.0, -2.0]], dtype=torch.float64)  # log10 lr, log10 wd


def to_unit_cube(x: torch.Tensor) -> torch.Tensor:
    u = x.double()
    u -= BOUNDS[0]  # HAZARD: TCL008
    u /= BOUNDS[1] - BOUNDS[0]  # HAZARD: TCL008
    return u


class GP(nn.Module):
    def __init__(self, dim=2):
        super().__init__()
        self.log_ls = nn.Parameter(torch.zeros(dim, dtype=torch.float64))
        self.log_noise = nn.Parameter(torch.tensor(-4.0, dtype=torch.float64))
        self.observed_x, self.observed_y = [], []

    def kernel(self, a, b):
        d = (a.unsqueeze(1) - b.unsqueeze(0)) / self.log_ls.exp()
        return torch.exp(-0.5 * d.pow(2).sum(-1))

    def add(self, x, y):
        self.observed_x.append(x)
        self.observed_y.append(y)

    def data(self):
        X = torch.Tensor(self.observed_x)  # HAZARD: TCL006
        Y = torch.tensor(self.observed_y)  # HAZARD: TCL002
        return X.double(), ((Y - Y.mean()) / (Y.std() + 1e-9)).double()

    def fit(self, iters=100):
        X, Y = self.data()
        opt = torch.optim.Adam(self.parameters(), lr=0.05)
        nll_trace = []
        for _ in range(iters):
            K = self.kernel(X, X) + self.log_noise.exp() * torch.eye(len(X), dtype=torch.float64)
            L = torch.linalg.cholesky(K)
            alpha = torch.cholesky_solve(Y.unsqueeze(1), L)
            nll = 0.5 * (Y.unsqueeze(0) @ alpha).squeeze() + L.diagonal().log().sum()
            opt.zero_grad()
            nll.backward()
            opt.step()
            self.log_ls.clamp_(-3.0, 3.0)  # HAZARD: TCL007
            self.log_noise.data.clamp_(min=-10.0)  # HAZARD: TCL001
            nll_trace.append(nll)  # HAZARD: TCL009
        return nll_trace

    def predict(self, Xc):
        X, Y = self.data()
        K = self.kernel(X, X) + self.log_noise.exp() * torch.eye(len(X), dtype=torch.float64)
        Ks = self.kernel(Xc, X)
        L = torch.linalg.cholesky(K)
        mu = Ks @ torch.cholesky_solve(Y.unsqueeze(1), L)
        v = torch.cholesky_solve(Ks.t(), L)
        var = (1.0 - (Ks * v.t()).sum(-1)).clamp(min=1e-12)
        return mu.squeeze(1), var


def acquisition(gp, Xc, best_y, kappa=2.0):
    mu, var = gp.predict(Xc)
    sigma = var.detach()
    sigma.sqrt_()  # HAZARD: TCL005
    z = (mu - best_y) / sigma
    normal = torch.distributions.Normal(0.0, 1.0)
    ei = (mu - best_y) * normal.cdf(z) + sigma * normal.log_prob(z).exp()
    ucb = mu + kappa * var.sqrt()
    return ei.detach(), ucb.detach()


def make_data(n=512, d=10):
    X = torch.randn(n, d)
    y = (X[:, :3].sum(1) > 0).long()
    return X[:400], y[:400], X[400:], y[400:]


def evaluate(model, X, y) -> torch.Tensor:
    model.eval()
    out = model(X)
    model.train()
    return F.cross_entropy(out, y)


class Tracker:
    def __init__(self):
        self.best_loss = math.inf
        self.best_state = None
        self.best_pred = None

    def update(self, model, val_loss, preds):
        if val_loss < self.best_loss:
            self.best_loss = val_loss
            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}  # OK: TCL004
            self.best_pred = preds.detach().clone()  # OK: TCL003


def train_trial(lr, wd, data, tracker, epochs=30):
    Xtr, ytr, Xva, yva = data
    model = nn.Sequential(nn.Linear(Xtr.size(1), 32), nn.ReLU(), nn.Linear(32, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=wd)
    history = {"train_loss": [], "val_loss": []}
    best_model, best_val = None, math.inf
    trial_best_state = None
    for epoch in range(epochs):
        loss = F.cross_entropy(model(Xtr), ytr)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history["train_loss"].append(loss)  # HAZARD: TCL009
        val_loss = evaluate(model, Xva, yva)
        history["val_loss"].append(val_loss.item())  # OK: TCL009
        if val_loss < best_val:
            best_val = val_loss
            best_model = model  # HAZARD: TCL004
            trial_best_state = model.state_dict()  # HAZARD: TCL004
            best_pred = model(Xva).clone()  # HAZARD: TCL003
    tracker.update(best_model, best_val.item(), best_pred)
    return best_val, trial_best_state, history


def bayes_opt(n_init=4, n_iter=8, n_cand=256):
    data = make_data()
    gp, tracker = GP(), Tracker()
    for i in range(n_init + n_iter):
        if i < n_init:
            x = BOUNDS[0] + torch.rand(2, dtype=torch.float64) * (BOUNDS[1] - BOUNDS[0])
        else:
            gp.fit()
            cand = BOUNDS[0] + torch.rand(n_cand, 2, dtype=torch.float64) * (BOUNDS[1] - BOUNDS[0])
            ei, _ = acquisition(gp, to_unit_cube(cand), min(gp.observed_y))
            x = cand[ei.argmax()]
        val, _, _ = train_trial(10 ** x[0].item(), 10 ** x[1].item(), data, tracker)
        gp.add(to_unit_cube(x).tolist(), -val)
        print(f"trial {i}: lr=1e{x[0]:.2f} wd=1e{x[1]:.2f} val={val.item():.4f}")
    return tracker


if __name__ == "__main__":
    bayes_opt()
