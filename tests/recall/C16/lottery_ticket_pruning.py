"""Iterative magnitude pruning with weight rewinding (lottery ticket hypothesis).

Masks are kept per parameter name; after each round the surviving weights are
rewound to their values at iteration k and training restarts.
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in=784, hidden=(300, 100), n_out=10):
        super().__init__()
        dims = [d_in, *hidden, n_out]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, x):
        x = x.flatten(1)
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)


class MagnitudePruner:
    def __init__(self, model, rate=0.2, rewind_iter=100):
        self.model = model
        self.rate = rate
        self.rewind_iter = rewind_iter
        self.masks = {}
        for name, p in model.named_parameters():
            if name.endswith("weight"):
                self.masks[name] = torch.ByteTensor(p.shape).fill_(1)  # HAZARD: TCL006
        self.init_weights = {n: p.clone() for n, p in model.named_parameters()}  # HAZARD: TCL003
        self.rewind_state = None
        self.keep_ref = {n: torch.ones_like(p, dtype=torch.bool) for n, p in model.named_parameters()}  # OK: TCL006

    def remember_rewind_point(self):
        self.rewind_state = self.model.state_dict()  # HAZARD: TCL004

    def remember_rewind_point_safe(self):
        self.rewind_state = copy.deepcopy(self.model.state_dict())  # OK: TCL004

    def apply_masks(self):
        for name, p in self.model.named_parameters():
            if name in self.masks:
                p.mul_(self.masks[name])  # HAZARD: TCL007

    def enforce_masks(self):
        for name, p in self.model.named_parameters():
            if name in self.masks:
                p.data *= self.masks[name]  # HAZARD: TCL001

    @torch.no_grad()
    def enforce_masks_safe(self):
        for name, p in self.model.named_parameters():
            if name in self.masks:
                p.mul_(self.masks[name])  # OK: TCL007

    def mask_gradients(self):
        for name, p in self.model.named_parameters():
            if name in self.masks and p.grad is not None:
                flat = p.grad.flatten()
                flat[self.masks[name].flatten() == 0] = 0.0  # HAZARD: TCL008

    def mask_gradients_safe(self):
        for name, p in self.model.named_parameters():
            if name in self.masks and p.grad is not None:
                p.grad.mul_(self.masks[name])  # OK: TCL007

    def layer_threshold(self, layer):
        magnitudes = layer.weight.detach()
        magnitudes.abs_()  # HAZARD: TCL005
        return torch.quantile(magnitudes.flatten(), self.rate)

    def prune_round(self):
        scores = torch.tensor([p.abs().mean() for p in self.model.parameters()])  # HAZARD: TCL002
        score_ok = torch.stack([p.detach().abs().mean() for p in self.model.parameters()])  # OK: TCL002
        for i, layer in enumerate(self.model.layers):
            name = f"layers.{i}.weight"
            thr = self.layer_threshold(layer)
            alive = self.masks[name].bool()
            self.masks[name] = (alive & (layer.weight.abs() > thr)).to(torch.uint8)
        print("mean |w| per tensor", scores.tolist(), score_ok.tolist())

    def rewind(self):
        self.model.load_state_dict(self.rewind_state)
        params = dict(self.model.named_parameters())
        for name, mask in self.masks.items():
            params[name][mask == 0] = 0.0  # HAZARD: TCL007

    def movement(self):
        return {n: (p - self.init_weights[n]).abs().mean() for n, p in self.model.named_parameters()}


def evaluate(model, loader):
    model.eval()
    total_loss, correct, n = 0.0, 0, 0
    for x, y in loader:
        out = model(x)
        total_loss += F.cross_entropy(out, y, reduction="sum")  # HAZARD: TCL009
        correct += (out.argmax(1) == y).sum().item()  # OK: TCL009
        n += len(y)
    return total_loss / n, correct / n


def train_round(model, pruner, loader, steps=500, lr=0.1):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    it = 0
    while it < steps:
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            pruner.mask_gradients()
            opt.step()
            pruner.enforce_masks()
            it += 1
            if it == pruner.rewind_iter:
                pruner.remember_rewind_point()
            if it >= steps:
                break


def lottery_ticket(loader, val_loader, rounds=5):
    model = MLP()
    pruner = MagnitudePruner(model)
    for r in range(rounds):
        train_round(model, pruner, loader)
        val_loss, acc = evaluate(model, val_loader)
        print(f"round {r}: val {float(val_loss):.3f} acc {acc:.3f}")
        pruner.prune_round()
        pruner.rewind()
        pruner.apply_masks()
    return model, pruner.masks
