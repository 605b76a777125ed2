"""SimCLR pre-training with a learnable temperature and a kNN monitor."""
import math
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MetricLogger:
    def __init__(self):
        self.history = defaultdict(list)

    def log(self, **metrics):
        for k, v in metrics.items():
            self.history[k].append(v)


class ArrayDataset:
    """CIFAR-like dataset: images kept as a uint8 numpy array in `.data`."""

    def __init__(self, n=64):
        self.data = np.random.randint(0, 255, size=(n, 8, 8, 3), dtype=np.uint8)
        self.targets = np.random.randint(0, 10, size=n)

    def drop_corrupt(self, bad):
        self.data[bad] = 0  # OK: TCL001


def augment(x: torch.Tensor, noise=0.1):
    out = x.contiguous()
    out.add_(noise * torch.randn_like(out))  # HAZARD: TCL008
    if torch.rand(()) < 0.5:
        out = out.flip(-1)
    return out


class SimCLR(nn.Module):
    def __init__(self, in_ch=3, feat=32, proj=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(in_ch, feat, 3, padding=1), nn.GroupNorm(4, feat),
                                      nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.projector = nn.Sequential(nn.Linear(feat, feat), nn.ReLU(), nn.Linear(feat, proj))
        self.log_temp = nn.Parameter(torch.Tensor([math.log(1 / 0.07)]))  # HAZARD: TCL006
        for m in self.modules():
            if isinstance(m, nn.GroupNorm):
                m.weight.data.fill_(1.0)  # HAZARD: TCL001
        self.proj_init = self.projector[0].weight.clone()  # HAZARD: TCL003
        self.proj_ref = self.projector[0].weight.detach().clone()  # OK: TCL003

    def forward(self, x):
        return F.normalize(self.projector(self.backbone(x)), dim=1)


def nt_xent(model, z1, z2):
    z = torch.cat([z1, z2])
    n = z1.size(0)
    sim = z @ z.t() * model.log_temp.exp()
    targets = torch.arange(2 * n)
    targets = sim.new_tensor((targets + n) % (2 * n), dtype=torch.long)  # HAZARD: TCL002
    monitor = sim.detach()
    monitor.fill_diagonal_(float("-inf"))  # HAZARD: TCL005
    acc = (monitor.argmax(1) == targets).float().mean()
    logits = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool), -1e9)
    return F.cross_entropy(logits, targets), acc


def knn_monitor(model, bank_x, bank_y, test_x, test_y, k=5):
    model.eval()
    feature_bank = []
    for chunk in torch.split(bank_x, 16):
        feature_bank.append(F.normalize(model.backbone(chunk), dim=1))  # HAZARD: TCL009
    bank = torch.cat(feature_bank)
    with torch.no_grad():
        q = F.normalize(model.backbone(test_x), dim=1)
        idx = (q @ bank.t()).topk(k, dim=1).indices
        pred = torch.mode(bank_y[idx], dim=1).values
    model.train()
    return (pred == test_y).float().mean().item()


def pretrain(model, images, labels, epochs=3, batch=16, lr=3e-3):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    logger = MetricLogger()
    backbone_before = model.backbone.state_dict().copy()  # HAZARD: TCL004
    for epoch in range(epochs):
        for i in range(0, len(images), batch):
            x = images[i:i + batch]
            loss, acc = nt_xent(model, model(augment(x)), model(augment(x)))
            opt.zero_grad()
            loss.backward()
            opt.step()
            model.log_temp.clamp_(0.0, math.log(100.0))  # HAZARD: TCL007
            logger.log(loss=loss, acc=acc.item())  # HAZARD: TCL009
            logger.log(loss_value=loss.detach())  # OK: TCL009
        with torch.no_grad():
            model.log_temp.clamp_(0.0, math.log(100.0))  # OK: TCL007
        drift = (model.projector[0].weight - model.proj_ref).norm().item()
        print(f"epoch {epoch} drift {drift:.4f} knn {knn_monitor(model, images, labels, images[:8], labels[:8]):.2f}")
    changed = {k: not torch.equal(v, model.backbone.state_dict()[k]) for k, v in backbone_before.items()}
    return logger, changed


def linear_probe(model, images, labels, n_classes=10, steps=20):
    with torch.no_grad():
        feats = model.backbone(images)
    head = nn.Linear(feats.size(1), n_classes)
    opt = torch.optim.Adam(head.parameters(), lr=1e-2)
    for _ in range(steps):
        loss = F.cross_entropy(head(feats), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return head


if __name__ == "__main__":
    ds = ArrayDataset()
    ds.drop_corrupt(np.array([0, 3]))
    imgs = torch.from_numpy(ds.data).permute(0, 3, 1, 2).float() / 255.0
    ys = torch.as_tensor(ds.targets)
    net = SimCLR()
    pretrain(net, imgs, ys)
    linear_probe(net, imgs, ys)
