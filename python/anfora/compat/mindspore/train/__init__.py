"""`mindspore.train`: serialization."""

from . import serialization
from .serialization import export, load, load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["serialization", "export", "load", "save_checkpoint", "load_checkpoint",
           "load_param_into_net"]
