"""Scheduling a SymbolicPrimFunc (`n = T.int32()` shapes, scalar parameters) as TVM allows:

    sch = tir_mlir.Schedule(f)                     # f has A = T.match_buffer(a, (n, 128))
    i, j = sch.get_loops(sch.get_block("B"))
    io, ii = sch.split(sch.fuse(i, j), [None, 8]); sch.parallel(io); sch.vectorize(ii)
    lib = tir_mlir.build(sch.mod); lib["f"](a, b)  # any n

tir-mlir's TensorIR has no symbolic extents yet, so the schedule runs on a probe
specialization: every symbolic integer gets a distinct prime (n = 97) that no split factor
divides, so splits add their `T.where` as TVM's do on a symbolic extent, and a primitive that
needs a divisible or known extent is refused here as TVM refuses it. `sch.mod` is a
ScheduledSymbolicFunc: the function and the trace. `build` replays the trace on
specializations: at probes, for one kernel serving every size (generic_kernel.py), or per set
of values read from the arguments (checked: SymbolicPrimFunc.bind_call); a schedule that is illegal at those values (a `sample_perfect_tile` decision
that does not divide, say) is a ScheduleError naming them. Printing fits the probe
specializations' numbers as forms of the vars (symbolic_print.py), so the schedule prints as
TVM prints it (`T.grid((n + 3) // 4, 4)`); where a number is no form it knows, it shows the
probe's schedule under a comment that says so.
"""
from typing import Dict

from tir_mlir.errors import ScheduleError
from tir_mlir.script.symbolic import INT_DTYPES, SymbolicPrimFunc

PROBES = (97, 89, 83, 79, 73, 71, 67, 61, 59, 53)


def probe_values(func: SymbolicPrimFunc) -> Dict:
    primes = iter(PROBES)
    values = {}
    for name, dtype in func.vars.items():
        if dtype in INT_DTYPES or dtype.startswith(("int", "uint")):
            values[name] = next(primes, 47)
        else:
            values[name] = True if dtype == "bool" else 1.0
    return values


class ScheduledSymbolicFunc:
    """`sch.mod` of a Schedule over a SymbolicPrimFunc (see the module comment): the function,
    the traces of the schedules applied one after the other, and the probe module they made;
    other attributes are the probe module's."""

    def __init__(self, func: SymbolicPrimFunc, traces, probe, probe_values: Dict):
        self.func, self.traces, self.probe = func, list(traces), probe
        self.probe_values = probe_values

    @staticmethod
    def start(mod) -> "ScheduledSymbolicFunc":
        """Where a new Schedule over `mod` (symbolic, maybe scheduled already) starts."""
        if isinstance(mod, ScheduledSymbolicFunc):
            return mod
        values = probe_values(mod)
        return ScheduledSymbolicFunc(mod, [], mod.specialize(values), values)

    def then(self, trace, probe) -> "ScheduledSymbolicFunc":
        return ScheduledSymbolicFunc(self.func, self.traces + [trace], probe, self.probe_values)

    @property
    def name(self):
        return self.func.name

    @property
    def vars(self):
        return self.func.vars

    @property
    def params(self):
        return self.func.params

    def bind_call(self, args):
        return self.func.bind_call(args)

    def _shapes(self):
        return self.func._shapes()

    def specialize(self, values: Dict):
        """The scheduled IRModule for these values of every symbolic var."""
        from tir_mlir.schedule.schedule import Schedule
        named = {getattr(k, "name", k): v for k, v in values.items()}
        if set(named) != set(self.func.vars):
            raise TypeError(f"a scheduled {self.name} specializes all of "
                            f"{', '.join(self.func.vars)} at once")
        sch = Schedule(self.func.specialize(named))
        try:
            for trace in self.traces:
                replay = Schedule(sch.mod)
                trace.apply_to_schedule(replay)
                sch = replay
        except ScheduleError as e:
            shown = ", ".join(f"{k} = {v}" for k, v in named.items())
            raise ScheduleError(f"the schedule of {self.name} does not apply at {shown}: "
                                f"{e}") from None
        return sch.mod

    def script(self) -> str:
        """As TVM prints it where each number of the printed program is a form of the vars
        symbolic_print.py knows (affine, a split's `(n + 3) // 4`, the source's own forms),
        else the probe's program under a comment saying so."""
        from tir_mlir.script.symbolic_print import script_text
        text = script_text(self)
        if text is not None:
            return text
        shown = ", ".join(f"{k} = {v}" for k, v in self.probe_values.items())
        return (f"# {self.name} scheduled at the probe {shown} (not printable symbolically "
                f"by tir-mlir: a number of it is no form of the vars it knows; build() runs "
                f"the schedule at the arguments' values)\n"
                + self.probe.script())

    def __str__(self):
        return self.script()

    def _tir_mlir_build(self, target="llvm", **kwargs):
        from tir_mlir.script.symbolic import SymbolicModule
        return SymbolicModule(self, target, kwargs)

    def __getattr__(self, name):
        return getattr(self.probe, name)
