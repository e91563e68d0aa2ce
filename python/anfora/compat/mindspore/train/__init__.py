"""`mindspore.train`: serialization, `Model`, metrics and callbacks."""

from . import callback, model, serialization
from .callback import (Callback, CheckpointConfig, LambdaCallback, LossMonitor, ModelCheckpoint,
                       RunContext, TimeMonitor)
from .model import Accuracy, Loss, Model
from .serialization import export, load, load_checkpoint, load_param_into_net, save_checkpoint

__all__ = ["serialization", "model", "callback", "Model", "Accuracy", "Loss", "Callback",
           "RunContext", "LossMonitor", "TimeMonitor", "ModelCheckpoint", "CheckpointConfig",
           "LambdaCallback", "export", "load", "save_checkpoint", "load_checkpoint",
           "load_param_into_net"]
