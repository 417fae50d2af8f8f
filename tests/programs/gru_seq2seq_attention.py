"""A PyTorch-style seq2seq translation model (the "NLP From Scratch: Translation with a Sequence to Sequence
Network and Attention" tutorial, shrunk and batched) on random token pairs: an EncoderRNN (Embedding + GRU,
batch_first) and an attention decoder with Bahdanau (additive) attention (bmm, softmax, torch.cat), run step
by step with teacher forcing; NLLLoss on log_softmax outputs, Adam; then greedy decoding with topk(1) and
.squeeze().detach(); fixed weights; results as JSON.

Run as `python gru_seq2seq_attention.py` with PyTorch, or `python -m tapeflow.torch gru_seq2seq_attention.py`
on tapeflow; tests/test_torch_programs.py compares the two outputs.
"""

import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

SOS_token, EOS_token = 0, 1
IN_VOCAB, OUT_VOCAB, HIDDEN, MAX_LENGTH, BATCH = 14, 12, 16, 6, 5


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        embedded = self.dropout(self.embedding(input))
        output, hidden = self.gru(embedded)
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(decoder_input, decoder_hidden,
                                                                             encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()  # its own prediction as the next input
        decoder_outputs = torch.cat(decoder_outputs, dim=1)
        decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
        attentions = torch.cat(attentions, dim=1)
        return decoder_outputs, decoder_hidden, attentions

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        input_gru = torch.cat((embedded, context), dim=2)
        output, hidden = self.gru(input_gru, hidden)
        output = self.out(output)
        return output, hidden, attn_weights


def random_pairs(rng, n):
    src = rng.integers(2, IN_VOCAB, (n, MAX_LENGTH))
    tgt = np.full((n, MAX_LENGTH), EOS_token)
    for r in range(n):
        k = int(rng.integers(2, MAX_LENGTH))
        tgt[r, :k] = (src[r, :k] * 3) % (OUT_VOCAB - 2) + 2  # a fixed "translation", then EOS padding
    return torch.tensor(src, dtype=torch.long), torch.tensor(tgt, dtype=torch.long)


def train_epoch(input_tensor, target_tensor, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion):
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    encoder_outputs, encoder_hidden = encoder(input_tensor)
    decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
    loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
    return loss.item()


def evaluate(encoder, decoder, input_tensor):
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze().detach()
    return decoded_ids, decoder_outputs, decoder_attn


def main():
    rng = np.random.default_rng(0)
    encoder = EncoderRNN(IN_VOCAB, HIDDEN, dropout_p=0.0)
    decoder = AttnDecoderRNN(HIDDEN, OUT_VOCAB, dropout_p=0.0)
    for m in (encoder, decoder):
        with torch.no_grad():
            for _, p in sorted(m.named_parameters()):
                p.copy_(torch.tensor(rng.normal(scale=0.6, size=tuple(p.shape)), dtype=torch.float32))
    encoder_optimizer = optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    losses = []
    for _step in range(2):
        src, tgt = random_pairs(rng, BATCH)
        losses.append(train_epoch(src, tgt, encoder, decoder, encoder_optimizer, decoder_optimizer, criterion))
    encoder.eval()
    decoder.eval()
    src, _ = random_pairs(rng, BATCH)
    decoded_ids, log_probs, attn = evaluate(encoder, decoder, src)
    out = {"losses": losses, "decoded": decoded_ids.tolist(), "decoded_shape": list(decoded_ids.shape),
           "log_probs": log_probs.tolist(), "attn": attn.tolist(),
           "weights": {f"{name}.{k}": v.tolist() for name, m in (("encoder", encoder), ("decoder", decoder))
                       for k, v in m.state_dict().items()}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
