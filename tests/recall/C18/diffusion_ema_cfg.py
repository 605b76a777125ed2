"""Small class-conditional DDPM trainer with EMA weights and classifier-free guidance."""
import copy
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def sinusoidal_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([args.sin(), args.cos()], dim=-1)


class TinyUNet(nn.Module):
    def __init__(self, channels=3, hidden=32, num_classes=10, temb=16):
        super().__init__()
        self.temb = temb
        self.inp = nn.Conv2d(channels, hidden, 3, padding=1)
        self.mid = nn.Conv2d(hidden, hidden, 3, padding=1)
        self.out = nn.Conv2d(hidden, channels, 3, padding=1)
        self.time_mlp = nn.Linear(temb, hidden)
        # one extra class slot is the "null" label used for classifier-free guidance
        self.class_emb = nn.Embedding(num_classes + 1, hidden)
        self.null_class = num_classes
        self.out_scale = nn.Parameter(torch.Tensor(1))  # HAZARD: TCL006
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.zeros_(self.out.weight)  # OK: TCL007
        self.out.bias.data.zero_()  # HAZARD: TCL001
        self.out_scale.fill_(1.0)  # HAZARD: TCL007

    def forward(self, x, t, y):
        h = F.silu(self.inp(x))
        h = h + self.time_mlp(sinusoidal_embedding(t, self.temb))[:, :, None, None]
        h = h + self.class_emb(y)[:, :, None, None]
        h = F.silu(self.mid(h))
        return self.out(h) * self.out_scale


class EMA:
    def __init__(self, model, decay=0.999):
        self.decay = decay
        self.shadow = {n: p.clone() for n, p in model.named_parameters()}  # HAZARD: TCL003
        self.backup = {}

    def update(self, model):
        with torch.no_grad():
            for n, p in model.named_parameters():
                self.shadow[n].mul_(self.decay).add_(p, alpha=1 - self.decay)

    def apply_to(self, model):
        self.backup = {n: p.detach() for n, p in model.named_parameters()}  # HAZARD: TCL004
        for n, p in model.named_parameters():
            p.data.copy_(self.shadow[n])  # HAZARD: TCL001

    def restore(self, model):
        with torch.no_grad():
            for n, p in model.named_parameters():
                p.copy_(self.backup[n])  # OK: TCL007


class GaussianDiffusion:
    def __init__(self, timesteps=50):
        self.T = timesteps
        self.betas = torch.linspace(1e-4, 0.02, timesteps)
        self.alpha_bar = torch.cumprod(1.0 - self.betas, dim=0)

    def q_sample(self, x0, t, noise):
        ab = self.alpha_bar[t].view(-1, 1, 1, 1)
        return ab.sqrt() * x0 + (1 - ab).sqrt() * noise

    @torch.no_grad()
    def sample(self, model, labels, shape, guidance=3.0):
        x = torch.randn(shape)
        null = torch.full_like(labels, model.null_class)
        for i in reversed(range(self.T)):
            t = torch.full((shape[0],), i, dtype=torch.long)
            eps_c, eps_u = model(x, t, labels), model(x, t, null)
            eps = eps_u + guidance * (eps_c - eps_u)
            beta, ab = self.betas[i], self.alpha_bar[i]
            x = (x - beta / (1 - ab).sqrt() * eps) / (1 - beta).sqrt()
            if i > 0:
                x = x + beta.sqrt() * torch.randn_like(x)
        return x


def preprocess(images: torch.Tensor) -> torch.Tensor:
    x = images.float()
    x /= 127.5  # HAZARD: TCL008
    return x - 1.0


def drop_labels(labels, p, null_class):
    keep = labels.clone()
    keep[torch.rand(labels.shape) < p] = null_class  # OK: TCL008
    return keep


def grad_direction(p):
    g = p.grad.detach()
    g /= g.norm() + 1e-8  # HAZARD: TCL005
    return g


def train(model, loader, epochs=2, lr=2e-4, ckpt_dir="ckpt"):
    diffusion = GaussianDiffusion()
    ema = EMA(model)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    loss_history = []
    best_loss = float("inf")
    prev_dir = None
    for epoch in range(epochs):
        running = 0.0
        for images, labels in loader:
            x0 = preprocess(images)
            y = drop_labels(labels, 0.1, model.null_class)
            t = torch.randint(0, diffusion.T, (x0.shape[0],))
            noise = torch.randn_like(x0)
            loss = F.mse_loss(model(diffusion.q_sample(x0, t, noise), t, y), noise)
            opt.zero_grad()
            loss.backward()
            direction = grad_direction(model.mid.weight)
            if prev_dir is not None:
                print("grad cosine", float((direction * prev_dir).sum()))
            prev_dir = direction.clone()  # OK: TCL003
            opt.step()
            ema.update(model)
            loss_history.append(loss)  # HAZARD: TCL009
            running += loss.item()  # OK: TCL009
        epoch_loss = running / max(len(loader), 1)
        if epoch_loss < best_loss:
            best_loss = epoch_loss
            best_weights = copy.deepcopy(model.state_dict())  # OK: TCL004
        os.makedirs(ckpt_dir, exist_ok=True)
        torch.save({"model": model.state_dict(), "opt": opt.state_dict()},  # OK: TCL004
                   os.path.join(ckpt_dir, f"epoch{epoch}.pt"))
    model.load_state_dict(best_weights)
    ema.apply_to(model)
    samples = diffusion.sample(model, torch.arange(4) % 10, (4, 3, 8, 8))
    ema.restore(model)
    curve = torch.tensor(loss_history)  # HAZARD: TCL002
    return samples, curve
