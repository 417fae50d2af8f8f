"""tapeflow quickstart: eager tensors, the backward graph, gradients and hooks.

Run: python examples/quickstart.py   (the picture of the tape goes to outputs/)
"""

from _outputs import output_path

import tapeflow as tp

print("== 1. Tensors and the dynamic graph ==")
x = tp.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = tp.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = (x * w).sum()
print("x =", x)
print("y = (x * w).sum() =", y)
print("y.grad_fn:", y.grad_fn.name(), " next_functions:", y.grad_fn.next_functions)
mul = y.grad_fn.next_functions[0][0]
print("MulBackward0 inputs:", [(None if n is None else n.name(), nr) for n, nr in mul.next_functions])
print("the AccumulateGrad node's variable is x:", mul.next_functions[0][0].variable is x)
print("leaves:", x.is_leaf, w.is_leaf, " y is a leaf:", y.is_leaf)

print("\n== 2. backward() accumulates into .grad ==")
y.backward()
print("dy/dx =", x.grad, " dy/dw =", w.grad)
(x * w).sum().backward()
print("after a second forward+backward, x.grad accumulated:", x.grad)
x.grad = None
w.grad = None

print("\n== 3. Walking the graph by hand reproduces backward ==")
a = tp.tensor(2.0, requires_grad=True)
b = a.exp() * a
g_mul = b.grad_fn(tp.tensor(1.0))
print("MulBackward0(1) ->", g_mul)
g_exp = b.grad_fn.next_functions[0][0](g_mul[0])
print("ExpBackward0(...) ->", g_exp, " so db/da =", g_exp + g_mul[1])
(auto,) = tp.autograd.grad(a.exp() * a, a)
print("autograd.grad gives", auto)

print("\n== 4. Python control flow shapes the graph ==")
v = tp.tensor([3.0, -1.0], requires_grad=True)
out = v[0] * 2 if v[0].item() > 0 else v[1] * 3
out.backward()
print("branch taken gives grad", v.grad)

print("\n== 5. Higher order: create_graph=True ==")
t = tp.tensor(1.5, requires_grad=True)
f = t ** 3
(df,) = tp.autograd.grad(f, t, create_graph=True)
(d2f,) = tp.autograd.grad(df, t, create_graph=True)
(d3f,) = tp.autograd.grad(d2f, t)
print(f"f = t^3 at 1.5: f' = {df.item():.3f}, f'' = {d2f.item():.3f}, f''' = {d3f.item():.3f}")

print("\n== 6. Hooks and retain_grad ==")
p = tp.tensor([1.0, 2.0], requires_grad=True)
h = p * 3
h.retain_grad()
handle = h.register_hook(lambda g: g * 10)
(h ** 2).sum().backward()
print("h.grad (retained, after the hook) =", h.grad, " p.grad =", p.grad)
handle.remove()

# Saved-tensor hooks: every tensor a node saves for backward goes through `pack` (here: a NumPy
# copy) and comes back through `unpack` when backward needs it.
packed = []
with tp.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t.detach().numpy()) or len(packed) - 1,
                                           lambda i: tp.tensor(packed[i])):
    s = (p.exp() * p).sum()
s.backward()
print(f"saved-tensor hooks kept {len(packed)} NumPy copies; p.grad =", p.grad)

print("\n== 7. In-place ops are checked ==")
q = tp.tensor([1.0, 2.0], requires_grad=True)
e = q.exp()
e.add_(1)
try:
    e.sum().backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(". Hint")[0])
buf = tp.empty(0)  # PyTorch's `out=`: the result goes into `buf` (resized), which records no graph
tp.mul(q.detach(), 3, out=buf)
try:
    tp.mul(q, 3, out=buf)
except RuntimeError as err:
    print("out= result:", buf, " with a tensor that requires grad:", str(err).split(",")[0])

print("\n== 8. float64 and no_grad ==")
d = tp.tensor([1.0, 2.0], dtype=tp.float64, requires_grad=True)
with tp.no_grad():
    z = d * 2
print("dtype kept:", (d * d).dtype, " under no_grad requires_grad =", z.requires_grad)
# Spectral losses differentiate too: the gradient of a signal's power at its lowest frequencies.
sig = tp.tensor([0.0, 1.0, 0.0, -1.0, 0.0, 1.0, 0.0, -1.0], dtype=tp.float64, requires_grad=True)
(tp.fft.rfft(sig)[:3].abs() ** 2).sum().backward()
print("d(low-frequency power)/d(signal) =", sig.grad)

print("\n== 9. A picture of the tape ==")
w1 = tp.randn(3, 2, requires_grad=True)
b1 = tp.zeros(2, requires_grad=True)
loss = ((tp.randn(4, 3) @ w1 + b1).tanh() ** 2).mean()
dot_path = output_path("quickstart_tape.dot")
with open(dot_path, "w") as f:
    f.write(tp.autograd.graph.to_dot(loss, params={"weight": w1, "bias": b1}))
print("Graphviz DOT text of the backward graph written to", dot_path)
try:
    picture = tp.autograd.graph.render(loss, output_path("quickstart_tape"), params={"weight": w1, "bias": b1})
    print("and rendered to", picture)
except (ImportError, RuntimeError) as err:  # the graphviz package or the `dot` program is missing
    print("no picture rendered:", err)
