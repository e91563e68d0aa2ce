"""`mindspore.train.callback`: MindSpore's callback protocol for `Model.train`. A callback
gets a `RunContext` whose `original_args()` are the training's parameters (`cur_epoch_num`,
`cur_step_num`, `batch_num`, `epoch_num`, `net_outputs`, `train_network`, ...), at each of
`on_train_begin`, `on_train_epoch_begin`, `on_train_step_begin`, `on_train_step_end`,
`on_train_epoch_end` and `on_train_end` (by default the 1.x names `begin`, `epoch_begin`,
`step_begin`, `step_end`, `epoch_end`, `end`). `run_context.request_stop()` ends training
after the current step."""

import math as _math
import os as _os
import time as _time

import numpy as _np

import anfora as _af

__all__ = ["Callback", "RunContext", "LossMonitor", "TimeMonitor", "ModelCheckpoint",
           "CheckpointConfig", "LambdaCallback"]


class _Params(dict):
    """The training's parameters, readable as attributes (MindSpore's cb_params)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


class RunContext:
    def __init__(self, original_args):
        self._args = original_args
        self._stop = False

    def original_args(self):
        return self._args

    def request_stop(self):
        self._stop = True

    def get_stop_requested(self):
        return self._stop


class Callback:
    """The base class: every hook does nothing unless overridden. The 2.x hooks call the 1.x
    ones, as MindSpore's do."""

    def begin(self, run_context):
        pass

    def epoch_begin(self, run_context):
        pass

    def step_begin(self, run_context):
        pass

    def step_end(self, run_context):
        pass

    def epoch_end(self, run_context):
        pass

    def end(self, run_context):
        pass

    def on_train_begin(self, run_context):
        self.begin(run_context)

    def on_train_epoch_begin(self, run_context):
        self.epoch_begin(run_context)

    def on_train_step_begin(self, run_context):
        self.step_begin(run_context)

    def on_train_step_end(self, run_context):
        self.step_end(run_context)

    def on_train_epoch_end(self, run_context):
        self.epoch_end(run_context)

    def on_train_end(self, run_context):
        self.end(run_context)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _loss_value(outputs):
    """The loss of a step's outputs (a Tensor, a number, or a tuple whose first item is it)."""
    if isinstance(outputs, (tuple, list)) and outputs:
        outputs = outputs[0]
    return float(_np.mean(_np.asarray(outputs)))


def _step_in_epoch(params):
    return (params.cur_step_num - 1) % params.batch_num + 1


class LossMonitor(Callback):
    """Prints `epoch: E step: S, loss is L` every `per_print_times` steps (S counts within the
    epoch) and stops training with a ValueError on a NaN or infinite loss."""

    def __init__(self, per_print_times=1):
        if not isinstance(per_print_times, int) or per_print_times < 0:
            raise ValueError(f"per_print_times must be an int >= 0, not {per_print_times!r}")
        self._per_print_times = per_print_times
        self._last_print = 0

    def on_train_begin(self, run_context):
        self._last_print = 0

    def step_end(self, run_context):
        params = run_context.original_args()
        loss = _loss_value(params.net_outputs)
        step = _step_in_epoch(params)
        if _math.isnan(loss) or _math.isinf(loss):
            raise ValueError(f"epoch: {params.cur_epoch_num} step: {step}. Invalid loss, terminating training.")
        if self._per_print_times and params.cur_step_num - self._last_print >= self._per_print_times:
            self._last_print = params.cur_step_num
            print(f"epoch: {params.cur_epoch_num} step: {step}, loss is {loss}", flush=True)


class TimeMonitor(Callback):
    """Prints each epoch's time and time per step, in ms."""

    def __init__(self, data_size=None):
        self._data_size = data_size
        self._start = 0.0

    def epoch_begin(self, run_context):
        self._start = _time.perf_counter()

    def epoch_end(self, run_context):
        ms = (_time.perf_counter() - self._start) * 1000
        steps = self._data_size or run_context.original_args().batch_num
        print(f"epoch time: {ms:.3f} ms, per step time: {ms / max(steps, 1):.3f} ms", flush=True)


class CheckpointConfig:
    """When `ModelCheckpoint` saves: every `save_checkpoint_steps` steps (or every
    `save_checkpoint_seconds`), keeping the newest `keep_checkpoint_max` files."""

    def __init__(self, save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
                 keep_checkpoint_per_n_minutes=0, **_ignored):
        if save_checkpoint_steps is not None and save_checkpoint_steps < 0:
            raise ValueError("save_checkpoint_steps must be positive")
        if keep_checkpoint_max is not None and keep_checkpoint_max < 0:
            raise ValueError("keep_checkpoint_max must be positive")
        self.save_checkpoint_steps = save_checkpoint_steps
        self.save_checkpoint_seconds = save_checkpoint_seconds
        self.keep_checkpoint_max = keep_checkpoint_max


class ModelCheckpoint(Callback):
    """Saves the network's Parameters as `{directory}/{prefix}-{epoch}_{step}.ckpt` (MindSpore's
    checkpoint format, with `epoch_num` and `step_num` appended as MindSpore appends them) as
    `config` says, and once more at the end of training."""

    def __init__(self, prefix="CKP", directory=None, config=None, **_ignored):
        self._prefix = prefix
        self._directory = directory or "."
        self._config = config or CheckpointConfig()
        self._saved = []
        self._last_time = _time.monotonic()
        self._last_step = 0

    @property
    def latest_ckpt_file_name(self):
        return self._saved[-1] if self._saved else None

    def _save(self, params):
        _os.makedirs(self._directory, exist_ok=True)
        name = f"{self._prefix}-{params.cur_epoch_num}_{_step_in_epoch(params)}.ckpt"
        path = _os.path.join(self._directory, name)
        from .serialization import save_checkpoint

        steps = {"epoch_num": int(params.cur_epoch_num), "step_num": int(params.cur_step_num)}
        save_checkpoint(params.train_network, path, append_dict=steps)
        if path in self._saved:
            self._saved.remove(path)
        self._saved.append(path)
        keep = self._config.keep_checkpoint_max
        while keep and len(self._saved) > keep:
            old = self._saved.pop(0)
            if _os.path.exists(old):
                _os.remove(old)
        self._last_step = params.cur_step_num
        self._last_time = _time.monotonic()

    def step_end(self, run_context):
        params = run_context.original_args()
        every = self._config.save_checkpoint_steps
        seconds = self._config.save_checkpoint_seconds
        if (every and params.cur_step_num % every == 0) or (
                seconds and _time.monotonic() - self._last_time >= seconds):
            self._save(params)

    def end(self, run_context):
        params = run_context.original_args()
        if params.cur_step_num != self._last_step:
            self._save(params)


class LambdaCallback(Callback):
    """A callback from functions: `LambdaCallback(on_train_step_end=lambda run_context: ...)`."""

    _HOOKS = ("on_train_begin", "on_train_epoch_begin", "on_train_step_begin",
              "on_train_step_end", "on_train_epoch_end", "on_train_end")

    def __init__(self, **hooks):
        unknown = sorted(set(hooks) - set(self._HOOKS))
        if unknown:
            raise TypeError(f"LambdaCallback: unknown hook {unknown[0]!r}")
        for name, fn in hooks.items():
            setattr(self, name, fn)
