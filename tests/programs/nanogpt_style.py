"""A small nanoGPT-style language model: config dataclass, causal self-attention (fused and masked paths),
weight tying, scaled init, AdamW groups, GradScaler/autocast (disabled), cosine LR, checkpointing and
top-k generation; results as JSON.

Run as `python nanogpt_style.py` with PyTorch, or `python -m tapeflow.torch nanogpt_style.py` on tapeflow.
"""

import contextlib
import inspect
import io
import json
import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F


@dataclass
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 23
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 16
    dropout: float = 0.0
    bias: bool = False  # a key bias gets exactly-zero gradients, which Adam would turn into rounding noise


class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config, flash):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout
        self.flash = flash and hasattr(torch.nn.functional, "scaled_dot_product_attention")
        if not self.flash:
            self.register_buffer("bias", torch.tril(torch.ones(config.block_size, config.block_size))
                                 .view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            att = self.attn_dropout(att)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config, flash):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config, flash)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, config, flash=True):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config, flash) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def get_num_params(self, non_embedding=True):
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding:
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        device = idx.device
        b, t = idx.size()
        assert t <= self.config.block_size, f"Cannot forward sequence of length {t}"
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def crop_block_size(self, block_size):
        assert block_size <= self.config.block_size
        self.config.block_size = block_size
        self.transformer.wpe.weight = nn.Parameter(self.transformer.wpe.weight[:block_size])
        for block in self.transformer.h:
            if hasattr(block.attn, "bias"):
                block.attn.bias = block.attn.bias[:, :, :block_size, :block_size]

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
        param_dict = {pn: p for pn, p in self.named_parameters()}
        param_dict = {pn: p for pn, p in param_dict.items() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [
            {"params": decay_params, "weight_decay": weight_decay},
            {"params": nodecay_params, "weight_decay": 0.0},
        ]
        num_decay = sum(p.numel() for p in decay_params)
        num_nodecay = sum(p.numel() for p in nodecay_params)
        fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
        use_fused = fused_available and device_type == "cuda"
        extra_args = dict(fused=True) if use_fused else dict()
        optimizer = torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)
        return optimizer, (len(decay_params), num_decay, len(nodecay_params), num_nodecay, fused_available)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.argmax(probs, dim=-1, keepdim=True)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


LEARNING_RATE, WARMUP_ITERS, LR_DECAY_ITERS, MIN_LR = 6e-3, 2, 8, 6e-4


def get_lr(it):
    if it < WARMUP_ITERS:
        return LEARNING_RATE * (it + 1) / (WARMUP_ITERS + 1)
    if it > LR_DECAY_ITERS:
        return MIN_LR
    decay_ratio = (it - WARMUP_ITERS) / (LR_DECAY_ITERS - WARMUP_ITERS)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return MIN_LR + coeff * (LEARNING_RATE - MIN_LR)


def deterministic_init(model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.copy_(torch.from_numpy(rng.normal(scale=0.2, size=tuple(p.shape)).astype(np.float32)))


def main():
    torch.manual_seed(1337)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device = "cpu"
    device_type = "cuda" if "cuda" in device else "cpu"
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}["float32"]
    ctx = contextlib.nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type,
                                                                                     dtype=ptdtype)
    off_ctx = torch.amp.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=False)

    rng = np.random.default_rng(7)
    data = rng.integers(0, 23, size=400).astype(np.uint16)
    train_data, val_data = data[:320], data[320:]
    cfg = GPTConfig()
    block_size, batch_size = cfg.block_size, 4

    def get_batch(split, gen):
        d = train_data if split == "train" else val_data
        ix = gen.integers(0, len(d) - block_size, size=(batch_size,))
        x = torch.stack([torch.from_numpy((d[i:i + block_size]).astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy((d[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
        return x.to(device, non_blocking=True), y.to(device, non_blocking=True)

    out = {}
    for flash in (True, False):
        model = GPT(GPTConfig(), flash=flash)
        out[f"tied_{flash}"] = model.transformer.wte.weight is model.lm_head.weight
        out[f"n_params_{flash}"] = [model.get_num_params(), sum(p.numel() for p in model.parameters())]
        out[f"cproj_std_small_{flash}"] = bool(model.transformer.h[0].attn.c_proj.weight.std().item() < 0.02)
        deterministic_init(model, 0)
        model.to(device)
        scaler = torch.amp.GradScaler("cpu", enabled=False)
        optimizer, groups_info = model.configure_optimizers(0.1, LEARNING_RATE, (0.9, 0.95), device_type)
        out[f"groups_{flash}"] = list(groups_info)
        @torch.no_grad()
        def estimate_loss(model, gen):
            res = {}
            model.eval()
            for split in ["train", "val"]:
                losses = torch.zeros(3)
                for k in range(3):
                    X, Y = get_batch(split, gen)
                    with ctx:
                        _, loss = model(X, Y)
                    losses[k] = loss.item()
                res[split] = losses.mean().item()
            model.train()
            return res

        gen = np.random.default_rng(11)
        X, Y = get_batch("train", gen)
        losses, lrs, norms = [], [], []
        for it in range(10):
            lr = get_lr(it)
            for param_group in optimizer.param_groups:
                param_group["lr"] = lr
            lrs.append(lr)
            for _micro_step in range(2):
                with off_ctx:
                    logits, loss = model(X, Y)
                    loss = loss / 2
                X, Y = get_batch("train", gen)
                scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item())
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            losses.append(loss.item() * 2)
        out[f"losses_{flash}"] = losses
        out[f"norms_{flash}"] = norms
        out[f"grad_none_{flash}"] = all(p.grad is None for p in model.parameters())
        out["lrs"] = lrs
        out[f"eval_{flash}"] = estimate_loss(model, np.random.default_rng(3))

        buf = io.BytesIO()
        checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                      "model_args": dict(block_size=16, vocab_size=23), "iter_num": 10, "best_val_loss": 1e9,
                      "config": {"lr": LEARNING_RATE}}
        torch.save(checkpoint, buf)
        buf.seek(0)
        ck = torch.load(buf, map_location=device)
        model2 = GPT(GPTConfig(**ck["model_args"]), flash=flash)
        state_dict = ck["model"]
        unwanted_prefix = "_orig_mod."
        for k in list(state_dict):
            if k.startswith(unwanted_prefix):
                state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
        model2.load_state_dict(state_dict)
        opt2, _ = model2.configure_optimizers(0.1, LEARNING_RATE, (0.9, 0.95), device_type)
        opt2.load_state_dict(ck["optimizer"])
        out[f"ck_iter_{flash}"] = ck["iter_num"]
        out[f"opt_steps_{flash}"] = float(opt2.state_dict()["state"][0]["step"])
        model2.eval()
        start = torch.tensor([[1, 2, 3]], dtype=torch.long, device=device)
        out[f"gen_{flash}"] = model2.generate(start, 20, temperature=0.8, top_k=5)[0].tolist()
        model2.crop_block_size(8)
        out[f"crop_{flash}"] = [list(model2.transformer.wpe.weight.shape),
                                isinstance(model2.transformer.wpe.weight, nn.Parameter)]
        logits, _ = model2(start)
        out[f"crop_logits_{flash}"] = logits[0, -1].tolist()
        out[f"gen_crop_{flash}"] = model2.generate(start, 10, top_k=3)[0].tolist()
        out[f"weights_{flash}"] = {k: v.flatten()[:20].tolist() for k, v in model.state_dict().items()
                                   if not k.endswith("attn.bias")}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
