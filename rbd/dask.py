"""rbd's algorithms on Dask arrays: batches larger than memory, or spread over machines.

    import dask.array as da, rbd.dask
    q = da.from_zarr(...)                          # (N, nq), chunked along N
    tau = rbd.dask.rnea(model, q, v, a)            # a Dask array (N, nv), the same chunks along N
    tau.to_zarr(...)                               # or .compute()

Every name of ``rbd.ALGORITHMS`` that takes state arrays is here, with the same
arguments: the state arguments are Dask (or NumPy) arrays whose leading batch
dimensions are chunked, their trailing coordinate dimensions whole; the result is a
Dask array (a tuple of them for the algorithms with several outputs) with the
inputs' batch chunks and the algorithm's per-sample shape.  Each chunk runs through
the active backend (rbd_c in parallel on a worker's threads, or NumPy).

The model goes to the workers once: with a ``dask.distributed`` client it is
scattered to every worker (``Client.scatter(..., broadcast=True)``) and the tasks
refer to it; with the local schedulers it is shared in memory.  Dask is an optional
dependency (``pip install 'rbd[dask]'``).
"""
import functools
import weakref

import numpy as np

from . import _names

# the per-sample state arguments of each algorithm (what is chunked), in order
_STATE = {
    "integrate": ("q", "v"), "difference": ("q", "q"), "normalize": ("q",),
    "integrate_jacobians": ("q", "v"), "difference_jacobians": ("q", "q"),
    "forward_kinematics": ("q",), "frame_placement": ("q",), "frame_placements": ("q",),
    "frame_velocity": ("q", "v"), "frame_acceleration": ("q", "v", "v"), "frame_jacobian": ("q",),
    "frame_jacobian_time_derivative": ("q", "v"), "frame_velocity_derivatives": ("q", "v"),
    "frame_acceleration_derivatives": ("q", "v", "v"), "center_of_mass": ("q",), "com_jacobian": ("q",),
    "rnea": ("q", "v", "v"), "gravity": ("q",), "nonlinear_effects": ("q", "v"), "crba": ("q",),
    "aba": ("q", "v", "v"), "coriolis_matrix": ("q", "v"), "kinetic_energy": ("q", "v"),
    "potential_energy": ("q",), "centroidal_momentum": ("q", "v"), "centroidal_momentum_matrix": ("q",),
    "centroidal_momentum_matrix_time_variation": ("q", "v"), "rnea_derivatives": ("q", "v", "v"),
    "aba_derivatives": ("q", "v", "v"), "inverse_mass_matrix": ("q",),
}


def _import():
    try:
        import dask.array as da
    except ImportError as exc:
        raise ImportError("rbd.dask needs Dask: pip install 'rbd[dask]' (%s)" % exc) from exc
    return da


_SCATTERED = weakref.WeakKeyDictionary()  # model -> {client id: its future on the workers}


def _model_reference(model):
    """The model, or its future on every worker when a distributed client is running
    (scattered once per client, and kept: a dropped future would free the workers' copy)."""
    try:
        from distributed import get_client
        client = get_client()
    except (ImportError, ValueError):
        return model
    futures = _SCATTERED.setdefault(model, {})
    if client.id not in futures:
        futures[client.id] = client.scatter(model, broadcast=True, hash=True)
    return futures[client.id]


def _on_chunk(name, count, nbatch, model, *blocks, **kwargs):
    import rbd
    results = getattr(rbd, name)(model, *blocks, **kwargs)
    if isinstance(results, tuple):  # several outputs of one shape: stacked after the batch axes
        return np.stack(results, axis=nbatch)
    return np.asarray(results)


def run(name, model, *args, **kwargs):
    """``rbd.<name>(model, *args, **kwargs)`` on Dask arrays (see the module's docstring)."""
    import rbd
    da = _import()
    if name not in _STATE:
        raise ValueError("rbd.dask runs the algorithms with state arrays (%s), not %r"
                         % (", ".join(sorted(_STATE)), name))
    kinds = _STATE[name]
    if len(args) < len(kinds):
        raise TypeError("%s needs %d state arguments, got %d" % (name, len(kinds), len(args)))
    states, rest = list(args[:len(kinds)]), args[len(kinds):]
    trailing = [model.nq if kind == "q" else model.nv for kind in kinds]
    dask_inputs = [x for x in states if isinstance(x, da.Array)]
    batch_ndim = max(np.ndim(x) - 1 for x in states)
    if batch_ndim < 1:
        raise ValueError("rbd.dask works on batches: give the state arrays leading batch dimensions")
    reference = dask_inputs[0] if dask_inputs else da.asarray(states[0])
    batch_chunks = reference.chunks[:batch_ndim]
    inputs = []
    for x, n in zip(states, trailing):
        x = da.asarray(x)
        if x.shape[-1] != n or x.ndim != batch_ndim + 1:
            raise ValueError("%s: a state argument has shape %s; expected (..., %d) with %d batch dimensions"
                             % (name, x.shape, n, batch_ndim))
        inputs.append(x.rechunk(batch_chunks + ((n,),)))
    # the per-sample output: from one sample of the inputs' own shapes (zeros are a valid state)
    sample = getattr(rbd, name)(model, *[rbd.neutral(model) if k == "q" else np.zeros(n)
                                         for k, n in zip(kinds, trailing)], *rest, **kwargs)
    several = isinstance(sample, tuple)
    shape = ((len(sample),) + np.shape(sample[0])) if several else np.shape(sample)
    batch_index = "abcdefghijklmnop"[:batch_ndim]
    out_index = batch_index + "wxyz"[:len(shape)]  # (letters a-p: batch axes, q-t: the inputs' own)
    pairs = [_model_reference(model), None]
    for x, own in zip(inputs, "qrst"):
        pairs += [x, batch_index + own]
    for x in rest:  # positional non-state arguments (a frame, a reference): the same for every chunk
        pairs += [x, None]
    result = da.blockwise(functools.partial(_on_chunk, name, len(inputs), batch_ndim, **kwargs), out_index, *pairs,
                          dtype=float, concatenate=True, meta=np.empty((0,) * len(out_index)),
                          new_axes={axis: size for axis, size in zip(out_index[batch_ndim:], shape)})
    if several:
        return tuple(result[(slice(None),) * batch_ndim + (k,)] for k in range(shape[0]))
    return result


def __getattr__(name):
    if name in _names.ALGORITHMS and name in _STATE:
        def algorithm(model, *args, **kwargs):
            return run(name, model, *args, **kwargs)
        algorithm.__name__ = name
        algorithm.__doc__ = "rbd.%s on Dask arrays chunked along their batch dimensions (see rbd.dask)." % name
        return algorithm
    raise AttributeError("module 'rbd.dask' has no attribute %r" % name)
