"""Loop kinds (TVM's for_kind): parallel, vectorize, unroll, bind. They change what kind of
loop a loop is (passes/schedule/loop_kind.py), never the loop nest.
"""

from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.passes.schedule import loop_kind

from tir_mlir.schedule.handles import LoopRV
from tir_mlir.schedule.primitive import primitive


class LoopKinds(ScheduleHost):
    """Primitives that set the kind of a loop."""

    @primitive
    def parallel(self, loop: LoopRV) -> None:
        """Run the iterations of a loop on separate threads (`T.parallel`).

        Parameters
        ----------
        loop : LoopRV
            A loop whose iterations are independent: every block under it binds the loop only to
            spatial (data-parallel) iterators, or the primitive refuses with `ScheduleError`.

        Returns
        -------
        None

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, j = sch.get_loops(sch.get_block("B"))
        sch.parallel(i)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i in T.parallel(128):
                for j in range(128):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
        ```
        """
        loop_kind.parallel(self._resolve(loop, LoopRV))

    @primitive
    def vectorize(self, loop: LoopRV) -> None:
        """Make a loop a vector loop (`T.vectorized`): the lowering emits vector instructions for
        it.

        Parameters
        ----------
        loop : LoopRV
            A loop under which every block binds it only to spatial iterators (usually the innermost
            loop, over contiguous elements).

        Returns
        -------
        None

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, j = sch.get_loops(sch.get_block("B"))
        sch.vectorize(j)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i in range(128):
                for j in T.vectorized(128):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
        ```
        """
        loop_kind.vectorize(self._resolve(loop, LoopRV))

    @primitive
    def unroll(self, loop: LoopRV) -> None:
        """Unroll a loop fully (`T.unroll`).

        Parameters
        ----------
        loop : LoopRV
            The loop; its extent should be small, every iteration becomes code.

        Returns
        -------
        None

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, j = sch.get_loops(sch.get_block("B"))
        j_0, j_1 = sch.split(j, factors=[None, 4])
        sch.unroll(j_1)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i, j_0 in T.grid(128, 32):
                for j_1 in T.unroll(4):
                    with T.block("B"):
                        vi = T.axis.spatial(128, i)
                        vj = T.axis.spatial(128, j_0 * 4 + j_1)
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
        ```
        """
        loop_kind.unroll(self._resolve(loop, LoopRV))

    @primitive
    def bind(self, loop: LoopRV, thread_axis: str) -> None:
        """Bind a loop to a GPU thread axis (`T.thread_binding`).

        Parameters
        ----------
        loop : LoopRV
            A loop whose iterations are independent.
        thread_axis : str
            `"blockIdx.x"`, `"threadIdx.x"` (and their `y`, `z`), or `"vthread.x"`.

        Returns
        -------
        None

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, j = sch.get_loops(sch.get_block("B"))
        sch.bind(i, "blockIdx.x")
        sch.bind(j, "threadIdx.x")
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i in T.thread_binding(128, thread="blockIdx.x"):
                for j in T.thread_binding(128, thread="threadIdx.x"):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
        ```
        """
        loop_kind.bind(self._resolve(loop, LoopRV), thread_axis)
