"""CuPy 14.2.0's top-level API as data, for the fake CuPy (``_fake_cupy.py``,
``_fake_ufunc.py``) and its test against the real module (``test_fake_cupy_api.py``).

``UFUNCS`` are ``cupy.ufunc`` instances; ``FUNCTIONS`` maps every other callable that has
an ``inspect.signature`` to that signature as text (annotations dropped, defaults as
``repr`` shows them); ``OTHER`` are the remaining public names (types, constants,
submodules, callables without a signature). ``UFUNC_METHODS`` are the methods a
``cupy.ufunc`` has and the ufuncs whose methods do the work; the others raise
NotImplementedError (``ufunc.at``/``reduce``/``accumulate``/``reduceat`` in
``cupy/_core/_kernel.pyx``; ``scatter_op=`` in ``cupy/_core/_routines_math.pyx``,
``_routines_binary.pyx`` and ``cupy/_math/misc.py``, v14.2.0).

Regenerate from an installed CuPy (it imports without a GPU):
``PYTHONPATH=<site-packages with cupy> python tests/plugins/cuda/_cupy_api.py``
prints the three tables.
"""
from __future__ import annotations

import inspect

UFUNC_METHODS = {
    "at": ("add", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor"),
    "reduce": ("add", "multiply"),
    "accumulate": ("add", "multiply"),
    "reduceat": ("add",),
    "outer": None,  # every ufunc
}


def snapshot(module) -> tuple:
    """``(ufuncs, functions, other)`` of ``module`` (real CuPy or the fake) as the tables
    below hold them: public names, signatures as text without annotations."""
    ufuncs, functions, other = [], {}, []
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        if isinstance(obj, module.ufunc):
            ufuncs.append(name)
            continue
        sig = signature_of(obj)
        if sig is None:
            other.append(name)
        else:
            functions[name] = sig
    return tuple(ufuncs), functions, tuple(other)


def signature_of(obj) -> str | None:
    """``obj``'s signature as text without annotations; None for a class, a non-callable
    or a callable without one."""
    if not callable(obj) or isinstance(obj, type):
        return None
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return str(sig.replace(parameters=[p.replace(annotation=p.empty)
                                       for p in sig.parameters.values()],
                           return_annotation=sig.empty))


# ==== generated from CuPy 14.2.0 (see the module docstring) =================================
VERSION = '14.2.0'
UFUNCS = (
    'abs', 'absolute', 'acos', 'acosh', 'add', 'arccos', 'arccosh', 'arcsin', 'arcsinh',
    'arctan', 'arctan2', 'arctanh', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'bitwise_and',
    'bitwise_count', 'bitwise_invert', 'bitwise_left_shift', 'bitwise_not', 'bitwise_or',
    'bitwise_right_shift', 'bitwise_xor', 'cbrt', 'ceil', 'conj', 'conjugate', 'copysign',
    'cos', 'cosh', 'deg2rad', 'degrees', 'divide', 'divmod', 'equal', 'exp', 'exp2', 'expm1',
    'fabs', 'fix', 'float_power', 'floor', 'floor_divide', 'fmax', 'fmin', 'fmod', 'frexp',
    'gcd', 'greater', 'greater_equal', 'heaviside', 'hypot', 'i0', 'invert', 'isfinite',
    'isinf', 'isnan', 'lcm', 'ldexp', 'left_shift', 'less', 'less_equal', 'log', 'log10',
    'log1p', 'log2', 'logaddexp', 'logaddexp2', 'logical_and', 'logical_not', 'logical_or',
    'logical_xor', 'maximum', 'minimum', 'mod', 'modf', 'multiply', 'negative', 'nextafter',
    'not_equal', 'positive', 'pow', 'power', 'rad2deg', 'radians', 'reciprocal', 'remainder',
    'right_shift', 'rint', 'sign', 'signbit', 'sin', 'sinc', 'sinh', 'sqrt', 'square',
    'subtract', 'tan', 'tanh', 'true_divide', 'trunc',)
OTHER = (
    'AxisError', 'ComplexWarning', 'DataSource', 'ElementwiseKernel', 'Inf', 'Infinity',
    'ModuleDeprecationWarning', 'NAN', 'NINF', 'NZERO', 'NaN', 'PINF', 'PZERO', 'RankWarning',
    'RawKernel', 'RawModule', 'ReductionKernel', 'TooHardError', 'VisibleDeprecationWarning',
    'annotations', 'bool', 'bool_', 'broadcast', 'byte', 'c_', 'cdouble', 'cfloat',
    'clear_memo', 'complex128', 'complex64', 'complex_', 'complexfloating', 'csingle', 'cuda',
    'disable_experimental_feature_warning', 'double', 'dtype', 'e', 'euler_gamma', 'exceptions',
    'fft', 'finfo', 'flatiter', 'float16', 'float32', 'float64', 'float_', 'floating',
    'format_parser', 'fromDlpack', 'from_dlpack', 'fuse', 'generic', 'half', 'iinfo',
    'index_exp', 'inexact', 'inf', 'infty', 'int16', 'int32', 'int64', 'int8', 'int_', 'intc',
    'integer', 'intp', 'lib', 'linalg', 'long', 'longlong', 'make_aligned_dtype', 'memoize',
    'mgrid', 'min_scalar_type', 'nan', 'ndarray', 'ndindex', 'newaxis', 'number', 'ogrid', 'pi',
    'poly1d', 'polynomial', 'r_', 'random', 's_', 'short', 'signedinteger', 'single',
    'singlecomplex', 'size', 'testing', 'typing', 'ubyte', 'ufunc', 'uint', 'uint16', 'uint32',
    'uint64', 'uint8', 'uintc', 'uintp', 'ulong', 'ulonglong', 'unsignedinteger', 'ushort',
    'vectorize',)
FUNCTIONS = {
    'all': '(a, axis=None, out=None, keepdims=False)',
    'allclose': '(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)',
    'alltrue': '(a, axis=None, out=None, keepdims=False)',
    'amax': '(a, axis=None, out=None, keepdims=False)',
    'amin': '(a, axis=None, out=None, keepdims=False)',
    'angle': '(z, deg=False)',
    'any': '(a, axis=None, out=None, keepdims=False)',
    'append': '(arr, values, axis=None)',
    'apply_along_axis': '(func1d, axis, arr, *args, **kwargs)',
    'apply_over_axes': '(func, a, axes)',
    'arange': '(start, stop=None, step=1, dtype=None)',
    'argmax': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'argmin': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'argpartition': '(a, kth, axis=-1)',
    'argsort': '(a, axis=-1, kind=None)',
    'argwhere': '(a)',
    'around': '(a, decimals=0, out=None)',
    'array': "(obj, dtype=None, copy=True, order='K', subok=False, ndmin=0, *, blocking=False)",
    'array2string': '(a, *args, **kwargs)',
    'array_equal': '(a1, a2, equal_nan=False)',
    'array_equiv': '(a1, a2)',
    'array_repr': '(arr, max_line_width=None, precision=None, suppress_small=None)',
    'array_split': '(ary, indices_or_sections, axis=0)',
    'array_str': '(arr, max_line_width=None, precision=None, suppress_small=None)',
    'asanyarray': '(a, dtype=None, order=None, *, copy=None, blocking=False)',
    'asarray': '(a, dtype=None, order=None, *, copy=None, blocking=False)',
    'asarray_chkfinite': '(a, dtype=None, order=None)',
    'ascontiguousarray': '(a, dtype=None)',
    'asfarray': "(a, dtype=<class 'numpy.float64'>)",
    'asfortranarray': '(a, dtype=None)',
    'asnumpy': "(a, stream=None, order='C', out=None, *, blocking=True)",
    'astype': '(x, dtype, /, *, copy=True)',
    'atleast_1d': '(*arys)',
    'atleast_2d': '(*arys)',
    'atleast_3d': '(*arys)',
    'average': '(a, axis=None, weights=None, returned=False, *, keepdims=False)',
    'bartlett': '(M)',
    'base_repr': '(number, base=2, padding=0)',
    'binary_repr': '(num, width=None)',
    'bincount': '(x, weights=None, minlength=None)',
    'blackman': '(M)',
    'broadcast_arrays': '(*args)',
    'broadcast_shapes': '(*args)',
    'broadcast_to': '(array, shape)',
    'byte_bounds': '(a)',
    'can_cast': "(from_, to, casting='safe')",
    'choose': "(a, choices, out=None, mode='raise')",
    'clip': '(a, a_min, a_max, out=None)',
    'column_stack': '(tup)',
    'common_type': '(*arrays)',
    'compress': '(condition, a, axis=None, out=None)',
    'concat': "(tup, axis=0, out=None, *, dtype=None, casting='same_kind')",
    'concatenate': "(tup, axis=0, out=None, *, dtype=None, casting='same_kind')",
    'convolve': "(a, v, mode='full')",
    'copy': "(a, order='K')",
    'copyto': "(dst, src, casting='same_kind', where=None)",
    'corrcoef': '(a, y=None, rowvar=True, bias=None, ddof=None, *, dtype=None)',
    'correlate': "(a, v, mode='valid')",
    'count_nonzero': '(a, axis=None)',
    'cov': (
        '(a, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, '
        'dtype=None)'),
    'cross': '(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None)',
    'cumprod': '(a, axis=None, dtype=None, out=None)',
    'cumproduct': '(a, axis=None, dtype=None, out=None)',
    'cumsum': '(a, axis=None, dtype=None, out=None)',
    'cumulative_prod': '(x, /, *, axis=None, dtype=None, out=None, include_initial=False)',
    'cumulative_sum': '(x, /, *, axis=None, dtype=None, out=None, include_initial=False)',
    'delete': '(arr, indices, axis=None)',
    'diag': '(v, k=0)',
    'diag_indices': '(n, ndim=2)',
    'diag_indices_from': '(arr)',
    'diagflat': '(v, k=0)',
    'diagonal': '(a, offset=0, axis1=0, axis2=1)',
    'diff': '(a, n=1, axis=-1, prepend=None, append=None)',
    'digitize': '(x, bins, right=False)',
    'disp': '(*args, **kwds)',
    'dot': '(a, b, out=None)',
    'dsplit': '(ary, indices_or_sections)',
    'dstack': '(tup)',
    'ediff1d': '(arr, to_end=None, to_begin=None)',
    'einsum': '(*operands, **kwargs)',
    'empty': "(shape, dtype=<class 'float'>, order='C')",
    'empty_like': "(prototype, dtype=None, order='K', subok=None, shape=None)",
    'expand_dims': '(a, axis)',
    'extract': '(condition, a)',
    'eye': "(N, M=None, k=0, dtype=<class 'float'>, order='C')",
    'fill_diagonal': '(a, val, wrap=False)',
    'find_common_type': '(*args, **kwds)',
    'flatnonzero': '(a)',
    'flip': '(a, axis=None)',
    'fliplr': '(a)',
    'flipud': '(a)',
    'format_float_positional': '(x, *args, **kwargs)',
    'format_float_scientific': '(x, *args, **kwargs)',
    'frombuffer': '(*args, **kwargs)',
    'fromfile': '(*args, **kwargs)',
    'fromfunction': '(*args, **kwargs)',
    'fromiter': '(*args, **kwargs)',
    'fromstring': '(*args, **kwargs)',
    'full': "(shape, fill_value, dtype=None, order='C')",
    'full_like': "(a, fill_value, dtype=None, order='K', subok=None, shape=None)",
    'genfromtxt': '(*args, **kwargs)',
    'get_array_module': '(*args)',
    'get_array_wrap': '(*args, **kwds)',
    'get_default_memory_pool': '()',
    'get_default_pinned_memory_pool': '()',
    'get_printoptions': '()',
    'gradient': '(f, *varargs, axis=None, edge_order=1)',
    'hamming': '(M)',
    'hanning': '(M)',
    'histogram': '(x, bins=10, range=None, density=False, weights=None)',
    'histogram2d': '(x, y, bins=10, range=None, weights=None, density=None)',
    'histogramdd': '(sample, bins=10, range=None, weights=None, density=False)',
    'hsplit': '(ary, indices_or_sections)',
    'hstack': "(tup, *, dtype=None, casting='same_kind')",
    'identity': "(n, dtype=<class 'float'>)",
    'imag': '(val)',
    'in1d': '(ar1, ar2, assume_unique=False, invert=False)',
    'indices': "(dimensions, dtype=<class 'int'>)",
    'inner': '(a, b)',
    'interp': '(x, xp, fp, left=None, right=None, period=None)',
    'intersect1d': '(arr1, arr2, assume_unique=False, return_indices=False)',
    'is_available': '()',
    'isclose': '(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)',
    'iscomplex': '(x)',
    'iscomplexobj': '(x)',
    'isdtype': '(dtype, kind)',
    'isfortran': '(a)',
    'isin': '(element, test_elements, assume_unique=False, invert=False)',
    'isneginf': '(x, out=None)',
    'isposinf': '(x, out=None)',
    'isreal': '(x)',
    'isrealobj': '(x)',
    'isscalar': '(element)',
    'issctype': '(rep)',
    'issubclass_': '(arg1, arg2)',
    'issubdtype': '(arg1, arg2)',
    'issubsctype': '(arg1, arg2)',
    'iterable': '(y)',
    'ix_': '(*args)',
    'kaiser': '(M, beta)',
    'kron': '(a, b)',
    'lexsort': '(keys)',
    'linspace': '(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0)',
    'load': '(file, mmap_mode=None, allow_pickle=None)',
    'loadtxt': '(*args, **kwargs)',
    'logspace': '(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0)',
    'mask_indices': '(n, mask_func, k=0)',
    'matmul': (
        "(*args, axes=None, axis=None, keepdims=False, casting='same_kind', dtype=None, "
        "signature=None, order='K', out=None)"),
    'matrix_transpose': '(x, /)',
    'max': '(a, axis=None, out=None, keepdims=False)',
    'may_share_memory': '(a, b, max_work=None)',
    'mean': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'median': '(a, axis=None, out=None, overwrite_input=False, keepdims=False)',
    'meshgrid': '(*xi, **kwargs)',
    'min': '(a, axis=None, out=None, keepdims=False)',
    'mintypecode': "(typechars, typeset='GDFgdf', default='d')",
    'moveaxis': '(a, source, destination)',
    'msort': '(a)',
    'nan_to_num': '(x, copy=True, nan=0.0, posinf=None, neginf=None)',
    'nanargmax': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'nanargmin': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'nancumprod': '(a, axis=None, dtype=None, out=None)',
    'nancumsum': '(a, axis=None, dtype=None, out=None)',
    'nanmax': '(a, axis=None, out=None, keepdims=False)',
    'nanmean': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'nanmedian': '(a, axis=None, out=None, overwrite_input=False, keepdims=False)',
    'nanmin': '(a, axis=None, out=None, keepdims=False)',
    'nanprod': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'nanstd': '(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False)',
    'nansum': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'nanvar': '(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False)',
    'ndim': '(a)',
    'nonzero': '(a)',
    'obj2sctype': '(rep, default=None)',
    'ones': "(shape, dtype=<class 'float'>, order='C')",
    'ones_like': "(a, dtype=None, order='K', subok=None, shape=None)",
    'outer': '(a, b, out=None)',
    'packbits': "(a, axis=None, bitorder='big')",
    'pad': "(array, pad_width, mode='constant', **kwargs)",
    'partition': '(a, kth, axis=-1)',
    'percentile': (
        "(a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False, "
        '*, interpolation=None)'),
    'permute_dims': '(a, axes=None)',
    'piecewise': '(x, condlist, funclist)',
    'place': '(arr, mask, vals)',
    'poly': '(seq_of_zeros)',
    'polyadd': '(a1, a2)',
    'polyfit': '(x, y, deg, rcond=None, full=False, w=None, cov=False)',
    'polymul': '(a1, a2)',
    'polysub': '(a1, a2)',
    'polyval': '(p, x)',
    'printoptions': '(*args, **kwargs)',
    'prod': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'product': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'promote_types': '(type1, type2, /)',
    'ptp': '(a, axis=None, out=None, keepdims=False)',
    'put': "(a, ind, v, mode='wrap')",
    'put_along_axis': '(arr, indices, values, axis)',
    'putmask': '(a, mask, values)',
    'quantile': (
        "(a, q, axis=None, out=None, overwrite_input=False, method='linear', keepdims=False, "
        '*, interpolation=None)'),
    'ravel': "(a, order='C')",
    'ravel_multi_index': "(multi_index, dims, mode='wrap', order='C')",
    'real': '(val)',
    'real_if_close': '(a, tol=100)',
    'repeat': '(a, repeats, axis=None)',
    'require': '(a, dtype=None, requirements=None)',
    'reshape': "(a, newshape, order='C', *, copy=None)",
    'resize': '(a, new_shape)',
    'result_type': '(*arrays_and_dtypes)',
    'roll': '(a, shift, axis=None)',
    'rollaxis': '(a, axis, start=0)',
    'roots': '(p)',
    'rot90': '(a, k=1, axes=(0, 1))',
    'round': '(a, decimals=0, out=None)',
    'round_': '(a, decimals=0, out=None)',
    'row_stack': "(tup, *, dtype=None, casting='same_kind')",
    'safe_eval': '(*args, **kwds)',
    'save': '(file, arr, allow_pickle=None)',
    'savetxt': '(fname, X, *args, **kwargs)',
    'savez': '(file, *args, **kwds)',
    'savez_compressed': '(file, *args, **kwds)',
    'sctype2char': '(sctype)',
    'searchsorted': "(a, v, side='left', sorter=None)",
    'select': '(condlist, choicelist, default=0)',
    'set_printoptions': (
        '(precision=None, threshold=None, edgeitems=None, linewidth=None, suppress=None, '
        'nanstr=None, infstr=None, formatter=None, sign=None, floatmode=None, *, '
        'legacy=None, override_repr=None)'),
    'set_string_function': '(*args, **kwds)',
    'setdiff1d': '(ar1, ar2, assume_unique=False)',
    'setxor1d': '(ar1, ar2, assume_unique=False)',
    'shape': '(a)',
    'shares_memory': '(a, b, max_work=None)',
    'show_config': '(*, _full=False)',
    'sometrue': '(a, axis=None, out=None, keepdims=False)',
    'sort': '(a, axis=-1, kind=None)',
    'sort_complex': '(a)',
    'split': '(ary, indices_or_sections, axis=0)',
    'squeeze': '(a, axis=None)',
    'stack': "(tup, axis=0, out=None, *, dtype=None, casting='same_kind')",
    'std': '(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False)',
    'sum': '(a, axis=None, dtype=None, out=None, keepdims=False)',
    'swapaxes': '(a, axis1, axis2)',
    'take': '(a, indices, axis=None, out=None)',
    'take_along_axis': '(a, indices, axis)',
    'tensordot': '(a, b, axes=2)',
    'tile': '(A, reps)',
    'trace': '(a, offset=0, axis1=0, axis2=1, dtype=None, out=None)',
    'transpose': '(a, axes=None)',
    'trapezoid': '(y, x=None, dx=1.0, axis=-1)',
    'trapz': '(y, x=None, dx=1.0, axis=-1)',
    'tri': "(N, M=None, k=0, dtype=<class 'float'>)",
    'tril': '(m, k=0)',
    'tril_indices': '(n, k=0, m=None)',
    'tril_indices_from': '(arr, k=0)',
    'trim_zeros': "(filt, trim='fb')",
    'triu': '(m, k=0)',
    'triu_indices': '(n, k=0, m=None)',
    'triu_indices_from': '(arr, k=0)',
    'typename': '(char)',
    'union1d': '(arr1, arr2)',
    'unique': (
        '(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, '
        'equal_nan=True)'),
    'unique_all': '(x)',
    'unique_counts': '(x)',
    'unique_inverse': '(x)',
    'unique_values': '(x)',
    'unpackbits': "(a, axis=None, bitorder='big')",
    'unravel_index': "(indices, dims, order='C')",
    'unwrap': '(p, discont=None, axis=-1, *, period=6.283185307179586)',
    'vander': '(x, N=None, increasing=False)',
    'var': '(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False)',
    'vdot': '(a, b)',
    'vsplit': '(ary, indices_or_sections)',
    'vstack': "(tup, *, dtype=None, casting='same_kind')",
    'where': '(condition, x=None, y=None)',
    'who': '(vardict=None)',
    'zeros': "(shape, dtype=<class 'float'>, order='C')",
    'zeros_like': "(a, dtype=None, order='K', subok=None, shape=None)",
}


if __name__ == "__main__":  # the tables below, from the installed CuPy
    import cupy

    _ufuncs, _functions, _other = snapshot(cupy)
    print(f"VERSION = {cupy.__version__!r}")
    for _title, _names in (("UFUNCS", _ufuncs), ("OTHER", _other)):
        print(f"{_title} = {_names!r}")
    print("FUNCTIONS = {")
    for _name, _text in _functions.items():
        print(f"    {_name!r}: {_text!r},")
    print("}")
