"""Reconstruction-based anomaly detector; the alarm threshold is fit on validation errors."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class AutoEncoder(nn.Module):
    def __init__(self, n_features, latent=4):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_features, 16), nn.ReLU(), nn.Linear(16, latent))
        self.decoder = nn.Sequential(nn.Linear(latent, 16), nn.ReLU(), nn.Linear(16, n_features))
        self.decoder[-1].weight.data.mul_(0.1)  # HAZARD: TCL001
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("std", torch.ones(n_features))

    def fit_scaler(self, data):
        self.mean.copy_(data.mean(0))
        self.std.copy_(data.std(0).clamp_min(1e-6))

    def standardize(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(torch.float32)
        x.sub_(self.mean).div_(self.std)  # HAZARD: TCL008
        return x

    def forward(self, x):
        return self.decoder(self.encoder(x))


def recon_error(model, x):
    return ((model(x) - x) ** 2).mean(dim=1)


class AnomalyDetector:
    def __init__(self, n_features, quantile=0.99, l2sp=1e-3):
        self.model = AutoEncoder(n_features)
        self.quantile, self.l2sp = quantile, l2sp
        self.init_weights = [p.clone() for p in self.model.parameters()]  # HAZARD: TCL003
        self.threshold = None

    def penalty(self):
        return sum(((p - p0) ** 2).sum() for p, p0 in zip(self.model.parameters(), self.init_weights))

    def train(self, train_x, val_x, epochs=5, batch=32, clip=1.0):
        model = self.model
        model.fit_scaler(train_x)
        train_x = model.standardize(train_x)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        meter, epoch_loss = AverageMeter(), 0.0
        best_val, best_state = float("inf"), None
        for epoch in range(epochs):
            perm = torch.randperm(len(train_x))
            for i in range(0, len(perm), batch):
                xb = train_x[perm[i:i + batch]]
                loss = recon_error(model, xb).mean() + self.l2sp * self.penalty()
                opt.zero_grad()
                loss.backward()
                opt.step()
                for p in model.encoder.parameters():
                    p.clamp_(-clip, clip)  # HAZARD: TCL007
                meter.update(loss, len(xb))  # HAZARD: TCL009
                epoch_loss += loss  # HAZARD: TCL009
            val = self.validation_error(val_x)
            if val < best_val:
                best_val = val
                best_state = model.state_dict()  # HAZARD: TCL004
                safe_state = {k: v.detach().clone() for k, v in model.state_dict().items()}  # OK: TCL004
        model.load_state_dict(best_state)
        self.fit_threshold(val_x)
        return float(epoch_loss), safe_state

    @torch.no_grad()
    def validation_error(self, val_x):
        self.model.eval()
        errs = []
        for chunk in torch.split(self.model.standardize(val_x.clone()), 64):
            errs.append(recon_error(self.model, chunk))  # OK: TCL009
        self.model.train()
        return torch.cat(errs).mean().item()

    def fit_threshold(self, val_x):
        self.model.eval()
        with torch.no_grad():
            per_batch = [recon_error(self.model, c) for c in torch.split(val_x, 64)]
        errors = torch.tensor(per_batch)  # HAZARD: TCL002
        self.threshold = torch.quantile(errors, self.quantile)

    def fit_threshold_stacked(self, val_x):
        with torch.no_grad():
            errors = recon_error(self.model, self.model.standardize(val_x.clone()))
        cap = errors.mean() + 6 * errors.std()
        clipped = errors.detach()
        clipped.clamp_(max=cap.item())  # HAZARD: TCL005
        self.threshold = torch.quantile(clipped, self.quantile)
        return errors.max().item(), self.threshold

    def score(self, x):
        with torch.no_grad():
            scores = recon_error(self.model, self.model.standardize(x.clone()))
        ranked = scores.detach().clone()
        ranked[ranked < 0] = 0.0  # OK: TCL005
        flags = scores > self.threshold
        order_np = scores.numpy()
        order_np.sort()  # HAZARD: TCL008
        top = order_np[-5:]
        return flags, scores, top, ranked


def rolling_baseline(window_values):
    window = torch.FloatTensor(window_values)  # HAZARD: TCL006
    buf = torch.empty(len(window_values))  # OK: TCL006
    buf.copy_(window)
    return buf.mean(), buf.std()


if __name__ == "__main__":
    torch.manual_seed(0)
    normal = torch.randn(512, 8)
    det = AnomalyDetector(8)
    det.train(normal[:400], normal[400:])
    probe = torch.cat([normal[400:410], normal[400:410] * 8])
    flags, scores, top, _ = det.score(probe)
    print(flags.int().tolist(), rolling_baseline(scores.tolist()))
