"""Graph attention network trained on sampled neighbourhoods (GraphSAGE-style sampler)."""
import random
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class NeighborSampler:
    def __init__(self, edge_index, num_nodes, fanout=5):
        self.fanout = fanout
        self.adj = defaultdict(list)
        for s, d in edge_index.t().tolist():
            self.adj[d].append(s)
        self.num_nodes = num_nodes

    def sample(self, seeds):
        src, dst = [], []
        for d in seeds:
            nbrs = self.adj.get(d, [d])
            picked = random.sample(nbrs, min(self.fanout, len(nbrs)))
            src.extend(picked)
            dst.extend([d] * len(picked))
        edges = torch.LongTensor([src, dst])  # HAZARD: TCL006
        nodes = torch.tensor(sorted(set(src) | set(seeds)))  # OK: TCL002
        return nodes, edges


class GATLayer(nn.Module):
    def __init__(self, in_dim, out_dim, heads=4):
        super().__init__()
        self.heads, self.out_dim = heads, out_dim
        self.W = nn.Parameter(torch.empty(in_dim, heads * out_dim))
        self.att_src = nn.Parameter(torch.empty(heads, out_dim))
        self.att_dst = nn.Parameter(torch.empty(heads, out_dim))
        self.last_attention = None
        nn.init.xavier_uniform_(self.W)  # OK: TCL007
        with torch.no_grad():
            self.att_src.normal_(0, 0.1)  # OK: TCL007
        self.att_dst.data.normal_(0, 0.1)  # HAZARD: TCL001

    def forward(self, x, edge_index):
        n = x.size(0)
        h = (x @ self.W).view(n, self.heads, self.out_dim)
        src, dst = edge_index
        e = F.leaky_relu((h[src] * self.att_src).sum(-1) + (h[dst] * self.att_dst).sum(-1), 0.2)
        e = e - e.max()
        w = e.exp()
        denom = torch.zeros(n, self.heads).index_add_(0, dst, w)
        alpha = w / (denom[dst] + 1e-16)
        self.last_attention = alpha.clone()  # HAZARD: TCL003
        out = torch.zeros_like(h).index_add_(0, dst, alpha.unsqueeze(-1) * h[src])
        return out.reshape(n, -1)


class GAT(nn.Module):
    def __init__(self, in_dim, hidden, num_classes, heads=4):
        super().__init__()
        self.l1 = GATLayer(in_dim, hidden, heads)
        self.l2 = GATLayer(hidden * heads, num_classes, 1)

    def forward(self, x, edge_index):
        return self.l2(F.elu(self.l1(x, edge_index)), edge_index)


attention_log = []


def log_attention(module, inputs, output):
    attention_log.append(output.mean(0))  # HAZARD: TCL009


def normalize_features(feats: torch.Tensor) -> torch.Tensor:
    flat = feats.reshape(-1, feats.shape[-1])
    flat -= flat.mean(0, keepdim=True)  # HAZARD: TCL008
    return flat


def to_numpy_degrees(edge_index, num_nodes):
    deg = torch.bincount(edge_index[1], minlength=num_nodes).float()
    deg_np = deg.numpy()
    deg_np[deg_np == 0] = 1.0  # HAZARD: TCL008
    inv = torch.from_numpy(1.0 / deg_np)
    return deg, inv


def train(model, feats, labels, edge_index, train_idx, epochs=3, batch=64):
    sampler = NeighborSampler(edge_index, feats.size(0))
    opt = torch.optim.Adam(model.parameters(), lr=5e-3, weight_decay=5e-4)
    handle = model.l1.register_forward_hook(log_attention)
    feats = normalize_features(feats)
    init_W = model.l1.W.detach()  # HAZARD: TCL004
    epoch_losses = []
    for epoch in range(epochs):
        perm = train_idx[torch.randperm(len(train_idx))].tolist()
        total = 0
        for i in range(0, len(perm), batch):
            seeds = perm[i:i + batch]
            nodes, edges = sampler.sample(seeds)
            remap = {int(v): k for k, v in enumerate(nodes)}
            local_edges = edges.clone().apply_(lambda v: remap[v])  # OK: TCL008
            logits = model(feats[nodes], local_edges)
            seed_pos = torch.tensor([remap[s] for s in seeds])
            loss = F.cross_entropy(logits[seed_pos], labels[seeds])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total = total + loss  # HAZARD: TCL009
        epoch_losses.append(total.item())
        drift = (model.l1.W.detach() - init_W).norm()
        print(f"epoch {epoch} loss {epoch_losses[-1]:.3f} W drift {drift:.4f}")
    handle.remove()
    return epoch_losses


@torch.no_grad()
def evaluate(model, feats, edge_index, labels, idx):
    model.eval()
    preds = []
    for chunk in torch.split(idx, 256):
        out = model(feats, edge_index)[chunk]
        preds.append(out.argmax(-1))  # OK: TCL009
    pred = torch.cat(preds)
    return (pred == labels[idx]).float().mean().item()


if __name__ == "__main__":
    n, d, c = 200, 16, 4
    feats = torch.randn(n, d)
    edge_index = torch.randint(0, n, (2, 800))
    labels = torch.randint(0, c, (n,))
    model = GAT(d, 8, c)
    train(model, feats, labels, edge_index, torch.arange(150))
    print("acc", evaluate(model, feats, edge_index, labels, torch.arange(150, 200)))
    deg, inv = to_numpy_degrees(edge_index, n)
    weights = torch.Tensor(deg)  # HAZARD: TCL002
    weights.mul_(inv.float())
