"""Adversarial training on CIFAR-sized inputs: PGD (Madry et al.) and FGSM
with random start (Wong et al.), plus robust evaluation with restarts.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CIFAR_MEAN = torch.Tensor([0.4914, 0.4822, 0.4465]).view(1, 3, 1, 1)  # HAZARD: TCL006
CIFAR_STD = torch.tensor([0.2470, 0.2435, 0.2616]).view(1, 3, 1, 1)  # OK: TCL006


class NormalizedModel(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net((x - CIFAR_MEAN) / CIFAR_STD)


def pgd_attack(model, x, y, eps=8 / 255, alpha=2 / 255, steps=10):
    delta = torch.zeros_like(x, requires_grad=True)
    delta.uniform_(-eps, eps)  # HAZARD: TCL007
    for _ in range(steps):
        loss = F.cross_entropy(model(x + delta), y)
        loss.backward()
        delta.data = (delta + alpha * delta.grad.sign()).clamp(-eps, eps)  # HAZARD: TCL001
        delta.grad.zero_()  # OK: TCL007
    return delta.detach()


def pgd_attack_restarts(model, x, y, eps=8 / 255, alpha=2 / 255, steps=10, restarts=3):
    best_delta = torch.zeros_like(x)
    best_loss = torch.full((x.size(0),), -float("inf"))
    for _ in range(restarts):
        delta = torch.empty_like(x).uniform_(-eps, eps).requires_grad_()  # OK: TCL007
        for _ in range(steps):
            loss = F.cross_entropy(model(x + delta), y)
            grad, = torch.autograd.grad(loss, delta)
            with torch.no_grad():
                delta.add_(alpha * grad.sign()).clamp_(-eps, eps)  # OK: TCL007
        per_ex = F.cross_entropy(model(x + delta), y, reduction="none")
        improved = per_ex > best_loss
        best_delta[improved] = delta.detach()[improved]
        best_loss = torch.where(improved, per_ex.detach(), best_loss)
        best_init = delta.clone()  # HAZARD: TCL003
        final_delta = delta.detach().clone()  # OK: TCL003
    return best_delta, best_init, final_delta


def fgsm_example(model, x, y, eps=8 / 255):
    x = x.clone().requires_grad_(True)
    loss = F.cross_entropy(model(x), y)
    grad, = torch.autograd.grad(loss, x)
    x_adv = x.detach()
    x_adv += eps * grad.sign()  # HAZARD: TCL005
    x_ok = x.detach().clone()
    x_ok += eps * grad.sign()  # OK: TCL005
    clean_logits = model(x)
    return x_adv.clamp(0, 1), x_ok.clamp(0, 1), clean_logits


def quantize_eval(model, x_adv: torch.Tensor):
    arr = x_adv.cpu().numpy()
    np.copyto(arr, np.round(arr * 255.0) / 255.0)  # HAZARD: TCL008
    return model(torch.from_numpy(arr)), model(x_adv)


class AdvTrainer:
    def __init__(self, model, epochs, eps=8 / 255, lr=0.1):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
        self.eps_per_channel = torch.full((3,), eps)
        self.eps_schedule = np.linspace(0.0, eps, max(epochs // 2, 1)).tolist()
        self.last_good_state = None
        self.robust_losses = []

    def epoch_eps(self, x, epoch):
        eps_t = x.new_tensor(self.eps_per_channel)  # HAZARD: TCL002
        ramp = torch.tensor(self.eps_schedule[min(epoch, len(self.eps_schedule) - 1)])  # OK: TCL002
        return (eps_t * ramp / eps_t.max()).view(1, 3, 1, 1)

    def train_epoch(self, loader, epoch):
        self.model.train()
        for x, y in loader:
            eps = self.epoch_eps(x, epoch)
            delta = pgd_attack(self.model, x, y, eps=float(eps.max()))
            loss_adv = F.cross_entropy(self.model((x + delta).clamp(0, 1)), y)
            self.opt.zero_grad()
            loss_adv.backward()
            self.opt.step()
            self.robust_losses.append(loss_adv)  # HAZARD: TCL009

    def evaluate_robust(self, loader):
        self.model.eval()
        adv_logits_all = None
        labels = []
        for x, y in loader:
            delta = pgd_attack(self.model, x, y)
            logits_adv = self.model(x + delta)
            adv_logits_all = logits_adv if adv_logits_all is None else torch.cat([adv_logits_all, logits_adv])  # HAZARD: TCL009
            labels.append(y)
        return (adv_logits_all.argmax(1) == torch.cat(labels)).float().mean().item()

    def fit(self, loader, val_loader, epochs=10):
        best_acc = 0.0
        for epoch in range(epochs):
            self.train_epoch(loader, epoch)
            acc = self.evaluate_robust(val_loader)
            if acc + 0.2 < best_acc:
                self.model.load_state_dict(self.last_good_state)
                break
            if acc > best_acc:
                best_acc = acc
                self.last_good_state = self.model.state_dict()  # HAZARD: TCL004
        return best_acc
