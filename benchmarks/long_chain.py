"""A very long chain of tiny ops (default 1,000,000), forward + backward: time and peak memory, tapeflow vs
PyTorch eager.

Each library runs in its own fresh process (peak memory is a per-process high-water mark), alternating, so
both see the same machine; medians over `--runs`. The chain is `y = y * 1.0001 + 0.0001` on a 4-element
tensor, two recorded ops per step, so the graph holds `2 * steps` nodes at the end of the forward.

Run: python benchmarks/long_chain.py [--ops 1000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
lib, n = sys.argv[1], int(sys.argv[2])
if lib == "torch":
    import torch as m
    torch_threads = m.get_num_threads()
else:
    import tapeflow as m
x = m.ones(4, requires_grad=True)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
(x * 1.0001 + 0.0001).sum().backward()  # warm up (compiles the two ops and their VJPs once)
x.grad = None
t0 = time.perf_counter()
y = x
for _ in range(n // 2):
    y = y * 1.0001 + 0.0001
s = y.sum()
t1 = time.perf_counter()
s.backward()
g = x.grad.tolist()
t2 = time.perf_counter()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"forward": t1 - t0, "backward": t2 - t1, "peak_mib": (peak - base) / 1024, "grad": g[0]}))
"""


def run(lib: str, n: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, lib, str(n)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    libs = ["tapeflow"]
    try:
        import torch  # noqa: F401

        libs.append("torch")
    except ImportError:
        pass
    results: dict = {lib: [] for lib in libs}
    for _ in range(args.runs):
        for lib in libs:
            results[lib].append(run(lib, args.ops))
    print(f"{args.ops:,}-op chain (4 elements), forward + backward, medians of {args.runs} fresh processes")
    med = {lib: {k: statistics.median(r[k] for r in rs) for k in ("forward", "backward", "peak_mib")}
           for lib, rs in results.items()}
    for lib, m in med.items():
        total = m["forward"] + m["backward"]
        line = (f"  {lib:9s} forward {m['forward']:7.2f} s  backward {m['backward']:7.2f} s  total {total:7.2f} s  "
                f"peak memory +{m['peak_mib']:8.1f} MiB")
        if "torch" in med and lib != "torch":
            t = med["torch"]
            line += (f"   ({total / (t['forward'] + t['backward']):.2f}x torch time, "
                     f"{m['peak_mib'] / max(t['peak_mib'], 1e-9):.2f}x torch memory)")
        print(line)
    grads = {lib: rs[-1]["grad"] for lib, rs in results.items()}
    print("  gradient of x[0]:", grads)


if __name__ == "__main__":
    main()
