"""The `tapeflow` op namespace (`tp.exp`, `tp.sum`, `tp.matmul`, ...).

Every function takes Tensors first and is also attached to `Tensor` as a
method (see `_methods.py`). Functions here normalise arguments (dims,
scalars, dtypes) into static parameters and call the dispatcher; the maths
is in `xla_ops`.

One module per concept, mirroring `xla_ops`: elementwise (with unary maths in
`unary`), reduce, linalg, shape and index.
"""

from . import arrange, complex_numbers, counting, elementwise, index, linalg, numeric, reduce, shape, special, stats, unary, writes
from ._args import _to_float  # noqa: F401  (used by nn and tp.linalg)
from .arrange import *  # noqa: F403
from .complex_numbers import *  # noqa: F403
from .counting import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .index import *  # noqa: F403
from .index import _getitem, _setitem  # noqa: F401  (Tensor.__getitem__ / __setitem__)
from .linalg import *  # noqa: F403
from .numeric import *  # noqa: F403
from .reduce import *  # noqa: F403
from .shape import *  # noqa: F403
from .special import *  # noqa: F403
from .stats import *  # noqa: F403
from .unary import *  # noqa: F403
from .writes import *  # noqa: F403

__all__ = [*complex_numbers.__all__, *elementwise.__all__, *unary.__all__, *reduce.__all__, *linalg.__all__, *shape.__all__, *index.__all__,
           *special.__all__, *stats.__all__, *writes.__all__,
           *arrange.__all__, *counting.__all__, *numeric.__all__]

# PyTorch's refusals of some input dtypes (see `_dtype_rules`), applied to the namespace and so to the methods.
from ._dtype_rules import RULES as _RULES  # noqa: E402
from ._dtype_rules import guard as _guard  # noqa: E402

for _name in _RULES:
    globals()[_name] = _guard(_name, globals()[_name])
