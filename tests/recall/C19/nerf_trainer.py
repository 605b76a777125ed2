"""Tiny NeRF trainer: random ray batching, coarse + fine MLPs, hierarchical sampling."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def positional_encoding(x, n_freqs):
    out = [x]
    for i in range(n_freqs):
        out += [torch.sin((2.0 ** i) * x), torch.cos((2.0 ** i) * x)]
    return torch.cat(out, -1)


class NeRFMLP(nn.Module):
    def __init__(self, n_freqs=6, width=128):
        super().__init__()
        self.n_freqs = n_freqs
        d_in = 3 + 3 * 2 * n_freqs
        self.trunk = nn.Sequential(nn.Linear(d_in, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.sigma = nn.Linear(width, 1)
        self.rgb = nn.Linear(width, 3)
        self.rgb.bias.data.fill_(0.5)  # HAZARD: TCL001

    def forward(self, pts):
        h = self.trunk(positional_encoding(pts, self.n_freqs))
        return torch.sigmoid(self.rgb(h)), F.relu(self.sigma(h)).squeeze(-1)


def get_rays(H, W, focal, c2w):
    i, j = torch.meshgrid(torch.arange(W, dtype=torch.float32), torch.arange(H, dtype=torch.float32), indexing="xy")
    dirs = torch.stack([(i - W * 0.5) / focal, -(j - H * 0.5) / focal, -torch.ones_like(i)], -1)
    rays_d = (dirs[..., None, :] * c2w[:3, :3]).sum(-1)
    return c2w[:3, -1].expand(rays_d.shape), rays_d


def volume_render(rgb, sigma, z_vals):
    deltas = torch.cat([z_vals[..., 1:] - z_vals[..., :-1], 1e10 * torch.ones_like(z_vals[..., :1])], -1)
    alpha = 1.0 - torch.exp(-sigma * deltas)
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[..., :1]), 1.0 - alpha + 1e-10], -1), -1)[..., :-1]
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(-2), weights


def sample_pdf(bins, weights, n_samples):
    pdf = weights / weights.sum(-1, keepdim=True)
    cdf = torch.cat([torch.zeros_like(pdf[..., :1]), torch.cumsum(pdf, -1)], -1)
    u = torch.rand(*cdf.shape[:-1], n_samples)
    idx = torch.searchsorted(cdf, u, right=True).clamp(1, bins.shape[-1] - 1)
    lo, hi = torch.gather(bins, -1, idx - 1), torch.gather(bins, -1, idx)
    return lo + (hi - lo) * torch.rand_like(u)


class NeRFTrainer:
    def __init__(self, images: np.ndarray, poses: np.ndarray, focal, near=2.0, far=6.0, n_c=32, n_f=64):
        self.images = images
        self.poses = torch.from_numpy(poses.astype(np.float32))
        self.focal, self.near, self.far, self.n_c, self.n_f = focal, near, far, n_c, n_f
        self.model_c, self.model_f = NeRFMLP(), NeRFMLP()
        for pc, pf in zip(self.model_c.parameters(), self.model_f.parameters()):
            pf.copy_(pc)  # HAZARD: TCL007
        params = list(self.model_c.parameters()) + list(self.model_f.parameters())
        self.optimizer = torch.optim.Adam(params, lr=5e-4)
        self.ckpt = {"coarse": self.model_c.state_dict(), "step": 0}  # HAZARD: TCL004
        self.psnr_log = []
        self.last_coarse = None

    def build_ray_bank(self):
        H, W = self.images.shape[1:3]
        origins, targets = [], []
        pix = np.empty((H * W, 3), dtype=np.float32)
        for k in range(len(self.images)):
            c2w = torch.tensor(self.poses[k, :3, :4])  # HAZARD: TCL002
            ro, rd = get_rays(H, W, self.focal, c2w)
            pix[:] = self.images[k].reshape(-1, 3)  # HAZARD: TCL008
            targets.append(torch.from_numpy(pix))
            origins.append(torch.cat([ro.reshape(-1, 3), rd.reshape(-1, 3)], -1))
        mask_np = (self.images.reshape(len(self.images), -1).max(1) > 0).astype(np.float32)
        self.valid = torch.tensor(mask_np)  # OK: TCL002
        mask_np *= 0.5  # OK: TCL008
        self.rays = torch.cat([torch.cat(origins), torch.cat(targets)], -1)

    def restore(self):
        self.model_c.load_state_dict(self.ckpt["coarse"])

    def render_rays(self, rays):
        ro, rd = rays[:, 0:3], rays[:, 3:6]
        t = torch.linspace(0.0, 1.0, self.n_c)
        z_vals = (self.near * (1.0 - t) + self.far * t).expand(len(rays), self.n_c)
        t_rand = torch.Tensor(*z_vals.shape).uniform_()  # HAZARD: TCL006
        z_vals = z_vals + (t_rand - 0.5) * (self.far - self.near) / self.n_c
        rgb_c, sig_c = self.model_c(ro[:, None] + rd[:, None] * z_vals[..., None])
        out_c, weights = volume_render(rgb_c, sig_c, z_vals)
        w = weights.detach()
        w += 1e-5  # HAZARD: TCL005
        z_f = sample_pdf(z_vals, w, self.n_f)
        z_all, _ = torch.sort(torch.cat([z_vals, z_f], -1), -1)
        rgb_f, sig_f = self.model_f(ro[:, None] + rd[:, None] * z_all[..., None])
        out_f, _ = volume_render(rgb_f, sig_f, z_all)
        return out_c, out_f, weights

    def train(self, iters=1000, batch=1024):
        self.build_ray_bank()
        ptr = 0
        for it in range(iters):
            if ptr + batch > len(self.rays):
                self.rays = self.rays[torch.randperm(len(self.rays))]
                ptr = 0
            rays = self.rays[ptr:ptr + batch]
            ptr += batch
            out_c, out_f, weights = self.render_rays(rays[:, :6])
            target = rays[:, 6:9]
            img_loss = F.mse_loss(out_f, target)
            loss = img_loss + F.mse_loss(out_c, target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            psnr = -10.0 * torch.log10(img_loss)
            self.psnr_log.append(psnr)  # HAZARD: TCL009
            self.last_coarse = out_c.clone()  # HAZARD: TCL003
            self.last_coarse_img = out_c.detach().clone()  # OK: TCL003
            if it % 500 == 0:
                torch.save(self.model_f.state_dict(), f"fine_{it:06d}.pt")  # OK: TCL004

    @torch.no_grad()
    def render_image(self, c2w, H, W, chunk=4096):
        ro, rd = get_rays(H, W, self.focal, c2w)
        rays = torch.cat([ro.reshape(-1, 3), rd.reshape(-1, 3)], -1)
        frames = []
        for i in range(0, len(rays), chunk):
            frames.append(self.render_rays(rays[i:i + chunk])[1])  # OK: TCL009
        return torch.cat(frames).reshape(H, W, 3)

    def sync_fine_from_coarse(self):
        with torch.no_grad():
            for pc, pf in zip(self.model_c.parameters(), self.model_f.parameters()):
                pf.copy_(pc)  # OK: TCL007
