// The `tir` dialect: TensorIR's block, the one construct that upstream MLIR has no op for.
// Everything else is upstream: buffers are memrefs, loops are affine.for, expressions are
// arith/math/memref ops. What TensorIR adds to an upstream op is a `tir.*` attribute whose value
// is one of the attributes declared here (`{tir.kind = #tir.for_kind<"parallel">}`, the way
// `llvm.linkage = #llvm.linkage<internal>` sits on a func.func): the parser of the attribute
// checks its parameters, so `mlir-opt --irdl-file` refuses a loop kind or a thread tag that
// TensorIR does not have. Regions end with `gpu.yield` because IRDL in LLVM 22 has no traits,
// so an IRDL op cannot declare its own terminator.
irdl.dialect @tir {
  // --- attributes on upstream ops (docs/dialect.md, "Attributes") ---------------------------
  // `tir.kind` of an affine.for: TVM's ForKind. Absent: serial.
  irdl.attribute @for_kind {
    %serial = irdl.is "serial"
    %parallel = irdl.is "parallel"
    %vectorized = irdl.is "vectorized"
    %unroll = irdl.is "unroll"
    %bound = irdl.is "thread_binding"
    %kind = irdl.any_of(%serial, %parallel, %vectorized, %unroll, %bound)
    irdl.parameters(kind: %kind)
  }
  // `tir.thread` of a thread_binding affine.for: the thread axis it is bound to.
  irdl.attribute @thread {
    %t0 = irdl.is "blockIdx.x"
    %t1 = irdl.is "blockIdx.y"
    %t2 = irdl.is "blockIdx.z"
    %t3 = irdl.is "threadIdx.x"
    %t4 = irdl.is "threadIdx.y"
    %t5 = irdl.is "threadIdx.z"
    %t6 = irdl.is "vthread.x"
    %t7 = irdl.is "vthread.y"
    %t8 = irdl.is "vthread.z"
    %t9 = irdl.is "vthread"
    %tag = irdl.any_of(%t0, %t1, %t2, %t3, %t4, %t5, %t6, %t7, %t8, %t9)
    irdl.parameters(tag: %tag)
  }
  // `tir.annotations` of an affine.for: T.for's `annotations={...}` (pragmas, meta schedule
  // hints), any values.
  irdl.attribute @annotations {
    %values = irdl.base "#builtin.dictionary"
    irdl.parameters(values: %values)
  }
  // `tir.index_dtype`: the TensorIR dtype of an index value whose MLIR type is `index` (a loop
  // var; per iter var of a tir.block and per dimension of a buffer, in an array; an index
  // arith.constant). Absent: int32.
  irdl.attribute @index_dtype {
    %i32 = irdl.is "int32"
    %i64 = irdl.is "int64"
    %dtype = irdl.any_of(%i32, %i64)
    irdl.parameters(dtype: %dtype)
  }
  // `tir.scope` of a buffer (a memref.alloc, or a func.func argument): its storage scope
  // ("global", "shared", "shared.dyn", "local", "wmma.matrix_a", ...). Absent: global.
  irdl.attribute @scope {
    %name = irdl.base "#builtin.string"
    irdl.parameters(name: %name)
  }
  // `tir.axis_separators` of a buffer: T.Buffer's axis_separators (integers).
  irdl.attribute @axis_separators {
    %values = irdl.base "#builtin.array"
    irdl.parameters(values: %values)
  }
  // `tir.offset_factor` of a buffer: T.Buffer's offset_factor.
  irdl.attribute @offset_factor {
    %factor = irdl.base "#builtin.integer"
    irdl.parameters(factor: %factor)
  }
  // `tir.align` of a buffer: T.match_buffer's align (bytes).
  irdl.attribute @align {
    %bytes = irdl.base "#builtin.integer"
    irdl.parameters(bytes: %bytes)
  }
  // Read/write regions set by hand on a tir.block (tir_mlir/ir/region_overrides.py):
  // `tir.explicit_reads` / `tir.explicit_writes`: buffer name -> affine map of the iter vars to
  // (min, extent) per dimension.
  irdl.attribute @regions {
    %regions = irdl.base "#builtin.dictionary"
    irdl.parameters(regions: %regions)
  }
  // `tir.hidden_reads` / `tir.hidden_writes` (buffers left out of T.reads / T.writes) and
  // `tir.reads_order` / `tir.writes_order` (buffers listed first, in this order): names.
  irdl.attribute @buffers {
    %names = irdl.base "#builtin.array"
    irdl.parameters(names: %names)
  }
  // `tir.accumulator_reads`: positions in the written T.reads of a reduction block's
  // accumulators, which TVM keeps listed.
  irdl.attribute @positions {
    %positions = irdl.base "#builtin.array"
    irdl.parameters(positions: %positions)
  }
  // --- ops ----------------------------------------------------------------------------------
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
