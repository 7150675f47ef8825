"""TVM's normal form of block bindings after `split`/`fuse` (its `arith::IterMapSimplify`), for
loops of constant extent.

TVM's split and fuse substitute the loop variables into each binding and then rewrite the
bindings into its iter-map normal form. That form keeps a fused sum whole under `//` and `%`:

    fuse(i, j) of 512 x 512, split by 1024:    vi = (f0 * 1024 + f1) // 512
                                               vj = (f0 * 1024 + f1) % 512

where the IR's affine map holds what MLIR's simplifier makes of it (`f0 * 2 + f1 // 512`,
`f1 % 512`: the same numbers). `simplify` computes TVM's form as an expression tree, which
the schedule keeps as a spelling hint beside the IR (dialect/spelling.py) and the printer
prints while the binding is unchanged.

Trees are plain tuples (picklable, hashable): an int, ("v", k) for dim k, or (op, tree, c)
with op "+" (c a tree too), "*", "//", "%" and c a constant. The algorithm follows TVM's
IterMapRewriter (sums of splits of marks; a sum under `//`/`%` fused into one mark; a `T.where`
bound narrowing the mark of the sum it bounds) and its IterMapToExprNormalizer. What it does not
model (padding a dividend, symbolic extents, lower bounds in the predicate) gives None: the
caller keeps the IR's form.
"""

import math
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
from mlir import ir

from tir_mlir.analysis import index

Tree = Union[int, tuple]


class _Fail(Exception):
    """The binding is outside what this port models."""


# --- trees, built with TVM's constant folding ------------------------------------------------
def add(a: Tree, b: Tree) -> Tree:
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if a == 0:
        return b
    if b == 0:
        return a
    return ("+", a, b)


def mul(a: Tree, c: int) -> Tree:
    if isinstance(a, int):
        return a * c
    if c == 1:
        return a
    if c == 0:
        return 0
    return ("*", a, c)


def floordiv(a: Tree, c: int) -> Tree:
    if isinstance(a, int):
        return a // c
    return a if c == 1 else ("//", a, c)


def floormod(a: Tree, c: int) -> Tree:
    if isinstance(a, int):
        return a % c
    return 0 if c == 1 else ("%", a, c)


def substitute(t: Tree, subst: Dict[int, Tree]) -> Tree:
    """t with dim k replaced by subst[k] (rebuilt with the folding constructors)."""
    if isinstance(t, int):
        return t
    if t[0] == "v":
        return subst[t[1]]
    a = substitute(t[1], subst)
    if t[0] == "+":
        return add(a, substitute(t[2], subst))
    return {"*": mul, "//": floordiv, "%": floormod}[t[0]](a, t[2])


def of_affine(e: ir.AffineExpr) -> Optional[Tree]:
    """The tree of an affine expression over dims and constants (None for symbols, ceildiv,
    a product of two non-constants)."""
    e = e.maybe_downcast()
    if isinstance(e, ir.AffineDimExpr):
        return ("v", e.position)
    if isinstance(e, ir.AffineConstantExpr):
        return e.value
    if not isinstance(
        e, (ir.AffineAddExpr, ir.AffineMulExpr, ir.AffineFloorDivExpr, ir.AffineModExpr)
    ):
        return None
    a, b = of_affine(e.lhs), of_affine(e.rhs)
    if a is None or b is None:
        return None
    if isinstance(e, ir.AffineAddExpr):
        return ("+", a, b)
    if not isinstance(b, int):
        if isinstance(e, ir.AffineMulExpr) and isinstance(a, int):
            return ("*", b, a)
        return None
    op = (
        "*"
        if isinstance(e, ir.AffineMulExpr)
        else "//"
        if isinstance(e, ir.AffineFloorDivExpr)
        else "%"
    )
    return (op, a, b)


def to_affine(t: Tree) -> ir.AffineExpr:
    """The AffineExpr of a tree (MLIR simplifies it on the way)."""
    if isinstance(t, int):
        return ir.AffineConstantExpr.get(t)
    if t[0] == "v":
        return ir.AffineDimExpr.get(t[1])
    a = to_affine(t[1])
    if t[0] == "+":
        return a + to_affine(t[2])
    c = ir.AffineConstantExpr.get(t[2])
    if t[0] == "*":
        return a * c
    return ir.AffineExpr.get_floor_div(a, c) if t[0] == "//" else ir.AffineExpr.get_mod(a, c)


_MAX_POINTS = 1 << 18  # the largest domain `same_value` evaluates point by point


def same_value(t: Tree, e: ir.AffineExpr, ranges: Dict[int, Tuple[int, int]]) -> bool:
    """Whether tree t and expression e are equal for the dims in `ranges` (inclusive): the
    range-aware simplifier says so, or (a domain of at most 2**18 points) every point of
    the dims they use does. False when neither can tell."""
    try:
        mine = to_affine(t)
        if mine == e or index.simplify(mine, ranges) == index.simplify(e, ranges):
            return True
    except (ValueError, TypeError):
        return False
    other = of_affine(e)
    if other is None:
        return False
    used = sorted(_dims(t) | _dims(other))
    if any(ranges.get(k) is None or ranges[k][1] - ranges[k][0] >= _MAX_POINTS for k in used):
        return False
    sizes = [ranges[k][1] - ranges[k][0] + 1 for k in used]
    if math.prod(sizes) > _MAX_POINTS:
        return False
    grid = np.meshgrid(*[np.arange(ranges[k][0], ranges[k][1] + 1) for k in used], indexing="ij")
    env = dict(zip(used, grid))
    return bool(np.all(_evaluate(t, env) == _evaluate(other, env)))


def _dims(t: Tree) -> set:
    if isinstance(t, int):
        return set()
    if t[0] == "v":
        return {t[1]}
    return _dims(t[1]) | (_dims(t[2]) if t[0] == "+" else set())


def _evaluate(t: Tree, env):
    if isinstance(t, int):
        return t
    if t[0] == "v":
        return env[t[1]]
    a = _evaluate(t[1], env)
    if t[0] == "+":
        return a + _evaluate(t[2], env)
    return a * t[2] if t[0] == "*" else a // t[2] if t[0] == "//" else a % t[2]


def is_plain(t: Tree) -> bool:
    """Whether t is a sum of dims, each scaled or not, with a constant, one of them unscaled
    (or none at all): TVM's normal form of such a sum is the sum itself, in the order the
    printer writes it anyway."""
    unit, any_dim, stack = False, False, [t]
    while stack:
        x = stack.pop()
        if isinstance(x, int):
            continue
        if x[0] == "+":
            stack.extend((x[1], x[2]))
        elif x[0] == "v":
            unit = any_dim = True
        elif x[0] == "*" and isinstance(x[1], tuple) and x[1][0] == "v" and x[2] > 0:
            any_dim = True
        else:
            return False
    return unit or not any_dim


def is_flat(t: Tree) -> bool:
    """Whether t is what the printer writes for its affine form anyway: a sum of dims scaled or
    split (`i // 4 % 2 * 8`), no sum kept whole under `*`, `//` or `%`."""
    if isinstance(t, int):
        return True
    if t[0] == "v":
        return True
    if t[0] == "+":
        return is_flat(t[1]) and is_flat(t[2])
    inner = t[1]
    return not (isinstance(inner, tuple) and inner[0] == "+") and is_flat(inner)


# --- TVM's iter-map expressions ----------------------------------------------------------------
# (named tuples, not dataclasses: marks and sums are dict keys, hashed many times over)
class Mark(NamedTuple):
    source: object  # ("v", k), a Sum (a fused sum) or a Split
    extent: int


class Split(NamedTuple):
    """source // lower % extent * scale"""

    mark: Mark
    lower: int
    extent: int
    scale: int


class Sum(NamedTuple):
    args: Tuple[Split, ...]
    base: int


def _sum(x) -> Sum:
    if isinstance(x, Sum):
        return x
    if isinstance(x, Split):
        return Sum((x,), 0)
    return Sum((), x)


def _split_equal(a: Split, b: Split, check_scale: bool = True) -> bool:
    return (
        a.mark == b.mark
        and a.lower == b.lower
        and a.extent == b.extent
        and (not check_scale or a.scale == b.scale)
    )


def _add_split(args: List[Split], rhs: Split):
    for i, lv in enumerate(args):
        if _split_equal(lv, rhs, check_scale=False):
            args[i] = rhs._replace(scale=lv.scale + rhs.scale)
            return
    args.append(rhs)


class _Rewriter:
    def __init__(self, ranges: Dict[int, int], trivial: bool):
        self.var_map: Dict[int, object] = {}
        for k, ext in ranges.items():
            if trivial and ext == 1:
                self.var_map[k] = Sum((), 0)
            else:
                self.var_map[k] = Split(Mark(("v", k), ext), 1, ext, 1)
        self.sum_fuse: Dict[Sum, Tuple[Mark, int]] = {}  # flattened sum -> (mark, offset)
        self.flattened: Dict[Sum, Sum] = {}  # structured sum -> flattened sum
        self.constrained: List[Sum] = []

    # -- expressions
    def mutate(self, t: Tree):
        if isinstance(t, int):
            return t
        if t[0] == "v":
            if t[1] not in self.var_map:
                raise _Fail  # not a loop of constant extent
            return self.var_map[t[1]]
        a = self.mutate(t[1])
        if t[0] == "+":
            b = self.mutate(t[2])
            if isinstance(a, int) and isinstance(b, int):
                return a + b
            if a == 0:
                return b
            if b == 0:
                return a
            s = _sum(a)
            args = list(s.args)
            if isinstance(b, int):
                return Sum(tuple(args), s.base + b)
            for arg in _sum(b).args:
                _add_split(args, arg)
            return Sum(tuple(args), s.base + _sum(b).base)
        c = t[2]
        if t[0] == "*":
            if isinstance(a, int):
                return a * c
            if c == 1:
                return a
            if c == 0 or a == 0:
                return 0
            if isinstance(a, Split):
                return a._replace(scale=a.scale * c)
            return Sum(tuple(x._replace(scale=x.scale * c) for x in a.args), a.base * c)
        if c <= 0:
            raise _Fail
        if isinstance(a, int):
            return a // c if t[0] == "//" else a % c
        if t[0] == "//" and c == 1:
            return a
        if t[0] == "%" and c == 1:
            return 0
        pre = self._dividend(a)
        if t[0] == "//":
            return self._floordiv(pre.args[0], pre.base, c)
        return self._floormod(pre.args[0], pre.base, c)

    def _dividend(self, a) -> Sum:
        if isinstance(a, Split):
            return Sum((a,), 0)
        if not a.args:
            raise _Fail
        if len(a.args) == 1:
            return a
        fused = self.try_fuse(a, True)
        if fused is None or len(fused.args) != 1:
            raise _Fail
        return fused

    @staticmethod
    def _padded(lhs: Split, base: int, rhs: int) -> Tuple[Split, int]:
        left = base % rhs
        if left or (left + lhs.extent) % rhs:
            raise _Fail  # TVM pads the mark here: not modelled
        return lhs, left

    def _floordiv(self, lhs: Split, base: int, rhs: int):
        if rhs == 1:
            return lhs if base == 0 else Sum((lhs,), base)
        if lhs.scale != 1:
            if lhs.scale % rhs == 0 and base == 0:
                return lhs._replace(scale=lhs.scale // rhs)
            if lhs.scale % rhs == 0 and base % rhs == 0:
                return Sum((lhs._replace(scale=lhs.scale // rhs),), base // rhs)
            if rhs % lhs.scale == 0 and base % lhs.scale == 0:
                base, rhs = base // lhs.scale, rhs // lhs.scale
                lhs = lhs._replace(scale=1)
            else:
                raise _Fail
        padded, left = self._padded(lhs, base, rhs)
        if padded.extent % rhs == 0:
            new = Split(padded.mark, padded.lower * rhs, padded.extent // rhs, padded.scale)
        elif padded.lower == 1 and padded.extent == padded.mark.extent:
            new = Split(padded.mark, rhs, -(-padded.extent // rhs), padded.scale)
        else:
            new = Split(Mark(padded, padded.extent), rhs, -(-padded.extent // rhs), 1)
        new_base = (base - left) // rhs
        return new if new_base == 0 else Sum((new,), new_base)

    def _floormod(self, lhs: Split, base: int, rhs: int):
        if rhs == 1:
            return 0
        if lhs.scale != 1:
            if lhs.scale % rhs == 0 and base % rhs == 0:
                return 0
            if rhs % lhs.scale == 0 and base % lhs.scale == 0:
                base, rhs = base // lhs.scale, rhs // lhs.scale
            else:
                raise _Fail
        padded, _ = self._padded(lhs, base, rhs)
        return Split(padded.mark, padded.lower, rhs, padded.scale)

    # -- fusing a sum into one mark
    @staticmethod
    def _base_iter(args, visited, source=None, rbegin=-1) -> int:
        rbegin = len(args) - 1 if rbegin == -1 else rbegin
        best = -1
        for i in range(rbegin, -1, -1):
            if visited[i] or (source is not None and args[i].mark != source):
                continue
            if best == -1 or args[i].scale < args[best].scale:
                best = i
            elif args[i].scale == args[best].scale and args[i].extent == 1 != args[best].extent:
                best = i
        return best

    @staticmethod
    def _exact_scale(args, visited, scale, source=None, rbegin=-1, first_unit=0) -> int:
        rbegin = len(args) - 1 if rbegin == -1 else rbegin
        matched = -1
        for j in range(rbegin, -1, -1):
            if visited[j] or (source is not None and args[j].mark != source):
                continue
            if args[j].scale == scale:
                if args[j].extent == 1:
                    return j
                if matched == -1:
                    matched = j
                if j <= first_unit:
                    return matched
        return matched

    @staticmethod
    def _smaller_closest(args, visited, scale) -> Tuple[int, int]:
        matched, matched_scale = -1, 0
        for j in range(len(args) - 1, -1, -1):
            if visited[j]:
                continue
            cur = args[j].scale
            if scale - cur >= 0 and cur >= 0 and (matched == -1 or matched_scale < cur):
                matched, matched_scale = j, cur
        return matched, matched_scale

    @staticmethod
    def _first_unit(args) -> int:
        return next((i for i, a in enumerate(args) if a.extent == 1), len(args))

    def _combine_same_source(self, expr: Sum) -> Optional[Sum]:
        args = expr.args
        if len(args) <= 1:
            return None
        count: Dict[Mark, int] = {}
        for a in args:
            count[a.mark] = count.get(a.mark, 0) + 1
        if all(c == 1 for c in count.values()):
            return None
        visited = [False] * len(args)
        out: List[Split] = []
        first_unit = self._first_unit(args)
        rend = len(args) - 1
        while rend >= 0:
            if visited[rend]:
                rend -= 1
                continue
            if count[args[rend].mark] == 1:
                out.append(args[rend])
                visited[rend] = True
                rend -= 1
                continue
            k = self._base_iter(args, visited, args[rend].mark, rend)
            visited[k] = True
            rhs = args[k]
            while True:
                k = self._exact_scale(
                    args, visited, rhs.extent * rhs.scale, rhs.mark, rend, first_unit
                )
                if k == -1 or args[k].lower != rhs.lower * rhs.extent:
                    break
                visited[k] = True
                rhs = rhs._replace(extent=args[k].extent * rhs.extent)
            out.append(rhs)
        return Sum(tuple(reversed(out)), expr.base)

    def try_fuse(self, expr: Sum, early_skip: bool) -> Optional[Sum]:
        combined = self._combine_same_source(expr)
        if combined is not None:
            expr = combined
            if len(expr.args) <= 1 and early_skip:
                return expr
        args = expr.args
        visited = [False] * len(args)
        base_index = self._base_iter(args, visited)
        if base_index == -1:
            return None
        base_scale = args[base_index].scale
        if base_scale <= 0:
            return None
        flattened: List[Split] = []
        grouped: List[Split] = []
        extra_base, tail, expected = 0, 0, base_scale
        first_unit = self._first_unit(args)
        i = 0
        while i < len(args):
            exact = False
            matched_scale = 0
            pos = (
                base_index
                if i == 0
                else self._exact_scale(args, visited, expected, None, -1, first_unit)
            )
            if pos != -1:
                matched_scale, exact = expected, True
            elif base_scale == 1:
                pos, matched_scale = self._smaller_closest(args, visited, expected)
            if pos == -1:
                return None
            constraint = None
            for it in self.constrained:
                if _split_equal(args[pos], it.args[-1], False) and (
                    constraint is None or len(constraint.args) < len(it.args)
                ):
                    constraint = it
            if constraint is not None:
                for c in reversed(constraint.args):
                    k = next(
                        (
                            k
                            for k in range(len(args))
                            if not visited[k]
                            and _split_equal(args[k], c, False)
                            and c.scale * matched_scale == args[k].scale
                        ),
                        -1,
                    )
                    if k == -1:
                        return None
                    visited[k] = True
                    flattened.append(args[k])
                mark, offset = self.sum_fuse[constraint]
                grouped.append(Split(mark, 1, mark.extent, matched_scale // base_scale))
                extra_base += offset * matched_scale
                if not exact:
                    tail += expected - matched_scale
                expected = mark.extent * matched_scale
                i += len(constraint.args)
            else:
                visited[pos] = True
                arg = args[pos]._replace(scale=args[pos].scale // base_scale)
                flattened.append(arg)
                grouped.append(arg)
                if not exact:
                    tail += expected - matched_scale
                expected = args[pos].extent * matched_scale
                i += 1
        flat = Sum(tuple(reversed(flattened)), 0)
        structured = Sum(tuple(reversed(grouped)), 0)
        if flat in self.sum_fuse:
            mark, offset = self.sum_fuse[flat]
            if extra_base != offset * base_scale:
                return None
        else:
            mark = Mark(structured, expected // base_scale + tail)
            self.sum_fuse[flat] = (mark, extra_base)
            self.flattened[structured] = flat
        return Sum((Split(mark, 1, mark.extent, base_scale),), expr.base + extra_base)

    def constrain(self, t: Tree, upper: int):
        """A `T.where(t < upper)` bound: the mark of t's sum gets the narrower extent."""
        expr = _sum(self.mutate(t))
        upper -= expr.base
        expr = Sum(expr.args, 0)
        fused = self.try_fuse(expr, False)
        if fused is None or fused.args[0].scale != 1:
            raise _Fail
        structured = fused.args[0].mark.source
        flat = self.flattened.get(structured) if isinstance(structured, Sum) else None
        if flat is None:
            raise _Fail
        mark, offset = self.sum_fuse[flat]
        hi = min(upper, offset + mark.extent)
        self.sum_fuse[flat] = (Mark(mark.source, hi - offset), offset)
        self.constrained.append(flat)

    # -- TVM's CheckMapping (surjective): the splits of each mark do not overlap
    def check(self, sums: Sequence[Sum]):
        marks: List[Mark] = []
        splits: Dict[Mark, List[Split]] = {}

        def visit(m: Mark):
            if m in splits:
                return
            marks.append(m)
            splits[m] = []
            if isinstance(m.source, Sum):
                for a in m.source.args:
                    visit(a.mark)
                    splits[a.mark].append(a)

        for s in sums:
            for a in s.args:
                visit(a.mark)
                splits[a.mark].append(a)
        for m in marks:
            if not _covers(m, splits[m]):
                raise _Fail

    def rewrite(self, t: Tree):
        expr = _sum(self.mutate(t))
        if not expr.args:
            return expr
        fused = self.try_fuse(expr, True)
        if fused is None:
            raise _Fail
        return fused


def _covers(mark: Mark, splits: List[Split]) -> bool:
    """TVM's TryNormalizeSplits without padding: the splits, from the lowest, each start
    where the previous one ends (or, surjective, at a multiple of it), within the mark."""
    used = [False] * len(splits)
    expected = 1
    for _ in splits:
        j = next((j for j, s in enumerate(splits) if not used[j] and s.lower == expected), -1)
        if j == -1:  # skip a lower factor: the rest must all start at multiples of it
            for i, s in enumerate(splits):
                if used[i]:
                    continue
                if s.lower % expected:
                    return False
                if j == -1 or splits[j].lower % s.lower == 0:
                    j = i
            if j == -1:
                return False
        used[j] = True
        expected = splits[j].lower * splits[j].extent
    return bool(splits) and mark.extent % expected == 0


# --- back to expressions (IterMapToExprNormalizer) ---------------------------------------------
def _tree_of_sum(s: Sum) -> Tree:
    out: Tree = 0
    for a in s.args:
        out = add(out, _tree_of_split(a))
    return add(out, s.base)


def _tree_of_split(s: Split) -> Tree:
    src = s.mark.source
    if isinstance(src, Sum):
        source = _tree_of_sum(src)
    elif isinstance(src, Split):
        source = _tree_of_split(src)
    else:
        assert isinstance(src, tuple), src  # ("v", k)
        source = src
    if s.extent == s.mark.extent and s.lower == 1:
        return mul(source, s.scale)
    if s.mark.extent == s.lower * s.extent:
        if s.extent == 1 and s.mark.extent != 1:
            return 0
        return mul(floordiv(source, s.lower), s.scale)
    return mul(floordiv(floormod(source, s.lower * s.extent), s.lower), s.scale)


def simplify(
    bindings: Sequence[Tree],
    extents: Dict[int, int],
    bounds: Sequence[Tuple[Tree, int]] = (),
    trivial: bool = False,
) -> Optional[List[Tree]]:
    """TVM's IterMapSimplify of a block's bindings: `extents` maps each loop dim to its
    (constant) extent, `bounds` are the `T.where(t < upper)` constraints, `trivial` binds
    unit loops as 0 (`preserve_unit_iters=False`). None where TVM's algorithm is not modelled
    here (or TVM itself would keep the bindings as substituted)."""
    for with_bounds in (True, False) if bounds else (False,):
        rw = _Rewriter(extents, trivial)
        try:
            if with_bounds:
                for t, upper in sorted(bounds, key=lambda b: _size(b[0])):
                    rw.constrain(t, upper)
            sums = [rw.rewrite(t) for t in bindings]
            rw.check(sums)
        except _Fail:
            continue
        return [_tree_of_sum(s) for s in sums]
    return None


def _size(t: Tree) -> int:
    if isinstance(t, int) or t[0] == "v":
        return 1
    return 1 + _size(t[1]) + (_size(t[2]) if t[0] == "+" else 1)
