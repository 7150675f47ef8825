// The `tir` dialect: TensorIR's block, the one construct that upstream MLIR has no op for.
// Everything else is upstream: buffers are memrefs, loops are affine.for carrying `tir.*`
// attributes, expressions are arith/math/memref ops. Regions end with `gpu.yield` because IRDL
// in LLVM 22 has no traits, so an IRDL op cannot declare its own terminator.
irdl.dialect @tir {
  // with T.block(name): iter vars are the body's block arguments; their values are
  // `bindings` (an affine map) applied to the `dims` operands (enclosing loop IVs or
  // outer block iter vars; a non-affine part of a binding, such as `i * j`, is a dim computed
  // right before the block). `init` is empty when the block has no T.init().
  // Operands are the dims, then the symbols (function-level index values, docs/symbolic.md):
  // `bindings` has as many dims and symbols. A `domains` entry is [min, extent] (integers) or,
  // when it uses symbols, `affine_map<()[s0, ...] -> (min, extent)>` over the same symbols.
  // Discardable attributes: `predicate` (IntegerSet over the dims, T.where),
  // `annotations` (dictionary, T.block_attr), `tir.explicit_root` (a root block TVM prints).
  irdl.operation @block {
    %index = irdl.is index
    irdl.operands(dims: variadic %index)
    %name = irdl.base "#builtin.string"
    %iter_names = irdl.base "#builtin.array"
    %iter_types = irdl.base "#builtin.array"
    %domains = irdl.base "#builtin.array"
    %bindings = irdl.base "#builtin.affine_map"
    irdl.attributes {"name" = %name, "iter_names" = %iter_names, "iter_types" = %iter_types,
                     "domains" = %domains, "bindings" = %bindings}
    %body = irdl.region
    %init = irdl.region
    irdl.regions(body: %body, init: %init)
  }
  // A TensorIR intrinsic with no upstream op of the same meaning (sigmoid, floormod, ...):
  // `callee` names it; the lowering expands it into arith/math ops.
  irdl.operation @call {
    %any = irdl.any
    irdl.operands(args: variadic %any)
    %res = irdl.any
    irdl.results(result: %res)
    %callee = irdl.base "#builtin.string"
    irdl.attributes {"callee" = %callee}
  }
  // A call to a C function (T.call_extern) or a buffer pointer query (B.data, T.address_of,
  // T.tvm_access_ptr...): `callee` names it. Its arguments, of mixed types, are the operands
  // of the `gpu.yield` ending its region (IRDL gives a variadic operand list one type).
  irdl.operation @extern {
    %res = irdl.any
    irdl.results(result: %res)
    %callee = irdl.base "#builtin.string"
    irdl.attributes {"callee" = %callee}
    %args = irdl.region
    irdl.regions(args: %args)
  }
  // T.evaluate(expr): an expression evaluated for its side effects.
  irdl.operation @evaluate {
    %any = irdl.any
    irdl.operands(value: %any)
  }
  // A buffer of symbolic shape (`T.match_buffer(a, (n, 128))`): its sizes are `shape` applied
  // to the `sizes` operands (function-level index values); checked when the function is called.
  irdl.operation @match_shape {
    %buffer = irdl.any
    %index = irdl.is index
    irdl.operands(buffer: %buffer, sizes: variadic %index)
    %shape = irdl.base "#builtin.affine_map"
    irdl.attributes {"shape" = %shape}
  }
  // T.assume(cond): a fact about the function's symbols (`n % 4 == 0`) that schedule legality
  // may use; `condition` is an integer set over the `symbols` operands.
  irdl.operation @assume {
    %index = irdl.is index
    irdl.operands(symbols: variadic %index)
    %condition = irdl.base "#builtin.integer_set"
    irdl.attributes {"condition" = %condition}
  }
}
