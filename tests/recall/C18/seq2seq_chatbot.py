"""Seq2seq chatbot: GRU encoder, Luong attention decoder, teacher forcing."""
import itertools
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, SOS, EOS, UNK = 0, 1, 2, 3


def zero_padding(batch, fill=PAD):
    return list(itertools.zip_longest(*batch, fillvalue=fill))


def batch_to_tensors(pairs):
    pairs.sort(key=lambda p: len(p[0]), reverse=True)
    inputs, outputs = zip(*pairs)
    lengths = torch.tensor([len(s) for s in inputs])  # OK: TCL002
    inp = torch.LongTensor(zero_padding(inputs))  # HAZARD: TCL006
    padded = zero_padding(outputs)
    mask = torch.tensor([[tok != PAD for tok in row] for row in padded], dtype=torch.bool)  # OK: TCL006
    target = torch.tensor(padded, dtype=torch.long)
    return inp, lengths, target, mask, max(len(s) for s in outputs)


class Encoder(nn.Module):
    def __init__(self, vocab, hidden, n_layers=2, device="cpu"):
        super().__init__()
        self.vocab, self.device = vocab, device
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, n_layers, bidirectional=True)

    def load_pretrained(self, vectors):
        self.embedding.weight.data.copy_(vectors)  # HAZARD: TCL001
        self.embedding.weight[PAD] = 0.0  # HAZARD: TCL007

    def forward(self, input_seq: torch.Tensor, lengths, hidden=None):
        input_seq = input_seq.to(self.device)
        input_seq[input_seq >= self.vocab] = UNK  # HAZARD: TCL008
        packed = nn.utils.rnn.pack_padded_sequence(self.embedding(input_seq), lengths)
        out, hidden = self.gru(packed, hidden)
        out, _ = nn.utils.rnn.pad_packed_sequence(out)
        half = out.size(-1) // 2
        return out[:, :, :half] + out[:, :, half:], hidden

    def export_embeddings(self):
        vecs = self.embedding.weight.detach()
        vecs /= vecs.norm(dim=1, keepdim=True).clamp_min(1e-8)  # HAZARD: TCL005
        return vecs


class AttnDecoder(nn.Module):
    def __init__(self, hidden, vocab, n_layers=2):
        super().__init__()
        self.n_layers = n_layers
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, n_layers)
        self.concat = nn.Linear(hidden * 2, hidden)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, step_input, hidden, enc_out):
        rnn_out, hidden = self.gru(self.embedding(step_input), hidden)
        scores = torch.sum(rnn_out * enc_out, dim=2).t()
        attn = F.softmax(scores, dim=1).unsqueeze(1)
        context = attn.bmm(enc_out.transpose(0, 1)).squeeze(1)
        concat = torch.tanh(self.concat(torch.cat((rnn_out.squeeze(0), context), 1)))
        return F.softmax(self.out(concat), dim=1), hidden


def masked_nll(probs, target, mask):
    n_total = mask.sum()
    ce = -torch.log(torch.gather(probs, 1, target.view(-1, 1)).squeeze(1) + 1e-9)
    return ce.masked_select(mask).mean(), n_total.item()


class ChatTrainer:
    def __init__(self, encoder, decoder, lr=1e-3, tf_ratio=0.9):
        self.encoder, self.decoder, self.tf_ratio = encoder, decoder, tf_ratio
        params = list(encoder.parameters()) + list(decoder.parameters())
        self.opt = torch.optim.Adam(params, lr=lr)
        self.context_state = None
        self.best = None
        self.loss_log = []

    def train_step(self, inp, lengths, target, mask, max_len):
        self.opt.zero_grad()
        enc_out, enc_hidden = self.encoder(inp, lengths, self.context_state)
        self.context_state = enc_hidden.clone()  # HAZARD: TCL003
        batch = inp.size(1)
        dec_in = torch.full((1, batch), SOS, dtype=torch.long)
        dec_hidden = enc_hidden[:self.decoder.n_layers]
        loss, print_losses, n_totals = 0, [], 0
        teacher = random.random() < self.tf_ratio
        for t in range(max_len):
            probs, dec_hidden = self.decoder(dec_in, dec_hidden, enc_out)
            if teacher:
                dec_in = target[t].view(1, -1)
            else:
                _, topi = probs.topk(1)
                dec_in = torch.tensor([topi[i][0] for i in range(batch)]).view(1, -1)  # HAZARD: TCL002
            step_loss, n = masked_nll(probs, target[t], mask[t])
            loss = loss + step_loss  # OK: TCL009
            print_losses.append(step_loss.item() * n)  # OK: TCL009
            n_totals += n
        loss.backward()
        nn.utils.clip_grad_norm_(self.encoder.parameters(), 50.0)
        self.opt.step()
        self.loss_log.append(loss)  # HAZARD: TCL009
        return sum(print_losses) / max(n_totals, 1)

    def fit(self, pairs, iterations=10, batch_size=8):
        best_loss = float("inf")
        for it in range(iterations):
            batch = batch_to_tensors(random.sample(pairs, batch_size))
            avg = self.train_step(*batch)
            if avg < best_loss:
                best_loss = avg
                self.best = {"enc": self.encoder.state_dict(), "dec": self.decoder.state_dict()}  # HAZARD: TCL004
        self.encoder.load_state_dict(self.best["enc"])
        self.decoder.load_state_dict(self.best["dec"])

    def evaluate(self, pairs, batch_size=8):
        self.encoder.eval()
        self.decoder.eval()
        val_loss = 0.0
        for i in range(0, len(pairs) - batch_size + 1, batch_size):
            inp, lengths, target, mask, max_len = batch_to_tensors(pairs[i:i + batch_size])
            enc_out, enc_hidden = self.encoder(inp, lengths)
            dec_in = torch.full((1, inp.size(1)), SOS, dtype=torch.long)
            dec_hidden = enc_hidden[:self.decoder.n_layers]
            for t in range(max_len):
                probs, dec_hidden = self.decoder(dec_in, dec_hidden, enc_out)
                step_loss, _ = masked_nll(probs, target[t], mask[t])
                val_loss += step_loss  # HAZARD: TCL009
                dec_in = target[t].view(1, -1)
        return float(val_loss)

    @torch.no_grad()
    def reply(self, tokens, max_len=10):
        inp = torch.tensor(tokens, dtype=torch.long).view(-1, 1)
        enc_out, enc_hidden = self.encoder(inp, torch.tensor([len(tokens)]))
        dec_hidden = enc_hidden[:self.decoder.n_layers]
        dec_in = torch.full((1, 1), SOS, dtype=torch.long)
        words = []
        for _ in range(max_len):
            probs, dec_hidden = self.decoder(dec_in, dec_hidden, enc_out)
            score, idx = probs.max(dim=1)
            words.append(idx)  # OK: TCL009
            dec_in = idx.view(1, 1)
        return torch.cat(words).tolist()
