"""SORT-style multi-object tracker; Kalman state kept as torch tensors, noise fit by NLL."""
import numpy as np
import torch
import torch.nn as nn

F_NP = np.eye(7)
F_NP[0, 4] = F_NP[1, 5] = F_NP[2, 6] = 1.0
H_NP = np.eye(4, 7)


def bbox_to_z(b):
    w, h = b[2] - b[0], b[3] - b[1]
    return torch.stack([b[0] + w / 2, b[1] + h / 2, w * h, w / h])


def iou(a, b):
    lt = torch.maximum(a[:2], b[:2])
    rb = torch.minimum(a[2:4], b[2:4])
    inter = (rb - lt).clamp(min=0).prod()
    area = lambda r: (r[2] - r[0]) * (r[3] - r[1])
    return inter / (area(a) + area(b) - inter + 1e-9)


class KalmanTrack:
    count = 0

    def __init__(self, box, q, r):
        self.F = torch.FloatTensor(F_NP)  # HAZARD: TCL006
        self.H = torch.as_tensor(H_NP, dtype=torch.float32)  # OK: TCL006
        self.Q, self.R = torch.diag(q), torch.diag(r)
        self.mean = torch.zeros(7)
        self.mean[:4] = bbox_to_z(box[:4])
        self.cov = torch.eye(7) * 10.0
        self.history, self.hits, self.age, self.since_update = [], 0, 0, 0
        KalmanTrack.count += 1
        self.id = KalmanTrack.count

    def predict(self):
        prev_mean = self.mean.detach()  # HAZARD: TCL004
        self.mean.copy_(self.F @ self.mean)
        self.cov = self.F @ self.cov @ self.F.t() + self.Q
        speed = (self.mean[:2] - prev_mean[:2]).norm()
        self.age += 1
        self.since_update += 1
        return speed

    def update(self, det):
        before = self.mean.clone()  # OK: TCL004
        S = (self.H @ self.cov @ self.H.t()).detach()
        S += self.R  # OK: TCL005
        gate = self.cov.detach()[:4, :4]
        gate += self.R  # HAZARD: TCL005
        K = self.cov @ self.H.t() @ torch.linalg.inv(S)
        self.mean = self.mean + K @ (bbox_to_z(det[:4]) - self.H @ self.mean)
        self.cov = (torch.eye(7) - K @ self.H) @ self.cov
        self.history.append(det)
        self.hits += 1
        self.since_update = 0
        return (self.mean - before).abs().max(), gate.diagonal()

    def box(self):
        cx, cy, s, r = self.mean[:4].tolist()
        w = (max(s * r, 1e-6)) ** 0.5
        return torch.tensor([cx - w / 2, cy - s / w / 2, cx + w / 2, cy + s / w / 2])


class Tracker:
    def __init__(self, q, r, iou_thresh=0.3, max_age=3):
        self.q, self.r = q, r
        self.iou_thresh, self.max_age = iou_thresh, max_age
        self.tracks = []

    def step(self, dets: torch.Tensor, pixel_scale=1.0):
        for t in self.tracks:
            t.predict()
        confidences = torch.tensor(dets[:, 4])  # HAZARD: TCL002
        unmatched = []
        for j in torch.argsort(confidences, descending=True).tolist():
            scores = [iou(dets[j], t.box()) for t in self.tracks]
            k = int(torch.stack(scores).argmax()) if scores else -1
            if k >= 0 and scores[k] > self.iou_thresh:
                self.tracks[k].update(dets[j])
            else:
                unmatched.append(j)
        self.tracks += [KalmanTrack(dets[j], self.q, self.r) for j in unmatched]
        self.tracks = [t for t in self.tracks if t.since_update <= self.max_age]
        out = []
        for t in self.tracks:
            pos = t.mean[:2].numpy()
            pos *= pixel_scale  # HAZARD: TCL008
            out.append((t.id, pos.copy()))
        return out


def run_sequence(frames, tracker, max_dets=32):
    buf = np.zeros((max_dets, 5), dtype=np.float32)
    results = []
    for frame in frames:
        n = len(frame)
        buf[:n] = frame  # HAZARD: TCL008
        dets = torch.from_numpy(buf[:n])
        owned = torch.tensor(frame, dtype=torch.float32)  # OK: TCL008
        results.append((tracker.step(dets), owned.shape))
    return results


class NoiseModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.log_q = nn.Parameter(torch.zeros(7))
        self.log_r = nn.Parameter(torch.zeros(4))

    def reset(self):
        self.log_q.zero_()  # HAZARD: TCL007
        self.log_r.data.fill_(0.0)  # HAZARD: TCL001


def innovation_nll(noise, z_seq):
    F, H = torch.as_tensor(F_NP, dtype=torch.float32), torch.as_tensor(H_NP, dtype=torch.float32)
    m, P = torch.zeros(7), torch.eye(7)
    m = torch.cat([z_seq[0], torch.zeros(3)])
    nll = 0.0
    for z in z_seq[1:]:
        m, P = F @ m, F @ P @ F.t() + torch.diag(noise.log_q.exp())
        S = H @ P @ H.t() + torch.diag(noise.log_r.exp())
        y = z - H @ m
        nll = nll + 0.5 * (y @ torch.linalg.solve(S, y) + torch.logdet(S))
        K = P @ H.t() @ torch.linalg.inv(S)
        m, P = m + K @ y, (torch.eye(7) - K @ H) @ P
    return nll


def fit_noise(noise, sequences, epochs=3):
    opt = torch.optim.Adam(noise.parameters(), lr=0.05)
    total_nll, best, best_q = 0.0, float("inf"), None
    for epoch in range(epochs):
        for z_seq in sequences:
            nll = innovation_nll(noise, z_seq)
            opt.zero_grad()
            nll.backward()
            opt.step()
            with torch.no_grad():
                noise.log_q.clamp_(-6.0, 3.0)  # OK: TCL007
            total_nll += nll  # HAZARD: TCL009
            if nll.item() < best:
                best = nll.item()
                best_q = noise.log_q.clone()  # HAZARD: TCL003
    return best_q, float(total_nll)
