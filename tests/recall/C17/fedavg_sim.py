"""Federated-learning simulation: FedAvg / FedProx over non-IID clients with update clipping."""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in=20, d_hidden=64, n_classes=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, n_classes)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def make_clients(n_clients=8, n_per=200, d_in=20, n_classes=4, seed=0):
    rng = np.random.default_rng(seed)
    clients = []
    for c in range(n_clients):
        x = rng.normal(loc=c * 0.1, size=(n_per, d_in)).astype(np.float32)
        y = rng.integers(0, n_classes, size=n_per)
        clients.append((torch.from_numpy(x), torch.tensor(y)))  # OK: TCL002
    return clients


def clip_update(update: torch.Tensor, max_norm: float) -> torch.Tensor:
    flat = update.reshape(-1)
    scale = min(1.0, max_norm / (flat.norm().item() + 1e-12))
    flat.mul_(scale)  # HAZARD: TCL008
    return flat.view_as(update)


def local_train(model, global_model, data, epochs=1, lr=0.05, mu=0.01, bs=32):
    x, y = data
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    w_init = [p.clone() for p in global_model.parameters()]  # HAZARD: TCL003
    epoch_loss = 0.0
    for _ in range(epochs):
        perm = torch.randperm(len(x))
        for i in range(0, len(x), bs):
            idx = perm[i:i + bs]
            loss = F.cross_entropy(model(x[idx]), y[idx])
            prox = sum((p - p0).pow(2).sum() for p, p0 in zip(model.parameters(), w_init))
            loss = loss + 0.5 * mu * prox
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_loss += loss  # HAZARD: TCL009
    return epoch_loss


def client_delta(client_model, global_model):
    updates = {}
    for (name, cp), gp in zip(client_model.named_parameters(), global_model.parameters()):
        delta = cp.detach()
        delta -= gp.detach()  # HAZARD: TCL005
        updates[name] = delta
    return updates


def client_delta_safe(client_model, global_model):
    return {n: cp.detach().clone() - gp.detach()  # OK: TCL005
            for (n, cp), gp in zip(client_model.named_parameters(), global_model.parameters())}


def fedavg_round(global_model, clients, client_model, frac=0.5, max_norm=5.0):
    chosen = np.random.choice(len(clients), max(1, int(frac * len(clients))), replace=False)
    client_states, sizes, update_norms = [], [], []
    for c in chosen:
        client_model.load_state_dict(global_model.state_dict())  # OK: TCL004
        round_loss = local_train(client_model, global_model, clients[c])
        upd = client_delta(client_model, global_model)
        update_norms.append(torch.norm(torch.cat([u.flatten() for u in upd.values()])))
        for u in upd.values():
            clip_update(u, max_norm)
        client_states.append(client_model.state_dict())  # HAZARD: TCL004
        sizes.append(len(clients[c][0]))
        print(f"client {c}: loss {float(round_loss):.3f}")
    weights = torch.Tensor(len(sizes))  # HAZARD: TCL006
    for i, s in enumerate(sizes):
        weights[i] = s
    weights /= weights.sum()
    norms = torch.tensor(update_norms)  # HAZARD: TCL002
    print(f"mean update norm {norms.mean():.3f}")
    for name, p in global_model.named_parameters():
        stacked = torch.stack([w * s[name] for w, s in zip(weights, client_states)])
        p.data = stacked.sum(0)  # HAZARD: TCL001
    return global_model


def apply_server_momentum(global_model, avg_delta, buf, beta=0.9, server_lr=1.0):
    for name, p in global_model.named_parameters():
        buf[name] = beta * buf.get(name, torch.zeros_like(p)) + avg_delta[name]
        p.add_(buf[name], alpha=server_lr)  # HAZARD: TCL007


def apply_server_momentum_safe(global_model, avg_delta, buf, beta=0.9, server_lr=1.0):
    with torch.no_grad():
        for name, p in global_model.named_parameters():
            buf[name] = beta * buf.get(name, torch.zeros_like(p)) + avg_delta[name]
            p.add_(buf[name], alpha=server_lr)  # OK: TCL007


def evaluate(model, clients):
    model.eval()
    accs = []
    with torch.no_grad():
        for x, y in clients:
            accs.append((model(x).argmax(1) == y).float().mean())
    model.train()
    return torch.stack(accs).mean().item()


def main(rounds=10):
    clients = make_clients()
    global_model, client_model = MLP(), MLP()
    sizes = torch.tensor([len(x) for x, _ in clients], dtype=torch.float32)  # OK: TCL006
    print("total samples", int(sizes.sum()))
    history = []
    for r in range(rounds):
        fedavg_round(global_model, clients, client_model)
        history.append(copy.deepcopy(global_model.state_dict()))  # OK: TCL004
        print(f"round {r}: acc {evaluate(global_model, clients):.3f}")
    return history


if __name__ == "__main__":
    main()
