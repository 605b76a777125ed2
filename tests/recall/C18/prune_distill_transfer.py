"""Width pruning + knowledge distillation: a slim student initialised from a copy of the teacher."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in=20, hidden=64, n_classes=5):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def snapshot_params(model):
    return [p.clone() for p in model.parameters()]  # HAZARD: TCL003


def channel_importance(layer):
    w = layer.weight.detach()
    w.abs_()  # HAZARD: TCL005
    return w.sum(dim=1)


def channel_importance_loop(layer):
    scores = torch.FloatTensor(layer.weight.size(0))  # HAZARD: TCL006
    for i in range(layer.weight.size(0)):
        scores[i] = layer.weight[i].detach().abs().sum()
    return scores


def transfer_pruned(teacher, student, keep):
    pairs = [(teacher.fc1, student.fc1, None, keep), (teacher.fc2, student.fc2, keep, keep),
             (teacher.fc3, student.fc3, keep, None)]
    for src, dst, in_idx, out_idx in pairs:
        w = src.weight
        if out_idx is not None:
            w = w[out_idx]
        if in_idx is not None:
            w = w[:, in_idx]
        dst.weight.data.copy_(w)  # HAZARD: TCL001
        with torch.no_grad():
            dst.bias.copy_(src.bias if out_idx is None else src.bias[out_idx])  # OK: TCL007


def soften(logits: torch.Tensor, T):
    z = torch.reshape(logits, (-1, logits.size(-1)))
    z.div_(T)  # HAZARD: TCL008
    return F.log_softmax(z, dim=-1)


def mask_pruned_grads(layer, mask):
    flat = layer.weight.grad.flatten()
    flat[~mask.flatten()] = 0.0  # HAZARD: TCL008


def distill(teacher, student, data, epochs=3, T=4.0, alpha=0.7, sparsity=0.3):
    teacher.eval()
    teacher.requires_grad_(False)
    teacher.fc3.weight.mul_(1.0 / T)  # OK: TCL007
    opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    pretrained = snapshot_params(student)
    teacher_ref = [p.detach().clone() for p in teacher.parameters()]  # OK: TCL003
    with torch.no_grad():
        thresh = student.fc2.weight.abs().flatten().kthvalue(int(sparsity * student.fc2.weight.numel())).values
    mask = student.fc2.weight.abs() > thresh
    student.fc2.weight[~mask] = 0.0  # HAZARD: TCL007
    feats = {}

    def keep_fc2(module, inputs, output):
        feats["fc2"] = output  # OK: TCL009

    student.fc2.register_forward_hook(keep_fc2)
    kd_losses, hard_total = [], 0.0
    for epoch in range(epochs):
        for x, y in data:
            with torch.no_grad():
                t_logits = teacher(x)
            s_logits = student(x)
            kd = F.kl_div(soften(s_logits, T), F.softmax(t_logits, -1), reduction="batchmean") * T * T
            hard = F.cross_entropy(s_logits, y)
            loss = alpha * kd + (1 - alpha) * hard + 1e-4 * feats["fc2"].abs().mean()
            opt.zero_grad()
            loss.backward()
            mask_pruned_grads(student.fc2, mask)
            opt.step()
            kd_losses.append(kd)  # HAZARD: TCL009
            hard_total += hard.item()  # OK: TCL009
    drift = sum((p - p0).norm() for p, p0 in zip(student.parameters(), pretrained))
    return kd_losses, hard_total, drift, teacher_ref


def compress(model, data, ratio=0.5):
    teacher = copy.copy(model)  # HAZARD: TCL004
    frozen = copy.deepcopy(model)  # OK: TCL004
    hidden = model.fc1.out_features
    k = int(hidden * ratio)
    order = torch.argsort(channel_importance(model.fc1), descending=True)
    keep = torch.LongTensor(order[:k])  # HAZARD: TCL002
    keep_sorted = order[:k].sort().values.clone()  # OK: TCL002
    student = MLP(model.fc1.in_features, k, model.fc3.out_features)
    transfer_pruned(frozen, student, keep_sorted)
    model.fc1.reset_parameters()
    result = distill(frozen, student, data)
    return student, teacher, keep, result


if __name__ == "__main__":
    torch.manual_seed(0)
    data = [(torch.randn(8, 20), torch.randint(0, 5, (8,))) for _ in range(4)]
    out = compress(MLP(), data)
    print(len(out[3][0]), out[3][1])
