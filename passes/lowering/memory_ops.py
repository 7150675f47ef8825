"""The memory ops the CPU stages reason about (`coalesce-loops` and `sink-inits` before
`affine-to-scf`, `scalar-replace` and `jam-carried-loops` after it): the accesses whose address
they analyse, those whose address they do not, and the ops without memory effects."""

# (memref operand, first index operand, is a store) of the accesses with a known address.
ACCESSES = {
    "memref.load": (0, 1, False),
    "memref.store": (1, 2, True),
    "vector.load": (0, 1, False),
    "vector.store": (1, 2, True),
}
# The same for the affine accesses (before `affine-to-scf`): their index operands are their map's.
AFFINE_ACCESSES = {
    "affine.load": (0, 1, False),
    "affine.store": (1, 2, True),
}
# Accesses at an address not analysed here: memref operands -> whether they may write.
OTHER_ACCESSES = {
    "vector.maskedload": ((0, False),),
    "vector.maskedstore": ((0, True),),
    "vector.transfer_read": ((0, False),),
    "vector.transfer_write": ((1, True),),
    "vector.gather": ((0, False),),
    "vector.scatter": ((0, True),),
    "memref.copy": ((0, False), (1, True)),
}
# The stores with a known address, and every op that only reads memory: -> its memref operand.
STORES = {name: m for name, (m, _, store) in ACCESSES.items() if store}
LOADS = {name: m for name, (m, _, store) in ACCESSES.items() if not store} | {
    name: operands[0][0]
    for name, operands in OTHER_ACCESSES.items()
    if not any(store for _, store in operands)
}
# Ops without memory effects (and without regions).
NO_EFFECT_PREFIXES = ("arith.", "math.", "index.", "ub.")
NO_EFFECT_OPS = {
    "affine.apply",
    "vector.broadcast",
    "vector.fma",
    "vector.splat",
    "vector.extract",
    "vector.insert",
    "vector.shuffle",
    "vector.reduction",
    "vector.bitcast",
    "vector.shape_cast",
    "vector.from_elements",
    "vector.step",
    "vector.constant_mask",
    "vector.create_mask",
}
# Ops whose effects are those of the ops nested in them (analysed on their own), or on no
# element of a buffer: an allocation, a shape query, a prefetch (a hint: a scheduled prefetch
# must not stop an analysis).
STRUCTURE_OPS = {
    "scf.for",
    "scf.if",
    "scf.yield",
    "memref.alloca",
    "memref.alloc",
    "memref.dealloc",
    "memref.dim",
    "memref.prefetch",
}


def no_effects(op) -> bool:
    """Whether `op` reads and writes no memory and holds no region."""
    return not len(op.regions) and (
        op.name.startswith(NO_EFFECT_PREFIXES) or op.name in NO_EFFECT_OPS
    )


def known_effects(op) -> bool:
    """Whether `op` is not itself an access and its effects are known: none, those of the ops
    nested in it, or none on any element."""
    return no_effects(op) or op.name in STRUCTURE_OPS
