"""MindSpore's `.ckpt` checkpoint file: the protobuf message `Checkpoint` (MindSpore's
`checkpoint.proto`, proto2), written as MindSpore writes it and read with every check a file from
elsewhere needs.

    message Checkpoint { message Value { required string tag = 1;
                                         oneof value { TensorProto tensor = 2;
                                                       MapTensorProto maptensor = 3; } }
                         repeated Value value = 1; }
    message TensorProto { repeated int64 dims = 1; required string tensor_type = 2;
                          required bytes tensor_content = 3; }

MindSpore writes one `Checkpoint` of one `Value` per tensor (a tensor over 512 MiB as several
values of one tag, its bytes split), one after the other, which parses as a single message. A
0-d tensor has `dims = [0]`; `tensor_type` is MindSpore's dtype name (`Float32`, `Int64`, ...,
`str` for a string of UTF-32 code units). Only the wire format is implemented here (no protobuf
dependency): varints, length-delimited fields and, when reading, skipping unknown fields.
"""

import math

import numpy as np

# MindSpore's names of the dtypes a checkpoint holds, and their numpy forms (BFloat16: the bits).
NUMPY = {"Int8": np.int8, "UInt8": np.uint8, "Int16": np.int16, "UInt16": np.uint16,
         "Int32": np.int32, "UInt32": np.uint32, "Int64": np.int64, "UInt64": np.uint64,
         "Float16": np.float16, "Float32": np.float32, "Float64": np.float64, "Bool": np.bool_,
         "BFloat16": np.uint16}

# A value's bytes in one field at most (MindSpore splits larger tensors the same way).
CHUNK = 512 * 1024 * 1024


class CheckpointError(ValueError):
    """A `.ckpt` file that is not a well-formed MindSpore checkpoint."""


def _varint(value):
    out = bytearray()
    value &= (1 << 64) - 1  # negative int64 as two's complement, as protobuf writes it
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number, payload):
    """A length-delimited field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def encode_value(tag, dims, tensor_type, content):
    """One `Checkpoint` holding one `Value`: the bytes MindSpore writes for one tensor chunk."""
    tensor = b"".join(_varint(1 << 3) + _varint(d) for d in dims)
    tensor += _field(2, tensor_type.encode()) + _field(3, content)
    value = _field(1, tag.encode()) + _field(2, tensor)
    return _field(1, value)


def encode(entries):
    """The file of `entries`, a list of `(tag, dims, tensor_type, content bytes)`."""
    parts = []
    for tag, dims, tensor_type, content in entries:
        view = memoryview(content)
        chunks = [view[i:i + CHUNK] for i in range(0, len(view), CHUNK)] or [view]
        parts.extend(encode_value(tag, dims, tensor_type, bytes(c)) for c in chunks)
    return b"".join(parts)


class _Reader:
    """Fields of one message in `data[start:end]`."""

    def __init__(self, data, start, end, what):
        self.data, self.at, self.end, self.what = data, start, end, what

    def _fail(self, why):
        raise CheckpointError(f"{why} at byte {self.at} (in {self.what})")

    def varint(self):
        value, shift = 0, 0
        while True:
            if self.at >= self.end:
                self._fail("a truncated varint")
            byte = self.data[self.at]
            self.at += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift >= 70:
                self._fail("a varint longer than 10 bytes")

    def fields(self):
        """`(number, wire type, value)`: an int for varints, `(start, end)` for bytes."""
        while self.at < self.end:
            key = self.varint()
            number, wire = key >> 3, key & 7
            if number == 0:
                self._fail("field number 0")
            if wire == 0:
                yield number, wire, self.varint()
            elif wire == 2:
                length = self.varint()
                if length > self.end - self.at:
                    self._fail(f"a field of {length} bytes past the end of its message")
                start = self.at
                self.at += length
                yield number, wire, (start, self.at)
            elif wire in (1, 5):
                size = 8 if wire == 1 else 4
                if size > self.end - self.at:
                    self._fail("a truncated fixed-size field")
                self.at += size
                yield number, wire, None
            else:
                self._fail(f"wire type {wire}, which a checkpoint does not use")


def _expect(wire, want, what):
    if wire != want:
        raise CheckpointError(f"{what} has wire type {wire}, not {want}")


def _text(data, span, what):
    try:
        return bytes(data[span[0]:span[1]]).decode("utf-8")
    except UnicodeDecodeError:
        raise CheckpointError(f"{what} is not UTF-8") from None


def _tensor(data, span, tag):
    dims, tensor_type, content = [], None, None
    reader = _Reader(data, span[0], span[1], f"the tensor of '{tag}'")
    for number, wire, value in reader.fields():
        if number == 1:
            if wire == 2:  # packed, as proto3 writers do
                packed = _Reader(data, value[0], value[1], f"the dims of '{tag}'")
                while packed.at < packed.end:
                    dims.append(packed.varint())
            else:
                _expect(wire, 0, f"a dim of '{tag}'")
                dims.append(value)
        elif number == 2:
            _expect(wire, 2, f"the tensor_type of '{tag}'")
            tensor_type = _text(data, value, f"the tensor_type of '{tag}'")
        elif number == 3:
            _expect(wire, 2, f"the tensor_content of '{tag}'")
            content = value
    if tensor_type is None or content is None:
        raise CheckpointError(f"the tensor of '{tag}' lacks its tensor_type or tensor_content")
    # int64 dims: two's complement; a negative one is refused by the caller's size check.
    dims = [d - (1 << 64) if d >= 1 << 63 else d for d in dims]
    return dims, tensor_type, content


def _value(data, span):
    tag, tensor = None, None
    for number, wire, value in _Reader(data, span[0], span[1], "a checkpoint value").fields():
        if number == 1:
            _expect(wire, 2, "a value's tag")
            tag = _text(data, value, "a value's tag")
        elif number == 2:
            _expect(wire, 2, "a value's tensor")
            tensor = value
        elif number == 3:
            raise CheckpointError(f"'{tag}' is a MapParameter (maptensor), which anfora does not load")
    if tag is None or tensor is None:
        raise CheckpointError("a checkpoint value without its tag or tensor")
    return (tag, *_tensor(data, tensor, tag))


def decode(data):
    """The values of a checkpoint file's bytes, in order: `(tag, dims, tensor_type, content)`
    with `content` a memoryview. Consecutive values of one tag are one tensor's chunks."""
    data = memoryview(data)
    values = []
    for number, wire, value in _Reader(data, 0, len(data), "the checkpoint").fields():
        if number != 1:
            continue
        _expect(wire, 2, "a checkpoint value")
        tag, dims, tensor_type, content = _value(data, value)
        values.append((tag, dims, tensor_type, data[content[0]:content[1]]))
    return values


def tensors(data):
    """The checkpoint's tensors, `{tag: (dims, tensor_type, numpy array or str)}` in file order,
    each one's chunks joined and its size checked against its dims and dtype."""
    out = {}
    values = decode(data)
    i = 0
    while i < len(values):
        tag, dims, tensor_type, _ = values[i]
        j = i
        while j < len(values) and values[j][0] == tag:
            j += 1
        content = b"".join(bytes(v[3]) for v in values[i:j])
        if tag in out:
            raise CheckpointError(f"'{tag}' appears twice, apart")
        out[tag] = (dims, tensor_type, _array(tag, dims, tensor_type, content))
        i = j
    return out


def _array(tag, dims, tensor_type, content):
    if tensor_type == "str":
        if len(content) % 4:
            raise CheckpointError(f"the string '{tag}' is not UTF-32 ({len(content)} bytes)")
        try:
            # numpy's fixed-width strings end in NULs, which it drops on reading.
            return content.decode("utf-32-le").rstrip("\0")
        except UnicodeDecodeError:
            raise CheckpointError(f"the string '{tag}' is not valid UTF-32") from None
    dtype = NUMPY.get(tensor_type)
    if dtype is None:
        raise CheckpointError(f"'{tag}' has tensor_type {tensor_type!r}, which is not a dtype of MindSpore")
    if any(d < 0 for d in dims):
        raise CheckpointError(f"'{tag}' has a negative dim: {dims}")
    shape = () if dims == [0] else tuple(dims)
    itemsize = np.dtype(dtype).itemsize
    # Exact (Python integers), so huge dims cannot wrap around to the content's size.
    if math.prod(shape) * itemsize != len(content):
        raise CheckpointError(
            f"'{tag}' of dims {dims} and type {tensor_type} needs {math.prod(shape) * itemsize} "
            f"bytes, but holds {len(content)}")
    if tensor_type == "Bool":
        return np.frombuffer(content, dtype=np.uint8).reshape(shape) != 0
    return np.frombuffer(content, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)
