"""Multivariate time-series forecasting with an LSTM encoder-decoder.

Sliding windows from a numpy series, a standard scaler, learned initial
states, teacher forcing with noise injection and best-epoch checkpointing.
"""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class StandardScaler:
    def fit(self, x: torch.Tensor):
        self.mean = x.mean(0)
        self.std = x.std(0).clamp(min=1e-6)
        return self

    def transform(self, x: torch.Tensor) -> torch.Tensor:
        out = x.to(self.mean.dtype)
        out.sub_(self.mean).div_(self.std)  # HAZARD: TCL008
        return out

    def state(self):
        return {"mean": torch.tensor(self.mean), "std": self.std.detach().clone()}  # HAZARD: TCL002


class WindowDataset(torch.utils.data.Dataset):
    def __init__(self, series: np.ndarray, in_len=48, out_len=12):
        self.samples = []
        window = np.empty((in_len + out_len, series.shape[1]), dtype=np.float32)
        for t in range(len(series) - in_len - out_len):
            window[:] = series[t:t + in_len + out_len]  # HAZARD: TCL008
            self.samples.append(torch.from_numpy(window))
        self.in_len = in_len

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        s = self.samples[i]
        return s[:self.in_len], s[self.in_len:]


def make_centered_windows(series: np.ndarray, in_len=48, out_len=12):
    samples = []
    for t in range(len(series) - in_len - out_len):
        window = np.array(series[t:t + in_len + out_len], dtype=np.float32)
        window -= window[:in_len].mean(0)  # OK: TCL008
        samples.append(torch.from_numpy(window))
    return samples


class Seq2SeqLSTM(nn.Module):
    def __init__(self, n_feat, hidden=64, layers=2):
        super().__init__()
        self.encoder = nn.LSTM(n_feat, hidden, layers, batch_first=True)
        self.decoder = nn.LSTM(n_feat, hidden, layers, batch_first=True)
        self.proj = nn.Linear(hidden, n_feat)
        self.h0 = nn.Parameter(torch.zeros(layers, 1, hidden))
        self.c0 = nn.Parameter(torch.Tensor(layers, 1, hidden))  # HAZARD: TCL006
        nn.init.zeros_(self.c0)
        h = hidden
        self.encoder.bias_ih_l0.data[h:2 * h].fill_(1.0)  # HAZARD: TCL001
        with torch.no_grad():
            self.encoder.bias_hh_l0[h:2 * h].fill_(0.0)  # OK: TCL007

    def reset_state(self):
        self.h0.zero_()  # HAZARD: TCL007

    def forward(self, src, tgt=None, horizon=12, tf_ratio=0.5):
        b = src.size(0)
        state = (self.h0.expand(-1, b, -1).contiguous(), self.c0.expand(-1, b, -1).contiguous())
        _, state = self.encoder(src, state)
        step_in = src[:, -1:]
        outs = []
        for k in range(horizon):
            out, state = self.decoder(step_in, state)
            pred = self.proj(out)
            outs.append(pred)
            use_tf = tgt is not None and torch.rand(()) < tf_ratio
            step_in = tgt[:, k:k + 1] if use_tf else pred
        return torch.cat(outs, dim=1)


def snapshot_params(model):
    return [p.clone() for p in model.parameters()]  # HAZARD: TCL003


class ForecastTrainer:
    def __init__(self, model, lr=1e-3, noise_std=0.01):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.noise_std = noise_std
        self.train_losses = []
        self.best_weights = None
        self.init = snapshot_params(model)

    def train_epoch(self, loader):
        self.model.train()
        for src, tgt in loader:
            noisy = src.detach()
            noisy += self.noise_std * torch.randn_like(noisy)  # HAZARD: TCL005
            loss = F.mse_loss(self.model(noisy, tgt), tgt) + 0.5 * F.mse_loss(self.model(src, tgt), tgt)
            self.opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.opt.step()
            self.train_losses.append(loss)  # HAZARD: TCL009

    def validate(self, loader):
        self.model.eval()
        preds, targets = None, []
        for src, tgt in loader:
            out = self.model(src)
            preds = out if preds is None else torch.cat([preds, out])  # HAZARD: TCL009
            targets.append(tgt)
        return F.l1_loss(preds, torch.cat(targets)).item()

    @torch.no_grad()
    def validate_safe(self, loader):
        self.model.eval()
        errs = [F.l1_loss(self.model(src), tgt).item() for src, tgt in loader]  # OK: TCL009
        return float(np.mean(errs))

    def fit(self, train_loader, val_loader, epochs=20):
        best = float("inf")
        for epoch in range(epochs):
            self.train_epoch(train_loader)
            val = self.validate(val_loader)
            if val < best:
                best = val
                self.best_weights = copy.copy(self.model.state_dict())  # HAZARD: TCL004
        self.model.load_state_dict(self.best_weights)
        return best
