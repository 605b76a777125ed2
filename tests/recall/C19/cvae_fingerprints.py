"""Conditional VAE over 2048-bit Morgan fingerprints, conditioned on assay labels."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def one_hot(labels, n_classes):
    idx = torch.as_tensor(labels, dtype=torch.long).view(-1, 1)
    onehot = torch.Tensor(len(labels), n_classes)  # HAZARD: TCL006
    onehot.scatter_(1, idx, 1.0)
    return onehot


def load_fingerprints(bits: np.ndarray, labels: np.ndarray):
    x = torch.tensor(bits, dtype=torch.float32)  # OK: TCL002
    c = one_hot(labels, int(labels.max()) + 1)
    return x, c


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class CVAE(nn.Module):
    def __init__(self, n_bits=2048, n_cond=4, hidden=512, latent=64):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(n_bits + n_cond, hidden), nn.ReLU())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(latent + n_cond, hidden), nn.ReLU())
        self.out = nn.Linear(hidden, n_bits)
        self.log_beta = nn.Parameter(torch.zeros(1))
        self.pos_weight = torch.ones(n_bits)
        self.latent = latent

    def init_output_bias(self, bit_freq: np.ndarray):
        p = np.clip(bit_freq, 1e-4, 1 - 1e-4)
        self.out.bias.data.copy_(torch.from_numpy(np.log(p / (1 - p))))  # HAZARD: TCL001

    def encode(self, x, c):
        h = self.enc(torch.cat([x, c], dim=1))
        return self.mu(h), self.logvar(h)

    def reparameterize(self, mu, logvar) -> torch.Tensor:
        return mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)

    def decode(self, z, c):
        return self.out(self.dec(torch.cat([z, c], dim=1)))

    def forward(self, x, c):
        mu, logvar = self.encode(x, c)
        z = self.reparameterize(mu, logvar)
        return self.decode(z, c), mu, logvar

    def anneal(self, max_log_beta=0.0):
        self.log_beta.clamp_(max=max_log_beta)  # HAZARD: TCL007

    def loss(self, logits, x, mu, logvar):
        w = x.new_tensor(self.pos_weight)  # HAZARD: TCL002
        recon = F.binary_cross_entropy_with_logits(logits, x, pos_weight=w, reduction="sum")
        kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return (recon + self.log_beta.exp() * kl) / x.size(0), kl


def train(model, loader, epochs=30, lr=1e-3):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    meter = AverageMeter()
    kl_history = []
    best_bits_acc = 0.0
    for epoch in range(epochs):
        for x, c in loader:
            logits, mu, logvar = model(x, c)
            probs = logits.detach()
            probs.sigmoid_()  # HAZARD: TCL005
            loss, kl = model.loss(logits, x, mu, logvar)
            prev_weights = [p.detach() for p in model.parameters()]  # HAZARD: TCL004
            opt.zero_grad()
            loss.backward()
            opt.step()
            step_size = sum((p.detach() - q).norm() for p, q in zip(model.parameters(), prev_weights))
            meter.update(loss, x.size(0))  # HAZARD: TCL009
            kl_history.append(kl)  # HAZARD: TCL009
            bits_acc = ((probs > 0.5).float() == x).float().mean().item()
            if bits_acc > best_bits_acc:
                best_bits_acc = bits_acc
                best_recon = logits.clone()  # HAZARD: TCL003
        with torch.no_grad():
            model.log_beta.clamp_(max=0.0)  # OK: TCL007
        print(f"epoch {epoch} loss {meter.avg:.3f} step {float(step_size):.2e}")
    return kl_history, best_recon


@torch.no_grad()
def sample(model, cond, n=16, thresh=0.5):
    model.eval()
    z = torch.randn(n, model.latent)
    z_fixed = torch.tensor(z)  # HAZARD: TCL002
    recon = torch.sigmoid(model.decode(z_fixed, cond.expand(n, -1)))
    bits = recon.cpu()
    bits[bits < thresh] = 0.0  # HAZARD: TCL008
    valid = recon.sum(dim=1) > 10
    return bits[valid], recon


@torch.no_grad()
def sample_copy(model, cond, n=16, thresh=0.5):
    recon = torch.sigmoid(model.decode(torch.randn(n, model.latent), cond.expand(n, -1)))
    bits = recon.cpu().clone()
    bits[bits < thresh] = 0.0  # OK: TCL008
    return bits, recon.mean()


def tanimoto_matrix(fps: torch.Tensor) -> torch.Tensor:
    inter = fps @ fps.T
    counts = fps.sum(1, keepdim=True)
    return inter / (counts + counts.T - inter)
