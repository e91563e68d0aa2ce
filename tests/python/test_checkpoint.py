"""Checkpoints: Parameters saved to and restored from safetensors files, including optimizer
state; bad files and mismatched networks are clear errors that change nothing."""

import os

import numpy as np
import pytest

import anfora
from anfora import nn


def t(a):
    return anfora.tensor(np.asarray(a))


def test_a_trained_network_and_its_optimizer_state_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    net = nn.SequentialCell(nn.Dense(3, 4, seed=1, dtype="float64"), nn.ReLU(), nn.Dense(4, 2, seed=2, dtype="float64"))
    opt = nn.Adam(net.trainable_params(), learning_rate=0.01)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), opt)
    for _ in range(3):
        step(t(X), t(Y))
    path = tmp_path / "model.safetensors"
    anfora.save_checkpoint(step, path, metadata={"epoch": 3})
    assert anfora.load_checkpoint_metadata(path) == {"epoch": "3"}
    saved = anfora.load_checkpoint(path)
    # Names are attribute paths, in the order the object holds them.
    assert list(saved) == [name for name, _ in anfora.parameters_of(step)]
    assert "network.backbone.cells.0.weight" in saved and "optimizer.step" in saved
    for name, p in anfora.parameters_of(step):
        np.testing.assert_array_equal(saved[name].numpy(), p.numpy())
        assert saved[name].dtype == p.dtype

    # A fresh copy continues exactly where the first one is after one more step.
    net2 = nn.SequentialCell(nn.Dense(3, 4, seed=5, dtype="float64"), nn.ReLU(), nn.Dense(4, 2, seed=6, dtype="float64"))
    opt2 = nn.Adam(net2.trainable_params(), learning_rate=0.01)
    step2 = nn.TrainOneStepCell(nn.WithLossCell(net2, nn.MSELoss()), opt2)
    not_loaded, unused = anfora.load_param_into_net(step2, saved)
    assert (not_loaded, unused) == ([], [])
    l1, l2 = step(t(X), t(Y)), step2(t(X), t(Y))
    assert float(l1) == float(l2)
    np.testing.assert_array_equal(net2.cells[2].weight.numpy(), net.cells[2].weight.numpy())


def test_every_dtype_round_trips_and_dicts_and_pairs_are_accepted(tmp_path):
    values = {
        "f32": np.arange(6, dtype=np.float32).reshape(2, 3) / 7,
        "f64": np.array(np.pi),
        "i32": np.array([-(2**31), 2**31 - 1], dtype=np.int32),
        "i64": np.array([-(2**63), 2**63 - 1], dtype=np.int64),
        "b": np.array([[True, False]]),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    path = tmp_path / "all.safetensors"
    anfora.save_checkpoint({k: t(v) for k, v in values.items()}, path)
    back = anfora.load_checkpoint(path)
    assert list(back) == list(values)
    for k, v in values.items():
        np.testing.assert_array_equal(back[k].numpy(), v)
        assert back[k].numpy().dtype == v.dtype
    anfora.save_checkpoint([("w", anfora.Parameter(np.ones(2), name="w"))], path)
    assert list(anfora.load_checkpoint(path)) == ["w"]


def test_mismatches_change_nothing(tmp_path):
    net = nn.Dense(3, 2)
    before = net.weight.numpy().copy()
    path = tmp_path / "ck.safetensors"
    anfora.save_checkpoint({"weight": np.ones((2, 3), np.float32), "bias": np.ones(2, np.float32)}, path)
    with pytest.raises(ValueError, match=r"'weight' is a float32 tensor of shape \(2, 3\), but the Parameter is float32 of shape \(3, 2\); nothing was loaded"):
        anfora.load_checkpoint(path, net)
    np.testing.assert_array_equal(net.weight.numpy(), before)
    np.testing.assert_array_equal(net.bias.numpy(), np.zeros(2))
    # Missing and extra names: reported, or refused with strict.
    anfora.save_checkpoint({"bias": np.full(2, 3.0, np.float32), "extra": np.ones(1)}, path)
    assert anfora.load_param_into_net(net, anfora.load_checkpoint(path)) == (["weight"], ["extra"])
    np.testing.assert_array_equal(net.bias.numpy(), [3.0, 3.0])
    with pytest.raises(ValueError, match=r"missing from it \['weight'\].*does not have \['extra'\]"):
        anfora.load_checkpoint(path, net, strict=True)


def test_bad_files_are_clear_errors(tmp_path):
    missing = tmp_path / "nope.safetensors"
    with pytest.raises(OSError, match="cannot read"):
        anfora.load_checkpoint(missing)
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\x05\x00\x00\x00\x00\x00\x00\x00{\"a\":")
    with pytest.raises(ValueError, match="is not a valid safetensors checkpoint"):
        anfora.load_checkpoint(garbage)
    garbage.write_bytes(b"\xff" * 4)
    with pytest.raises(ValueError, match="is not a valid safetensors checkpoint"):
        anfora.load_checkpoint(garbage)
    # A header that promises more data than the file has.
    good = tmp_path / "good.safetensors"
    anfora.save_checkpoint({"w": np.ones(100)}, good)
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(good.read_bytes()[:-8])
    with pytest.raises(ValueError, match="is not a valid safetensors checkpoint"):
        anfora.load_checkpoint(truncated)
    # Saving into a directory that does not exist fails without leaving files behind.
    with pytest.raises(OSError, match="cannot write"):
        anfora.save_checkpoint({"w": np.ones(2)}, tmp_path / "no" / "such" / "dir.safetensors")
    with pytest.raises(ValueError, match="non-empty single lines"):
        anfora.save_checkpoint({"a\nb": np.ones(2)}, good)
    # The earlier good checkpoint is intact after the failed save.
    np.testing.assert_array_equal(anfora.load_checkpoint(good)["w"].numpy(), np.ones(100))
    assert sorted(os.listdir(tmp_path)) == ["garbage.safetensors", "good.safetensors", "truncated.safetensors"]
