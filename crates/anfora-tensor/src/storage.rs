//! Where a tensor's elements live: dense storage of each dtype, or a strided view of another
//! tensor's, and the crate-internal accessors over them.

use std::sync::Arc;

use crate::device::DeviceBuffer;
use crate::element::{Element, with_storage};
use crate::{DType, ErrorKind, Result, Tensor, TensorError, alloc, shape, shape_repr, transpose};

#[derive(Clone, Debug)]
pub(crate) enum Storage {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    /// Half-precision storage: kernels never see it (they get float32 copies, see `half`).
    F16(Vec<::half::f16>),
    BF16(Vec<::half::bf16>),
    /// 8-bit integer storage: kernels get int32 copies (see `narrow`).
    I8(Vec<i8>),
    U8(Vec<u8>),
    /// A strided view of another storage (never itself a view). Readers get the gathered
    /// elements (`Tensor::data`), so kernels never meet this variant.
    View(View),
    /// Elements in a device's memory. Readers on the host get a copy made on first read
    /// (`Tensor::data`), so host kernels never meet this variant either.
    Device(OnDevice),
}

/// A device buffer and, once read on the host, its host copy.
#[derive(Clone, Debug)]
pub(crate) struct OnDevice {
    pub(crate) buffer: Arc<dyn DeviceBuffer>,
    host: std::sync::OnceLock<Arc<Storage>>,
}

pub(crate) fn storage_len(storage: &Storage) -> usize {
    match storage {
        Storage::F16(v) => v.len(),
        Storage::BF16(v) => v.len(),
        Storage::I8(v) => v.len(),
        Storage::U8(v) => v.len(),
        Storage::View(_) => unreachable!("the length of a view's base is asked"),
        Storage::Device(d) => d.buffer.len(),
        s => with_storage!(s, v => v.len()),
    }
}

pub(crate) fn storage_dtype(storage: &Storage) -> DType {
    match storage {
        Storage::Bool(_) => DType::Bool,
        Storage::I32(_) => DType::I32,
        Storage::I64(_) => DType::I64,
        Storage::F32(_) => DType::F32,
        Storage::F64(_) => DType::F64,
        Storage::F16(_) => DType::F16,
        Storage::BF16(_) => DType::BF16,
        Storage::I8(_) => DType::I8,
        Storage::U8(_) => DType::U8,
        Storage::View(v) => storage_dtype(&v.base),
        Storage::Device(d) => d.buffer.dtype(),
    }
}

/// Where a view's elements are: the element at multi-index `i` is `base[offset + Σ i_k ·
/// strides_k]`.
#[derive(Clone, Debug)]
pub(crate) struct View {
    base: Arc<Storage>,
    offset: isize,
    strides: Box<[isize]>,
    /// The elements in row-major order, gathered on first read.
    dense: std::sync::OnceLock<Arc<Storage>>,
}

impl Tensor {
    /// `shape` must pass `alloc::checked_numel` (the crate's invariant on tensor shapes), as it
    /// does when `storage` came from the `alloc` helpers.
    pub(crate) fn from_storage(storage: Storage, shape: Vec<usize>) -> Tensor {
        debug_assert_eq!(
            Ok(storage_len(&storage)),
            alloc::checked_numel_of(&shape, storage_dtype(&storage))
        );
        Tensor {
            shape: shape.into(),
            storage: Arc::new(storage),
        }
    }

    pub(crate) fn from_vec<T: Element>(data: Vec<T>, shape: &[usize]) -> Result<Tensor> {
        let n = alloc::checked_numel(shape, T::DTYPE.size_of())?;
        if data.len() != n {
            return Err(TensorError::new(
                ErrorKind::Value,
                format!(
                    "cannot reshape array of size {} into shape {}",
                    data.len(),
                    shape_repr::compact_shape(shape)
                ),
            ));
        }
        Ok(Tensor::from_storage(T::into_storage(data), shape.to_vec()))
    }

    /// Whether the storage is uniquely owned (no other Tensor shares it) and not a view, so
    /// that the `_owned` ops and `FusedKernel::run_owned` can write into it.
    pub fn is_unique(&self) -> bool {
        self.view().is_none()
            && self.on_device().is_none()
            && Arc::strong_count(&self.storage) == 1
            && Arc::weak_count(&self.storage) == 0
    }

    /// The storage to write into: `None` unless uniquely owned and not a view.
    pub(crate) fn storage_mut(&mut self) -> Option<&mut Storage> {
        if self.view().is_some() || self.on_device().is_some() {
            return None;
        }
        Arc::get_mut(&mut self.storage)
    }

    pub(crate) fn view(&self) -> Option<&View> {
        match &*self.storage {
            Storage::View(v) => Some(v),
            _ => None,
        }
    }

    pub(crate) fn on_device(&self) -> Option<&OnDevice> {
        match &*self.storage {
            Storage::Device(d) => Some(d),
            _ => None,
        }
    }

    /// The storage the elements are in (a view's base; a device tensor's host copy, which
    /// aborts when the device cannot be read: the fallible readers are `try_data` and
    /// `try_dense`).
    pub(crate) fn base(&self) -> &Arc<Storage> {
        match &*self.storage {
            Storage::View(v) => &v.base,
            Storage::Device(d) => self.downloaded(d).unwrap_or_else(|e| panic!("{e}")),
            _ => &self.storage,
        }
    }

    /// Whether this tensor is a strided view (its elements are not its storage in order).
    pub fn is_view(&self) -> bool {
        self.view().is_some()
    }

    /// The same elements, contiguous (a view's are gathered once and kept); aborts where
    /// [`Tensor::contiguous_host`] returns an error.
    pub fn contiguous(&self) -> Tensor {
        self.contiguous_host().unwrap_or_else(|e| panic!("{e}"))
    }

    /// The elements in row-major order. Where a view's may not have been gathered yet and an
    /// error can be returned, [`Tensor::try_data`] is the one to call: this one aborts when
    /// they do not fit in memory.
    #[inline]
    pub(crate) fn data(&self) -> &Storage {
        self.try_data().unwrap_or_else(|e| panic!("{e}"))
    }

    /// The elements in row-major order: a view's are gathered on first use, a MemoryError when
    /// they do not fit in memory.
    #[inline]
    pub(crate) fn try_data(&self) -> Result<&Storage> {
        match &*self.storage {
            Storage::View(v) => self.gathered(v).map(|s| &**s),
            Storage::Device(d) => self.downloaded(d).map(|s| &**s),
            s => Ok(s),
        }
    }

    /// [`Tensor::try_data`] as a shared storage.
    pub(crate) fn try_dense(&self) -> Result<Arc<Storage>> {
        match &*self.storage {
            Storage::View(v) => self.gathered(v).cloned(),
            Storage::Device(d) => self.downloaded(d).cloned(),
            _ => Ok(self.storage.clone()),
        }
    }

    /// A device tensor's elements copied to the host, on the first call, and kept.
    fn downloaded<'a>(&'a self, d: &'a OnDevice) -> Result<&'a Arc<Storage>> {
        if let Some(host) = d.host.get() {
            return Ok(host);
        }
        let host = Arc::new(download(&*d.buffer, &self.shape)?);
        Ok(d.host.get_or_init(|| host))
    }

    /// A tensor of `shape` whose elements are in `buffer` (a device's memory).
    pub fn from_device_buffer(buffer: Arc<dyn DeviceBuffer>, shape: &[usize]) -> Result<Tensor> {
        let n = alloc::checked_numel_of(shape, buffer.dtype())?;
        if n != buffer.len() {
            return Err(TensorError::new(
                ErrorKind::Value,
                format!(
                    "a device buffer of {} elements cannot hold shape {}",
                    buffer.len(),
                    shape_repr::compact_shape(shape)
                ),
            ));
        }
        Ok(Tensor {
            shape: shape.into(),
            storage: Arc::new(Storage::Device(OnDevice {
                buffer,
                host: std::sync::OnceLock::new(),
            })),
        })
    }

    /// The elements in host memory, contiguous (a fallible [`Tensor::contiguous`] that also
    /// copies a device tensor to the host).
    pub fn contiguous_host(&self) -> Result<Tensor> {
        Ok(Tensor {
            shape: self.shape.clone(),
            storage: self.try_dense()?,
        })
    }

    /// The device buffer holding the elements, for a tensor on a device other than the CPU.
    pub fn device_buffer(&self) -> Option<&Arc<dyn DeviceBuffer>> {
        self.on_device().map(|d| &d.buffer)
    }

    /// The elements as bytes in row-major order (bools as bytes 0 and 1), what a device
    /// uploads.
    pub fn host_bytes(&self) -> Result<std::borrow::Cow<'_, [u8]>> {
        use pulp::bytemuck::cast_slice;
        use std::borrow::Cow;
        Ok(match self.try_data()? {
            Storage::Bool(v) => Cow::Owned(v.iter().map(|&b| u8::from(b)).collect()),
            Storage::I32(v) => Cow::Borrowed(cast_slice(v)),
            Storage::I64(v) => Cow::Borrowed(cast_slice(v)),
            Storage::F32(v) => Cow::Borrowed(cast_slice(v)),
            Storage::F64(v) => Cow::Borrowed(cast_slice(v)),
            Storage::F16(v) => Cow::Owned(v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Storage::BF16(v) => Cow::Owned(v.iter().flat_map(|x| x.to_le_bytes()).collect()),
            Storage::I8(v) => Cow::Borrowed(cast_slice(v)),
            Storage::U8(v) => Cow::Borrowed(v),
            Storage::View(_) | Storage::Device(_) => {
                unreachable!("data() is dense and on the host")
            }
        })
    }

    /// A view's elements, gathered on the first call and kept.
    fn gathered<'a>(&'a self, v: &'a View) -> Result<&'a Arc<Storage>> {
        if let Some(dense) = v.dense.get() {
            return Ok(dense);
        }
        // Two threads may both gather; the first result is kept.
        let gathered = Arc::new(self.gather_view(v)?);
        Ok(v.dense.get_or_init(|| gathered))
    }

    /// Where the element at row-major position `flat` is in [`Tensor::raw_storage`] (printing
    /// reads the few elements it shows in place, as numpy does, instead of gathering a view).
    pub(crate) fn storage_index(&self, flat: usize) -> usize {
        let Some(v) = self.view() else { return flat };
        let (mut rest, mut at) = (flat, v.offset);
        for (&d, &s) in self.shape.iter().zip(v.strides.iter()).rev() {
            at += (rest % d) as isize * s;
            rest /= d;
        }
        at as usize
    }

    fn gather_view(&self, v: &View) -> Result<Storage> {
        /// The copy a view's size asks for, allocated fallibly: a MemoryError, not an abort.
        fn pick<T: Copy>(
            src: &[T],
            offset: isize,
            shape: &[usize],
            strides: &[isize],
            dtype: DType,
        ) -> Result<Vec<T>> {
            let mut out = alloc::try_vec_of(shape, dtype)?;
            shape::gather_into(&mut out, src, offset, shape, strides);
            Ok(out)
        }
        /// A transposed matrix (strides `(1, s)`, as `x.T` makes) by the blocked transpose,
        /// which moves whole cache lines; anything else row by row.
        fn pick_bits<T: Copy + pulp::bytemuck::Pod>(
            src: &[T],
            offset: isize,
            shape: &[usize],
            strides: &[isize],
            dtype: DType,
        ) -> Result<Vec<T>> {
            if let ([rows, cols], &[1, s]) = (shape, strides)
                && *rows > 1
                && *cols > 1
                && s >= *rows as isize
                && offset >= 0
            {
                // Element (i, j) is at offset + i + j·s: the transpose of the cols×rows
                // matrix at `offset` with row stride s.
                let mut out = alloc::try_vec_of(shape, dtype)?;
                out.resize(rows * cols, src[offset as usize]);
                transpose::transpose(
                    &src[offset as usize..],
                    s as usize,
                    *cols,
                    *rows,
                    &mut out,
                    *cols,
                );
                return Ok(out);
            }
            pick(src, offset, shape, strides, dtype)
        }
        let (o, sh, st, d) = (v.offset, &self.shape[..], &v.strides[..], self.dtype());
        Ok(match &*v.base {
            Storage::F16(x) => Storage::F16(pick(x, o, sh, st, d)?),
            Storage::BF16(x) => Storage::BF16(pick(x, o, sh, st, d)?),
            Storage::I8(x) => Storage::I8(pick(x, o, sh, st, d)?),
            Storage::U8(x) => Storage::U8(pick(x, o, sh, st, d)?),
            Storage::Bool(x) => Storage::Bool(pick(x, o, sh, st, d)?),
            Storage::I32(x) => Storage::I32(pick_bits(x, o, sh, st, d)?),
            Storage::I64(x) => Storage::I64(pick_bits(x, o, sh, st, d)?),
            Storage::F32(x) => Storage::F32(pick_bits(x, o, sh, st, d)?),
            Storage::F64(x) => Storage::F64(pick_bits(x, o, sh, st, d)?),
            Storage::View(_) | Storage::Device(_) => unreachable!("a view's base is dense"),
        })
    }

    /// Whether a view's elements have been gathered (tests check that kernels reading strides
    /// did not).
    #[cfg(test)]
    pub(crate) fn is_gathered(&self) -> bool {
        self.view().is_some_and(|v| v.dense.get().is_some())
    }

    /// This tensor's strides over its storage, in elements.
    pub(crate) fn strides(&self) -> std::borrow::Cow<'_, [isize]> {
        match self.view() {
            None => std::borrow::Cow::Owned(shape::contiguous_strides(&self.shape)),
            Some(v) => std::borrow::Cow::Borrowed(&v.strides),
        }
    }

    /// The storage itself (a view's elements are somewhere in it: see `matrix_layout`).
    pub(crate) fn raw_storage(&self) -> &Storage {
        self.base()
    }

    /// Where this tensor's first element is in its storage.
    pub(crate) fn offset(&self) -> isize {
        self.view().map_or(0, |v| v.offset)
    }

    /// The 2-D strides and storage offset to read this matrix in place, when it is one (a
    /// view with non-negative strides, or contiguous).
    pub(crate) fn matrix_layout(&self) -> Option<(isize, isize, isize)> {
        match (self.view(), &self.shape[..]) {
            (None, &[_, c]) => Some((0, c as isize, 1)),
            (Some(v), &[_, _]) if v.strides.iter().all(|&s| s >= 0) => {
                Some((v.offset, v.strides[0], v.strides[1]))
            }
            _ => None,
        }
    }

    /// A view of this tensor's storage with `shape` and `strides` from `offset` (contiguous
    /// again when that is what it reads).
    pub(crate) fn view_of(
        &self,
        offset: isize,
        shape: Vec<usize>,
        strides: Vec<isize>,
    ) -> Result<Tensor> {
        let n = alloc::checked_numel_of(&shape, self.dtype())?;
        let base = self.base();
        let dense = offset == 0
            && n == storage_len(base)
            && shape::contiguous_strides(&shape)
                .iter()
                .zip(&strides)
                .zip(&shape)
                .all(|((a, b), &d)| d <= 1 || a == b);
        let storage = if dense {
            base.clone()
        } else {
            Arc::new(Storage::View(View {
                base: base.clone(),
                offset,
                strides: strides.into(),
                dense: std::sync::OnceLock::new(),
            }))
        };
        Ok(Tensor {
            shape: shape.into(),
            storage,
        })
    }

    /// The address of the first element of the storage (to check buffer reuse; never
    /// dereference it).
    pub fn as_ptr_addr(&self) -> usize {
        match self.data() {
            Storage::F16(v) => v.as_ptr() as usize,
            Storage::BF16(v) => v.as_ptr() as usize,
            Storage::I8(v) => v.as_ptr() as usize,
            Storage::U8(v) => v.as_ptr() as usize,
            s => with_storage!(s, v => v.as_ptr() as usize),
        }
    }

    /// Whether two tensors share the same storage allocation (cheap clones and reshapes do).
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(self.base(), other.base())
    }
}

/// A device buffer's elements, copied into host storage of its dtype (allocated fallibly).
fn download(buffer: &dyn DeviceBuffer, shape: &[usize]) -> Result<Storage> {
    use pulp::bytemuck::cast_slice_mut;
    fn fill<T: Copy + Default + pulp::bytemuck::Pod>(
        buffer: &dyn DeviceBuffer,
        shape: &[usize],
    ) -> Result<Vec<T>> {
        let mut v: Vec<T> = alloc::try_vec_of(shape, buffer.dtype())?;
        v.resize(buffer.len(), T::default());
        buffer.download(cast_slice_mut(&mut v))?;
        Ok(v)
    }
    Ok(match buffer.dtype() {
        DType::Bool => {
            let bytes: Vec<u8> = fill(buffer, shape)?;
            Storage::Bool(bytes.into_iter().map(|b| b != 0).collect())
        }
        DType::I32 => Storage::I32(fill(buffer, shape)?),
        DType::I64 => Storage::I64(fill(buffer, shape)?),
        DType::F32 => Storage::F32(fill(buffer, shape)?),
        DType::F64 => Storage::F64(fill(buffer, shape)?),
        DType::F16 => Storage::F16(
            fill::<u16>(buffer, shape)?
                .into_iter()
                .map(::half::f16::from_bits)
                .collect(),
        ),
        DType::BF16 => Storage::BF16(
            fill::<u16>(buffer, shape)?
                .into_iter()
                .map(::half::bf16::from_bits)
                .collect(),
        ),
        DType::I8 => Storage::I8(fill(buffer, shape)?),
        DType::U8 => Storage::U8(fill(buffer, shape)?),
    })
}
