"""Top-k mixture-of-experts feed-forward layer with a Switch-style load-balancing loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MoELayer(nn.Module):
    def __init__(self, d_model=16, d_hidden=32, n_experts=4, top_k=2, capacity_factor=1.25):
        super().__init__()
        self.n_experts, self.top_k, self.capacity_factor = n_experts, top_k, capacity_factor
        self.gate = nn.Linear(d_model, n_experts, bias=False)
        self.expert_w1 = nn.Parameter(torch.Tensor(n_experts, d_model, d_hidden))  # HAZARD: TCL006
        self.expert_w2 = nn.Parameter(torch.empty(n_experts, d_hidden, d_model))  # OK: TCL006
        self.expert_w1.data.normal_(0, 0.02)  # HAZARD: TCL001
        nn.init.normal_(self.expert_w2, std=0.02)  # OK: TCL007
        self.aux_losses = []
        self.router_z_history = []
        self.register_buffer("tokens_seen", torch.zeros(n_experts))

    def forward(self, x):
        b, t, d = x.shape
        flat = x.reshape(-1, d)
        logits = self.gate(flat)
        probs = logits.softmax(-1)
        top_p, top_i = probs.topk(self.top_k, dim=-1)
        top_p = top_p / top_p.sum(-1, keepdim=True)
        capacity = int(self.capacity_factor * flat.size(0) * self.top_k / self.n_experts)
        out = torch.zeros_like(flat)
        dispatch = F.one_hot(top_i[:, 0], self.n_experts).float()
        tokens_per_expert = dispatch.sum(0)
        overflow = torch.zeros(flat.size(0), dtype=torch.bool)
        for e in range(self.n_experts):
            rows = (top_i == e).any(-1).nonzero().squeeze(-1)
            overflow[rows[capacity:]] = True
        flat[overflow] = 0.0  # HAZARD: TCL008
        for e in range(self.n_experts):
            for k in range(self.top_k):
                sel = (top_i[:, k] == e).nonzero().squeeze(-1)
                if sel.numel():
                    h = F.gelu(flat[sel] @ self.expert_w1[e])
                    out = out.index_add(0, sel, top_p[sel, k:k + 1] * (h @ self.expert_w2[e]))
        balance = self.n_experts * (tokens_per_expert / flat.size(0) * probs.mean(0)).sum()
        self.aux_losses.append(balance)  # OK: TCL009
        z_loss = torch.logsumexp(logits, -1).pow(2).mean()
        self.router_z_history.append(z_loss)  # HAZARD: TCL009
        with torch.no_grad():
            self.tokens_seen += tokens_per_expert  # OK: TCL009
        return x + out.view(b, t, d)

    def revive_dead_experts(self, min_share=0.02):
        share = self.tokens_seen.detach()
        share.div_(share.sum().clamp_min(1.0))  # HAZARD: TCL005
        for e in (share < min_share).nonzero().flatten().tolist():
            self.expert_w1[e].normal_(0, 0.02)  # HAZARD: TCL007
            with torch.no_grad():
                self.expert_w2[e].normal_(0, 0.02)  # OK: TCL007
        return share, self.tokens_seen.sum()


class TinyMoEModel(nn.Module):
    def __init__(self, vocab=50, d_model=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model)
        self.moe = MoELayer(d_model)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, ids):
        return self.head(self.moe(self.emb(ids)))


def train(model, batches, aux_weight=0.01, lr=1e-3):
    moe = model.moe
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    init_experts = [w.clone() for w in (moe.expert_w1, moe.expert_w2)]  # HAZARD: TCL003
    start_experts = [w.detach().clone() for w in (moe.expert_w1, moe.expert_w2)]  # OK: TCL003
    router_before = moe.gate.weight.data  # HAZARD: TCL004
    log = []
    for step, (ids, targets) in enumerate(batches):
        logits = model(ids)
        task = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        aux_logged = torch.tensor(moe.aux_losses)  # HAZARD: TCL002
        aux = torch.stack(moe.aux_losses).sum()  # OK: TCL002
        loss = task + aux_weight * aux
        opt.zero_grad()
        loss.backward()
        opt.step()
        moe.aux_losses.clear()
        log.append({"task": task.item(), "aux": aux_logged.sum().item()})
        if step % 50 == 49:
            moe.revive_dead_experts()
    moved = (moe.gate.weight - router_before).abs().max().item()
    drift = [(w - w0).norm().item() for w, w0 in zip((moe.expert_w1, moe.expert_w2), start_experts)]
    return log, moved, drift, init_experts


if __name__ == "__main__":
    torch.manual_seed(0)
    data = [(torch.randint(0, 50, (2, 8)), torch.randint(0, 50, (2, 8))) for _ in range(3)]
    print(train(TinyMoEModel(), data)[1:3])
