"""TabNet-flavoured tabular classifier: ghost batch norm, learnable feature gates, step masks."""
import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F


class GhostBatchNorm(nn.Module):
    def __init__(self, dim, virtual_batch_size=128, momentum=0.02):
        super().__init__()
        self.vbs = virtual_batch_size
        self.bn = nn.BatchNorm1d(dim, momentum=momentum)

    def forward(self, x):
        chunks = x.chunk(max(1, int(np.ceil(x.size(0) / self.vbs))), 0)
        return torch.cat([self.bn(c) for c in chunks], 0)


def build_group_matrix(groups, n_features):
    group_matrix = torch.Tensor(len(groups), n_features)  # HAZARD: TCL006
    for i, g in enumerate(groups):
        group_matrix[i, g] = 1.0 / len(g)
    return group_matrix


def impute_nans(x: torch.Tensor, medians: torch.Tensor) -> torch.Tensor:
    out = x.contiguous()
    out[torch.isnan(out)] = medians.expand_as(out)[torch.isnan(out)]  # HAZARD: TCL008
    return out


def impute_nans_copy(x: torch.Tensor, medians: torch.Tensor) -> torch.Tensor:
    out = x.clone()
    out[torch.isnan(out)] = medians.expand_as(out)[torch.isnan(out)]  # OK: TCL008
    return out


class TabularNet(nn.Module):
    def __init__(self, n_features, n_classes, n_steps=3, width=32, vbs=128):
        super().__init__()
        self.initial_bn = nn.BatchNorm1d(n_features)
        self.feature_gate = nn.Parameter(torch.ones(n_features))
        self.attentive = nn.ModuleList([nn.Linear(width, n_features) for _ in range(n_steps)])
        self.transform = nn.ModuleList(
            [nn.Sequential(nn.Linear(n_features, width), GhostBatchNorm(width, vbs), nn.ReLU()) for _ in range(n_steps + 1)]
        )
        self.head = nn.Linear(width, n_classes)
        self.step_masks = []
        for att in self.attentive:
            att.register_forward_hook(self._record_mask)

    def _record_mask(self, module, inputs, output):
        self.step_masks.append(torch.softmax(output, -1))  # HAZARD: TCL009

    def drop_features(self, drop_idx):
        self.feature_gate[drop_idx] = 0.0  # HAZARD: TCL007

    def gate_distribution(self) -> torch.Tensor:
        w = self.initial_bn.weight.detach()
        w /= w.abs().sum()  # HAZARD: TCL005
        return w

    def forward(self, x):
        x = self.initial_bn(x) * self.feature_gate
        prior = torch.ones_like(x)
        h = self.transform[0](x)
        agg, masks = 0.0, []
        for att, tr in zip(self.attentive, self.transform[1:]):
            mask = torch.softmax(att(h) * prior, -1)
            prior = prior * (1.3 - mask)
            h = tr(x * mask)
            agg = agg + F.relu(h)
            masks.append(mask)
        return self.head(agg), masks


class RunLog:
    def __init__(self):
        self.data = {}


class Trainer:
    def __init__(self, model: TabularNet, lr=2e-2, sparsity=1e-3):
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.sparsity = sparsity
        self.gate_init = model.feature_gate.clone()  # HAZARD: TCL003
        self.gate_ref = model.feature_gate.detach().clone()  # OK: TCL003
        self.best_weights = None
        self.best_acc = 0.0
        self.importances = torch.zeros(model.feature_gate.numel())
        self.run_log = RunLog()

    def fit_epoch(self, loader):
        self.model.train()
        for x, y in loader:
            logits, masks = self.model(x)
            ent = sum((-m * torch.log(m + 1e-15)).sum(1).mean() for m in masks) / len(masks)
            loss = F.cross_entropy(logits, y) + self.sparsity * ent
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.model.feature_gate.data.clamp_(0.0, 1.0)  # HAZARD: TCL001
            with torch.no_grad():
                self.model.feature_gate.clamp_(0.0, 1.0)  # OK: TCL007
                self.importances += sum(m.sum(0) for m in masks)  # OK: TCL009

    def validate(self, loader):
        self.model.eval()
        correct, n = 0, 0
        with torch.no_grad():
            for x, y in loader:
                logits, _ = self.model(x)
                correct += (logits.argmax(1) == y).sum().item()
                n += len(y)
        acc = correct / n
        self.run_log.data[f"val_acc_{len(self.run_log.data)}"] = acc  # OK: TCL001
        if acc > self.best_acc:
            self.best_acc = acc
            self.best_weights = {k: v for k, v in self.model.state_dict().items()}  # HAZARD: TCL004
        return acc

    def feature_importance(self):
        imp = torch.tensor(self.importances)  # HAZARD: TCL002
        return imp / imp.sum()


def prepare(df: pd.DataFrame, target: str):
    X = torch.tensor(df.drop(columns=[target]).to_numpy(np.float32))  # OK: TCL002
    y = torch.tensor(df[target].astype("category").cat.codes.to_numpy(), dtype=torch.long)
    medians = torch.nanmedian(X, 0).values
    return impute_nans(X, medians), y
