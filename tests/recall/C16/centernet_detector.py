"""CenterNet-style single-class object detector: heatmap + box-size heads.

Trains on small synthetic frames, keeps the best epoch and reports peak scores.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader


class DetectionDataset(Dataset):
    def __init__(self, images, boxes, out_stride=4):
        self.data = np.asarray(images, dtype=np.float32)  # N,H,W,3
        self.boxes = boxes
        self.out_stride = out_stride
        self.pixel_mean = self.data.mean(axis=(0, 1, 2))

    def center_(self):
        self.data -= self.pixel_mean  # OK: TCL001

    def __len__(self):
        return len(self.data)

    def __getitem__(self, idx):
        img = self.data[idx]
        h, w = img.shape[:2]
        hm = np.zeros((h // self.out_stride, w // self.out_stride), dtype=np.float32)
        wh = np.zeros((2,) + hm.shape, dtype=np.float32)
        for (x0, y0, x1, y1) in self.boxes[idx]:
            cx = int((x0 + x1) / 2 / self.out_stride)
            cy = int((y0 + y1) / 2 / self.out_stride)
            hm[cy, cx] = 1.0
            wh[:, cy, cx] = (x1 - x0, y1 - y0)
        chw = np.ascontiguousarray(img.transpose(2, 0, 1))
        return torch.from_numpy(chw), torch.from_numpy(hm), torch.from_numpy(wh)


class CenterNet(nn.Module):
    def __init__(self, width=32, prior=0.1):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, width, 3, stride=2, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(width, width, 3, stride=2, padding=1), nn.ReLU(inplace=True),
        )
        self.hm_head = nn.Conv2d(width, 1, 1)
        self.wh_head = nn.Conv2d(width, 2, 1)
        self.scale = nn.Parameter(torch.Tensor(2))  # HAZARD: TCL006
        self.prior = prior
        self.last_heatmap = None
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.ones_(self.scale)
        bias = -math.log((1 - self.prior) / self.prior)
        self.hm_head.bias.data.fill_(bias)  # HAZARD: TCL001
        with torch.no_grad():
            self.wh_head.bias.fill_(0.0)  # OK: TCL007

    def reinit_heads(self, std=0.01):
        for head in (self.hm_head, self.wh_head):
            head.weight.normal_(0.0, std)  # HAZARD: TCL007

    def forward(self, x):
        feats = self.backbone(x)
        heatmap = self.hm_head(feats)
        wh = self.wh_head(feats) * self.scale.view(1, 2, 1, 1)
        self.last_heatmap = heatmap.clone()  # HAZARD: TCL003
        return heatmap, wh


def preprocess(images: torch.Tensor) -> torch.Tensor:
    x = images.float()
    x /= 255.0  # HAZARD: TCL008
    return x


def preprocess_eval(images: torch.Tensor) -> torch.Tensor:
    x = images.float().clone()
    x /= 255.0  # OK: TCL008
    return x


def focal_loss(logits, target, alpha=2.0, beta=4.0):
    prob = logits.sigmoid().clamp(1e-4, 1 - 1e-4)
    pos = target.eq(1).float()
    neg = 1.0 - pos
    pos_loss = -((1 - prob) ** alpha) * torch.log(prob) * pos
    neg_loss = -((1 - target) ** beta) * (prob ** alpha) * torch.log(1 - prob) * neg
    return (pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1.0)


def decode_peaks(heatmap: torch.Tensor, k: int = 20) -> torch.Tensor:
    pooled = F.max_pool2d(heatmap, 3, stride=1, padding=1)
    keep = (pooled == heatmap).float()
    scores, _ = (heatmap * keep).flatten(1).topk(k)
    return scores


def frames_to_batch(frames, size):
    canvas = np.zeros((size, size, 3), dtype=np.float32)
    batch = []
    for frame in frames:
        canvas[:] = frame[:size, :size]  # HAZARD: TCL008
        batch.append(torch.from_numpy(canvas).permute(2, 0, 1))
    return torch.stack(batch)


def frames_to_batch_copy(frames, size):
    canvas = np.zeros((size, size, 3), dtype=np.float32)
    batch = []
    for frame in frames:
        canvas[:] = frame[:size, :size]  # OK: TCL008
        batch.append(torch.tensor(canvas).permute(2, 0, 1))
    return torch.stack(batch)


def train(model, loader, epochs=10, lr=1e-3, device="cpu"):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    feature_maps = []

    def keep_features(module, inputs, output):
        feature_maps.append(output)  # HAZARD: TCL009

    handle = model.backbone.register_forward_hook(keep_features)
    best_loss, best_state = float("inf"), None
    for epoch in range(epochs):
        model.train()
        epoch_loss = 0.0
        stats = {"hm": 0.0, "wh": 0.0}
        for images, hm, wh in loader:
            x = preprocess(images.to(device))
            pred_hm, pred_wh = model(x)
            assign = pred_hm.detach()
            assign.sigmoid_()  # HAZARD: TCL005
            hard_neg = (assign > 0.5).float() * (hm.unsqueeze(1) < 1).float()
            mask = (hm > 0).unsqueeze(1).float()
            loss_hm = focal_loss(pred_hm, hm.unsqueeze(1)) + 0.1 * (pred_hm * hard_neg).mean()
            loss_wh = F.l1_loss(pred_wh * mask, wh * mask)
            loss = loss_hm + 0.1 * loss_wh
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_loss += loss  # HAZARD: TCL009
            stats["hm"] += loss_hm.item()  # OK: TCL009
            stats["wh"] += loss_wh.item()
        print(f"epoch {epoch}: loss {float(epoch_loss):.4f} hm {stats['hm']:.3f}")
        if epoch_loss < best_loss:
            best_loss = epoch_loss.item()
            best_state = model.state_dict()  # HAZARD: TCL004
    handle.remove()
    model.load_state_dict(best_state)
    return model, feature_maps


@torch.no_grad()
def evaluate(model, loader, device="cpu"):
    model.eval()
    all_scores = []
    for images, hm, wh in loader:
        pred_hm, _ = model(preprocess_eval(images.to(device)))
        all_scores.append(decode_peaks(pred_hm.sigmoid()))  # OK: TCL009
    return torch.cat(all_scores)


def score_summary(model, loader):
    scores = evaluate(model, loader)
    iou_thresholds = torch.tensor([0.5, 0.75])  # OK: TCL002
    calib = torch.tensor(decode_peaks(model.last_heatmap, k=5))  # HAZARD: TCL002
    return scores.mean(), calib, iou_thresholds


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    imgs = rng.uniform(0, 255, size=(16, 64, 64, 3))
    boxes = [[(8, 8, 24, 30)] for _ in range(16)]
    ds = DetectionDataset(imgs, boxes)
    loader = DataLoader(ds, batch_size=4, shuffle=True)
    net, feats = train(CenterNet(), loader, epochs=2)
    print(score_summary(net, loader))
