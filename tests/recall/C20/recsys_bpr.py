"""BPR matrix factorisation with popularity-based negative sampling."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class PopularitySampler:
    def __init__(self, n_items, alpha=0.75):
        self.counts = torch.zeros(n_items)
        self.alpha = alpha

    def observe(self, item_ids):
        self.counts.index_add_(0, item_ids, torch.ones(len(item_ids)))

    def distribution(self):
        probs = self.counts.float()
        probs.add_(1.0).pow_(self.alpha)  # HAZARD: TCL008
        return probs / probs.sum()

    def smoothed(self):
        probs = self.counts.clone().add_(1.0)  # OK: TCL008
        return probs / probs.sum()

    def sample(self, n) -> torch.Tensor:
        return torch.multinomial(self.distribution(), n, replacement=True)


class BPRModel(nn.Module):
    def __init__(self, n_users, n_items, dim=32):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, dim)
        self.item_emb = nn.Embedding(n_items, dim)
        self.item_bias = nn.Parameter(torch.FloatTensor(n_items))  # HAZARD: TCL006
        self.user_emb.weight.data.normal_(0, 0.01)  # HAZARD: TCL001
        nn.init.normal_(self.item_emb.weight, std=0.01)
        nn.init.zeros_(self.item_bias)

    def score(self, users, items):
        u = self.user_emb(users)
        v = self.item_emb(items)
        return (u * v).sum(-1) + self.item_bias[items]

    def decay_popular(self, popular_ids, decay=0.9):
        self.item_emb.weight[popular_ids] *= decay  # HAZARD: TCL007

    def recommend(self, users, seen_mask, k=10):
        logits = self.user_emb(users) @ self.item_emb.weight.T + self.item_bias
        ranked = logits.detach()
        ranked[seen_mask] = float("-inf")  # HAZARD: TCL005
        top = ranked.topk(k, dim=-1)
        return top.indices, torch.sigmoid(logits)


class L2SPRegulariser:
    """Keeps the fine-tuned embeddings close to the pretrained ones."""

    def __init__(self, model, strength=1e-3):
        self.anchor = {n: p.clone() for n, p in model.named_parameters()}  # HAZARD: TCL003
        self.strength = strength

    def __call__(self, model):
        reg = 0.0
        for n, p in model.named_parameters():
            reg = reg + ((p - self.anchor[n]) ** 2).sum()
        return self.strength * reg


def bpr_loss(model, users, pos, neg):
    return -F.logsigmoid(model.score(users, pos) - model.score(users, neg)).mean()


def train(model, interactions, n_items, epochs=5, batch_size=256, lr=1e-2):
    sampler = PopularitySampler(n_items)
    sampler.observe(interactions[:, 1])
    reg = L2SPRegulariser(model)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    init_item = model.item_emb.weight.detach()  # HAZARD: TCL004
    init_user = model.user_emb.weight.detach().clone()  # OK: TCL004
    epoch_loss = 0.0
    detached_total = torch.zeros(())
    for epoch in range(epochs):
        perm = torch.randperm(len(interactions))
        for start in range(0, len(perm), batch_size):
            batch = interactions[perm[start:start + batch_size]]
            users, pos = batch[:, 0], batch[:, 1]
            neg = torch.tensor(sampler.sample(len(users)))  # HAZARD: TCL002
            loss = bpr_loss(model, users, pos, neg) + reg(model)
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_loss = epoch_loss + loss  # HAZARD: TCL009
            detached_total += loss.detach()  # OK: TCL009
        top_items = sampler.counts.topk(10).indices
        with torch.no_grad():
            model.item_emb.weight[top_items] *= 0.99  # OK: TCL007
    item_drift = (model.item_emb.weight - init_item).norm().item()
    user_drift = (model.user_emb.weight - init_user).norm().item()
    print(f"item drift {item_drift:.4f} user drift {user_drift:.4f}")
    return epoch_loss, detached_total


def evaluate_hit_rate(model, test_pairs, train_seen, k=10):
    hits = []
    users = torch.tensor(test_pairs[:, 0].tolist())  # OK: TCL002
    seen = torch.zeros(len(users), model.item_emb.num_embeddings, dtype=torch.bool)
    for row, u in enumerate(users.tolist()):
        seen[row, train_seen.get(u, [])] = True
    with torch.no_grad():
        top, probs = model.recommend(users, seen, k)
    for row, target in enumerate(test_pairs[:, 1].tolist()):
        hits.append(float(target in top[row].tolist()))
    return float(np.mean(hits)), probs


if __name__ == "__main__":
    n_users, n_items = 50, 200
    inter = torch.stack([torch.randint(0, n_users, (2000,)), torch.randint(0, n_items, (2000,))], 1)
    model = BPRModel(n_users, n_items)
    train(model, inter, n_items, epochs=1)
    print(evaluate_hit_rate(model, inter[:100], {}))
