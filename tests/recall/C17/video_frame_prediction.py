"""Next-frame prediction with a ConvGRU; clips are read frame by frame from numpy buffers."""
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class FakeVideoReader:
    """Stands in for cv2.VideoCapture / decord: returns HxWx3 uint8 frames."""

    def __init__(self, n_frames=64, h=32, w=32, seed=0):
        self.rng = np.random.default_rng(seed)
        self.n, self.h, self.w, self.i = n_frames, h, w, 0

    def read(self):
        self.i += 1
        frame = (np.sin(self.i / 5.0 + np.arange(self.w) / 4.0) * 127 + 128).astype(np.uint8)
        return np.broadcast_to(frame[None, :, None], (self.h, self.w, 3))


def read_clip(reader, n_frames):
    buf = np.empty((reader.h, reader.w, 3), dtype=np.uint8)
    clip = []
    for _ in range(n_frames):
        buf[...] = reader.read()  # HAZARD: TCL008
        clip.append(torch.from_numpy(buf).permute(2, 0, 1))
    return torch.stack(clip).float() / 255.0


def read_clip_safe(reader, n_frames):
    buf = np.empty((reader.h, reader.w, 3), dtype=np.uint8)
    clip = []
    for _ in range(n_frames):
        buf[...] = reader.read()  # OK: TCL008
        clip.append(torch.tensor(buf).permute(2, 0, 1))
    return torch.stack(clip).float() / 255.0


class FrameBuffer:
    def __init__(self, maxlen=8):
        self.frames = deque(maxlen=maxlen)

    def push(self, frame_np):
        self.frames.append(torch.FloatTensor(frame_np))  # HAZARD: TCL006

    def as_batch(self):
        return torch.tensor(list(self.frames))  # HAZARD: TCL002

    def as_batch_safe(self):
        return torch.stack(list(self.frames))


class ConvGRUCell(nn.Module):
    def __init__(self, cin, chid, k=3):
        super().__init__()
        self.gates = nn.Conv2d(cin + chid, 2 * chid, k, padding=k // 2)
        self.cand = nn.Conv2d(cin + chid, chid, k, padding=k // 2)
        self.chid = chid
        self.h0 = nn.Parameter(torch.zeros(1, chid, 1, 1))
        self.gates.weight.data.normal_(0.0, 0.02)  # HAZARD: TCL001

    def reset(self):
        self.h0.zero_()  # HAZARD: TCL007

    def forward(self, x, h):
        if h is None:
            h = self.h0.expand(x.size(0), -1, x.size(2), x.size(3))
        z, r = torch.sigmoid(self.gates(torch.cat([x, h], 1))).chunk(2, 1)
        n = torch.tanh(self.cand(torch.cat([x, r * h], 1)))
        return (1 - z) * h + z * n


class FramePredictor(nn.Module):
    def __init__(self, chid=16):
        super().__init__()
        self.cell = ConvGRUCell(3, chid)
        self.out = nn.Conv2d(chid, 3, 1)
        self.last_pred = None

    def forward(self, frames, horizon=1):
        h = None
        for t in range(frames.size(0)):
            h = self.cell(frames[t], h)
        preds = []
        for _ in range(horizon):
            pred = torch.sigmoid(self.out(h))
            preds.append(pred)
            h = self.cell(pred, h)
        self.last_pred = pred.clone()  # HAZARD: TCL003
        return torch.stack(preds)


def train(model, clips, epochs=3, lr=1e-3, context=6):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    total_mse = 0.0
    last_good = model.state_dict()  # HAZARD: TCL004
    for epoch in range(epochs):
        for clip in clips:
            inp, target = clip[:context].unsqueeze(1), clip[context:context + 1].unsqueeze(1)
            pred = model(inp)
            loss = F.mse_loss(pred, target)
            prev_frame = pred.detach()
            prev_frame.clamp_(0.05, 0.95)  # HAZARD: TCL005
            if not torch.isfinite(loss):
                model.load_state_dict(last_good)
                continue
            opt.zero_grad()
            loss.backward()
            opt.step()
            total_mse = total_mse + loss  # HAZARD: TCL009
        print(f"epoch {epoch}: mean mse {float(total_mse) / ((epoch + 1) * len(clips)):.4f}")
    return model


def rollout_eval(model, clips, context=6, horizon=2):
    model.eval()
    val_preds, errs = [], []
    for clip in clips:
        pred = model(clip[:context].unsqueeze(1), horizon=horizon)
        val_preds.append(pred)  # HAZARD: TCL009
        errs.append(F.mse_loss(pred, clip[context:context + horizon].unsqueeze(1)).item())  # OK: TCL009
    model.train()
    return val_preds, float(np.mean(errs))


def stream_predict(model, reader, steps=10):
    obs = reader.read().astype(np.float32) / 255.0
    obs_t = torch.from_numpy(obs).permute(2, 0, 1)[None]
    obs -= obs.mean()  # HAZARD: TCL008
    with torch.no_grad():
        return model(obs_t.unsqueeze(0))


if __name__ == "__main__":
    reader = FakeVideoReader()
    clips = [read_clip(reader, 8) for _ in range(4)]
    model = FramePredictor()
    train(model, clips)
    preds, err = rollout_eval(model, clips)
    print("rollout mse", err)
