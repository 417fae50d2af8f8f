"""A NaN produced in backward, caught by anomaly mode, which shows where the node was created.

Run: python examples/anomaly.py
"""

import warnings

import tapeflow as tp


def model(x):
    h = x * 2
    return h.sqrt().sum()  # sqrt of a negative number: NaN in forward and in backward


x = tp.tensor([1.0, -1.0, 4.0], requires_grad=True)
warnings.simplefilter("ignore")  # the "anomaly detection enabled" notice
with tp.autograd.detect_anomaly():
    loss = model(x)
    try:
        loss.backward()
    except RuntimeError as err:
        print("Caught:", err)
