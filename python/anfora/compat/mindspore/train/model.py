"""MindSpore's high-level `Model` (`model.train`, `model.eval`, `model.predict`), its
`Accuracy` and `Loss` metrics; the callbacks are `train.callback`'s. A dataset is any iterable of
`(data, label)` batches (numpy arrays or Tensors), or an object with MindSpore's
`create_tuple_iterator()` (the layer's `mindspore.dataset`)."""

import numpy as _np

import anfora as _af
from anfora import nn as _nn

from . import callback as _callback


def _batches(dataset):
    if hasattr(dataset, "create_tuple_iterator"):
        dataset = dataset.create_tuple_iterator()
    for item in dataset:
        yield tuple(x if isinstance(x, _af.Tensor) else _af.tensor(_np.asarray(x)) for x in item)


def _dataset_size(dataset):
    """Batches per epoch: the dataset's own count, its length, or one pass over it."""
    if hasattr(dataset, "get_dataset_size"):
        return dataset.get_dataset_size()
    if hasattr(dataset, "__len__"):
        return len(dataset)
    return sum(1 for _ in _batches(dataset))


class Accuracy:
    """The fraction of samples whose largest logit is the label (labels as indices or one-hot)."""

    def clear(self):
        self._correct, self._total = 0, 0

    def update(self, logits, labels):
        pred = _np.asarray(logits).argmax(axis=-1)
        labels = _np.asarray(labels)
        if labels.ndim == pred.ndim + 1:
            labels = labels.argmax(axis=-1)
        self._correct += int((pred == labels).sum())
        self._total += labels.size

    def eval(self):
        if self._total == 0:
            raise RuntimeError("Accuracy: no samples were given")
        return self._correct / self._total


class Loss:
    """The mean of the loss over the batches."""

    def clear(self):
        self._sum, self._count = 0.0, 0

    def update(self, loss):
        self._sum += float(_np.asarray(loss))
        self._count += 1

    def eval(self):
        if self._count == 0:
            raise RuntimeError("Loss: no batches were given")
        return self._sum / self._count


# MindSpore's metric names (`get_metric_fn`); those anfora computes map to their classes.
_METRIC_NAMES = ["F1", "acc", "accuracy", "auc", "bleu_score", "confusion_matrix",
                 "confusion_matrix_metric", "cosine_similarity", "dice", "hausdorff_distance",
                 "loss", "mae", "mean_surface_distance", "mse", "occlusion_sensitivity",
                 "perplexity", "precision", "recall", "roc", "root_mean_square_distance",
                 "top_1_accuracy", "top_5_accuracy", "topk"]


def _metric_by_name(name):
    """The metric MindSpore's `Model(metrics={name})` makes: its names are case-sensitive."""
    if name in ("acc", "accuracy"):
        return Accuracy()
    if name == "loss":
        return Loss()
    if name in _METRIC_NAMES:
        raise KeyError(f"metric {name!r} is not supported by anfora's MindSpore layer "
                       "(accuracy, loss)")
    raise KeyError(f"For 'get_metric_fn', unsupported metric {name}, please refer to official "
                   "website for more details about supported metrics.")


class Model:
    """`Model(network, loss_fn=None, optimizer=None, metrics=None)`: training with
    `TrainOneStepCell(WithLossCell(network, loss_fn), optimizer)`, evaluation with the
    metrics (MindSpore's names, `{"accuracy", "loss"}`, or metric objects)."""

    def __init__(self, network, loss_fn=None, optimizer=None, metrics=None):
        self.network = network
        self.loss_fn = loss_fn
        self.optimizer = optimizer
        self.metrics = {}
        for name in metrics or ():
            metric = metrics[name] if isinstance(metrics, dict) else None
            if metric is None:
                metric = _metric_by_name(name)
            self.metrics[name] = metric
        self._step = None
        if loss_fn is not None and optimizer is not None:
            self._step = _nn.TrainOneStepCell(_nn.WithLossCell(network, loss_fn), optimizer)

    def train(self, epoch, train_dataset, callbacks=None, dataset_sink_mode=False,
              initial_epoch=0):
        """Trains for `epoch` epochs (from `initial_epoch`), calling the callbacks' hooks
        (MindSpore's protocol, `train.callback`) with the run's parameters."""
        if self._step is None:
            raise ValueError("Model.train needs a loss_fn and an optimizer")
        callbacks = callbacks if isinstance(callbacks, (list, tuple)) else [callbacks] if callbacks else []
        for cb in callbacks:
            if not isinstance(cb, _callback.Callback):
                raise TypeError("When the 'callbacks' is a list, the elements in 'callbacks' must "
                                f"be Callback functions ({type(cb).__name__} is not a Callback)")
        batch_num = _dataset_size(train_dataset)
        params = _callback._Params(
            train_network=self._step, network=self.network, optimizer=self.optimizer,
            loss_fn=self.loss_fn, train_dataset=train_dataset, epoch_num=epoch,
            batch_num=batch_num, cur_epoch_num=initial_epoch, cur_step_num=0,
            net_outputs=None, mode="train", dataset_sink_mode=bool(dataset_sink_mode))
        run = _callback.RunContext(params)
        self.network.set_train(True)

        def hook(name):
            for cb in callbacks:
                getattr(cb, name)(run)

        hook("on_train_begin")
        for e in range(initial_epoch + 1, epoch + 1):
            params.cur_epoch_num = e
            hook("on_train_epoch_begin")
            for data, label in _batches(train_dataset):
                params.cur_step_num += 1
                hook("on_train_step_begin")
                params.net_outputs = self._step(data, label)
                hook("on_train_step_end")
                if run.get_stop_requested():
                    break
            hook("on_train_epoch_end")
            if run.get_stop_requested():
                break
        hook("on_train_end")

    def eval(self, valid_dataset, dataset_sink_mode=False):
        """`{metric name: value}` over the dataset, the network in evaluation mode."""
        if not self.metrics:
            raise ValueError("Model.eval needs metrics")
        self.network.set_train(False)
        for m in self.metrics.values():
            m.clear()
        for data, label in _batches(valid_dataset):
            logits = self.network(data)
            for m in self.metrics.values():
                if isinstance(m, Loss):
                    if self.loss_fn is None:
                        raise ValueError("Model.eval: the Loss metric needs a loss_fn")
                    m.update(self.loss_fn(logits, label))
                else:
                    m.update(logits, label)
        # Left in evaluation mode, as MindSpore's `Model.eval` leaves it.
        return {name: m.eval() for name, m in self.metrics.items()}

    def predict(self, *inputs):
        """The network's outputs in evaluation mode, in which it is left (as MindSpore's)."""
        self.network.set_train(False)
        return self.network(*inputs)


__all__ = ["Model", "Accuracy", "Loss"]
