"""Linear forms of index expressions: sum(coefficient * atom) + constant.

The one representation behind every question "is this index linear, and in what": the
schedule's binding and region checks (over the dims of an affine expression), the vectorizer
(over lane-uniform values and the lane number), scalar replacement and buffer compaction (over
SSA index values). What an atom is stays the caller's: a dim position, a loop IV, a structural
key of a division it understands. What is linear is fixed here: constants, `+`, `-` and `*` by a
constant. A floordiv/mod/ceildiv is linear only through the caller's `division` rule, and an
SSA value that is none of these is the caller's `leaf`.
"""

from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    overload,
)

from mlir import ir

from tir_mlir.dialect.ops import memo


L = TypeVar("L", bound="Linear")


class Linear:
    """sum(coefficient * atom) + const, with no zero coefficient. Treat as immutable: forms
    are cached and shared. Sums and multiples keep the class of the left operand, so a
    subclass (the vectorizer's lane forms) stays itself under arithmetic."""

    __slots__ = ("terms", "const")

    def __init__(self, terms: Union[Mapping, Iterable] = (), const: int = 0):
        # an atom is whatever the caller made it (a dim position, a value, a key): Any
        self.terms: Dict[Any, int] = {a: c for a, c in dict(terms).items() if c}
        self.const = const

    def __add__(self: L, other: "Linear") -> L:
        terms = dict(self.terms)
        for a, c in other.terms.items():
            terms[a] = terms.get(a, 0) + c
        return type(self)(terms, self.const + other.const)

    def __sub__(self: L, other: "Linear") -> L:
        return self + other.scale(-1)

    def scale(self: L, k: int) -> L:
        return type(self)({a: c * k for a, c in self.terms.items()}, self.const * k)

    @property
    def is_const(self) -> bool:
        return not self.terms

    def key(self) -> Tuple[int, frozenset]:
        """A hashable value equal for equal forms."""
        return self.const, frozenset(self.terms.items())

    def __eq__(self, other) -> bool:
        return isinstance(other, Linear) and self.key() == other.key()

    # unhashable (a mutable dict inside): use key(); typeshed types __hash__ as a method
    __hash__ = None  # pyright: ignore[reportAssignmentType]

    def __iter__(self):
        """Unpacks as the pair (terms, const)."""
        return iter((self.terms, self.const))

    def __getitem__(self, i: int):
        return (self.terms, self.const)[i]

    def __repr__(self) -> str:
        return f"Linear({self.terms!r}, {self.const})"


# (kind: ir.AffineFloorDivExpr | ir.AffineModExpr | ir.AffineCeilDivExpr, lhs, rhs) -> form
Division = Callable[[type, Linear, Linear], Optional[Linear]]
_DIVISIONS = (ir.AffineFloorDivExpr, ir.AffineModExpr, ir.AffineCeilDivExpr)
_PLAIN: dict = {}


def linear(
    expr: ir.AffineExpr,
    dims: Optional[Sequence[Optional[Linear]]] = None,
    symbols: Optional[Sequence[Optional[Linear]]] = None,
    division: Optional[Division] = None,
) -> Optional[Linear]:
    """The form of `expr`, None when it is not linear. Dim k is `dims[k]` (default: the atom
    k, its position), symbol k is `symbols[k]` (default: not linear); a division is
    `division(kind, lhs, rhs)` (default: not linear). The default form is cached: affine
    expressions are uniqued by their context, and a replay asks for the same ones often."""
    if dims is None and symbols is None and division is None:
        return memo(_PLAIN, expr, _plain, limit=1 << 16)
    return _of_affine(expr, dims, symbols, division)


def _plain(expr: ir.AffineExpr) -> Optional[Linear]:
    return _of_affine(expr, None, None, None)


def _of_affine(expr, dims, symbols, division) -> Optional[Linear]:
    e = expr.maybe_downcast()
    if isinstance(e, ir.AffineConstantExpr):
        return Linear((), e.value)
    if isinstance(e, ir.AffineDimExpr):
        return Linear({e.position: 1}) if dims is None else dims[e.position]
    if isinstance(e, ir.AffineSymbolExpr):
        return None if symbols is None else symbols[e.position]
    lhs = _of_affine(e.lhs, dims, symbols, division)
    rhs = _of_affine(e.rhs, dims, symbols, division) if lhs is not None else None
    if lhs is None or rhs is None:
        return None
    if isinstance(e, ir.AffineAddExpr):
        return lhs + rhs
    if isinstance(e, ir.AffineMulExpr):
        if rhs.is_const:
            return lhs.scale(rhs.const)
        return rhs.scale(lhs.const) if lhs.is_const else None
    if division is not None and isinstance(e, _DIVISIONS):
        return division(type(e), lhs, rhs)
    return None


def _constant_int(value: ir.Value) -> Optional[int]:
    """The value of an integer `arith.constant`, or None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return None
    attr = owner.operation.attributes["value"]
    return ir.IntegerAttr(attr).value if isinstance(attr, ir.IntegerAttr) else None


@overload
def value_linear(
    value: ir.Value, leaf: Callable[[ir.Value], Linear], cache: Optional[dict] = None
) -> Linear: ...  # a leaf with a form for every value: every value has one


@overload
def value_linear(
    value: ir.Value, leaf: Callable[[ir.Value], Optional[Linear]], cache: Optional[dict] = None
) -> Optional[Linear]: ...


def value_linear(
    value: ir.Value, leaf: Callable[[ir.Value], Optional[Linear]], cache: Optional[dict] = None
) -> Optional[Linear]:
    """The form of an SSA integer value over `arith.constant`, `arith.addi`, `arith.subi` and
    `arith.muli` by a constant; any other value (a loop IV, a load, a product of two
    variables, a division) is `leaf(value)`, None when the caller has no form for it.
    `cache` (value -> form, valid while the IR is unchanged) shares the forms of common
    subterms."""
    if cache is not None and value in cache:
        return cache[value]
    form = _of_value(value, leaf, cache)
    if cache is not None:
        cache[value] = form
    return form


def _of_value(value, leaf, cache) -> Optional[Linear]:
    c = _constant_int(value)
    if c is not None:
        return Linear((), c)
    owner = value.owner
    if not isinstance(owner, ir.Block):
        name = owner.operation.name
        if name in ("arith.addi", "arith.subi", "arith.muli"):
            a, b = (value_linear(v, leaf, cache) for v in owner.operation.operands)
            if name == "arith.addi":
                return a + b if a is not None and b is not None else None
            if name == "arith.subi":
                return a - b if a is not None and b is not None else None
            if a is not None and b is not None and (a.is_const or b.is_const):
                return a.scale(b.const) if b.is_const else b.scale(a.const)
    return leaf(value)


def division_atom(kind: type, lhs: Linear, rhs: Linear) -> Linear:
    """A floordiv/mod/ceildiv (a `Division`) as one atom keyed by its operands' forms: two
    divisions of equal forms are the same atom."""
    return Linear({(kind, lhs.key(), rhs.key()): 1})


def division_reads(atom) -> Iterator[Any]:
    """The atoms a division atom (a key `division_atom` made) reads, through the divisions
    nested in it; none for another atom."""
    todo = [atom] if isinstance(atom, tuple) else []
    while todo:
        key = todo.pop()
        for _, terms in key[1:]:
            for a, _ in terms:
                if isinstance(a, tuple):
                    todo.append(a)
                else:
                    yield a


def through_applies(division: Optional[Division] = None) -> Callable[[ir.Value], Optional[Linear]]:
    """A `value_linear` leaf: a value's form through `affine.apply` of one result (a division in
    its map is `division(kind, lhs, rhs)`, default not linear); any other value is an atom."""

    def leaf(value: ir.Value) -> Optional[Linear]:
        owner = value.owner
        if not isinstance(owner, ir.Block) and owner.operation.name == "affine.apply":
            amap = ir.AffineMapAttr(owner.operation.attributes["map"]).value
            if len(amap.results) == 1:
                operands = [value_linear(v, leaf) for v in owner.operation.operands]
                dims, symbols = operands[: amap.n_dims], operands[amap.n_dims :]
                return linear(amap.results[0], dims, symbols, division=division)
        return Linear({value: 1})

    return leaf
