"""Where the examples put what they make: pictures and traces go to `outputs/` (git ignores it)."""

from __future__ import annotations

import os

OUTPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "outputs")


def output_path(name: str) -> str:
    """`outputs/<name>`, creating the directory."""
    os.makedirs(OUTPUTS, exist_ok=True)
    return os.path.normpath(os.path.join(OUTPUTS, name))


def save_curves(name: str, curves: dict[str, list[float]], xlabel: str) -> str | None:
    """Plot each named series against its index, one panel per series, into `outputs/<name>`."""
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only, no window
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[examples]'); no curve saved")
        return None
    fig, axes = plt.subplots(1, len(curves), figsize=(4.5 * len(curves), 3.4))
    for ax, (label, values) in zip(axes if len(curves) > 1 else [axes], curves.items()):
        ax.plot(range(1, len(values) + 1), values, marker="o" if len(values) < 30 else None)
        ax.set_xlabel(xlabel)
        ax.set_title(label)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    path = output_path(name)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
