"""Continual learning on permuted-MNIST-like tasks: experience replay + EWC + logit distillation."""
import copy
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in=784, hidden=256, n_out=10):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, n_out)

    def forward(self, x):
        return self.head(self.net(x))


def permute_pixels(x: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    flat = x.flatten(1)
    flat[:] = flat[:, perm]  # HAZARD: TCL008
    return flat


def permute_pixels_safe(x: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    return x.flatten(1)[:, perm]


def make_task_labels(raw_labels: np.ndarray, offset: int):
    return torch.LongTensor(raw_labels + offset)  # HAZARD: TCL006


class ReplayBuffer:
    def __init__(self, capacity=2000):
        self.capacity = capacity
        self.items = deque(maxlen=capacity)
        self.data = None

    def add(self, x, y):
        self.items.append((x, y))

    def reset(self):
        self.items.clear()
        self.data = {"seen": 0, "tasks": []}  # OK: TCL001

    def sample(self, n):
        batch = random.sample(list(self.items), min(n, len(self.items)))
        xs, ys = zip(*batch)
        return torch.stack(xs), torch.stack(ys)


class EWC:
    def __init__(self, model: nn.Module, lam=100.0):
        self.model, self.lam = model, lam
        self.means = {n: p.clone() for n, p in model.named_parameters()}  # HAZARD: TCL003
        self.fisher = {n: torch.zeros_like(p) for n, p in model.named_parameters()}

    def consolidate(self, loader, n_batches=10):
        fisher = {n: p.detach() for n, p in self.model.named_parameters()}
        for n in fisher:
            fisher[n].zero_()  # HAZARD: TCL005
        for i, (x, y) in enumerate(loader):
            if i >= n_batches:
                break
            self.model.zero_grad()
            F.nll_loss(F.log_softmax(self.model(x), 1), y).backward()
            for n, p in self.model.named_parameters():
                fisher[n] += p.grad.detach() ** 2 / n_batches  # HAZARD: TCL005
        self.fisher = fisher
        self.means = {n: p.detach().clone() for n, p in self.model.named_parameters()}  # OK: TCL003
        return fisher

    def penalty(self):
        return self.lam * sum(
            (self.fisher[n] * (p - self.means[n]) ** 2).sum() for n, p in self.model.named_parameters()
        )


def train_task(model, loader, ewc, buffer, old_model=None, lr=0.01, epochs=1, T=2.0, legacy_sgd=False):
    task_losses, replay_logits = [], []
    for epoch in range(epochs):
        for x, y in loader:
            out = model(x)
            loss = F.cross_entropy(out, y)
            if len(buffer.items) > 0:
                rx, ry = buffer.sample(32)
                loss = loss + F.cross_entropy(model(rx), ry)
            if ewc is not None:
                loss = loss + ewc.penalty()
            if old_model is not None:
                with torch.no_grad():
                    teacher = F.softmax(old_model(x) / T, 1)
                loss = loss + T * T * F.kl_div(F.log_softmax(out / T, 1), teacher, reduction="batchmean")
            model.zero_grad()
            loss.backward()
            if legacy_sgd:
                for p in model.parameters():
                    p -= lr * p.grad  # HAZARD: TCL007
            else:
                with torch.no_grad():
                    for p in model.parameters():
                        p -= lr * p.grad  # OK: TCL007
            for j in range(0, len(x), 8):
                buffer.add(x[j].detach().clone(), y[j])
                replay_logits.append(out[j])  # HAZARD: TCL009
            task_losses.append(loss.detach())  # OK: TCL009
    return task_losses, replay_logits


def run(tasks, model: MLP, lr=0.01):
    buffer, ewc, old_model = ReplayBuffer(), None, None
    task_checkpoints, accuracy = {}, []
    for t, (loader, perm) in enumerate(tasks):
        train_task(model, [(permute_pixels(x, perm), y) for x, y in loader], ewc, buffer, old_model, lr=lr)
        task_checkpoints[t] = model.state_dict()  # HAZARD: TCL004
        old_model = model  # HAZARD: TCL004
        teacher_model = copy.deepcopy(model)  # OK: TCL004
        ewc = EWC(model)
        ewc.consolidate([(permute_pixels_safe(x, perm), y) for x, y in loader])
        accs = []
        for s in range(t + 1):
            l_s, p_s = tasks[s]
            correct = sum((model(permute_pixels_safe(x, p_s)).argmax(1) == y).sum() for x, y in l_s)
            accs.append(correct / sum(len(y) for _, y in l_s))
        accuracy.append(torch.tensor(accs))  # HAZARD: TCL002
        for p in model.head.parameters():
            p.data[(t + 1) * 2:] = 0.0  # HAZARD: TCL001
    return accuracy, task_checkpoints, teacher_model
