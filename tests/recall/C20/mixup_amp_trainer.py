"""Image classifier trainer: Mixup/CutMix, AMP with gradient accumulation, early stopping."""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def cutmix(images, labels, num_classes, alpha=1.0, device="cpu"):
    lam = float(np.random.beta(alpha, alpha))
    perm = torch.randperm(images.size(0))
    H, W = images.shape[-2:]
    cut = int(H * np.sqrt(1 - lam))
    y0, x0 = np.random.randint(0, H - cut + 1), np.random.randint(0, W - cut + 1)
    imgs = images.to(device)
    imgs[:, :, y0:y0 + cut, x0:x0 + cut] = images[perm, :, y0:y0 + cut, x0:x0 + cut]  # HAZARD: TCL008
    soft = torch.tensor(F.one_hot(labels, num_classes), dtype=torch.float)  # HAZARD: TCL002
    lam_t = torch.tensor(lam)  # OK: TCL002
    return imgs, lam_t * soft + (1 - lam_t) * soft[perm]


def mixup(images, labels, num_classes, alpha=0.2):
    lam = float(np.random.beta(alpha, alpha))
    perm = torch.randperm(images.size(0))
    mixed = images.clone()
    mixed.mul_(lam).add_(images[perm], alpha=1 - lam)  # OK: TCL008
    soft = F.one_hot(labels, num_classes).float()
    return mixed, lam * soft + (1 - lam) * soft[perm]


class EarlyStopping:
    def __init__(self, patience=5):
        self.patience = patience
        self.best_val_loss = None
        self.best_state = None
        self.bad_epochs = 0

    def step(self, val_loss, model, optimizer):
        if self.best_val_loss is None or val_loss < self.best_val_loss:
            self.best_val_loss = val_loss.clone()  # HAZARD: TCL003
            self.best_state = {k: v for k, v in model.state_dict().items()}  # HAZARD: TCL004
            self.best_optim = copy.deepcopy(optimizer.state_dict())  # OK: TCL004
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience

    def restore(self, model):
        for name, param in model.named_parameters():
            param.data.copy_(self.best_state[name])  # HAZARD: TCL001


class Trainer:
    def __init__(self, model, num_classes, accum_steps=4, lr=1e-3, device="cpu"):
        self.model, self.num_classes, self.accum_steps, self.device = model, num_classes, accum_steps, device
        self.opt = torch.optim.AdamW(model.parameters(), lr=lr)
        self.scaler = torch.amp.GradScaler(device, enabled=(device == "cuda"))
        self.ema_loss = torch.Tensor(1)  # HAZARD: TCL006
        self.stopper = EarlyStopping()

    def head_grad_norm(self):
        g = self.model.head.weight.grad.detach()
        g /= self.scaler.get_scale()  # HAZARD: TCL005
        return g.norm()

    def reset_head(self):
        self.model.head.bias.zero_()  # HAZARD: TCL007

    def reset_head_safe(self):
        with torch.no_grad():
            self.model.head.bias.zero_()  # OK: TCL007

    def train_epoch(self, loader):
        self.model.train()
        epoch_losses = []
        correct = 0
        for i, (images, labels) in enumerate(loader):
            if np.random.rand() < 0.5:
                images, targets = cutmix(images, labels, self.num_classes, device=self.device)
            else:
                images, targets = mixup(images, labels, self.num_classes)
            with torch.autocast(self.device, enabled=(self.device == "cuda")):
                logits = self.model(images)
                loss = torch.sum(-targets * F.log_softmax(logits, -1), -1).mean() / self.accum_steps
            self.scaler.scale(loss).backward()
            if (i + 1) % self.accum_steps == 0:
                self.scaler.step(self.opt)
                self.scaler.update()
                self.opt.zero_grad(set_to_none=True)
            epoch_losses.append(loss * self.accum_steps)  # HAZARD: TCL009
            correct += (logits.argmax(-1) == labels).sum().item()  # OK: TCL009
            self.ema_loss.mul_(0.98).add_(0.02 * loss.item())
        return epoch_losses, correct

    def validate(self, loader):
        self.model.eval()
        total = 0.0
        for images, labels in loader:
            total = total + F.cross_entropy(self.model(images), labels, reduction="sum")  # HAZARD: TCL009
        return total / len(loader)

    def fit(self, train_loader, val_loader, epochs=50):
        for epoch in range(epochs):
            self.train_epoch(train_loader)
            val_loss = self.validate(val_loader)
            if self.stopper.step(val_loss, self.model, self.opt):
                break
        self.stopper.restore(self.model)


if __name__ == "__main__":
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    net.head = nn.Linear(8, 10)
    model = nn.Sequential(net, net.head)
    model.head = net.head
    data = [(torch.rand(4, 3, 16, 16), torch.randint(0, 10, (4,))) for _ in range(8)]
    Trainer(model, 10).fit(data, data[:2], epochs=2)
