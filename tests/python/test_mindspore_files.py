"""`mindspore.dataset`'s file sources in the compatibility layer (issue 29): MNIST's IDX files
and CIFAR-10's binary batches, written here byte by byte in their published formats, read back
with MindSpore's columns and dtypes, through a tutorial's pipeline, and refused when malformed."""

import numpy as np
import pytest

import anfora.compat.mindspore as ms
from anfora.compat.mindspore import dataset as ds
from anfora.compat.mindspore import dtype as mstype
from anfora.compat.mindspore.dataset import transforms, vision


def _idx(path, array):
    header = bytes([0, 0, 0x08, array.ndim]) + b"".join(d.to_bytes(4, "big") for d in array.shape)
    path.write_bytes(header + array.astype(np.uint8).tobytes())


def _mnist(root, n_train=5, n_test=3):
    rng = np.random.default_rng(0)
    parts = {}
    for usage, n, prefix in (("train", n_train, "train"), ("test", n_test, "t10k")):
        x = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        y = rng.integers(0, 10, n, dtype=np.uint8)
        _idx(root / f"{prefix}-images-idx3-ubyte", x)
        _idx(root / f"{prefix}-labels-idx1-ubyte", y)
        parts[usage] = (x, y)
    return parts


def test_mnist_columns_usages_and_order(tmp_path):
    parts = _mnist(tmp_path)
    train = ds.MnistDataset(str(tmp_path), usage="train", shuffle=False)
    assert train.get_col_names() == ["image", "label"] and train.get_dataset_size() == 5
    rows = list(train.create_tuple_iterator(output_numpy=True))
    x, y = parts["train"]
    for (image, label), want_x, want_y in zip(rows, x, y):
        assert (image.dtype, image.shape, label.dtype) == (np.uint8, (28, 28, 1), np.uint32)
        np.testing.assert_array_equal(image[..., 0], want_x)
        assert label == want_y
    every = ds.MnistDataset(str(tmp_path), shuffle=False)  # usage "all": train, then test
    labels = [int(r["label"]) for r in every.create_dict_iterator(output_numpy=True)]
    assert labels == list(parts["train"][1]) + list(parts["test"][1])
    ms.dataset.config.set_seed(4)
    shuffled = ds.MnistDataset(str(tmp_path), usage="all", shuffle=True, num_samples=6)
    got = sorted(int(r[1]) for r in shuffled.create_tuple_iterator(output_numpy=True))
    assert len(got) == 6
    shards = [ds.MnistDataset(str(tmp_path), usage="test", shuffle=False, num_shards=2, shard_id=s)
              for s in range(2)]
    assert [[int(r[1]) for r in d.create_tuple_iterator(output_numpy=True)] for d in shards] == \
        [[parts["test"][1][0], parts["test"][1][2]], [parts["test"][1][1], parts["test"][1][0]]]


def test_mnist_through_a_tutorial_pipeline(tmp_path):
    parts = _mnist(tmp_path)
    data = ds.MnistDataset(str(tmp_path), usage="train", shuffle=False)
    data = data.map(vision.Rescale(1.0 / 255.0, 0.0), input_columns="image")
    data = data.map(vision.HWC2CHW(), input_columns="image")
    data = data.map(transforms.TypeCast(mstype.int32), input_columns="label")
    data = data.batch(2, drop_remainder=True)
    batches = list(data.create_tuple_iterator())
    assert len(batches) == 2
    image, label = batches[1]
    assert image.shape == (2, 1, 28, 28) and label.dtype == mstype.int32
    np.testing.assert_allclose(image.asnumpy()[:, 0], parts["train"][0][2:4] / np.float32(255.0),
                               rtol=1e-6)
    np.testing.assert_array_equal(label.asnumpy(), parts["train"][1][2:4])
    # Without the cast, the uint32 labels cannot become Tensors: said, with what to do.
    raw = ds.MnistDataset(str(tmp_path), usage="train")
    with pytest.raises(TypeError, match=r"TypeCast\(mstype.int32\)"):
        next(iter(raw.create_tuple_iterator()))


def test_cifar10_records_become_hwc_images(tmp_path):
    rng = np.random.default_rng(1)
    records = {}
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        n = 2 if name == "test_batch.bin" else 1
        chw = rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        rows = np.concatenate([labels[:, None], chw.reshape(n, -1)], axis=1)
        (tmp_path / name).write_bytes(rows.tobytes())
        records[name] = (chw, labels)
    test = ds.Cifar10Dataset(str(tmp_path), usage="test", shuffle=False)
    rows = list(test.create_tuple_iterator(output_numpy=True))
    assert len(rows) == 2
    chw, labels = records["test_batch.bin"]
    for (image, label), want, want_label in zip(rows, chw, labels):
        assert (image.dtype, image.shape, label.dtype) == (np.uint8, (32, 32, 3), np.uint32)
        np.testing.assert_array_equal(image, want.transpose(1, 2, 0))
        assert label == want_label
    train = ds.Cifar10Dataset(str(tmp_path), usage="train", shuffle=False)
    assert [int(r[1]) for r in train.create_tuple_iterator(output_numpy=True)] == \
        [int(records[f"data_batch_{i}.bin"][1][0]) for i in range(1, 6)]
    assert ds.Cifar10Dataset(str(tmp_path)).get_dataset_size() == 7


def test_malformed_files_are_refused_by_name(tmp_path):
    _mnist(tmp_path)
    images = tmp_path / "train-images-idx3-ubyte"
    good = images.read_bytes()
    images.write_bytes(good[:-1])
    with pytest.raises(ValueError, match=r"dimensions \[5, 28, 28\] need 3936 bytes, the file has 3935"):
        ds.MnistDataset(str(tmp_path), usage="train")
    images.write_bytes(b"\0\0\x09\x03" + good[4:])
    with pytest.raises(ValueError, match="not an IDX file of 3-dimensional unsigned bytes"):
        ds.MnistDataset(str(tmp_path), usage="train")
    images.write_bytes(good[:10])
    with pytest.raises(ValueError, match="too short for an IDX header"):
        ds.MnistDataset(str(tmp_path), usage="train")
    _idx(images, np.zeros((4, 28, 28), np.uint8))
    with pytest.raises(ValueError, match="4 images in .* but 5 labels"):
        ds.MnistDataset(str(tmp_path), usage="train")
    with pytest.raises(ValueError, match="usage must be 'train', 'test' or 'all'"):
        ds.MnistDataset(str(tmp_path), usage="valid")
    with pytest.raises(ValueError, match="does not exist"):
        ds.MnistDataset(str(tmp_path / "nowhere"))
    (tmp_path / "test_batch.bin").write_bytes(b"\x03" + bytes(3072) + b"\x01")
    with pytest.raises(ValueError, match="not a whole number of 3073-byte records"):
        ds.Cifar10Dataset(str(tmp_path), usage="test")
    (tmp_path / "test_batch.bin").write_bytes(b"\x0c" + bytes(3072))
    with pytest.raises(ValueError, match="a label 12, outside 0..9"):
        ds.Cifar10Dataset(str(tmp_path), usage="test")
    with pytest.raises(ValueError, match="data_batch_1.bin does not exist"):
        ds.Cifar10Dataset(str(tmp_path), usage="train")


def test_cifar_augmentations_crop_flip_and_pad():
    """The CIFAR-10 tutorial's augmentations: exact windows of the padded image, mirrors, and
    MindSpore's (left, top, right, bottom) padding order and border modes."""
    rng = np.random.default_rng(2)
    image = rng.integers(0, 256, (6, 5, 3), dtype=np.uint8)
    padded = vision.Pad((1, 2, 3, 4), fill_value=(9, 8, 7))(image)
    assert padded.shape == (12, 9, 3)
    np.testing.assert_array_equal(padded[2:8, 1:6], image)
    assert (padded[0, 0] == [9, 8, 7]).all() and (padded[-1, -1] == [9, 8, 7]).all()
    np.testing.assert_array_equal(vision.Pad(2, padding_mode=vision.Border.REFLECT)(image),
                                  np.pad(image, ((2, 2), (2, 2), (0, 0)), mode="reflect"))
    ms.dataset.config.set_seed(0)
    seen = set()
    crop = vision.RandomCrop((6, 5), padding=(2, 1))
    for _ in range(200):
        out = crop(image)
        assert out.shape == (6, 5, 3)
        big = np.pad(image, ((1, 1), (2, 2), (0, 0)))
        places = [(t, left) for t in range(3) for left in range(5)
                  if np.array_equal(big[t:t + 6, left:left + 5], out)]
        assert places, "a window of the padded image"
        seen.update(places)
    assert len(seen) == 15  # every place is drawn
    flips = [vision.RandomHorizontalFlip(0.5)(image) for _ in range(100)]
    mirrored = sum(np.array_equal(f, image[:, ::-1]) for f in flips)
    assert 25 < mirrored < 75 and all(np.array_equal(f, image) or np.array_equal(f, image[:, ::-1]) for f in flips)
    np.testing.assert_array_equal(vision.RandomVerticalFlip(1.0)(image), image[::-1])
    np.testing.assert_array_equal(vision.CenterCrop((2, 3))(image), image[2:4, 1:4])
    with pytest.raises(ValueError, match="a 7×5 crop of a 6×5 image"):
        vision.RandomCrop((7, 5))(image)
    assert vision.RandomCrop((7, 6), pad_if_needed=True)(image).shape == (7, 6, 3)
    with pytest.raises(ValueError, match="prob must be in"):
        vision.RandomHorizontalFlip(1.5)
