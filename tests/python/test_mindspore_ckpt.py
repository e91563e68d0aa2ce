"""MindSpore's `.ckpt` checkpoints in the compatibility layer (issue 29): the file is the
protobuf message of MindSpore's `checkpoint.proto`, checked here against the protobuf library
itself (the message classes built from that schema): it parses what anfora writes, and anfora
reads what it writes the way MindSpore does (a value per tensor, split tensors, packed dims).
Malformed files are ValueErrors naming the fault."""

import os
import random

import numpy as np
import pytest

import anfora.compat.mindspore as ms
from anfora.compat.mindspore import Parameter, Tensor, nn
from anfora.compat.mindspore import dtype as mstype

descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
message_factory = pytest.importorskip("google.protobuf.message_factory")
descriptor_pool = pytest.importorskip("google.protobuf.descriptor_pool")


def _checkpoint_class():
    """`Checkpoint` of MindSpore's checkpoint.proto (proto2), built from its schema."""
    F = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="ms_checkpoint_test.proto", syntax="proto2")
    tensor = f.message_type.add(name="TensorProto")
    tensor.field.add(name="dims", number=1, type=F.TYPE_INT64, label=F.LABEL_REPEATED)
    tensor.field.add(name="tensor_type", number=2, type=F.TYPE_STRING, label=F.LABEL_REQUIRED)
    tensor.field.add(name="tensor_content", number=3, type=F.TYPE_BYTES, label=F.LABEL_REQUIRED)
    map_tensor = f.message_type.add(name="MapTensorProto")
    map_tensor.field.add(name="tensor", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                         type_name=".TensorProto")
    ckpt = f.message_type.add(name="Checkpoint")
    value = ckpt.nested_type.add(name="Value")
    value.oneof_decl.add(name="value")
    value.field.add(name="tag", number=1, type=F.TYPE_STRING, label=F.LABEL_REQUIRED)
    value.field.add(name="tensor", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".TensorProto", oneof_index=0)
    value.field.add(name="maptensor", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                    type_name=".MapTensorProto", oneof_index=0)
    ckpt.field.add(name="value", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                   type_name=".Checkpoint.Value")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("Checkpoint"))


Checkpoint = _checkpoint_class()


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.fc = nn.Dense(4, 3)
        self.scale = Parameter(Tensor(np.float32(0.5)), name="scale")
        self.steps = Parameter(Tensor(np.array([7, -3], dtype=np.int32)), name="steps")

    def construct(self, x):
        return self.fc(x) * self.scale


def test_protobuf_parses_what_anfora_writes(tmp_path):
    ms.set_seed(3)
    net = Net()
    path = tmp_path / "net.ckpt"
    ms.save_checkpoint(net, str(path), append_dict={"epoch_num": 3, "lr": 0.25, "flag": True,
                                                   "note": "héllo"})
    msg = Checkpoint()
    msg.ParseFromString(path.read_bytes())
    got = {v.tag: v.tensor for v in msg.value}
    # MindSpore's order (a Cell's own Parameters first); its Conv2d has no bias unless asked.
    names = ["scale", "steps", "conv.weight", "fc.weight", "fc.bias"]
    assert list(got) == names + ["epoch_num", "lr", "flag", "note"]
    w = got["fc.weight"]
    assert (list(w.dims), w.tensor_type) == ([3, 4], "Float32")
    np.testing.assert_array_equal(np.frombuffer(w.tensor_content, "<f4").reshape(3, 4),
                                  net.fc.weight.asnumpy())
    # 0-d values have dims [0], as MindSpore writes them; Python numbers take its dtypes.
    assert (list(got["scale"].dims), got["scale"].tensor_type) == ([0], "Float32")
    assert np.frombuffer(got["scale"].tensor_content, "<f4")[0] == 0.5
    assert (list(got["steps"].dims), got["steps"].tensor_type) == ([2], "Int32")
    assert (list(got["epoch_num"].dims), got["epoch_num"].tensor_type) == ([0], "Int64")
    assert np.frombuffer(got["epoch_num"].tensor_content, "<i8")[0] == 3
    assert (got["lr"].tensor_type, got["flag"].tensor_type) == ("Float32", "Bool")
    assert got["note"].tensor_type == "str"
    assert np.frombuffer(got["note"].tensor_content, "<U5")[0] == "héllo"


def test_anfora_reads_what_mindspore_writes(tmp_path):
    """A value per tensor, appended message by message; a tensor split in two values of one
    tag; dims packed (as a proto3 writer would put them); every dtype anfora has."""
    rng = np.random.default_rng(0)
    arrays = {
        "w": rng.standard_normal((3, 5)).astype(np.float32),
        "d": rng.standard_normal(4),
        "h": rng.standard_normal((2, 2)).astype(np.float16),
        "i8": np.array([-128, 0, 127], np.int8),
        "u8": np.array([0, 200, 255], np.uint8),
        "i32": np.array([[1, -2]], np.int32),
        "i64": np.array([2**40, -5], np.int64),
        "b": np.array([True, False, True]),
    }
    data = b""
    for tag, a in arrays.items():
        kind = {"float32": "Float32", "float64": "Float64", "float16": "Float16", "int8": "Int8",
                "uint8": "UInt8", "int32": "Int32", "int64": "Int64", "bool": "Bool"}[a.dtype.name]
        content = a.tobytes()
        halves = [content] if tag != "w" else [content[:24], content[24:]]
        for half in halves:
            msg = Checkpoint()
            v = msg.value.add()
            v.tag = tag
            v.tensor.dims.extend(a.shape)
            v.tensor.tensor_type = kind
            v.tensor.tensor_content = half
            data += msg.SerializeToString()
    bf = np.array([1.5, -2.0, 0.0078125], np.float32)
    msg = Checkpoint()
    v = msg.value.add()
    v.tag, v.tensor.tensor_type = "bf", "BFloat16"
    v.tensor.dims.append(3)
    v.tensor.tensor_content = (bf.view(np.uint32) >> 16).astype(np.uint16).tobytes()
    data += msg.SerializeToString()
    # Packed dims: field 1 as one length-delimited run of varints.
    packed = bytes([0x0A, 0x02, 0x02, 0x02]) + bytes([0x12, 0x07]) + b"Float32" + \
        bytes([0x1A, 0x10]) + np.arange(4, dtype=np.float32).tobytes()
    value = bytes([0x0A, 0x01]) + b"p" + bytes([0x12, len(packed)]) + packed
    data += bytes([0x0A, len(value)]) + value
    path = tmp_path / "ms.ckpt"
    path.write_bytes(data)
    params = ms.load_checkpoint(str(path))
    assert list(params) == list(arrays) + ["bf", "p"]
    for tag, a in arrays.items():
        assert isinstance(params[tag], Parameter) and params[tag].name == tag
        np.testing.assert_array_equal(params[tag].asnumpy(), a)
        assert params[tag].asnumpy().dtype == a.dtype, tag
    assert params["bf"].dtype == mstype.bfloat16
    np.testing.assert_array_equal(params["bf"].asnumpy().astype(np.float32), bf)
    np.testing.assert_array_equal(params["p"].asnumpy(), np.arange(4, dtype=np.float32).reshape(2, 2))


def test_round_trip_into_a_network_with_filters_and_conversions(tmp_path):
    ms.set_seed(5)
    net = Net()
    path = str(tmp_path / "net")  # the suffix is added
    ms.save_checkpoint(net, path, append_dict={"epoch_num": 2})
    assert os.path.exists(path + ".ckpt")
    other = Net()
    params = ms.load_checkpoint(path + ".ckpt", filter_prefix="conv")
    assert "conv.weight" not in params and params["epoch_num"].asnumpy() == 2
    not_loaded, unused = ms.load_param_into_net(other, params)
    assert not_loaded == ["conv.weight"] and unused == ["epoch_num"]
    np.testing.assert_array_equal(other.fc.weight.asnumpy(), net.fc.weight.asnumpy())
    np.testing.assert_array_equal(other.steps.asnumpy(), [7, -3])
    only = ms.load_checkpoint(path + ".ckpt", specify_prefix=["fc."], choice_func=lambda n: "bias" in n)
    assert list(only) == ["fc.bias"]
    # Another float dtype converts unless strict_load, as in MindSpore.
    wide = {"fc.bias": Parameter(Tensor(np.ones(3)), name="fc.bias")}
    ms.load_param_into_net(other, wide)
    assert other.fc.bias.dtype == mstype.float32
    np.testing.assert_array_equal(other.fc.bias.asnumpy(), np.ones(3, np.float32))
    with pytest.raises(RuntimeError, match="should have the same type"):
        ms.load_param_into_net(other, wide, strict_load=True)
    with pytest.raises(RuntimeError, match="should have the same shape"):
        ms.load_param_into_net(other, {"fc.bias": Tensor(np.ones(4, np.float32))})
    # safetensors, as MindSpore 2.3+ offers.
    ms.save_checkpoint(net, str(tmp_path / "st"), format="safetensors")
    back = ms.load_checkpoint(str(tmp_path / "st.safetensors"), format="safetensors")
    np.testing.assert_array_equal(back["fc.weight"].asnumpy(), net.fc.weight.asnumpy())


def test_refusals_name_the_fault(tmp_path):
    net = Net()
    with pytest.raises(NotImplementedError, match="encrypted"):
        ms.save_checkpoint(net, str(tmp_path / "e.ckpt"), enc_key=b"0" * 16)
    with pytest.raises(ValueError, match="does not exist"):
        ms.load_checkpoint(str(tmp_path / "missing.ckpt"))
    with pytest.raises(ValueError, match="'format' must be"):
        ms.save_checkpoint(net, str(tmp_path / "x"), format="pickle")
    with pytest.raises(ValueError, match="two values are named 'scale'"):
        ms.save_checkpoint(net, str(tmp_path / "d.ckpt"), append_dict={"scale": 1.0})
    msg = Checkpoint()
    v = msg.value.add()
    v.tag, v.tensor.tensor_type = "w", "Float32"
    v.tensor.dims.extend([2, 3])
    v.tensor.tensor_content = b"\0" * 20
    bad = tmp_path / "bad.ckpt"
    bad.write_bytes(msg.SerializeToString())
    with pytest.raises(ValueError, match=r"'w' of dims \[2, 3\] and type Float32 needs 24 bytes, but holds 20"):
        ms.load_checkpoint(str(bad))
    bad.write_bytes(msg.SerializeToString()[:-3])
    with pytest.raises(ValueError, match="past the end of its message at byte"):
        ms.load_checkpoint(str(bad))


def test_corrupted_checkpoints_are_rejected_or_read(tmp_path):
    """Deterministic mutations of a real checkpoint (bit flips, truncations, bytes set to
    0xff): each loads (then every value has the size its dims say) or is a ValueError or a
    TypeError, never another exception."""
    ms.set_seed(1)
    path = tmp_path / "net.ckpt"
    ms.save_checkpoint(Net(), str(path), append_dict={"epoch_num": 1, "note": "x"})
    good = path.read_bytes()
    rng = random.Random(7)
    target = tmp_path / "m.ckpt"
    outcomes = {"loaded": 0, "refused": 0}
    for case in range(1500):
        data = bytearray(good)
        kind = case % 3
        if kind == 0:
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(data))
                data[i] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data = data[: rng.randrange(len(data))]
        else:
            i = rng.randrange(len(data))
            data[i:i + 2] = b"\xff\xff"
        target.write_bytes(bytes(data))
        try:
            params = ms.load_checkpoint(str(target))
        except (ValueError, TypeError):
            outcomes["refused"] += 1
            continue
        outcomes["loaded"] += 1
        for value in params.values():
            if not isinstance(value, str):
                assert value.asnumpy().size == int(np.prod(value.shape))
    assert outcomes["refused"] > 300 and outcomes["loaded"] > 0, outcomes
