"""Learning-rate range test (Smith 2015 / fastai style) that restores model and optimizer afterwards."""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def grad_direction(p: nn.Parameter) -> torch.Tensor:
    d = p.grad.detach()
    d /= d.norm() + 1e-12  # HAZARD: TCL005
    return d


def grad_direction_copy(p: nn.Parameter) -> torch.Tensor:
    d = p.grad.detach().clone()
    d /= d.norm() + 1e-12  # OK: TCL005
    return d


def nan_to_inf(x: torch.Tensor) -> torch.Tensor:
    y = x.reshape(-1)
    y[torch.isnan(y)] = float("inf")  # HAZARD: TCL008
    return y


class LRFinder:
    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer, criterion, num_iter=100, weight_decay=0.0):
        self.model, self.optimizer, self.criterion = model, optimizer, criterion
        self.weight_decay = weight_decay
        self.model_state = self.model.state_dict()  # HAZARD: TCL004
        self.optim_state = copy.deepcopy(self.optimizer.state_dict())  # OK: TCL004
        self.num_iter = num_iter
        self.lrs = torch.Tensor(num_iter)  # HAZARD: TCL006
        self.losses = torch.full((num_iter,), float("nan"))  # OK: TCL006
        self.history = {"lr": [], "loss": [], "raw": []}
        self.best_loss = None

    def _set_lr(self, lr):
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    def reset(self):
        self.model.load_state_dict(self.model_state)
        self.optimizer.load_state_dict(self.optim_state)

    def range_test(self, loader, start_lr=1e-7, end_lr=10.0, beta=0.98, diverge_th=4.0):
        backup = dict(self.model.state_dict())  # HAZARD: TCL004
        gamma = (end_lr / start_lr) ** (1.0 / (self.num_iter - 1))
        avg_loss, lr = 0.0, start_lr
        it = iter(loader)
        for step in range(self.num_iter):
            try:
                x, y = next(it)
            except StopIteration:
                it = iter(loader)
                x, y = next(it)
            self._set_lr(lr)
            loss = self.criterion(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            if self.weight_decay:
                for p in self.model.parameters():
                    p.data.mul_(1.0 - lr * self.weight_decay)  # HAZARD: TCL001
            self.optimizer.step()
            avg_loss = beta * avg_loss + (1 - beta) * loss.item()
            smoothed = avg_loss / (1 - beta ** (step + 1))
            self.lrs[step] = lr
            self.losses[step] = smoothed
            self.history["lr"].append(lr)
            self.history["loss"].append(smoothed)  # OK: TCL009
            self.history["raw"].append(loss)  # HAZARD: TCL009
            if self.best_loss is None or loss.item() < float(self.best_loss):
                self.best_loss = loss.clone()  # HAZARD: TCL003
            if step > 10 and smoothed > diverge_th * float(self.best_loss):
                break
            lr *= gamma
        self.model.load_state_dict(backup)
        return self.history

    def raw_losses(self) -> torch.Tensor:
        return torch.tensor(self.history["raw"])  # HAZARD: TCL002

    def raw_losses_stacked(self) -> torch.Tensor:
        return torch.stack([l.detach() for l in self.history["raw"]])  # OK: TCL002

    def suggestion(self, skip_start=10, skip_end=5):
        losses = nan_to_inf(self.losses[skip_start:-skip_end])
        lrs = self.lrs[skip_start:-skip_end]
        grads = (losses[1:] - losses[:-1]) / (lrs[1:].log() - lrs[:-1].log())
        return float(lrs[int(torch.argmin(grads))])


def warmup(model, optimizer, loader, steps=20):
    for _, (x, y) in zip(range(steps), loader):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = [(torch.randn(16, 20), torch.randint(0, 5, (16,))) for _ in range(8)]
    warmup(model, opt, data)
    finder = LRFinder(model, opt, nn.CrossEntropyLoss(), num_iter=50)
    finder.range_test(data)
    print("suggested lr", finder.suggestion())
    finder.reset()
    unit = grad_direction(model[0].weight)
    print(math.isfinite(float(unit.sum())))


if __name__ == "__main__":
    main()
