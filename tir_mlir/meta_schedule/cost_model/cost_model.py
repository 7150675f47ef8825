"""The cost model interface: `update(context, candidates, results)` learns from measured
candidates, `predict(context, candidates)` scores new ones (higher = faster); `can_rank()`
says whether its scores rank candidates yet (a model still warming up scores at random)."""


class CostModel:
    def can_rank(self) -> bool:
        return True

    def update(self, context, candidates, results) -> None:
        raise NotImplementedError

    def predict(self, context, candidates):
        raise NotImplementedError

    def save(self, path: str) -> None:
        pass

    def load(self, path: str) -> None:
        pass


class PyCostModel(CostModel):
    """The class a TVM user's cost model derives from (with `@derived_object`): it overrides
    `update`, `predict` (a score per candidate, higher = faster) and optionally `load`/`save`."""

    _py_interface = True


def costs(results):
    """Mean run time per result; inf for a failed build or run."""
    out = []
    for r in results:
        secs = r.run_secs if getattr(r, "error_msg", None) is None and r.run_secs else None
        out.append(sum(secs) / len(secs) if secs else float("inf"))
    return out
