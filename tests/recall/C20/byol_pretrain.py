"""BYOL self-supervised pre-training with a momentum target network and a linear probe."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def mlp(in_dim, hidden, out_dim):
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Linear(hidden, out_dim))


def two_views(x: torch.Tensor, brightness=0.4):
    B = x.shape[0]
    v1 = x.reshape(B, *x.shape[1:])
    v1.mul_(1.0 + brightness * (torch.rand(B, 1, 1, 1) - 0.5))  # HAZARD: TCL008
    v2 = x.flip(-1).contiguous()
    v2.mul_(1.0 + brightness * (torch.rand(B, 1, 1, 1) - 0.5))  # OK: TCL008
    return v1, v2


class BYOL(nn.Module):
    def __init__(self, encoder, feat_dim, proj_dim=128, hidden=512, momentum=0.99):
        super().__init__()
        self.online_encoder = encoder
        self.online_projector = mlp(feat_dim, hidden, proj_dim)
        self.predictor = mlp(proj_dim, hidden, proj_dim)
        self.target_encoder = copy.deepcopy(self.online_encoder)  # OK: TCL004
        self.target_projector = self.online_projector  # HAZARD: TCL004
        for p in self.target_encoder.parameters():
            p.requires_grad_(False)
        self.momentum = momentum
        self.init_online = [p.clone() for p in self.online_encoder.parameters()]  # HAZARD: TCL003
        self.init_norms = [p.detach().clone().norm() for p in self.online_encoder.parameters()]  # OK: TCL003
        self.collapse_log = []

    @torch.no_grad()
    def update_target(self):
        for tp, op in zip(self.target_encoder.parameters(), self.online_encoder.parameters()):
            tp.mul_(self.momentum).add_(op, alpha=1 - self.momentum)
        for tp, op in zip(self.target_projector.parameters(), self.online_projector.parameters()):
            tp.data.mul_(self.momentum).add_(op.data, alpha=1 - self.momentum)  # HAZARD: TCL001

    def reinit_predictor(self):
        for p in self.predictor.parameters():
            p.normal_(0.0, 0.02)  # HAZARD: TCL007

    def reinit_predictor_safe(self):
        with torch.no_grad():
            for p in self.predictor.parameters():
                p.normal_(0.0, 0.02)  # OK: TCL007

    def loss_fn(self, x1, x2):
        online_z = self.online_projector(self.online_encoder(x1))
        centered = online_z.detach()
        centered -= centered.mean(0)  # HAZARD: TCL005
        self.collapse_log.append(centered.std(0).mean().item())
        pred = F.normalize(self.predictor(online_z), dim=-1)
        with torch.no_grad():
            target = F.normalize(self.target_projector(self.target_encoder(x2)), dim=-1)
        return 2 - 2 * (pred * target).sum(-1).mean()


def pretrain(model, loader, epochs, lr=3e-4):
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    loss_hist = []
    loss_meter = 0.0
    for epoch in range(epochs):
        for x, _ in loader:
            v1, v2 = two_views(x)
            loss = model.loss_fn(v1, v2) + model.loss_fn(v2, v1)
            opt.zero_grad()
            loss.backward()
            opt.step()
            model.update_target()
            loss_hist.append(loss)  # HAZARD: TCL009
            loss_meter += loss.item()  # OK: TCL009
        if epoch % 10 == 9:
            model.reinit_predictor()
    return loss_hist


def linear_probe(model, loader, n_classes, epochs=10):
    feats, labels = [], []
    model.eval()
    for x, y in loader:
        feats.append(model.online_encoder(x))  # HAZARD: TCL009
        labels.append(y)
    bank = torch.Tensor(torch.cat(feats))  # HAZARD: TCL002
    bank -= bank.mean(0)
    y_all = torch.cat(labels)
    clf = nn.Linear(bank.shape[1], n_classes)
    opt = torch.optim.SGD(clf.parameters(), lr=0.1)
    for _ in range(epochs):
        loss = F.cross_entropy(clf(bank.detach()), y_all)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return clf


if __name__ == "__main__":
    enc = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    model = BYOL(enc, 16)
    data = [(torch.rand(8, 3, 32, 32), torch.randint(0, 10, (8,))) for _ in range(3)]
    pretrain(model, data, 1)
    linear_probe(model, data, 10)
