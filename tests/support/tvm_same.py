"""One program, read by TVM 0.21 and by tir-mlir: the same printed text, the same numbers.

`same_as_tvm(text)` parses `text` with both, asserts that our `script()` is TVM's `script()`
character for character, then (unless `run=False`) runs the first function on random inputs
with TVM's compiled code, our compiled code and our interpreter, and asserts equal outputs.
"""

import numpy as np

import tir_mlir


def same_as_tvm(text, run=True, seed=0):
    import tvm

    theirs = tvm.script.from_source(text)
    ours = tir_mlir.parse(text)
    assert ours.script() == theirs.script()
    if run:
        _same_numbers(tvm, theirs, ours, seed)
    return ours


def _same_numbers(tvm, theirs, ours, seed):
    func = theirs if isinstance(theirs, tvm.tir.PrimFunc) else next(iter(theirs.functions.values()))
    rng = np.random.default_rng(seed)
    arrays = []
    for param in func.params:
        buf = func.buffer_map[param]
        shape = [int(d) for d in buf.shape]
        dtype = str(buf.dtype)
        if dtype.startswith(("int", "uint")):
            arrays.append(rng.integers(0, 8, size=shape).astype(dtype))
        else:
            arrays.append(rng.uniform(-2, 2, size=shape).astype(dtype))
    expected = [tvm.nd.array(a.copy()) for a in arrays]
    tvm.compile(func.with_attr("global_symbol", "main"), target="llvm")["main"](*expected)
    name = next(iter(ours))
    compiled = [a.copy() for a in arrays]
    tir_mlir.build(ours)[name](*compiled)
    interpreted = [a.copy() for a in arrays]
    tir_mlir.interpret(ours, name, *interpreted)
    for want, got, ref in zip(expected, compiled, interpreted):
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ref, want.numpy(), rtol=1e-5, atol=1e-5)
