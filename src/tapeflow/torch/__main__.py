"""`python -m tapeflow.torch script.py [args ...]`: run a PyTorch program on tapeflow.

`python -m tapeflow.torch --api` prints the page of the torch API tapeflow provides (docs/torch_api.md).
"""

import sys

from . import run

if sys.argv[1:] == ["--api"]:
    from ._surface import surface_markdown

    print(surface_markdown(), end="")
else:
    run(sys.argv[1:])
