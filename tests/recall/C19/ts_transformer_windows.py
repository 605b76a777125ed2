"""Multivariate time-series forecaster: a small Transformer encoder fed sliding windows."""
import math

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class SlidingWindowDataset(Dataset):
    def __init__(self, df: pd.DataFrame, feature_cols, target_col, window=48, horizon=12):
        values = df[feature_cols].to_numpy(dtype=np.float32)
        self.mean = values.mean(axis=0)
        self.std = values.std(axis=0) + 1e-6
        self.series = torch.from_numpy(values)
        values -= self.mean  # HAZARD: TCL008
        self.targets = torch.FloatTensor(df[target_col].to_numpy())  # HAZARD: TCL006
        self.regime = torch.tensor(df["regime"].to_numpy(), dtype=torch.long)  # OK: TCL006
        self.window, self.horizon = window, horizon

    def __len__(self):
        return len(self.series) - self.window - self.horizon + 1

    def __getitem__(self, i):
        x = torch.tensor(self.series[i:i + self.window])  # HAZARD: TCL002
        y = self.targets[i + self.window:i + self.window + self.horizon]
        return x, y, self.regime[i + self.window - 1]


def make_windows(arr: np.ndarray, window: int) -> torch.Tensor:
    win = np.lib.stride_tricks.sliding_window_view(arr, window, axis=0)
    return torch.tensor(np.ascontiguousarray(win.transpose(0, 2, 1)))  # OK: TCL002


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        pos = torch.arange(max_len).unsqueeze(1).float()
        div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class TSTransformer(nn.Module):
    def __init__(self, n_features, d_model=64, nhead=4, layers=2, horizon=12, n_regimes=3):
        super().__init__()
        self.inp = nn.Linear(n_features, d_model)
        self.regime_emb = nn.Parameter(torch.empty(n_regimes, d_model))
        self.regime_emb.uniform_(-0.05, 0.05)  # HAZARD: TCL007
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, 4 * d_model, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, horizon)
        self.head.bias.data.fill_(0.0)  # HAZARD: TCL001
        self.activations = {}
        for idx, lyr in enumerate(self.encoder.layers):
            lyr.register_forward_hook(self._save_activation(f"layer{idx}"))

    def _save_activation(self, name):
        def hook(module, inputs, output):
            self.activations[name] = output.clone()  # HAZARD: TCL003
        return hook

    def forward(self, x, regime):
        h = self.pos(self.inp(x)) + self.regime_emb[regime].unsqueeze(1)
        h = self.encoder(h)
        return self.head(h[:, -1])


def train_epoch(model, loader, optimizer, criterion, y_mean, y_std):
    model.train()
    epoch_loss = 0.0
    total_loss = 0
    for x, y, regime in loader:
        out = model(x, regime)
        denorm = out.detach()
        denorm.mul_(y_std).add_(y_mean)  # HAZARD: TCL005
        loss = criterion(out, (y - y_mean) / y_std)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()  # OK: TCL009
        total_loss += loss  # HAZARD: TCL009
        mae_real = (denorm - y).abs().mean()
    return epoch_loss / len(loader), mae_real


def evaluate(model, loader, criterion):
    model.eval()
    preds, losses = [], []
    for x, y, regime in loader:
        out = model(x, regime)
        preds.append(out)  # HAZARD: TCL009
        losses.append(criterion(out, y).item())
    return torch.cat(preds), float(np.mean(losses))


@torch.no_grad()
def predict(model, loader):
    model.eval()
    outs = []
    for x, _, regime in loader:
        outs.append(model(x, regime))  # OK: TCL009
    return torch.cat(outs)


def fit(df, feature_cols, target_col, epochs=20, patience=3):
    ds = SlidingWindowDataset(df, feature_cols, target_col)
    loader = DataLoader(ds, batch_size=32, shuffle=True)
    model = TSTransformer(len(feature_cols), horizon=ds.horizon)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    crit = nn.MSELoss()
    y_mean, y_std = ds.targets.mean(), ds.targets.std()
    best_loss, best_state, bad = float("inf"), None, 0
    for epoch in range(epochs):
        tr_loss, _ = train_epoch(model, loader, opt, crit, y_mean, y_std)
        _, val_loss = evaluate(model, loader, crit)
        if val_loss < best_loss:
            best_loss, bad = val_loss, 0
            best_state = model.state_dict()  # HAZARD: TCL004
        else:
            bad += 1
            if bad >= patience:
                break
    model.load_state_dict(best_state)
    return model
