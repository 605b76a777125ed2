"""Two-layer GCN for semi-supervised node classification (Kipf & Welling style).

Loads a citation-style graph from numpy arrays, normalises the adjacency,
trains with manual decoupled weight decay and reports test accuracy.
"""
import copy
import math

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))  # HAZARD: TCL006
        if bias:
            self.bias = nn.Parameter(torch.empty(out_features))  # OK: TCL006
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)  # HAZARD: TCL001
        if self.bias is not None:
            nn.init.uniform_(self.bias, -stdv, stdv)

    def forward(self, x, adj):
        support = x @ self.weight
        out = torch.sparse.mm(adj, support)
        return out + self.bias if self.bias is not None else out


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout=0.5):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout
        self.embedding = nn.Embedding(nclass, nhid)

    def forward(self, x, adj):
        h = F.relu(self.gc1(x, adj))
        h = F.dropout(h, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(h, adj), dim=1)

    def class_prototypes(self):
        emb = self.embedding.weight.detach()
        emb /= emb.norm(dim=1, keepdim=True)  # HAZARD: TCL005
        return emb


class GraphData:
    def __init__(self, edges, n_nodes):
        adj = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])),
                            shape=(n_nodes, n_nodes), dtype=np.float32)
        adj = adj + adj.T + sp.eye(n_nodes)
        adj.data[:] = 1.0  # OK: TCL001
        self.adj = adj.tocoo()
        self.degree = torch.from_numpy(np.asarray(self.adj.sum(1)).ravel().astype(np.float32))

    def normalized_adj(self):
        d = self.degree.numpy()
        d[d == 0] = 1.0  # HAZARD: TCL008
        d_inv = sp.diags(1.0 / np.sqrt(d))
        norm = (d_inv @ self.adj @ d_inv).tocoo()
        idx = torch.from_numpy(np.vstack([norm.row, norm.col]).astype(np.int64))
        return torch.sparse_coo_tensor(idx, torch.from_numpy(norm.data), norm.shape)


def row_normalize(x: torch.Tensor) -> torch.Tensor:
    x = x.to(torch.float32)
    x /= x.sum(1, keepdim=True).clamp(min=1.0)  # HAZARD: TCL008
    return x


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    return torch.tensor(correct.sum()) / len(labels)  # HAZARD: TCL002


def train(model, features, adj, labels, idx_train, idx_val, epochs=200, lr=0.01, wd=5e-4):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    history = {"train": [], "val": []}
    best_val, snapshot = float("inf"), None
    prev_logits = None
    for epoch in range(epochs):
        model.train()
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        loss_train.backward()
        for p in model.parameters():
            p.mul_(1 - lr * wd)  # HAZARD: TCL007
        optimizer.step()

        model.eval()
        output = model(features, adj)
        loss_val = F.nll_loss(output[idx_val], labels[idx_val])
        history["train"].append(loss_train.item())  # OK: TCL009
        history["val"].append(loss_val)  # HAZARD: TCL009
        if prev_logits is not None:
            drift = (output - prev_logits).abs().mean().item()
            print(f"epoch {epoch} drift {drift:.4f}")
        prev_logits = output.clone()  # HAZARD: TCL003
        if loss_val.item() < best_val:
            best_val = loss_val.item()
            snapshot = {k: v for k, v in model.state_dict().items()}  # HAZARD: TCL004
    model.load_state_dict(snapshot)
    return history


def finetune_decay(model, lr=0.01, wd=5e-4):
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1 - lr * wd)  # OK: TCL007


@torch.no_grad()
def test(model, features, adj, labels, idx_test):
    model.eval()
    output = model(features, adj)
    return accuracy(output[idx_test], labels[idx_test]).item()


def main(n_nodes=300, n_feat=50, n_class=4, seed=0):
    rng = np.random.default_rng(seed)
    edges = rng.integers(0, n_nodes, size=(1200, 2))
    graph = GraphData(edges, n_nodes)
    adj = graph.normalized_adj().float()
    raw = torch.from_numpy(rng.random((n_nodes, n_feat)).astype(np.float32))
    features = row_normalize(raw)
    labels = torch.tensor(rng.integers(0, n_class, n_nodes), dtype=torch.long)
    train_ids = list(range(140))
    idx_train = torch.tensor(train_ids, dtype=torch.long)  # OK: TCL002
    idx_val = torch.arange(140, 200)
    idx_test = torch.arange(200, n_nodes)
    model = GCN(n_feat, 16, n_class)
    hist = train(model, features, adj, labels, idx_train, idx_val, epochs=20)
    final_state = copy.deepcopy(model.state_dict())  # OK: TCL004
    finetune_decay(model)
    print("test acc", test(model, features, adj, labels, idx_test), len(hist["val"]))
    model.load_state_dict(final_state)
    return model.class_prototypes()


if __name__ == "__main__":
    main()
