"""Word-level LSTM language model, truncated BPTT with hidden-state carrying."""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Dictionary:
    def __init__(self):
        self.word2idx, self.idx2word = {}, []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]


class Corpus:
    def __init__(self, lines):
        self.dictionary = Dictionary()
        self.dictionary.add_word("<pad>")
        self.data = self.tokenize(lines)

    def tokenize(self, lines):
        n_tokens = 0
        for line in lines:
            words = line.split() + ["<eos>"]
            n_tokens += len(words)
            for w in words:
                self.dictionary.add_word(w)
        ids = torch.LongTensor(n_tokens)  # HAZARD: TCL006
        k = 0
        for line in lines:
            for w in line.split() + ["<eos>"]:
                ids[k] = self.dictionary.word2idx[w]
                k += 1
        return ids

    def tokenize_line(self, line):
        return torch.tensor([self.dictionary.word2idx[w] for w in line.split()], dtype=torch.long)  # OK: TCL006


def batchify(data: torch.Tensor, bsz: int) -> torch.Tensor:
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def get_batch(source: torch.Tensor, i: int, bptt: int):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len]


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return torch.tensor(h)  # HAZARD: TCL002
    return tuple(repackage_hidden(v) for v in h)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp=64, nhid=128, nlayers=2, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers, self.nhid = nlayers, nhid
        self.last_hidden = None
        self.init_weights()

    def init_weights(self, initrange=0.1):
        self.encoder.weight.data.uniform_(-initrange, initrange)  # HAZARD: TCL001
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)  # OK: TCL007
        self.decoder.bias.zero_()  # HAZARD: TCL007

    def forward(self, inp, hidden):
        emb = self.drop(self.encoder(inp))
        output, (h, c) = self.rnn(emb, hidden)
        self.last_hidden = (h.clone(), c.clone())  # HAZARD: TCL003
        output = self.drop(output)
        return self.decoder(output), (h, c), output

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(self.nlayers, bsz, self.nhid), w.new_zeros(self.nlayers, bsz, self.nhid))


def train_epoch(model, train_data, criterion, lr, bptt=35, clip=0.25, ar_alpha=2.0, pad_idx=0, bsz=20):
    model.train()
    hidden = model.init_hidden(bsz)
    epoch_loss = 0.0
    log_loss = 0.0
    n_real_tokens = 0
    start = time.time()
    init_emb = model.encoder.weight.detach()  # HAZARD: TCL004
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i, bptt)
        y = targets.flatten()
        y[y == pad_idx] = -100  # HAZARD: TCL008
        hidden = tuple(h.detach() for h in hidden)
        model.zero_grad()
        logits, hidden, rnn_out = model(data, hidden)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y, ignore_index=-100)
        loss = loss + ar_alpha * rnn_out.pow(2).mean()
        act = rnn_out.detach()
        act.clamp_(-3.0, 3.0)  # HAZARD: TCL005
        act_sat = (act.abs() >= 3.0).float().mean().item()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)  # HAZARD: TCL001
        epoch_loss = epoch_loss + loss  # HAZARD: TCL009
        log_loss += loss.item()  # OK: TCL009
        n_real_tokens += int((targets != pad_idx).sum())
        if batch % 200 == 0 and batch > 0:
            cur = log_loss / 200
            print(f"| batch {batch} | ms/batch {(time.time() - start) * 5:.1f} | loss {cur:.2f} | "
                  f"ppl {math.exp(cur):.1f} | sat {act_sat:.3f}")
            log_loss, start = 0.0, time.time()
    drift = (model.encoder.weight.detach() - init_emb).norm().item()
    print(f"embedding drift this epoch: {drift:.4f}, tokens {n_real_tokens}")
    return float(epoch_loss) / (batch + 1)


def sgd_step_safe(model, lr):
    with torch.no_grad():
        for p in model.parameters():
            p.add_(p.grad, alpha=-lr)  # OK: TCL007


def evaluate(model, data_source, criterion, bptt=35, bsz=10):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(bsz)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i, bptt)
            logits, hidden, _ = model(data, hidden)
            total_loss += len(data) * criterion(logits.view(-1, logits.size(-1)), targets.reshape(-1))  # OK: TCL009
    return float(total_loss) / (len(data_source) - 1)


def main(epochs=3, lr=20.0):
    lines = ["the cat sat on the mat", "the dog ate my homework", "a b c d e f g"] * 200
    corpus = Corpus(lines)
    train_data = batchify(corpus.data, 20)
    val_data = batchify(corpus.data, 10)
    model = RNNModel(len(corpus.dictionary.idx2word))
    criterion = nn.CrossEntropyLoss()
    best_val = None
    for epoch in range(1, epochs + 1):
        train_epoch(model, train_data, criterion, lr)
        val_loss = evaluate(model, val_data, criterion)
        print(f"| end of epoch {epoch} | valid ppl {math.exp(val_loss):8.2f}")
        if best_val is None or val_loss < best_val:
            torch.save(model.state_dict(), "/tmp/lstm_lm.pt")  # OK: TCL004
            best_val = val_loss
        else:
            lr /= 4.0


if __name__ == "__main__":
    main()
