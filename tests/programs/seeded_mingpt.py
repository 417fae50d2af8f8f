"""A minGPT-style model from `torch.manual_seed` alone: GPT-2 initialisation (normal_, scaled c_proj),
dropout in embeddings, attention (by hand and through `scaled_dot_product_attention(dropout_p=...)`) and
residuals, AdamW with weight-decay groups, gradient clipping, then top-k sampling with `multinomial`.

Run as `python seeded_mingpt.py` with PyTorch, or `python -m tapeflow.torch seeded_mingpt.py` on tapeflow;
tests/test_seeded_programs.py compares the two outputs.
"""

import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(42)


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, pdrop, use_sdpa):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(pdrop)
        self.resid_dropout = nn.Dropout(pdrop)
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))
        self.n_head, self.n_embd, self.use_sdpa, self.pdrop = n_head, n_embd, use_sdpa, pdrop

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.use_sdpa:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=self.pdrop if self.training else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, pdrop, use_sdpa):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, pdrop, use_sdpa)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd), nn.Dropout(pdrop))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab=40, block_size=16, n_embd=32, n_head=4, n_layer=2, pdrop=0.1, use_sdpa=False):
        super().__init__()
        self.block_size = block_size
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.drop = nn.Dropout(pdrop)
        self.h = nn.ModuleList([Block(n_embd, n_head, block_size, pdrop, use_sdpa) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
        elif isinstance(module, nn.LayerNorm):
            torch.nn.init.zeros_(module.bias)
            torch.nn.init.ones_(module.weight)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1) if targets is not None else None
        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, do_sample=False, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size :]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, top_k)
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1) if do_sample else torch.topk(probs, k=1, dim=-1)[1]
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


res = {}
for sdpa in (False, True):
    model = GPT(use_sdpa=sdpa)
    decay = [p for n, p in model.named_parameters() if n.endswith("weight") and "ln" not in n and "wte" not in n and "wpe" not in n]
    no_decay = [
        p for n, p in model.named_parameters() if not (n.endswith("weight") and "ln" not in n and "wte" not in n and "wpe" not in n)
    ]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}], lr=3e-3, betas=(0.9, 0.95))
    data = torch.randint(0, 40, (6, 17))
    losses = []
    for _ in range(6):
        model.train()
        logits, loss = model(data[:, :-1].contiguous(), data[:, 1:].contiguous())
        model.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    model.eval()
    res[f"loss{sdpa}"] = losses
    res[f"gen{sdpa}"] = model.generate(torch.zeros((1, 1), dtype=torch.long), 12, do_sample=True, top_k=10)[0].tolist()
print(json.dumps(res))
