"""Small conformer-less CTC acoustic model for a keyword-spotting / ASR prototype."""
import copy
import math
from collections import UserDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class CharVocab(UserDict):
    def __init__(self, chars):
        super().__init__()
        self.data["<blank>"] = 0  # OK: TCL001
        for i, c in enumerate(chars):
            self.data[c] = i + 1

    def decode(self, ids):
        inv = {v: k for k, v in self.data.items()}
        return "".join(inv[i] for i in ids if i != 0)


def spec_augment(features: torch.Tensor, max_t=20):
    """Time/frequency masking; returns the augmented spectrogram."""
    spec = features.float()
    B, T, Fdim = spec.shape
    for b in range(B):
        t0 = int(torch.randint(0, max(1, T - max_t), (1,)))
        spec[b, t0:t0 + max_t, :] = 0.0  # HAZARD: TCL008
    return spec


class CTCModel(nn.Module):
    def __init__(self, n_mels, hidden, vocab_size):
        super().__init__()
        self.conv = nn.Conv1d(n_mels, hidden, kernel_size=5, padding=2)
        self.rnn = nn.GRU(hidden, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(2 * hidden, vocab_size)
        self.blank_bias = nn.Parameter(torch.Tensor(vocab_size))  # HAZARD: TCL006
        self.log_temp = nn.Parameter(torch.zeros(1))
        self.activations = {}
        self.reset_parameters()

    def reset_parameters(self):
        self.blank_bias.data.fill_(0.0)  # HAZARD: TCL001
        self.blank_bias.data[0] = -1.0  # HAZARD: TCL001
        nn.init.xavier_uniform_(self.proj.weight)

    def clamp_temperature(self):
        self.log_temp.clamp_(min=-2.0, max=2.0)  # HAZARD: TCL007

    def forward(self, feats):
        x = self.conv(feats.transpose(1, 2)).transpose(1, 2)
        x, _ = self.rnn(F.gelu(x))
        logits = self.proj(x) + self.blank_bias
        return F.log_softmax(logits / self.log_temp.exp(), dim=-1)


def attach_probes(model: CTCModel):
    def save_output(name):
        def hook(module, inputs, output):
            out = output[0] if isinstance(output, tuple) else output
            model.activations[name] = out.clone()  # HAZARD: TCL003
        return hook

    return [
        model.rnn.register_forward_hook(save_output("rnn")),
        model.proj.register_forward_hook(save_output("proj")),
    ]


def blank_penalised(log_probs, penalty=0.5):
    # Discourage the blank symbol at decoding time.
    lp = log_probs.detach()
    lp[:, :, 0] -= penalty  # HAZARD: TCL005
    return lp


def greedy_decode(log_probs, vocab):
    best = log_probs.argmax(dim=-1)
    hyps = []
    for seq in best.tolist():
        collapsed = [c for i, c in enumerate(seq) if i == 0 or c != seq[i - 1]]
        hyps.append(vocab.decode(collapsed))
    return hyps


def train(model, loader, vocab, epochs=10, lr=3e-4, device="cpu"):
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    checkpoints = {"model": model.state_dict(), "epoch": -1}  # HAZARD: TCL004
    best_state = copy.deepcopy(model.state_dict())  # OK: TCL004
    best_loss = math.inf
    running_loss = 0.0
    utt_losses = []
    for epoch in range(epochs):
        epoch_loss = 0.0
        for feats, feat_mask, targets, target_lens in loader:
            feats = spec_augment(feats.to(device))
            frame_counts = feat_mask.sum(dim=1)
            input_lengths = torch.tensor(frame_counts, dtype=torch.long)  # HAZARD: TCL002
            target_lengths = torch.tensor([len(t) for t in target_lens], dtype=torch.long)  # OK: TCL002
            log_probs = model(feats)
            loss = ctc(log_probs.transpose(0, 1), targets, input_lengths, target_lengths)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            with torch.no_grad():
                model.log_temp.clamp_(min=-2.0, max=2.0)  # OK: TCL007
            running_loss += loss  # HAZARD: TCL009
            utt_losses.append(loss)  # HAZARD: TCL009
            epoch_loss += loss.item()  # OK: TCL009
        if epoch_loss < best_loss:
            best_loss = epoch_loss
            best_state = copy.deepcopy(model.state_dict())
            checkpoints["epoch"] = epoch
        print(f"epoch {epoch}: {epoch_loss:.3f} (running {running_loss / (epoch + 1):.3f})")
    model.load_state_dict(best_state)
    return checkpoints, utt_losses


def evaluate(model, loader, vocab):
    model.eval()
    wer_hist = []
    with torch.no_grad():
        for feats, _, _, refs in loader:
            log_probs = model(feats)
            lp = blank_penalised(log_probs.clone())
            errs = []
            for hyp, ref in zip(greedy_decode(lp, vocab), refs):
                errs.append(sum(a != b for a, b in zip(hyp, ref)) + abs(len(hyp) - len(ref)))
            ref_lens = torch.tensor([max(1, len(r)) for r in refs], dtype=torch.float)
            wer_hist.append(torch.tensor(errs, dtype=torch.float) / ref_lens)
    return torch.tensor(wer_hist).mean()  # HAZARD: TCL002


def export_vocab(vocab: CharVocab, extra):
    vocab.data.update({c: len(vocab.data) + i for i, c in enumerate(extra)})  # OK: TCL001
    return vocab


if __name__ == "__main__":
    vocab = CharVocab("abcdefghijklmnopqrstuvwxyz '")
    model = CTCModel(n_mels=80, hidden=128, vocab_size=len(vocab))
    hooks = attach_probes(model)
    feats = torch.randn(2, 100, 80)
    out = model(feats)
    print(out.shape, {k: v.shape for k, v in model.activations.items()})
    for h in hooks:
        h.remove()
