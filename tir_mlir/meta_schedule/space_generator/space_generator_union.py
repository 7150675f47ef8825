"""SpaceGeneratorUnion (TVM 0.21's): the design spaces of several generators, concatenated
in order. Each generator is initialized with the tuning context; the postprocessors and
mutators the search uses are the union's own (`postprocs`, `mutator_probs`), not those of
the generators inside it."""

from tir_mlir.meta_schedule.space_generator.space_generator import SpaceGenerator


class SpaceGeneratorUnion(SpaceGenerator):
    def __init__(
        self,
        space_generators: list[SpaceGenerator],
        sch_rules="from-target",
        postprocs="from-target",
        mutator_probs="from-target",
    ):
        super().__init__(sch_rules, postprocs, mutator_probs)
        self.space_generators = list(space_generators)

    def initialize_with_tune_context(self, context) -> None:
        super().initialize_with_tune_context(context)
        for generator in self.space_generators:
            generator.initialize_with_tune_context(context)

    def generate_design_space(self, mod) -> list:
        return [
            sch
            for generator in self.space_generators
            for sch in generator.generate_design_space(mod)
        ]
