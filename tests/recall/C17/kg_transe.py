"""TransE knowledge-graph embeddings with negative sampling and manual L2 normalisation."""
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def load_triples(n_ent=200, n_rel=12, n=3000, seed=0):
    rng = random.Random(seed)
    return [(rng.randrange(n_ent), rng.randrange(n_rel), rng.randrange(n_ent)) for _ in range(n)]


class TripleDataset(Dataset):
    def __init__(self, triples, n_ent):
        self.data = np.array(triples, dtype=np.int64)
        self.n_ent = n_ent
        self.data[:, 0] = np.clip(self.data[:, 0], 0, n_ent - 1)  # OK: TCL001

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return torch.tensor(self.data[i])  # OK: TCL002


class TransE(nn.Module):
    def __init__(self, n_ent, n_rel, dim=50, margin=1.0, p=1):
        super().__init__()
        self.ent = nn.Embedding(n_ent, dim)
        self.rel = nn.Embedding(n_rel, dim)
        self.margin, self.p, self.n_ent = margin, p, n_ent
        bound = 6.0 / dim ** 0.5
        nn.init.uniform_(self.ent.weight, -bound, bound)
        nn.init.uniform_(self.rel.weight, -bound, bound)
        self.rel.weight.data = F.normalize(self.rel.weight.data, dim=1)  # HAZARD: TCL001
        self.best_ent = None

    def normalize_entities(self):
        norms = self.ent.weight.data.norm(p=2, dim=1, keepdim=True)
        self.ent.weight.data.div_(norms.clamp(min=1.0))  # HAZARD: TCL001

    def normalize_entities_safe(self):
        with torch.no_grad():
            self.ent.weight.div_(self.ent.weight.norm(dim=1, keepdim=True).clamp(min=1.0))  # OK: TCL007

    def renorm_relations(self, idx):
        self.rel.weight[idx] = F.normalize(self.rel.weight[idx], dim=1)  # HAZARD: TCL007

    def normalized_entities(self):
        w = self.ent.weight.detach()
        w /= w.norm(dim=1, keepdim=True)  # HAZARD: TCL005
        return w

    def score(self, h, r, t):
        return (self.ent(h) + self.rel(r) - self.ent(t)).norm(p=self.p, dim=-1)

    def forward(self, pos, neg):
        pos_s = self.score(pos[:, 0], pos[:, 1], pos[:, 2])
        neg_s = self.score(neg[:, 0], neg[:, 1], neg[:, 2])
        return F.relu(self.margin + pos_s - neg_s).mean()

    def remember_best(self):
        self.best_ent = self.ent.weight.clone()  # HAZARD: TCL003


def corrupt(batch: torch.Tensor, n_ent: int) -> torch.Tensor:
    neg = batch.clone()
    heads = torch.rand(len(batch)) < 0.5
    rand_ent = torch.randint(0, n_ent, (len(batch),))
    neg[heads, 0] = rand_ent[heads]
    neg[~heads, 2] = torch.tensor(rand_ent[~heads])  # HAZARD: TCL002
    return neg


def filtered_mask(triples, n_ent):
    known = torch.LongTensor(triples)  # HAZARD: TCL006
    mask = torch.zeros(n_ent, n_ent, dtype=torch.bool)
    mask[known[:, 0], known[:, 2]] = True
    return mask


def train_epoch(model, loader, optimizer):
    total = 0.0
    for batch in loader:
        model.normalize_entities()
        neg = corrupt(batch, model.n_ent)
        loss = model(batch, neg)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


def export_embeddings(model, path):
    emb = model.ent.weight.detach().cpu().numpy()
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)  # HAZARD: TCL008
    np.save(path, emb)


def export_embeddings_safe(model, path):
    emb = model.ent.weight.detach().cpu().numpy().copy()
    emb /= np.linalg.norm(emb, axis=1, keepdims=True)  # OK: TCL008
    np.save(path, emb)


def hits_at_k(model, triples, k=10):
    with torch.no_grad():
        h, r, t = (torch.tensor([x[i] for x in triples]) for i in range(3))
        all_t = model.ent.weight.unsqueeze(0)
        d = (model.ent(h) + model.rel(r)).unsqueeze(1) - all_t
        ranks = (d.norm(p=model.p, dim=-1) < model.score(h, r, t).unsqueeze(1)).sum(1)
    return (ranks < k).float().mean().item()


def main(epochs=20):
    triples = load_triples()
    ds = TripleDataset(triples, 200)
    loader = DataLoader(ds, batch_size=128, shuffle=True)
    model = TransE(200, 12)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    _ = filtered_mask(triples, 200)
    epoch_losses = []
    ent_before = model.ent.weight.data  # HAZARD: TCL004
    for epoch in range(epochs):
        for batch in loader:
            neg = corrupt(batch, model.n_ent)
            loss = model(batch, neg)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_losses.append(loss)  # HAZARD: TCL009
        model.normalize_entities_safe()
        if epoch % 5 == 0:
            print(epoch, hits_at_k(model, triples[:200]))
            model.remember_best()
    moved = (model.ent.weight.data - ent_before).abs().max().item()
    print(f"max entity movement {moved:.4f}, final loss {epoch_losses[-1].item():.4f}")
    train_epoch(model, loader, optimizer)
    export_embeddings(model, "/tmp/transe_ent.npy")
    return model


if __name__ == "__main__":
    main()
