"""`mindspore.dtype`: the same as `mindspore.common.dtype`."""

from .common.dtype import *  # noqa: F401,F403
from .common.dtype import __all__  # noqa: F401
