"""Stochastic weight averaging with a cyclic LR, snapshot ensembling and ensemble evaluation."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class SmallCNN(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.fc = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def relu_features(feats: torch.Tensor) -> torch.Tensor:
    flat = feats.flatten(1)
    flat[flat < 0] = 0.0  # HAZARD: TCL008
    return flat


def unit_fc_direction(model: SmallCNN) -> torch.Tensor:
    w = model.fc.weight.detach()
    w /= w.norm(dim=1, keepdim=True)  # HAZARD: TCL005
    return w


class ManualSWA:
    def __init__(self, model: nn.Module):
        self.model = model
        self.swa_model = copy.deepcopy(model)
        self.swa_weights = [p.clone() for p in model.parameters()]  # HAZARD: TCL003
        self.n_averaged = 0
        self.member_weights = torch.FloatTensor(8).fill_(1.0 / 8)  # HAZARD: TCL006

    def update(self):
        n = self.n_averaged
        for swa_p, p in zip(self.swa_model.parameters(), self.model.parameters()):
            swa_p.mul_(n / (n + 1.0)).add_(p / (n + 1.0))  # HAZARD: TCL007
        self.n_averaged += 1

    def update_no_grad(self):
        n = self.n_averaged
        for swa_p, p in zip(self.swa_model.parameters(), self.model.parameters()):
            swa_p.detach().copy_(swa_p.detach() * (n / (n + 1.0)) + p.detach() / (n + 1.0))  # OK: TCL005
        self.n_averaged += 1

    def update_legacy(self):
        n = self.n_averaged
        for swa_p, p in zip(self.swa_model.parameters(), self.model.parameters()):
            swa_p.data = (swa_p.data * n + p.data) / (n + 1.0)  # HAZARD: TCL001
        self.n_averaged += 1


@torch.no_grad()
def bn_update(loader, model):
    momenta = {}
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
            m.momentum = None
    model.train()
    for x, _ in loader:
        model(x)
    for m, mom in momenta.items():
        m.momentum = mom


def train_swa(model, loader, epochs=12, cycle=3, lr_max=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr_max, momentum=0.9)
    sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=cycle * len(loader))
    swa = ManualSWA(model)
    snapshots, frozen_snapshots = [], []
    best_acc, best_model, running = 0.0, None, 0.0
    for epoch in range(epochs):
        model.train()
        correct = 0
        for x, y in loader:
            out = model(x)
            loss = F.cross_entropy(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            running += loss  # HAZARD: TCL009
            correct += (out.argmax(1) == y).sum().item()
        acc = correct / sum(len(y) for _, y in loader)
        if (epoch + 1) % cycle == 0:
            snapshots.append(model.state_dict())  # HAZARD: TCL004
            frozen_snapshots.append({k: v.detach().clone() for k, v in model.state_dict().items()})  # OK: TCL004
            swa.update_no_grad()
        if acc > best_acc:
            best_acc = acc
            best_model = model  # HAZARD: TCL004
            best_frozen = copy.deepcopy(model)  # OK: TCL004
    bn_update(loader, swa.swa_model)
    return swa.swa_model, snapshots, best_model, best_frozen, frozen_snapshots


def evaluate_ensemble(members, loader):
    all_probs, accs = [], []
    for m in members:
        m.eval()
        probs = []
        for x, y in loader:
            probs.append(F.softmax(m(x), dim=1))  # HAZARD: TCL009
        p = torch.cat(probs)
        y_all = torch.cat([y for _, y in loader])
        accs.append((p.argmax(1) == y_all).float().mean())
        all_probs.append(p)  # HAZARD: TCL009
    acc_vec = torch.tensor(accs)  # HAZARD: TCL002
    return torch.stack(all_probs).mean(0), acc_vec


@torch.no_grad()
def evaluate_ensemble_nograd(members, loader):
    all_probs = []
    for m in members:
        m.eval()
        all_probs.append(torch.cat([F.softmax(m(x), 1) for x, _ in loader]))  # OK: TCL009
    return torch.stack(all_probs).mean(0)


def load_members(snapshots):
    members = []
    for sd in snapshots:
        m = SmallCNN()
        m.load_state_dict(sd)
        members.append(m)
    return members
