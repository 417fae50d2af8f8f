"""Train, prune, fine-tune: a classifier over 60 skewed classes with an adaptive softmax output, trained with
Adafactor, then pruned (60% of its weights, chosen globally by magnitude) and fine-tuned with the pruning
masks in place, then made permanently sparse.

The same function runs on tapeflow and, when PyTorch is installed, on PyTorch (from the same seed, so the
same initial weights, masks and batches); the script prints both runs' losses and their largest difference.

Run: python examples/prune_finetune.py
"""

from __future__ import annotations


def run(lib) -> dict:
    """Everything random comes from `lib.manual_seed`; returns the losses of each phase and the sparsity."""
    nn = lib.nn
    if lib.__name__ == "torch":
        import torch.nn.utils.prune as prune
        import torch.utils._pytree as pytree
    else:
        prune = lib.nn.utils.prune
        from tapeflow.utils import _pytree as pytree
    lib.manual_seed(0)
    n_classes, features = 60, 24
    x = lib.randn(512, features)
    # Skewed classes (low ids most frequent), as the adaptive softmax expects of word ids.
    scores = x @ lib.randn(features, n_classes) - 0.15 * lib.arange(n_classes)
    y = scores.argmax(dim=1)

    body = nn.Sequential(nn.Linear(features, 64), nn.ReLU(), nn.Linear(64, 48), nn.ReLU())
    output = nn.AdaptiveLogSoftmaxWithLoss(48, n_classes, cutoffs=[8, 24], div_value=2.0)
    params = list(body.parameters()) + list(output.parameters())

    def train(steps, lr):
        opt = lib.optim.Adafactor(params, lr=lr)
        losses = []
        for _ in range(steps):
            batch = lib.randint(0, 512, (64,))
            opt.zero_grad()
            loss = output(body(x[batch]), y[batch]).loss
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    trained = train(60, 0.02)
    to_prune = [(body[0], "weight"), (body[2], "weight"), (output.head, "weight")]
    prune.global_unstructured(to_prune, pruning_method=prune.L1Unstructured, amount=0.6)
    with lib.no_grad():
        pruned_loss = output(body(x), y).loss.item()
    finetuned = train(40, 0.01)
    for module, name in to_prune:
        prune.remove(module, name)
    zeros = sum(int((getattr(m, n) == 0).sum()) for m, n in to_prune)
    total = sum(getattr(m, n).numel() for m, n in to_prune)
    # The zero fraction of every entry of the body's checkpoint, mapped over its (nested) dict of tensors.
    layers = pytree.tree_map_only(lib.Tensor, lambda t: round((t == 0).float().mean().item(), 3), body.state_dict())
    with lib.no_grad():
        accuracy = (output.predict(body(x)) == y).float().mean().item()
    return {"trained": trained, "pruned": pruned_loss, "finetuned": finetuned, "sparsity": zeros / total,
            "accuracy": accuracy, "layers": dict(layers)}


def main() -> None:
    import tapeflow as tp

    mine = run(tp)
    print(f"tapeflow: loss {mine['trained'][0]:.4f} -> {mine['trained'][-1]:.4f}, after pruning "
          f"{mine['pruned']:.4f}, fine-tuned {mine['finetuned'][-1]:.4f}; {mine['sparsity']:.0%} of the pruned "
          f"weights are zero, accuracy {mine['accuracy']:.3f}")
    print("  zero fraction per checkpoint entry:", mine["layers"])
    try:
        import torch
    except ImportError:
        print("(PyTorch is not installed: nothing to compare with)")
        return
    theirs = run(torch)
    print(f"PyTorch:  loss {theirs['trained'][0]:.4f} -> {theirs['trained'][-1]:.4f}, after pruning "
          f"{theirs['pruned']:.4f}, fine-tuned {theirs['finetuned'][-1]:.4f}; {theirs['sparsity']:.0%} zero, "
          f"accuracy {theirs['accuracy']:.3f}")
    print("  zero fraction per checkpoint entry:", theirs["layers"])
    assert list(theirs["layers"]) == list(mine["layers"])  # (the same entries, in the same order)
    diffs = [abs(a - b) for k in ("trained", "finetuned") for a, b in zip(mine[k], theirs[k])]
    print(f"largest loss difference: {max(diffs):.2e}")


if __name__ == "__main__":
    main()
