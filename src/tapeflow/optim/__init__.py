"""`tapeflow.optim`: optimizers and learning-rate schedules (PyTorch's `torch.optim`).

Example:
    >>> import tapeflow as tp
    >>> model = tp.nn.Linear(3, 1)
    >>> opt = tp.optim.Adam(model.parameters(), lr=1e-2)
    >>> loss = model(tp.ones(4, 3)).pow(2).mean()
    >>> opt.zero_grad(); loss.backward(); opt.step()
"""

from . import lr_scheduler, swa_utils
from .adafactor import Adafactor
from .adam import Adam
from .adamw import AdamW
from .adaptive import Adadelta, Adagrad, Adamax, NAdam, RAdam, Rprop
from .asgd import ASGD
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Adafactor", "ASGD", "LBFGS", "SparseAdam", "Rprop", "lr_scheduler", "swa_utils"]
