"""WGAN-GP trainer for 32x32 images (DCGAN-style generator / critic)."""
import copy
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, nz=128, ngf=64):
        super().__init__()
        self.nz, self.ngf = nz, ngf
        self.proj_weight = nn.Parameter(torch.Tensor(nz, ngf * 4 * 4 * 4))  # HAZARD: TCL006
        self.proj_bias = nn.Parameter(torch.zeros(ngf * 4 * 4 * 4))
        self.net = nn.Sequential(
            nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 3, 4, 2, 1), nn.Tanh(),
        )
        nn.init.kaiming_uniform_(self.proj_weight, a=0.2)  # OK: TCL007

    def forward(self, z):
        h = z @ self.proj_weight + self.proj_bias
        return self.net(h.view(-1, self.ngf * 4, 4, 4))


class Critic(nn.Module):
    def __init__(self, ndf=64):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1), nn.LeakyReLU(0.2, True),
        )
        self.fc = nn.Linear(ndf * 4 * 4 * 4, 1)

    def forward(self, x):
        return self.fc(self.net(x).flatten(1))


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        m.weight.data.normal_(0.0, 0.02)  # HAZARD: TCL001
    elif classname.find("BatchNorm") != -1:
        m.weight.normal_(1.0, 0.02)  # HAZARD: TCL007
        nn.init.zeros_(m.bias)  # OK: TCL007


def to_tanh_range(x: torch.Tensor) -> torch.Tensor:
    x = x.float()
    x /= 127.5  # HAZARD: TCL008
    return x - 1.0


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=real.device)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(interp)
    grads = torch.autograd.grad(out.sum(), interp, create_graph=True)[0]
    return ((grads.flatten(1).norm(2, dim=1) - 1) ** 2).mean()


class WGANGPTrainer:
    def __init__(self, G, D, lr=1e-4, n_critic=5, lambda_gp=10.0, out_dir="ckpt"):
        self.G, self.D = G, D
        self.opt_g = torch.optim.Adam(G.parameters(), lr=lr, betas=(0.0, 0.9))
        self.opt_d = torch.optim.Adam(D.parameters(), lr=lr, betas=(0.0, 0.9))
        self.n_critic, self.lambda_gp = n_critic, lambda_gp
        self.out_dir = out_dir
        self.fixed_noise = torch.randn(64, G.nz)
        self.d_losses, self.g_losses = [], []
        self.best_wdist = float("inf")
        self.best_G = None
        self.prev_fake = None

    def critic_step(self, real):
        z = torch.randn(real.size(0), self.G.nz)
        fake = self.G(z)
        fake_in = fake.detach()
        fake_in += 0.01 * torch.randn_like(fake_in)  # HAZARD: TCL005
        fake_vis = fake.detach().clone()
        fake_vis.mul_(0.5).add_(0.5)  # OK: TCL005
        d_real = self.D(real).mean()
        d_fake = self.D(fake_in).mean()
        gp = gradient_penalty(self.D, real, fake_in)
        d_loss = d_fake - d_real + self.lambda_gp * gp
        self.opt_d.zero_grad()
        d_loss.backward()
        self.opt_d.step()
        self.prev_fake = fake.clone()  # HAZARD: TCL003
        wdist = torch.tensor([d_real, d_fake])  # HAZARD: TCL002
        self.last_vis = fake_vis
        return d_loss, wdist

    def generator_step(self, batch_size):
        z = torch.randn(batch_size, self.G.nz)
        fake = self.G(z)
        g_loss = -self.D(fake).mean()
        self.opt_g.zero_grad()
        g_loss.backward()
        self.opt_g.step()
        return g_loss

    def train(self, loader, epochs=10):
        running_gp_loss = 0.0
        for epoch in range(epochs):
            for i, (imgs, _) in enumerate(loader):
                real = to_tanh_range(imgs)
                d_loss, wdist = self.critic_step(real)
                self.d_losses.append(d_loss)  # HAZARD: TCL009
                running_gp_loss += d_loss.item()  # OK: TCL009
                if i % self.n_critic == 0:
                    g_loss = self.generator_step(real.size(0))
                    self.g_losses.append(g_loss.item())  # OK: TCL009
            est = float(wdist[0] - wdist[1])
            if est < self.best_wdist:
                self.best_wdist = est
                self.best_G = self.G.state_dict()  # HAZARD: TCL004
                self.best_G_frozen = copy.deepcopy(self.G.state_dict())  # OK: TCL004
            self.save_samples(epoch)
        return running_gp_loss

    @torch.no_grad()
    def save_samples(self, epoch):
        self.G.eval()
        samples = self.G(self.fixed_noise)
        snapshot = samples.clone()  # OK: TCL003
        self.G.train()
        os.makedirs(self.out_dir, exist_ok=True)
        torch.save({"epoch": epoch, "grid": snapshot}, os.path.join(self.out_dir, f"s{epoch}.pt"))

    def clip_critic(self, c=0.01):
        with torch.no_grad():
            for p in self.D.parameters():
                p.clamp_(-c, c)  # OK: TCL007


if __name__ == "__main__":
    G, D = Generator(nz=16, ngf=8), Critic(ndf=8)
    G.apply(weights_init)
    D.apply(weights_init)
    data = [(torch.randint(0, 256, (4, 3, 32, 32)).to(torch.uint8), None) for _ in range(3)]
    trainer = WGANGPTrainer(G, D)
    trainer.train(data, epochs=1)
