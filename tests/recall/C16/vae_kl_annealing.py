"""Convolutional VAE on 28x28 images with cyclical KL annealing.

Includes a learned diagonal prior, latent traversals and sample grids.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor


class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class ConvVAE(nn.Module):
    def __init__(self, latent_dim=16):
        super().__init__()
        self.latent_dim = latent_dim
        self.enc = nn.Sequential(
            nn.Conv2d(1, 32, 4, 2, 1), nn.ReLU(),
            nn.Conv2d(32, 64, 4, 2, 1), nn.ReLU(), nn.Flatten(),
        )
        self.fc_mu = nn.Linear(64 * 7 * 7, latent_dim)
        self.fc_logvar = nn.Linear(64 * 7 * 7, latent_dim)
        self.dec_fc = nn.Linear(latent_dim, 64 * 7 * 7)
        self.dec = nn.Sequential(
            nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(),
            nn.ConvTranspose2d(32, 1, 4, 2, 1),
        )
        self.prior_mu = nn.Parameter(torch.zeros(latent_dim))
        self.prior_logvar = nn.Parameter(torch.zeros(latent_dim))

    def reset_prior(self):
        nn.init.zeros_(self.prior_mu)  # OK: TCL007
        self.prior_logvar.zero_()  # HAZARD: TCL007

    def encode(self, x):
        h = self.enc(x)
        return self.fc_mu(h), self.fc_logvar(h)

    def decode(self, z):
        return self.dec(self.dec_fc(z).view(-1, 64, 7, 7))

    def forward(self, x):
        mu, logvar = self.encode(x)
        std = torch.exp(0.5 * logvar)
        z = mu + std * torch.randn_like(std)
        return self.decode(z), mu, logvar

    def kl(self, mu, logvar):
        pv = self.prior_logvar
        return 0.5 * torch.sum(pv - logvar + (logvar.exp() + (mu - self.prior_mu) ** 2) / pv.exp() - 1, dim=1).mean()


def binarize(images: torch.Tensor) -> torch.Tensor:
    x = images.flatten(1)
    x.clamp_(0.0, 1.0)  # HAZARD: TCL008
    return x.view_as(images).bernoulli()


class VAETrainer:
    def __init__(self, model, lr=1e-3, n_cycles=4, total_steps=1000):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        period = total_steps // n_cycles
        ramp = torch.linspace(0.0, 1.0, period // 2)
        self.beta_schedule = torch.cat([ramp, torch.ones(period - ramp.numel())]).repeat(n_cycles)
        self.step = 0

    def betas_on(self, device):
        return torch.tensor(self.beta_schedule, device=device)  # HAZARD: TCL002

    def fit(self, loader, epochs=5):
        recon_meter = AverageMeter()
        stats = {"kl": 0.0, "recon": 0.0}
        best_recon, best_err = None, float("inf")
        for epoch in range(epochs):
            for x, _ in loader:
                x = binarize(x)
                recon_x, mu, logvar = self.model(x)
                recon = F.binary_cross_entropy_with_logits(recon_x, x, reduction="sum") / x.size(0)
                kl = self.model.kl(mu, logvar)
                beta = float(self.beta_schedule[min(self.step, len(self.beta_schedule) - 1)])
                loss = recon + beta * kl
                prev_w = self.model.fc_mu.weight.detach()  # HAZARD: TCL004
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                update_ratio = (self.model.fc_mu.weight - prev_w).norm() / prev_w.norm()
                self.model.fc_logvar.bias.data.clamp_(-6.0, 2.0)  # HAZARD: TCL001
                recon_meter.update(recon, x.size(0))  # HAZARD: TCL009
                stats["kl"] += kl  # HAZARD: TCL009
                stats["recon"] += recon.item()  # OK: TCL009
                if recon.item() < best_err:
                    best_err = recon.item()
                    best_recon = recon_x.clone()  # HAZARD: TCL003
                self.step += 1
            print(f"epoch {epoch}: recon {recon_meter.avg:.3f} kl {float(stats['kl']):.3f} "
                  f"upd {update_ratio.item():.2e}")
        return best_recon

    def fit_step_checked(self, x):
        recon_x, mu, logvar = self.model(x)
        loss = F.binary_cross_entropy_with_logits(recon_x, x, reduction="sum") + self.model.kl(mu, logvar)
        prev_w = self.model.fc_mu.weight.detach().clone()  # OK: TCL004
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        with torch.no_grad():
            self.model.fc_logvar.bias.clamp_(-6.0, 2.0)  # OK: TCL007
        return (self.model.fc_mu.weight - prev_w).norm().item()


@torch.no_grad()
def sample_grid(model, n=64):
    z = torch.randn(n, model.latent_dim)  # OK: TCL006
    return torch.sigmoid(model.decode(z))


def sample_legacy(model, n=64):
    z = torch.FloatTensor(n, model.latent_dim).normal_()  # HAZARD: TCL006
    noise = Tensor(np.random.normal(0, 1, (n, model.latent_dim)))  # HAZARD: TCL006
    return torch.sigmoid(model.decode(z + 0.01 * noise))


def traverse(model, x, dim, values):
    mu, logvar = model.encode(x[:1])
    frames = []
    for v in values:
        direction = torch.zeros_like(mu)
        direction[:, dim] = v
        z_walk = mu.detach().add_(direction)  # HAZARD: TCL005
        frames.append(torch.sigmoid(model.decode(torch.cat([mu, z_walk]))))
    grid = torch.stack([f.detach() for f in frames])  # OK: TCL002
    return grid, logvar.exp()
