"""A small causal LM (TransformerEncoder with padding) wrapped in `torch.compile`, trained with AdamW parameter
groups, gradient accumulation and clipping, then sampled in inference mode: the compiled forward's loss is
differentiated outside it, and its data-dependent branch (`if pad.any():`) runs eagerly."""
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
V, D, T, B = 40, 16, 8, 4


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, D, padding_idx=0)
        layer = nn.TransformerEncoderLayer(D, 4, 32, dropout=0.1, batch_first=True, norm_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(D, V)

    def forward(self, x):
        mask = nn.Transformer.generate_square_subsequent_mask(x.size(1))
        pad = x == 0
        h = self.enc(self.emb(x) * math.sqrt(D), mask=mask, is_causal=True)
        if pad.any():  # data-dependent Python: a graph break
            h = h.masked_fill(pad.unsqueeze(-1), 0.0)
        return self.head(h)


model = torch.compile(TinyLM(), backend="eager")  # (PyTorch: dynamo only, no C++ code generation)
decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=3e-3, betas=(0.9, 0.95))
g = torch.Generator().manual_seed(3)
losses, norms = [], []
for _step in range(4):
    x = torch.randint(1, V, (B, T), generator=g)
    x[:, -2:] = 0
    tgt = torch.roll(x, -1, dims=1)
    for _micro in range(2):
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1), ignore_index=0) / 2
        loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt.step()
    opt.zero_grad()
    losses.append(loss.item() * 2)
    norms.append(gn.item())
model.eval()
with torch.inference_mode():
    out = model(x)
    probs = F.softmax(out[:, -3], -1)
    nxt = torch.multinomial(probs, 1, generator=torch.Generator().manual_seed(0))
names = [n for n, _ in model.named_parameters()][:2]
print(json.dumps({"losses": losses, "norms": norms, "sample": nxt.flatten().tolist(), "pmax": probs.max().item(),
                  "names": names, "keys": list(model.state_dict())[:2],
                  "weights": {k: v.tolist() for k, v in model.state_dict().items() if "head" in k}}))
