"""`mindspore.train`: serialization, `Model`, metrics and callbacks."""

from . import model, serialization
from .model import Accuracy, Loss, LossMonitor, Model
from .serialization import export, load, load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["serialization", "model", "Model", "Accuracy", "Loss", "LossMonitor", "export", "load",
           "save_checkpoint", "load_checkpoint", "load_param_into_net"]
