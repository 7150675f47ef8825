"""The `@primitive` decorator: what makes a Schedule method a schedule primitive.

It
  * records the call (method name, arguments by parameter name with defaults filled in,
    outputs) in `sch.trace`, naming output handles b0/l1/...;
  * snapshots the module and restores it on ANY exception, so a failing primitive leaves
    `sch.mod` exactly as it was; ScheduleErrors pass through, other errors are wrapped in a
    ScheduleError naming the primitive;
  * runs the method inside the tir MLIR context (and an unknown default location);
  * verifies the module after the outermost primitive (malformed IR -> restore + error).
Primitives may call other primitives: only the outermost one is a transaction and recorded.
In trusted replay (`sch._trusted`, set by `Trace.apply_to_schedule(..., trusted=True)`) the
snapshot and the verification are skipped: a search replays traces it made itself and drops
the whole schedule on any error, so the per-step transaction buys nothing there.
Replay needs nothing per primitive: `Trace.apply_to_schedule` calls the method by name.
"""
import functools
import inspect
import typing

from mlir import ir

from tir_mlir.context import get_context, serialized
from tir_mlir.errors import ScheduleError
from tir_mlir.analysis import op_index
from tir_mlir.schedule.trace import Instruction
from tir_mlir.suggest import did_you_mean


def primitive(fn=None, *, macro: bool = False, readonly: bool = False,
              keeps_ops: bool = False, keeps_index: bool = False,
              lookups_first: bool = False, tracks_lookups: bool = False):
    """Wrap a Schedule method as a traced, transactional primitive.

    `macro=True`: the method only calls other primitives; they are recorded instead of it (so
    the trace stays TVM-compatible), but the whole macro is still one transaction.
    The schedule's index of its ops (tir_mlir/analysis/op_index.py) survives:
    `readonly=True` methods, which do not rewrite the module (queries, sampling);
    `keeps_ops=True` ones, which only change attributes of existing ops (loop kinds,
    annotations): no op is created, erased or moved; and `keeps_index=True` rewrites, which
    erase only through `analysis.erase` (so the index hears of every erased op). Every other
    primitive drops the index before and after; `lookups_first=True` ones (audited: they
    erase only through `analysis.erase`) share one walk among the lookups they make before
    their first erasure; with `tracks_lookups=True` too (audited: the only op they recreate
    with its sid is through `analysis.set_operands`) that index hears of their erasures and
    survives them, minus its block names."""
    if fn is None:
        return functools.partial(primitive, macro=macro, readonly=readonly, keeps_ops=keeps_ops,
                                 keeps_index=keeps_index, lookups_first=lookups_first,
                                 tracks_lookups=tracks_lookups)
    keeps_ops = keeps_ops or readonly
    sig = inspect.signature(fn)

    named_blocks = [k for k, p in sig.parameters.items() if _takes_block_name(p.annotation)]
    arguments = _binder(sig, fn.__name__)

    @functools.wraps(fn)
    @serialized
    def wrapper(self, *args, **kwargs):
        values = arguments(self, args, kwargs)
        record = not self._recording and not macro
        if record and named_blocks and any(isinstance(values[k], str) for k in named_blocks):
            # a block given by name is looked up first, recorded as get_block (as in TVM)
            bound = sig.bind(self, *args, **kwargs)
            bound.apply_defaults()
            for k in named_blocks:
                if isinstance(bound.arguments[k], str):
                    bound.arguments[k] = self.get_block(bound.arguments[k])
            return wrapper(*bound.args, **bound.kwargs)
        inst = Instruction(fn.__name__, values)
        outermost = self._depth == 0 and not self._trusted
        tracked = succeeded = False
        if not keeps_ops:
            tracked = keeps_index and not self._mutating
            pre = None
            if tracked:
                self._tracking += 1
                if self._ops is not None:
                    self._ops.rewriting()
            else:
                if lookups_first and self._ops is not None:
                    pre = self._ops          # current: it serves the lookups before erasing
                    pre.complete = pre.names = False
                    pre.erased = set()
                self._ops = None
                self._mutating += 1
            prev_lookups, prev_tracks = self._lookups_first, self._tracks_lookups
            self._lookups_first, self._pre_index = lookups_first and not tracked, pre
            self._tracks_lookups = tracks_lookups and not tracked
        if outermost:
            saved = (self._mod.copy(), dict(self._consumed), self._next_sid, self._next_name,
                     len(self._trace))
        self._depth += 1
        prev_schedule = op_index.reporting_to(self)
        prev_recording, prev_inst = self._recording, self._inst
        self._inst = inst if record else None
        if record:
            self._recording = True
            self._step = len(self._trace.insts)
        try:
            with _context(), ir.Location.unknown():
                result = fn(self, *args, **kwargs)
                if outermost:
                    self._verify(fn.__name__)
                succeeded = True
        except Exception as e:
            if outermost:
                (self._mod, self._consumed, self._next_sid, self._next_name, n) = saved
                self._ops = None
                del self._trace.insts[n:]
            if isinstance(e, ScheduleError):
                if outermost and self._error_render_level != "detail":
                    raise _rendered(e, self._error_render_level) from e
                raise
            raise ScheduleError(f"{fn.__name__}: {type(e).__name__}: {e}") from e
        finally:
            if tracked:
                self._tracking -= 1
                if self._ops is not None:
                    self._ops.rewriting()
            elif not keeps_ops:
                self._ops = None
                self._mutating -= 1
            if not keeps_ops:
                # an index walked after the last erasure is the module's: kept, but ops the
                # rewrite created after that walk (a cache block) are found by a new walk
                kept = self._pre_index if succeeded and not self._mutating else None
                self._lookups_first, self._pre_index = prev_lookups, None
                self._tracks_lookups = prev_tracks
                if kept is not None:
                    if not kept.settled:        # (else walked after the rewrite's last change)
                        kept.complete = kept.names = False
                    kept.settled = False
                    self._ops = kept
            self._depth -= 1
            op_index.reporting_to(prev_schedule)
            self._recording, self._inst = prev_recording, prev_inst
        if op_index.CHECK and self._depth == 0 and self._ops is not None:
            stale = self._ops.stale()
            if stale:
                raise ScheduleError(f"{fn.__name__}: internal error: stale op index: {stale}")
        if record:
            inst.outputs = result
            for rv in inst.output_list():
                self._name(rv)
            self._trace.append(inst)
        return result
    wrapper.is_primitive = True
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
            raise TypeError(f"{sig_name(self)}() got an unexpected keyword argument "
                            f"{unknown[0]!r}{did_you_mean(unknown[0], names)}")
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        return {k: v for k, v in bound.arguments.items() if k != "self"}

    def sig_name(self):
        return f"{type(self).__name__}.{fn_name}"

    def bind(self, args, kwargs):
        if not simple or len(args) > len(positional):
            return slow(self, args, kwargs)
        if not args and len(kwargs) == len(names) and known.issuperset(kwargs):
            return {n: kwargs[n] for n in names}      # (how a trace replays a call)
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
    from tir_mlir.schedule.handles import BlockRV
    args = typing.get_args(annotation)
    return BlockRV in args and str in args
