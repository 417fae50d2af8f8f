"""Shared timing helpers: interleaved repetitions, medians, ratios."""

from __future__ import annotations

import statistics
import time


def interleaved(cases: dict, repeats: int = 30, inner: int = 1, warmup: int = 5) -> dict:
    """Median seconds per call of each case, measured round-robin so that machine noise hits all alike."""
    for fn in cases.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            t = time.perf_counter()
            for _ in range(inner):
                fn()
            samples[name].append((time.perf_counter() - t) / inner)
    return {name: statistics.median(v) for name, v in samples.items()}


def report(title: str, medians: dict, baseline: str) -> None:
    print(f"\n{title}")
    base = medians[baseline]
    for name, m in medians.items():
        print(f"  {name:28s} {m * 1e3:9.3f} ms   {m / base:6.2f}x {baseline}")
