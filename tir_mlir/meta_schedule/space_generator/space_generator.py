"""The space generator interface: `generate_design_space(mod) -> list of schedules`
(sketches: schedules whose traces hold sampling instructions), plus the postprocessors and
mutators that belong to the space (TVM 0.21 keeps them here)."""

from typing import Any, List, Mapping, Optional, Sequence, Union

FromTarget = Union[str, Sequence[Any], None]  # "from-target", a list or None (none)


class SpaceGenerator:
    # The constructor's arguments until initialize_with_tune_context resolves them: then the
    # schedule rules and postprocessors are lists and mutator_probs a dict {mutator: weight}.
    sch_rules: Any
    postprocs: Any
    mutator_probs: Any

    def __init__(
        self,
        sch_rules: FromTarget = "from-target",
        postprocs: FromTarget = "from-target",
        mutator_probs: Union[str, Mapping[Any, float], None] = "from-target",
    ):
        self.sch_rules = sch_rules
        self.postprocs = postprocs
        self.mutator_probs = mutator_probs
        self.target = None

    def initialize_with_tune_context(self, context) -> None:
        from tir_mlir.meta_schedule import mutator, postproc, schedule_rule

        self.target = context.target
        kind = context.target.kind
        if self.sch_rules == "from-target":
            self.sch_rules = schedule_rule.create(kind)
        self.sch_rules = [schedule_rule.as_rule(r) for r in (self.sch_rules or [])]
        if self.postprocs == "from-target":
            self.postprocs = postproc.create(kind)
        self.postprocs = list(self.postprocs or [])
        if self.mutator_probs == "from-target":
            self.mutator_probs = mutator.create(kind)
        self.mutator_probs = dict(self.mutator_probs or {})
        for x in [*self.sch_rules, *self.postprocs, *self.mutator_probs]:
            if hasattr(x, "initialize_with_tune_context"):
                x.initialize_with_tune_context(context)

    def generate_design_space(self, mod) -> List:
        raise NotImplementedError


class PySpaceGenerator(SpaceGenerator):
    """The class a TVM user's space generator derives from (with `@derived_object`): it
    overrides `_initialize_with_tune_context(context)` and `generate_design_space(mod)`
    (TVM's methods; neither has a default)."""

    _py_interface = True

    def initialize_with_tune_context(self, context) -> None:
        super().initialize_with_tune_context(context)
        self._initialize_with_tune_context(context)

    def _initialize_with_tune_context(self, context) -> None:
        raise NotImplementedError(
            "PySpaceGenerator's InitializeWithTuneContext method not implemented!"
        )

    def generate_design_space(self, mod) -> List:
        raise NotImplementedError("PySpaceGenerator's GenerateDesignSpace method not implemented!")


def generate_design_space(
    mod,
    target="llvm",
    space=None,
    seed: Optional[int] = None,
    sch_rules="from-target",
    postprocs="from-target",
    mutator_probs="from-target",
) -> List:
    """The sketches of `mod` for `target` (TVM's ms.generate_design_space)."""
    from tir_mlir.meta_schedule.space_generator.post_order_apply import PostOrderApply
    from tir_mlir.meta_schedule.tune_context import TuneContext

    if space is None:
        space = PostOrderApply(
            sch_rules=sch_rules, postprocs=postprocs, mutator_probs=mutator_probs
        )
    ctx = TuneContext(mod=mod, target=target, space_generator=space, rand_state=seed)
    return ctx.generate_design_space()
