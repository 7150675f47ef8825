"""Reductions (TVM's reduction): rfactor, decompose_reduction."""

from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.passes.schedule import decompose_reduction as _decompose
from tir_mlir.passes.schedule import rfactor as _rfactor

from tir_mlir.schedule.handles import BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive


class Reduction(ScheduleHost):
    """Primitives that restructure a reduction."""

    @primitive
    def rfactor(self, loop: LoopRV, factor_axis: int) -> BlockRV:
        """Factorize a reduction by one of its loops: a new block `B_rf` computes partial results
        along that loop into a new buffer, and the original block reduces them.

        Parameters
        ----------
        loop : LoopRV
            A loop the reduction block binds to one reduction iterator only.
        factor_axis : int
            Where the loop's dimension goes in the `rf` buffer's shape.

        Returns
        -------
        BlockRV
            The new `rf` block (computing the partial results).

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
            for i, k in T.grid(128, 128):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, k = sch.get_loops(sch.get_block("B"))
        k_0, k_1 = sch.split(k, factors=[None, 4])
        rf = sch.rfactor(k_1, factor_axis=0)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
            # with T.block("root"):
            B_rf = T.alloc_buffer((4, 128))
            for i, k_0, k_1 in T.grid(128, 32, 4):
                with T.block("B_rf"):
                    vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                    T.reads(A[vi, vk_0 * 4 + vk_1])
                    T.writes(B_rf[vk_1, vi])
                    with T.init():
                        B_rf[vk_1, vi] = T.float32(0.0)
                    B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]
            for i, k_1 in T.grid(128, 4):
                with T.block("B"):
                    vk_1, vi = T.axis.remap("RS", [k_1, i])
                    T.reads(B_rf[vk_1, vi])
                    T.writes(B[vi])
                    with T.init():
                        B[vi] = T.float32(0.0)
                    B[vi] = B[vi] + B_rf[vk_1, vi]
        ```
        """
        rf = _rfactor.rfactor(Loop(self._resolve(loop, LoopRV)), factor_axis)
        return self._handle(rf.op, BlockRV)

    @primitive
    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Split a reduction block's `T.init()` out into its own block `B_init`, placed before the
        given loop.

        Parameters
        ----------
        block : BlockRV
            The reduction block.
        loop : LoopRV
            A loop above the block; the init block goes right before it, under the loops above it.

        Returns
        -------
        BlockRV
            The new init block.

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
            for i, k in T.grid(128, 128):
                with T.block("B"):
                    vi, vk = T.axis.remap("SR", [i, k])
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, k = sch.get_loops(sch.get_block("B"))
        init = sch.decompose_reduction(sch.get_block("B"), k)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
            # with T.block("root"):
            for i in range(128):
                with T.block("B_init"):
                    vi = T.axis.spatial(128, i)
                    T.reads()
                    T.writes(B[vi])
                    B[vi] = T.float32(0.0)
                for k in range(128):
                    with T.block("B_update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(B[vi], A[vi, vk])
                        T.writes(B[vi])
                        B[vi] = B[vi] + A[vi, vk]
        ```
        """
        init = _decompose.decompose_reduction(
            Block(self._block(block)), Loop(self._resolve(loop, LoopRV))
        )
        return self._handle(init.op, BlockRV)
