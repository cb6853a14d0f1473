//! NumPy's form of variable-length branches (`library="np"`): an object array of one item per
//! entry, built here in one pass instead of a Python loop over the entries.

use std::os::raw::{c_int, c_void};

use numpy::npyffi::{self, NPY_ARRAY_WRITEABLE, PY_ARRAY_API, npy_intp};
use numpy::{
    PyArray1, PyArrayDescrMethods, PyReadonlyArray1, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::errors;

/// Checks that `offsets` are non-decreasing and end within `len` items.
fn check_offsets(offsets: &[u64], len: usize) -> PyResult<()> {
    let sorted = offsets.windows(2).all(|w| w[0] <= w[1]);
    if !sorted || offsets.last().is_some_and(|&end| end > len as u64) {
        return Err(errors::value(format!(
            "offsets must be non-decreasing and end within the {len} values"
        )));
    }
    Ok(())
}

/// An object array whose item `i` is a view of `values[offsets[i]..offsets[i + 1]]` (a
/// one-dimensional contiguous array of any dtype): what uproot's `library="np"` gives for a
/// jagged branch, each item sharing `values`' memory.
#[pyfunction]
pub(crate) fn split_views<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyUntypedArray>,
    offsets: PyReadonlyArray1<'py, u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let offsets = offsets.as_slice()?;
    if values.ndim() != 1 || !values.is_c_contiguous() {
        return Err(errors::value(
            "values must be a one-dimensional contiguous array",
        ));
    }
    check_offsets(offsets, values.len())?;
    let descr = values.dtype();
    let itemsize = descr.itemsize();
    let array = values.as_array_ptr();
    // SAFETY: `array` is a live NumPy array (borrowed for this call); its data pointer and flags
    // are read, not changed.
    let (data, writeable) = unsafe {
        (
            (*array).fields.data.cast::<u8>(),
            (*array).fields.flags & NPY_ARRAY_WRITEABLE,
        )
    };
    let flags = writeable | npyffi::NPY_ARRAY_C_CONTIGUOUS | npyffi::NPY_ARRAY_ALIGNED;
    // SAFETY: NumPy's array type object, which lives as long as the NumPy module.
    let array_type = unsafe { npyffi::get_type_object(py, npyffi::NpyTypes::PyArray_Type) };
    let mut items: Vec<Py<PyAny>> = Vec::with_capacity(offsets.len().saturating_sub(1));
    for w in offsets.windows(2) {
        let mut dim = (w[1] - w[0]) as npy_intp;
        let mut stride = itemsize as npy_intp;
        let descr_ptr = descr.as_dtype_ptr();
        // SAFETY: the view points into `values`' buffer at an offset checked above to lie
        // within it, with `dim` items of its dtype; `PyArray_NewFromDescr` steals the reference
        // to the dtype taken here, and `PyArray_SetBaseObject` the one to `values`, which so
        // stays alive as long as the view.
        let view = unsafe {
            pyo3::ffi::Py_INCREF(descr_ptr.cast());
            let ptr = PY_ARRAY_API.PyArray_NewFromDescr(
                py,
                array_type,
                descr_ptr,
                1 as c_int,
                &mut dim,
                &mut stride,
                data.add(w[0] as usize * itemsize).cast::<c_void>(),
                flags,
                std::ptr::null_mut(),
            );
            if ptr.is_null() {
                return Err(PyErr::fetch(py));
            }
            let view = Bound::<PyAny>::from_owned_ptr(py, ptr).unbind();
            pyo3::ffi::Py_INCREF(values.as_ptr());
            if PY_ARRAY_API.PyArray_SetBaseObject(py, ptr.cast(), values.as_ptr()) != 0 {
                return Err(PyErr::fetch(py));
            }
            view
        };
        items.push(view);
    }
    Ok(PyArray1::from_vec(py, items).into_any())
}

/// An object array whose item `i` is the bytes `values[offsets[i]..offsets[i + 1]]`, as `str`
/// (invalid UTF-8 replaced by U+FFFD) with `utf8`, else as `bytes`.
#[pyfunction]
pub(crate) fn split_strings<'py>(
    py: Python<'py>,
    values: PyReadonlyArray1<'py, u8>,
    offsets: PyReadonlyArray1<'py, u64>,
    utf8: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let (values, offsets) = (values.as_slice()?, offsets.as_slice()?);
    check_offsets(offsets, values.len())?;
    let items: Vec<Py<PyAny>> = offsets
        .windows(2)
        .map(|w| {
            let bytes = &values[w[0] as usize..w[1] as usize];
            if utf8 {
                PyString::new(py, &String::from_utf8_lossy(bytes))
                    .into_any()
                    .unbind()
            } else {
                PyBytes::new(py, bytes).into_any().unbind()
            }
        })
        .collect();
    Ok(PyArray1::from_vec(py, items).into_any())
}
