"""`@primitive` and `@macro`: what makes a Schedule method a schedule primitive.

A primitive
  * is recorded in `sch.trace` (method name, arguments by parameter name with defaults filled
    in, outputs), its output handles named b0/l1/...;
  * runs as one transaction of the schedule's `Rewriter` (rewriter.py): it plans (resolves
    its handles, checks legality; may refuse with ScheduleError), then applies its rewrite,
    which never refuses. On ANY exception the module, the handles and the trace are restored;
    a ScheduleError raised after the module changed is refused as an internal error; other
    errors are wrapped in a ScheduleError naming the primitive;
  * runs inside the tir MLIR context (and an unknown default location);
  * is verified after it applied (malformed IR -> restore + error).
Primitives may call other primitives: only the outermost one is a transaction and recorded.
A `@macro` only calls other primitives: they are recorded instead of it (so the trace stays
TVM's), but the whole macro is still one transaction.
In trusted replay (`sch._trusted`, set by `Trace.apply_to_schedule(..., trusted=True)`) the
snapshot and the verification are skipped: a search replays traces it made itself and drops
the whole schedule on any error, so the per-step transaction buys nothing there.
Replay needs nothing per primitive: `Trace.apply_to_schedule` calls the method by name.
"""

import functools
import inspect
import typing

from mlir import ir

from tir_mlir.analysis import op_index
from tir_mlir.context import get_context, serialized
from tir_mlir.errors import ScheduleError
from tir_mlir.schedule.handles import BlockRV
from tir_mlir.schedule.trace import Instruction
from tir_mlir.suggest import did_you_mean


def primitive(fn):
    """Wrap a Schedule method as a traced, transactional primitive."""
    return _wrap(fn, recorded=True)


def macro(fn):
    """Wrap a Schedule method that only calls other primitives: one transaction, and the
    primitives it calls are recorded in the trace instead of it."""
    return _wrap(fn, recorded=False)


def _wrap(fn, recorded: bool):
    sig = inspect.signature(fn)
    named_blocks = [k for k, p in sig.parameters.items() if _takes_block_name(p.annotation)]
    arguments = _binder(sig, fn.__name__)

    @functools.wraps(fn)
    @serialized
    def wrapper(self, *args, **kwargs):
        values = arguments(self, args, kwargs)
        calls = self._calls
        record = recorded and not any(c is not None for c in calls)
        if record and named_blocks and any(isinstance(values[k], str) for k in named_blocks):
            # a block given by name is looked up first, recorded as get_block (as in TVM)
            bound = sig.bind(self, *args, **kwargs)
            bound.apply_defaults()
            for k in named_blocks:
                if isinstance(bound.arguments[k], str):
                    bound.arguments[k] = self.get_block(bound.arguments[k])
            return wrapper(*bound.args, **bound.kwargs)
        inst = Instruction(fn.__name__, values) if record else None
        outermost = not calls
        rw = self._rw
        if outermost:
            rw.begin(snapshot=not self._trusted)
            saved = (self._rvs.save(), len(self._trace))
        calls.append(inst)
        try:
            with _context(), ir.Location.unknown():
                result = fn(self, *args, **kwargs)
                if outermost and not self._trusted:
                    self._verify(fn.__name__)
        except Exception as e:
            error = e
            if outermost:
                error = rw.abort(fn.__name__, e)
                if not self._trusted:
                    rvs, n = saved
                    self._rvs.restore(rvs)
                    del self._trace.insts[n:]
            if isinstance(error, ScheduleError):
                if outermost and self._error_render_level != "detail":
                    raise _rendered(error, self._error_render_level) from e
                if error is e:
                    raise
                raise error from e
            raise ScheduleError(f"{fn.__name__}: {type(e).__name__}: {e}") from e
        finally:
            calls.pop()
            if outermost:
                rw.end()
        if op_index.CHECK and outermost:
            stale = rw.index.stale()
            if stale:
                raise ScheduleError(f"{fn.__name__}: internal error: stale op index: {stale}")
        if inst is not None:
            inst.outputs = result
            for rv in inst.output_list():
                self._rvs.name(rv)
            self._trace.append(inst)
        return result

    setattr(wrapper, "is_primitive", True)  # (what Trace.apply_to_schedule replays)
    return wrapper


# The tir context without get_context's lock: the wrapper holds MLIR_LOCK already.
_context = get_context.__wrapped__


def _rendered(e: ScheduleError, level: str) -> ScheduleError:
    """The error as a schedule with error_render_level "fast" or "none" reports it (TVM)."""
    if level == "none":
        return type(e)("(not rendered)")
    return type(e)(e.fast or str(e))


def _binder(sig: inspect.Signature, fn_name: str = "primitive"):
    """f(self, args, kwargs) -> {parameter: value} with defaults filled in, in parameter order
    (what `sig.bind` + `apply_defaults` give, without self). Plain parameters take a fast path
    (a search replays thousands of primitives); anything else, errors included, goes through
    `sig.bind`."""
    params = list(sig.parameters.values())[1:]
    names = [p.name for p in params]
    known = frozenset(names)
    positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    defaults = {p.name: p.default for p in params if p.default is not p.empty}
    simple = all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params)

    def slow(self, args, kwargs):
        unknown = [k for k in kwargs if k not in known]
        if unknown and not any(p.kind is p.VAR_KEYWORD for p in params):
            raise TypeError(
                f"{sig_name(self)}() got an unexpected keyword argument "
                f"{unknown[0]!r}{did_you_mean(unknown[0], names)}"
            )
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        return {k: v for k, v in bound.arguments.items() if k != "self"}

    def sig_name(self):
        return f"{type(self).__name__}.{fn_name}"

    def bind(self, args, kwargs):
        if not simple or len(args) > len(positional):
            return slow(self, args, kwargs)
        if not args and len(kwargs) == len(names) and known.issuperset(kwargs):
            return {n: kwargs[n] for n in names}  # (how a trace replays a call)
        given = dict(zip(positional, args))
        for k, v in kwargs.items():
            if k in given or k not in known:
                return slow(self, args, kwargs)
            given[k] = v
        if any(n not in given and n not in defaults for n in names):
            return slow(self, args, kwargs)
        return {n: given[n] if n in given else defaults[n] for n in names}

    return bind


def _takes_block_name(annotation) -> bool:
    """A parameter typed Union[BlockRV, str]: a block handle or a block name."""
    args = typing.get_args(annotation)
    return BlockRV in args and str in args
