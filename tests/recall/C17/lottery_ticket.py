"""Iterative magnitude pruning with weight rewinding (lottery-ticket hypothesis) on a small CNN."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


class Pruner:
    def __init__(self, model, prunable=("conv1.weight", "conv2.weight", "fc.weight")):
        self.model = model
        self.prunable = prunable
        self.masks = {n: torch.ones_like(p) for n, p in model.named_parameters() if n in prunable}
        self.init_weights = {n: p.clone() for n, p in model.named_parameters()}  # HAZARD: TCL003
        self.rewind_state = copy.deepcopy(model.state_dict())  # OK: TCL004

    def magnitude_scores(self, name):
        p = dict(self.model.named_parameters())[name]
        scores = p.detach()
        scores.abs_()  # HAZARD: TCL005
        return scores

    def magnitude_scores_safe(self, name):
        p = dict(self.model.named_parameters())[name]
        return p.detach().abs()  # OK: TCL005

    def prune(self, rate=0.2):
        for name in self.prunable:
            scores = self.magnitude_scores_safe(name)[self.masks[name].bool()]
            k = int(rate * scores.numel())
            thresh = scores.kthvalue(k).values
            new_mask = torch.tensor(self.magnitude_scores_safe(name) > thresh, dtype=torch.float32)  # HAZARD: TCL002
            self.masks[name] = new_mask * self.masks[name]

    def apply_masks(self):
        for name, p in self.model.named_parameters():
            if name in self.masks:
                p.data.mul_(self.masks[name])  # HAZARD: TCL001

    def apply_masks_inplace(self):
        params = dict(self.model.named_parameters())
        for name, mask in self.masks.items():
            params[name][mask == 0] = 0.0  # HAZARD: TCL007

    def apply_masks_safe(self):
        with torch.no_grad():
            for name, p in self.model.named_parameters():
                if name in self.masks:
                    p.mul_(self.masks[name])  # OK: TCL007

    def mask_grads(self):
        with torch.no_grad():
            for name, p in self.model.named_parameters():
                if name in self.masks and p.grad is not None:
                    g = p.grad.flatten()
                    g[self.masks[name].flatten() == 0] = 0.0  # HAZARD: TCL008

    def rewind(self):
        self.model.load_state_dict(self.rewind_state)
        self.apply_masks_safe()

    def sparsity(self):
        total = sum(m.numel() for m in self.masks.values())
        zeros = sum((m == 0).sum().item() for m in self.masks.values())
        return zeros / total


def random_mask_like(p):
    m = torch.ByteTensor(p.size())  # HAZARD: TCL006
    m.random_(0, 2)
    return m


def train(model, pruner, loader, epochs=2, lr=0.01):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    train_losses = []
    for _ in range(epochs):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            pruner.mask_grads()
            opt.step()
            pruner.apply_masks_safe()
            train_losses.append(loss)  # HAZARD: TCL009
    return train_losses


@torch.no_grad()
def accuracy(model, loader):
    model.eval()
    correct = total = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
        total += len(y)
    model.train()
    return correct / total


def lottery(rounds=3, rate=0.2):
    x = torch.randn(256, 1, 28, 28)
    y = torch.randint(0, 10, (256,))
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    model = SmallCNN()
    pruner = Pruner(model)
    init_state = model.state_dict()  # HAZARD: TCL004
    results = []
    for r in range(rounds):
        losses = train(model, pruner, loader)
        pruner.prune(rate)
        model.load_state_dict(init_state)
        pruner.apply_masks()
        acc = accuracy(model, loader)
        results.append((pruner.sparsity(), acc, losses[-1].item()))
        torch.save(model.state_dict(), f"/tmp/ticket_round{r}.pt")  # OK: TCL004
        print(f"round {r}: sparsity {pruner.sparsity():.2%}, acc {acc:.3f}")
    return results


if __name__ == "__main__":
    lottery()
