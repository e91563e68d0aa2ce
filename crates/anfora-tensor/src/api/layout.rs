//! Shapes and views: reshaping, transposing, indexing, joining and splitting.

use crate::element::{Element, with_storage};
use crate::{
    AdvIndexItem, ErrorKind, IndexItem, Result, SplitSpec, Tensor, TensorError, advanced, alloc,
    array_ops, narrow, shape,
};

impl Tensor {
    /// One dimension may be -1.
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        let shape = shape::resolve_reshape(self.numel(), shape)?;
        alloc::checked_numel_of(&shape, self.dtype())?;
        // A device buffer is dense: the same buffer, read with another shape.
        let storage = match self.device_buffer() {
            Some(_) => self.storage.clone(),
            None => self.try_dense()?,
        };
        Ok(Tensor {
            shape: shape.into(),
            storage,
        })
    }
    /// The axes `transpose(axes)` of an `ndim`-dimensional tensor takes, in order (`None`
    /// reverses them); numpy's errors for axes that are not a permutation.
    pub fn permutation(ndim: usize, axes: Option<&[i64]>) -> Result<Vec<usize>> {
        shape::resolve_permutation(ndim, axes)
    }

    /// `None` reverses the axes.
    pub fn transpose(&self, axes: Option<&[i64]>) -> Result<Tensor> {
        let perm = shape::resolve_permutation(self.ndim(), axes)?;
        if perm.iter().enumerate().all(|(i, &p)| i == p) {
            return Ok(self.clone());
        }
        let strides = self.strides();
        let new_shape: Vec<usize> = perm.iter().map(|&p| self.shape[p]).collect();
        let new_strides: Vec<isize> = perm.iter().map(|&p| strides[p]).collect();
        self.view_of(self.offset(), new_shape, new_strides)
    }
    /// numpy basic indexing (a view, as numpy's).
    pub fn index(&self, items: &[IndexItem]) -> Result<Tensor> {
        let (offset, new_shape, strides) =
            shape::index_view_strided(&self.shape, &self.strides(), items)?;
        self.view_of(self.offset() + offset, new_shape, strides)
    }

    /// The gradient of basic indexing: zeros of `shape` holding `self` where `x[items]` reads
    /// (basic indices never read a position twice). `self` has the shape of that view.
    pub fn index_scatter(&self, shape: &[usize], items: &[IndexItem]) -> Result<Tensor> {
        if self.is_narrow() {
            return narrow::via_wide(&[self], |w| w[0].index_scatter(shape, items));
        }
        let (offset, view, strides) = shape::index_view(shape, items)?;
        if self.shape() != view.as_slice() {
            return Err(TensorError::new(
                ErrorKind::Value,
                format!(
                    "the sensitivity of an indexing has shape {:?}, not the indexed shape {:?}",
                    self.shape(),
                    view
                ),
            ));
        }
        let storage = with_storage!(self.try_data()?, v => {
            let mut out = alloc::try_filled(shape, Element::from_bool(false))?;
            shape::scatter_view(&mut out, offset, &view, &strides, v);
            Element::into_storage(out)
        });
        Ok(Tensor::from_storage(storage, shape.to_vec()))
    }

    /// numpy indexing, advanced indices included: basic items alone give a view (as
    /// [`Tensor::index`]), integer arrays and boolean masks a copy (numpy's rules for where the
    /// broadcast array dimensions go).
    pub fn index_adv(&self, items: &[AdvIndexItem]) -> Result<Tensor> {
        if !advanced::is_advanced(items) {
            let basic: Vec<IndexItem> = items
                .iter()
                .map(|i| match i {
                    AdvIndexItem::Basic(b) => *b,
                    AdvIndexItem::Array(_) => unreachable!("no arrays"),
                })
                .collect();
            return self.index(&basic);
        }
        if self.is_narrow() {
            return narrow::via_wide(&[self], |w| advanced::gather(&w[0], items));
        }
        advanced::gather(self, items)
    }

    /// numpy's `x[items] = value` on a copy of `self`: `value` is broadcast to the selection
    /// (leading length-1 dimensions dropped) and cast to `self`'s dtype with numpy's unsafe
    /// cast; the last write to a position wins. The result has `self`'s shape and dtype.
    pub fn index_assign(&self, items: &[AdvIndexItem], value: &Tensor) -> Result<Tensor> {
        if self.is_narrow() {
            let r = advanced::assign(&self.widen(), items, &value.widen())?;
            return r.try_cast(self.dtype());
        }
        if value.is_narrow() {
            return advanced::assign(self, items, &value.widen());
        }
        advanced::assign(self, items, value)
    }

    /// [`Tensor::index_assign`] of a tensor the caller gives up: written into its own buffer
    /// when nothing else holds it, else into a copy.
    pub fn index_assign_owned(self, items: &[AdvIndexItem], value: &Tensor) -> Result<Tensor> {
        if self.is_narrow() || !self.is_unique() {
            return self.index_assign(items, value);
        }
        advanced::assign_in_place(self, items, value)
    }

    /// The gradient of [`Tensor::index_adv`]: zeros of `shape` plus `self` added where
    /// `x[items]` reads (positions read twice accumulate). `self` has the selection's shape.
    pub fn index_add(&self, shape: &[usize], items: &[AdvIndexItem]) -> Result<Tensor> {
        if self.is_narrow() {
            return narrow::via_wide(&[self], |w| advanced::scatter_add(&w[0], shape, items));
        }
        advanced::scatter_add(self, shape, items)
    }

    /// The gradient of the value of [`Tensor::index_assign`] before it is summed back to the
    /// value's shape: `self[items]` (a copy), with zeros for the elements of the selection
    /// that a later element overwrites (they were not stored).
    pub fn index_last_writes(&self, items: &[AdvIndexItem]) -> Result<Tensor> {
        if self.is_narrow() {
            return narrow::via_wide(&[self], |w| advanced::last_writes(&w[0], items));
        }
        advanced::last_writes(self, items)
    }

    /// numpy's `squeeze` (`None`: every axis of length 1).
    pub fn squeeze(&self, axes: Option<&[i64]>) -> Result<Tensor> {
        if self.is_narrow() {
            return narrow::via_wide(&[self], |w| array_ops::squeeze(&w[0], axes));
        }
        array_ops::squeeze(self, axes)
    }
    /// numpy's `expand_dims`.
    pub fn expand_dims(&self, axes: &[i64]) -> Result<Tensor> {
        if self.is_narrow() {
            return narrow::via_wide(&[self], |w| array_ops::expand_dims(&w[0], axes));
        }
        array_ops::expand_dims(self, axes)
    }
    /// numpy's `broadcast_to`.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Tensor> {
        if self.is_narrow() {
            return narrow::via_wide(&[self], |w| array_ops::broadcast_to(&w[0], shape));
        }
        array_ops::broadcast_to(self, shape)
    }

    /// numpy's `concatenate` along `axis` (dtypes promoted).
    pub fn concat(tensors: &[Tensor], axis: i64) -> Result<Tensor> {
        if tensors.iter().any(Tensor::is_narrow) {
            let all: Vec<&Tensor> = tensors.iter().collect();
            return narrow::via_wide(&all, |w| array_ops::concat(w, axis));
        }
        array_ops::concat(tensors, axis)
    }
    /// numpy's `stack` along a new `axis`.
    pub fn stack(tensors: &[Tensor], axis: i64) -> Result<Tensor> {
        if tensors.iter().any(Tensor::is_narrow) {
            let all: Vec<&Tensor> = tensors.iter().collect();
            return narrow::via_wide(&all, |w| array_ops::stack(w, axis));
        }
        array_ops::stack(tensors, axis)
    }
    /// numpy's `split` along `axis`: `n` equal parts, or the parts between indices.
    pub fn split(&self, spec: &SplitSpec, axis: i64) -> Result<Vec<Tensor>> {
        if self.is_narrow() {
            return narrow::via_wide(&[self], |w| array_ops::split(&w[0], spec, axis));
        }
        array_ops::split(self, spec, axis)
    }
}
