"""Profile one training step of a small convolutional network and print the profiler table; then profile a
short training loop on a schedule (`tp.profiler`, PyTorch's `torch.profiler`), one trace file per active window.

Run: python examples/profile_model.py
"""

from _outputs import output_path

import tapeflow as tp
from tapeflow import nn
from tapeflow.autograd import profiler

model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.Flatten(),
    nn.Linear(16 * 4 * 4, 10),
)
opt = tp.optim.SGD(model.parameters(), lr=0.1)
x, y = tp.randn(16, 1, 8, 8), tp.randint(0, 10, (16,))


def step():
    with profiler.record_function("forward"):
        loss = nn.functional.cross_entropy(model(x), y)
    with profiler.record_function("backward"):
        opt.zero_grad()
        loss.backward()
    with profiler.record_function("optimizer"):
        opt.step()
    return loss


step()  # compile every op once, outside the profile
# sync=True waits for each op's result inside its range, so times include device execution.
with profiler.profile(record_shapes=True, sync=True) as prof:
    step()
print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=15))
trace = output_path("profile_model.trace.json")
prof.export_chrome_trace(trace)
print(f"Chrome trace written to {trace} (open in https://ui.perfetto.dev)")

# A training loop on a schedule: skip a step, warm up for one, record two; twice.
trace_dir = output_path("profile_model_traces")
windows = []
sched = tp.profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
with tp.profiler.profile(schedule=sched, on_trace_ready=lambda p: (
        windows.append(p.step_num), tp.profiler.tensorboard_trace_handler(trace_dir)(p))) as prof:
    for _ in range(8):
        step()
        prof.step()
print(f"traces handed over after steps {windows}, written to {trace_dir}")
print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=5))
