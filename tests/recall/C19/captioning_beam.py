"""Show-attend-tell style captioner: CNN encoder, attention LSTM decoder, beam search decoding."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, enc_dim=64):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.ReLU(), nn.Conv2d(32, enc_dim, 3, 2, 1), nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(7)

    def forward(self, images):
        return self.pool(self.cnn(images)).flatten(2).transpose(1, 2)


class Attention(nn.Module):
    def __init__(self, enc_dim, dec_dim, att_dim):
        super().__init__()
        self.enc_att, self.dec_att = nn.Linear(enc_dim, att_dim), nn.Linear(dec_dim, att_dim)
        self.full_att = nn.Linear(att_dim, 1)
        self.alphas = []

    def forward(self, enc_out, h):
        att = self.full_att(torch.tanh(self.enc_att(enc_out) + self.dec_att(h).unsqueeze(1))).squeeze(2)
        alpha = F.softmax(att, dim=1)
        self.alphas.append(alpha)  # HAZARD: TCL009
        return (enc_out * alpha.unsqueeze(2)).sum(1), alpha


class Decoder(nn.Module):
    def __init__(self, vocab_size, emb_dim=64, enc_dim=64, dec_dim=128, att_dim=64, pad_idx=0):
        super().__init__()
        self.vocab_size, self.pad_idx = vocab_size, pad_idx
        self.embedding = nn.Embedding(vocab_size, emb_dim)
        self.attention = Attention(enc_dim, dec_dim, att_dim)
        self.lstm = nn.LSTMCell(emb_dim + enc_dim, dec_dim)
        self.init_h, self.init_c = nn.Linear(enc_dim, dec_dim), nn.Linear(enc_dim, dec_dim)
        self.fc = nn.Linear(dec_dim, vocab_size)
        nn.init.uniform_(self.fc.weight, -0.1, 0.1)  # OK: TCL007
        self.init_embed = self.embedding.weight.clone()  # HAZARD: TCL003

    def load_glove(self, glove: np.ndarray):
        self.embedding.weight.data.copy_(torch.from_numpy(glove))  # HAZARD: TCL001
        self.embedding.weight[self.pad_idx].zero_()  # HAZARD: TCL007

    def init_state(self, enc_out):
        mean = enc_out.mean(1)
        return self.init_h(mean), self.init_c(mean)

    def step(self, enc_out, words, h, c):
        ctx, alpha = self.attention(enc_out, h)
        h, c = self.lstm(torch.cat([self.embedding(words), ctx], 1), (h, c))
        return self.fc(h), h, c, alpha

    def forward(self, enc_out, caps):
        h, c = self.init_state(enc_out)
        logits = []
        for t in range(caps.size(1) - 1):
            out, h, c, _ = self.step(enc_out, caps[:, t], h, c)
            logits.append(out)
        return torch.stack(logits, 1)


def caption_targets(captions, vocab, max_len=20):
    ids = [[vocab.get(w, vocab["<unk>"]) for w in cap.split()][:max_len] for cap in captions]
    ids = [[vocab["<start>"]] + s + [vocab["<end>"]] + [vocab["<pad>"]] * (max_len - len(s)) for s in ids]
    return torch.LongTensor(ids)  # HAZARD: TCL006


def train(encoder, decoder, loader, vocab, epochs=10, lam=1.0):
    params = list(encoder.parameters()) + list(decoder.parameters())
    opt = torch.optim.Adam(params, lr=4e-4)
    unk, pad = vocab["<unk>"], vocab["<pad>"]
    epoch_loss, best, best_bleu = 0.0, None, -1.0
    for epoch in range(epochs):
        for images, batch_caps in loader:
            caps = batch_caps.to("cpu")
            caps[caps == unk] = pad  # HAZARD: TCL008
            lengths = (batch_caps != pad).sum(1)
            lengths_t = torch.tensor(lengths)  # HAZARD: TCL002
            logits = decoder(encoder(images), caps)
            greedy = logits.detach()
            greedy[..., pad] = float("-inf")  # HAZARD: TCL005
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), caps[:, 1:].reshape(-1), ignore_index=pad)
            alphas = torch.stack(decoder.attention.alphas, 1)
            loss = loss + lam * ((1.0 - alphas.sum(1)) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_loss += loss.item()  # OK: TCL009
            token_acc = (greedy.argmax(-1) == caps[:, 1:]).float().mean()
        if token_acc.item() > best_bleu:
            best_bleu = token_acc.item()
            best = decoder.state_dict()  # HAZARD: TCL004
    torch.save(best, "best_decoder.pt")
    return lengths_t


@torch.no_grad()
def beam_search(encoder, decoder, image, vocab, k=3, max_len=20):
    enc_out = encoder(image.unsqueeze(0)).expand(k, -1, -1)
    seqs = torch.full((k, 1), vocab["<start>"], dtype=torch.long)  # OK: TCL006
    top_scores = torch.zeros(k)
    h, c = decoder.init_state(enc_out)
    complete, complete_scores = [], []
    for step in range(max_len):
        logits, h, c, _ = decoder.step(enc_out, seqs[:, -1], h, c)
        scores = top_scores.unsqueeze(1) + F.log_softmax(logits, 1)
        flat = scores.view(-1) if step > 0 else scores[0]
        top_scores, idx = flat.topk(len(seqs))
        prev, nxt = idx // decoder.vocab_size, idx % decoder.vocab_size
        seqs = torch.cat([seqs[prev], nxt.unsqueeze(1)], 1)
        h, c, enc_out = h[prev], c[prev], enc_out[prev]
        done = nxt == vocab["<end>"]
        for s, sc in zip(seqs[done], top_scores[done]):
            complete.append(s.tolist())
            complete_scores.append(sc)  # OK: TCL009
        keep = ~done
        if keep.sum() == 0:
            break
        seqs, top_scores, h, c, enc_out = seqs[keep], top_scores[keep], h[keep], c[keep], enc_out[keep]
    decoder.attention.alphas.clear()
    if not complete:
        return seqs[0].tolist()
    return complete[int(torch.stack(complete_scores).argmax())]
