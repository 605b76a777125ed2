"""Few-shot classification with second-order MAML and a Reptile baseline.

Episodes are sampled from an in-memory image array; the inner loop runs on a
dict of fast weights with torch.func.functional_call.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call


class ConvNet(nn.Module):
    def __init__(self, n_way, width=32):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.head = nn.Linear(width, n_way)

    def forward(self, x):
        return self.head(self.features(x))


class EpisodeSampler:
    def __init__(self, images: np.ndarray, labels: np.ndarray, n_way=5, k_shot=1, q_query=5):
        self.images = images
        self.by_class = {c: np.flatnonzero(labels == c) for c in np.unique(labels)}
        self.n_way, self.k_shot, self.q_query = n_way, k_shot, q_query

    def sample(self):
        classes = torch.LongTensor(np.random.choice(list(self.by_class), self.n_way, replace=False))  # HAZARD: TCL006
        xs, xq = [], []
        for c in classes.tolist():
            idx = np.random.choice(self.by_class[c], self.k_shot + self.q_query, replace=False)
            xs.append(self.images[idx[:self.k_shot]])
            xq.append(self.images[idx[self.k_shot:]])
        support = torch.from_numpy(np.concatenate(xs)).unsqueeze(1).float()
        query = torch.from_numpy(np.concatenate(xq)).unsqueeze(1).float()
        labels_t = torch.arange(self.n_way).repeat_interleave(self.k_shot)
        y_support = torch.tensor(labels_t)  # HAZARD: TCL002
        class_ids = [int(c) for c in classes]
        y_query = torch.tensor([i for i in range(len(class_ids)) for _ in range(self.q_query)])  # OK: TCL002
        return support, y_support, query, y_query


def drop_pixels(x: torch.Tensor, p: float = 0.1) -> torch.Tensor:
    flat = x.flatten(1)
    flat[:, torch.rand(flat.size(1)) < p] = 0.0  # HAZARD: TCL008
    return flat.view_as(x)


class MAML:
    def __init__(self, net, inner_lr=0.4, outer_lr=1e-3, inner_steps=1, prox=0.0):
        self.net = net
        self.inner_lr = inner_lr
        self.inner_steps = inner_steps
        self.prox = prox
        self.meta_opt = torch.optim.Adam(net.parameters(), lr=outer_lr)
        self.meta_init = [p.clone() for p in self.net.parameters()]  # HAZARD: TCL003
        self.meta_init_frozen = [p.detach().clone() for p in self.net.parameters()]  # OK: TCL003
        self.meta_losses = []
        self.feature_spread = []

    def adapt(self, support, y_support):
        fast = {n: p.clone() for n, p in self.net.named_parameters()}  # OK: TCL003
        for _ in range(self.inner_steps):
            logits = functional_call(self.net, fast, (support,))
            loss = F.cross_entropy(logits, y_support)
            grads = torch.autograd.grad(loss, list(fast.values()), create_graph=True)
            fast = {n: w - self.inner_lr * g for (n, w), g in zip(fast.items(), grads)}
        return fast

    def query_logits(self, fast, query):
        feats = functional_call(self.net.features, {k[len("features."):]: v for k, v in fast.items()
                                                    if k.startswith("features.")}, (query,))
        probe = feats.detach()
        probe -= probe.mean(0, keepdim=True)  # HAZARD: TCL005
        self.feature_spread.append(probe.pow(2).sum(1).mean().item())
        return F.linear(feats, fast["head.weight"], fast["head.bias"])

    def proximal(self):
        return sum(((p - p0) ** 2).sum() for p, p0 in zip(self.net.parameters(), self.meta_init))

    def meta_train(self, sampler, iterations=1000, tasks_per_batch=4):
        for it in range(iterations):
            meta_loss = 0.0
            for _ in range(tasks_per_batch):
                support, ys, query, yq = sampler.sample()
                fast = self.adapt(drop_pixels(support), ys)
                q_loss = F.cross_entropy(self.query_logits(fast, query), yq)
                meta_loss = meta_loss + q_loss  # OK: TCL009
            meta_loss = meta_loss / tasks_per_batch + self.prox * self.proximal()
            self.meta_opt.zero_grad()
            meta_loss.backward()
            self.meta_opt.step()
            self.meta_losses.append(meta_loss)  # HAZARD: TCL009

    def reset_to_init(self):
        with torch.no_grad():
            for p, p0 in zip(self.net.parameters(), self.meta_init_frozen):
                p.copy_(p0)  # OK: TCL007


def finetune_sgd(net, support, y_support, lr=0.01, steps=10):
    for _ in range(steps):
        loss = F.cross_entropy(net(support), y_support)
        net.zero_grad()
        loss.backward()
        for p in net.parameters():
            p -= lr * p.grad  # HAZARD: TCL007


def reptile(net, sampler, outer_steps=1000, inner_steps=5, eps=0.1):
    for step in range(outer_steps):
        init_params = [p.detach() for p in net.parameters()]  # HAZARD: TCL004
        support, ys, _, _ = sampler.sample()
        finetune_sgd_safe(net, support, ys, steps=inner_steps)
        for p, p0 in zip(net.parameters(), init_params):
            p.data = p0 + eps * (p.data - p0)  # HAZARD: TCL001


def finetune_sgd_safe(net, support, y_support, lr=0.01, steps=10):
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.cross_entropy(net(support), y_support)
        opt.zero_grad()
        loss.backward()
        opt.step()
