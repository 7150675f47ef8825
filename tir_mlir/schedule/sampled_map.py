"""An index map over sampled values, kept symbolic in the trace (TVM keeps its ExprRVs).

MultiLevelTilingTensorCore lays the accumulator out per warp with a map whose divisors are
products of sampled tile sizes (`lambda i0, i1: (i0 // 16 // (v28 * v29), ...)`). Recorded
with the values it had, a replay with other decisions (a mutated trace, `check_sketches`)
would apply the old layout to the new tiles; recorded as a `SampledMap`, its free names stay
the sampled values' handles: printed as TVM prints them, renamed through a replay's handles,
read when the map is applied (`lambda_exprs.sampled_values`).
"""

import re
from typing import Dict, Mapping

from tir_mlir.errors import ScheduleError
from tir_mlir.schedule.handles import ExprRV
from tir_mlir.schedule.safe_lambda import SafeLambda, canonical_text, parse_lambda


class SampledMap:
    """`text` (a lambda) whose free names are the sampled values in `values` (name -> handle)."""

    def __init__(self, text: str, values: Mapping[str, ExprRV]):
        self.fn: SafeLambda = parse_lambda(text)
        clash = set(values) & set(self.fn.params)
        if clash:
            raise ScheduleError(f"a sampled value is named like a parameter: {sorted(clash)}")
        self.text = text
        self.values: Dict[str, ExprRV] = dict(values)
        self.param_names = list(self.fn.params)  # (what lambda_exprs names the parameters)

    def __call__(self, *args):
        return self.fn(*args, free=self.values)

    def handles(self) -> list:
        return list(self.values.values())

    def with_values(self, values: Mapping[str, ExprRV]) -> "SampledMap":
        return SampledMap(self.text, values)

    def printed(self) -> str:
        """The text with each value under its handle's trace name (a replay may name them
        differently), printed again from its parse (a trace is data)."""
        names = {k: rv.trace_name for k, rv in self.values.items()}
        text = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: names.get(m[0], m[0]), self.text)
        return canonical_text(text)

    def __repr__(self):
        return self.text
