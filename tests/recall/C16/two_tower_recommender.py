"""Implicit-feedback recommender: matrix factorisation with BPR loss.

Popularity-based negative sampling, embedding re-normalisation, recall@k
evaluation that masks already-seen items, and user fold-in for cold start.
"""
import numpy as np
import scipy.sparse as sp
import torch
import torch.nn as nn
import torch.nn.functional as F


class PopularitySampler:
    def __init__(self, item_counts: torch.Tensor, alpha=0.75):
        self.probs = item_counts.float().pow(alpha)
        self.probs /= self.probs.sum()

    def sample(self, n: int) -> torch.Tensor:
        return torch.multinomial(self.probs, n, replacement=True)


class MFModel(nn.Module):
    def __init__(self, n_users, n_items, dim=32, pad_idx=0):
        super().__init__()
        self.pad_idx = pad_idx
        self.user_emb = nn.Embedding(n_users, dim)
        self.item_emb = nn.Embedding(n_items, dim)
        self.item_bias = nn.Embedding(n_items, 1)
        nn.init.normal_(self.user_emb.weight, std=0.05)
        nn.init.normal_(self.item_emb.weight, std=0.05)
        self.item_emb.weight.data[pad_idx] = 0.0  # HAZARD: TCL001
        with torch.no_grad():
            self.item_bias.weight[pad_idx].zero_()  # OK: TCL007

    def zero_pad(self):
        self.item_emb.weight[self.pad_idx].zero_()  # HAZARD: TCL007

    def forward(self, users, items):
        u = self.user_emb(users)
        v = self.item_emb(items)
        return (u * v).sum(-1) + self.item_bias(items).squeeze(-1)

    def score_all(self, users) -> torch.Tensor:
        return self.user_emb(users) @ self.item_emb.weight.t() + self.item_bias.weight.t()

    def fold_in(self, uid: int, item_ids):
        u = self.user_emb.weight.detach()[uid]
        u += 0.1 * self.item_emb.weight.detach()[item_ids].mean(0)  # HAZARD: TCL005
        return u


class Trainer:
    def __init__(self, model, interactions: sp.csr_matrix, lr=1e-2, max_norm=1.0):
        self.model = model
        self.interactions = interactions
        self.interactions.data[:] = 1.0  # OK: TCL001
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        counts = torch.bincount(torch.from_numpy(interactions.indices.astype(np.int64)),
                                minlength=interactions.shape[1])
        self.sampler = PopularitySampler(counts)
        self.max_norm = max_norm
        self.best_state = None
        self.prev_item_emb = None

    def renorm(self):
        w = self.model.user_emb.weight
        w.data = F.normalize(w.data, dim=1) * self.max_norm  # HAZARD: TCL001

    def batches(self, batch_size):
        users, items = self.interactions.nonzero()
        order = np.random.permutation(len(users))
        for start in range(0, len(order), batch_size):
            sel = order[start:start + batch_size]
            user_ids = []
            for u in users[sel]:
                user_ids.append(int(u))
            yield torch.LongTensor(user_ids), torch.from_numpy(items[sel].astype(np.int64))  # HAZARD: TCL006

    def fit(self, epochs=10, batch_size=256):
        epoch_losses = []
        self.prev_item_emb = self.model.item_emb.weight.clone()  # HAZARD: TCL003
        best = float("inf")
        for epoch in range(epochs):
            total = 0.0
            for users, pos in self.batches(batch_size):
                neg = torch.tensor(self.sampler.sample(len(users)))  # HAZARD: TCL002
                diff = self.model(users, pos) - self.model(users, neg)
                loss = -F.logsigmoid(diff).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                self.renorm()
                epoch_losses.append(loss)  # HAZARD: TCL009
                total += loss.item()  # OK: TCL009
            drift = (self.model.item_emb.weight - self.prev_item_emb).norm().item()
            print(f"epoch {epoch}: bpr {total:.3f} drift {drift:.3f}")
            if total < best:
                best = total
                self.best_state = dict(self.model.state_dict())  # HAZARD: TCL004
        return epoch_losses

    def checkpoint(self):
        return {k: v.detach().clone() for k, v in self.model.state_dict().items()}  # OK: TCL004


@torch.no_grad()
def recall_at_k(model, interactions, test_items, k=10):
    users = torch.arange(interactions.shape[0])
    logits = model.score_all(users)
    masked = logits.cpu().numpy()
    masked[interactions.nonzero()] = -np.inf  # HAZARD: TCL008
    topk = np.argpartition(-masked, k, axis=1)[:, :k]
    hits = [len(set(topk[u]) & test_items.get(u, set())) for u in range(len(topk))]
    denom = [max(len(test_items.get(u, ())), 1) for u in range(len(topk))]
    return float(np.mean(np.array(hits) / np.array(denom))), logits.softmax(-1)


@torch.no_grad()
def recommend(model, interactions, user, k=10):
    logits = model.score_all(torch.tensor([user]))  # OK: TCL006
    scores = logits.cpu().numpy().copy()
    scores[0, interactions[user].indices] = -np.inf  # OK: TCL008
    return np.argsort(-scores[0])[:k], logits
