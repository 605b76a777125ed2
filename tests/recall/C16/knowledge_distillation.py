"""Teacher -> student knowledge distillation for image classification.

Soft-target KD with a learnable temperature, FitNet-style hint energy taken
from a forward hook, an L2-SP penalty towards the student's starting weights
and an EMA copy of the student for evaluation.
"""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def small_cnn(width):
    return nn.Sequential(
        nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, 10),
    )


class Distiller:
    def __init__(self, teacher, student, class_freq: np.ndarray, T=4.0, alpha=0.9,
                 sp_weight=1e-3, ema_decay=0.999, device="cpu"):
        self.teacher = teacher.eval().to(device)
        self.student = student.to(device)
        self.ema = copy.deepcopy(student).eval()
        self.device = device
        self.alpha = alpha
        self.sp_weight = sp_weight
        self.ema_decay = ema_decay
        self.log_T = nn.Parameter(torch.tensor(float(np.log(T))))
        self.class_weights = torch.FloatTensor(1.0 / class_freq)  # HAZARD: TCL006
        self.opt = torch.optim.SGD(list(student.parameters()) + [self.log_T], lr=0.05, momentum=0.9)
        self.start_params = {n: p.clone() for n, p in student.named_parameters()}  # HAZARD: TCL003
        self.act_energy = 0.0
        student[2].register_forward_hook(self._hint_hook)

    def _hint_hook(self, module, inputs, output):
        self.act_energy += output.pow(2).mean()  # HAZARD: TCL009

    def l2_sp(self):
        return sum(((p - self.start_params[n]) ** 2).sum()
                   for n, p in self.student.named_parameters())

    def update_ema(self):
        for p_s, p_e in zip(self.student.parameters(), self.ema.parameters()):
            p_e.data.mul_(self.ema_decay).add_(p_s.data, alpha=1 - self.ema_decay)  # HAZARD: TCL001

    @torch.no_grad()
    def update_ema_safe(self):
        for p_s, p_e in zip(self.student.parameters(), self.ema.parameters()):
            p_e.mul_(self.ema_decay).add_(p_s, alpha=1 - self.ema_decay)  # OK: TCL007

    def cutout(self, images, size=8):
        x = images.to(self.device)
        y0, x0 = np.random.randint(0, images.size(-1) - size, 2)
        x[:, :, y0:y0 + size, x0:x0 + size] = 0.0  # HAZARD: TCL008
        with torch.no_grad():
            t_logits = self.teacher(images.to(self.device))
        return x, t_logits

    def kd_step(self, images, labels):
        x, t_logits = self.cutout(images)
        soft = t_logits.detach()
        soft /= self.log_T.exp().detach()  # HAZARD: TCL005
        teacher_conf = t_logits.softmax(1).max(1).values.mean()
        s_logits = self.student(x)
        T = self.log_T.exp()
        kd = F.kl_div(F.log_softmax(s_logits / T, 1), F.softmax(soft, 1), reduction="batchmean") * T * T
        ce = F.cross_entropy(s_logits, labels.to(self.device), weight=self.class_weights)
        loss = self.alpha * kd + (1 - self.alpha) * ce + self.sp_weight * self.l2_sp()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.log_T.clamp_(np.log(1.0), np.log(20.0))  # HAZARD: TCL007
        self.update_ema()
        return loss, kd, ce, teacher_conf

    def fit(self, loader, epochs=3):
        start_state = self.student.state_dict()  # HAZARD: TCL004
        reference = copy.deepcopy(self.student.state_dict())  # OK: TCL004
        total_kd = 0.0
        for epoch in range(epochs):
            total_ce = 0.0
            for images, labels in loader:
                loss, kd, ce, conf = self.kd_step(images, labels)
                total_kd = total_kd + kd  # HAZARD: TCL009
                total_ce += ce.item()  # OK: TCL009
                log_row = torch.tensor([kd, ce])  # HAZARD: TCL002
                log_row_ok = torch.stack([kd.detach(), ce.detach()])  # OK: TCL002
            with torch.no_grad():
                self.log_T.clamp_(np.log(1.0), np.log(20.0))  # OK: TCL007
            print(f"epoch {epoch}: ce {total_ce:.3f} kd {float(total_kd):.3f} "
                  f"T {self.log_T.exp().item():.2f} last {log_row.tolist()} {log_row_ok.tolist()}")
        drift = sum((p.detach() - start_state[n]).norm().item()
                    for n, p in self.student.named_parameters())
        moved = sum((p.detach() - reference[n]).norm().item()
                    for n, p in self.student.named_parameters())
        return drift, moved
