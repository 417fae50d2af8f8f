"""Pictures of the tape: the backward graph of a tensor as Graphviz DOT text or an image."""

from __future__ import annotations

from .graph import AccumulateGrad

__all__ = ["to_dot", "render"]


def _shape(x) -> str:
    shape = getattr(x, "shape", None)
    return "(" + ", ".join(str(d) for d in shape) + ")" if shape is not None else ""


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(tensors, params: dict | None = None, show_saved: bool = True) -> str:
    """Graphviz DOT text of the backward graph reaching `tensors`.

    Outputs are green boxes, backward nodes grey boxes named like PyTorch's
    (`MulBackward0`), leaves (`AccumulateGrad`) blue boxes with their shape and,
    when found in `params`, their name; saved tensors are orange boxes.

    Arguments:
        tensors: a tensor or a sequence of tensors whose `grad_fn` graph is drawn.
        params: optional `{name: tensor}` naming leaves (e.g. `dict(model.named_parameters())`).
        show_saved: also draw the tensors each node saved for backward.

    Returns:
        The DOT source as a string.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.ones(2, requires_grad=True)
        >>> "MulBackward0" in tp.autograd.graph.to_dot((x * 2).sum(), params={"x": x})
        True
    """
    outs = list(tensors) if isinstance(tensors, (tuple, list)) else [tensors]
    names = {id(t): n for n, t in (params or {}).items()}
    lines = ["digraph tape {", '  node [shape=box, style=filled, fontname="monospace", fontsize=10];']
    seen: set = set()
    stack = []
    for i, t in enumerate(outs):
        oid = f"out{i}"
        lines.append(f'  {oid} [label="{_esc(names.get(id(t), "output"))}\\n{_shape(t)}", fillcolor=darkolivegreen1];')
        if t.grad_fn is not None:
            lines.append(f"  {oid} -> n{id(t.grad_fn)} [dir=back];")
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        nid = f"n{id(node)}"
        if isinstance(node, AccumulateGrad):
            v = node.variable
            name = names.get(id(v))
            label = (_esc(name) + "\\n" if name else "") + _shape(v)
            lines.append(f'  {nid} [label="{label}", fillcolor=lightblue];')
        else:
            aval = getattr(node, "_aval", None)
            label = node.name() + (f"\\n-> {_shape(aval)}" if aval is not None else "")
            lines.append(f'  {nid} [label="{label}", fillcolor=lightgrey];')
            if show_saved:
                saved = list(getattr(node, "_saved", ()) or ())
                ans = getattr(node, "_ans", None)
                for j, s in enumerate(saved + ([ans] if ans is not None else [])):
                    if s is None or not hasattr(s, "shape"):
                        continue
                    what = "result" if j == len(saved) else f"saved {j}"
                    sid = f"{nid}_s{j}"
                    lines.append(f'  {sid} [label="{what}\\n{_shape(s)}", fillcolor=orange];')
                    lines.append(f"  {sid} -> {nid} [style=dashed, dir=none];")
        for nxt, _ in node.next_functions:
            if nxt is not None:
                lines.append(f"  {nid} -> n{id(nxt)} [dir=back];")
                stack.append(nxt)
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(tensors, path: str, format: str = "svg", params: dict | None = None, show_saved: bool = True) -> str:
    """Render the backward graph to an image file with Graphviz.

    Arguments:
        tensors: as in `to_dot`.
        path: output file name without extension (Graphviz appends `.svg` / `.png`).
        format: any Graphviz output format (`"svg"`, `"png"`, `"pdf"`).
        params, show_saved: as in `to_dot`.

    Returns:
        The path of the written file.

    Example:
        >>> import tapeflow as tp
        >>> x = tp.ones(2, requires_grad=True)
        >>> tp.autograd.graph.render((x * 2).sum(), "/tmp/tape")  # doctest: +SKIP
        '/tmp/tape.svg'
    """
    try:
        import graphviz
    except ImportError:
        raise ImportError("render needs the `graphviz` Python package and the Graphviz `dot` program: "
                          "pip install 'tapeflow[viz]' and install Graphviz (e.g. apt-get install graphviz); "
                          "or write to_dot(...) text to a file yourself.") from None
    src = graphviz.Source(to_dot(tensors, params=params, show_saved=show_saved))
    try:
        return src.render(path, format=format, cleanup=True)
    except graphviz.ExecutableNotFound:
        raise RuntimeError("render could not run the Graphviz `dot` program; install Graphviz "
                           "(e.g. apt-get install graphviz) so `dot` is on PATH.") from None
