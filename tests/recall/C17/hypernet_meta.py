"""Task-conditioned hypernetwork that writes the weights of a small target MLP, plus a Reptile baseline."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def sample_task(n=32, d=8):
    w = torch.randn(d, 1)
    x = torch.randn(n, d)
    return x, x @ w + 0.1 * torch.randn(n, 1)


class TargetMLP(nn.Module):
    def __init__(self, d_in=8, d_hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class HyperNet(nn.Module):
    def __init__(self, n_tasks, emb_dim=16, d_in=8, d_hidden=16):
        super().__init__()
        self.task_emb = nn.Parameter(torch.Tensor(n_tasks, emb_dim))  # HAZARD: TCL006
        nn.init.normal_(self.task_emb, std=0.1)
        self.shapes = {"fc1.weight": (d_hidden, d_in), "fc1.bias": (d_hidden,)}
        n_out = sum(torch.Size(s).numel() for s in self.shapes.values())
        self.body = nn.Sequential(nn.Linear(emb_dim, 64), nn.ReLU(), nn.Linear(64, n_out))
        self.generated = []

    def forward(self, task_id):
        z = self.task_emb[task_id]
        flat = self.body(z)
        out, i = {}, 0
        for name, shape in self.shapes.items():
            n = torch.Size(shape).numel()
            out[name] = flat[i:i + n].view(shape)
            i += n
        self.generated.append(flat)  # HAZARD: TCL009
        return out, flat


def write_generated_weights(target, weights):
    target.fc1.weight.data = weights["fc1.weight"]  # HAZARD: TCL001
    target.fc1.bias.data = weights["fc1.bias"]  # HAZARD: TCL001


def write_generated_weights_inplace(target, weights):
    target.fc1.weight.copy_(weights["fc1.weight"])  # HAZARD: TCL007
    target.fc1.bias.copy_(weights["fc1.bias"])  # HAZARD: TCL007


def write_generated_weights_frozen(target, weights):
    with torch.no_grad():
        target.fc1.weight.copy_(weights["fc1.weight"])  # OK: TCL007
        target.fc1.bias.copy_(weights["fc1.bias"])  # OK: TCL007


def functional_target(target, weights, x):
    h = F.relu(F.linear(x, weights["fc1.weight"], weights["fc1.bias"]))
    return target.fc2(h)


def sparsify(flat: torch.Tensor, keep: float = 0.9):
    w = flat.reshape(-1)
    k = int((1 - keep) * w.numel())
    idx = w.abs().topk(k, largest=False).indices
    w[idx] = 0.0  # HAZARD: TCL008
    return w, flat.pow(2).mean()


def train_hyper(n_tasks=8, steps=200, lr=1e-3):
    tasks = [sample_task() for _ in range(n_tasks)]
    hyper, target = HyperNet(n_tasks), TargetMLP()
    opt = torch.optim.Adam(list(hyper.parameters()) + list(target.fc2.parameters()), lr=lr)
    meta_losses = []
    for step in range(steps):
        opt.zero_grad()
        meta_loss = 0.0
        for t, (x, y) in enumerate(tasks):
            weights, flat = hyper(t)
            w_norm = weights["fc1.weight"].detach().pow_(2).sum()  # HAZARD: TCL005
            pred = functional_target(target, weights, x)
            task_loss = F.mse_loss(pred, y)
            meta_loss = meta_loss + task_loss  # OK: TCL009
        meta_loss.backward()
        opt.step()
        meta_losses.append(meta_loss)  # HAZARD: TCL009
        if step % 50 == 0:
            print(f"step {step}: meta loss {meta_loss.item():.4f}, |W1|^2 {w_norm.item():.3f}")
    return hyper, target, meta_losses


def inner_adapt(model, x, y, steps=5, lr=0.02):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def reptile(meta_steps=100, eps=0.1):
    model = TargetMLP()
    task_emb = nn.Embedding(4, 8)
    for it in range(meta_steps):
        x, y = sample_task()
        weights_before = model.state_dict()  # HAZARD: TCL004
        old_weights = [p.clone() for p in model.parameters()]  # HAZARD: TCL003
        inner_adapt(model, x, y)
        with torch.no_grad():
            for p, p_old in zip(model.parameters(), old_weights):
                p.copy_(p_old + eps * (p - p_old))  # OK: TCL007
        moved = sum((v - weights_before[k]).norm().item() for k, v in model.state_dict().items())
        if it % 20 == 0:
            print(f"meta step {it}: weights moved {moved:.4f}")
        cond = torch.tensor(task_emb(torch.tensor([it % 4])))  # HAZARD: TCL002
        ident = torch.tensor([it % 4])  # OK: TCL002
    return model, cond, ident


def reptile_safe(meta_steps=100, eps=0.1):
    model = TargetMLP()
    for it in range(meta_steps):
        x, y = sample_task()
        weights_before = copy.deepcopy(model.state_dict())  # OK: TCL004
        inner_adapt(model, x, y)
        model.load_state_dict({k: weights_before[k] + eps * (v - weights_before[k]) for k, v in model.state_dict().items()})
    return model


if __name__ == "__main__":
    train_hyper(steps=20)
    reptile(meta_steps=5)
