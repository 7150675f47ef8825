"""Blockize and tensorize (TVM's blockize_tensorize): blockize, tensorize."""

from typing import List, Union

from tir_mlir.schedule.primitives.host import ScheduleHost
from tir_mlir.dialect.ops import Block, Loop
from tir_mlir.passes.schedule import blockize as _blockize
from tir_mlir.passes.schedule import blockize_blocks as _blockize_blocks
from tir_mlir.passes.schedule import tensorize as _tensorize

from tir_mlir.errors import ScheduleError
from tir_mlir.schedule.handles import BlockRV, LoopRV
from tir_mlir.schedule.primitive import primitive
from tir_mlir.schedule.tensor_intrin import TensorIntrin


class BlockizeTensorize(ScheduleHost):
    """Primitives that make a subtree one block, or a tensor intrinsic."""

    @primitive
    def blockize(
        self, target: Union[LoopRV, List[BlockRV]], preserve_unit_iters: bool = True
    ) -> BlockRV:
        """Turn the subtree of a loop into a block `B_o` whose iterators are the outer part of the
        inner block's (the inner block keeps the rest).

        Parameters
        ----------
        target : LoopRV or list of BlockRV
            The loop whose body becomes the new block, or sibling blocks whose consecutive
            loop nests become one block `outer_<names>_` (passes/schedule/blockize_blocks.py).
        preserve_unit_iters : bool
            Keep iterators of extent 1 in the new block's bindings.

        Returns
        -------
        BlockRV
            The new outer block.

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
        j_0, j_1 = sch.split(j, factors=[None, 16])
        outer = sch.blockize(j_1)
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32")):
            # with T.block("root"):
            for i, j_0 in T.grid(128, 8):
                with T.block("B_o"):
                    vi_o, vj_o = T.axis.remap("SS", [i, j_0])
                    T.reads(A[vi_o, vj_o * 16:vj_o * 16 + 16])
                    T.writes(B[vi_o, vj_o * 16:vj_o * 16 + 16])
                    for j_1 in range(16):
                        with T.block("B"):
                            vj_i = T.axis.spatial(16, j_1)
                            T.reads(A[vi_o, vj_o * 16 + vj_i])
                            T.writes(B[vi_o, vj_o * 16 + vj_i])
                            B[vi_o, vj_o * 16 + vj_i] = A[vi_o, vj_o * 16 + vj_i] * T.float32(2.0)
        ```
        """
        if isinstance(target, (list, tuple)):
            blocks = [Block(self._block(b)) for b in target]
            outer = _blockize_blocks.blockize_blocks(blocks, preserve_unit_iters)
            return self._handle(outer.op, BlockRV)
        if not isinstance(target, LoopRV):
            raise ScheduleError(
                f"blockize: the target must be a loop or a list of blocks, got "
                f"{type(target).__name__}"
            )
        outer = _blockize.blockize(Loop(self._resolve(target, LoopRV)), preserve_unit_iters)
        return self._handle(outer.op, BlockRV)

    @primitive
    def tensorize(
        self,
        block_or_loop: Union[BlockRV, LoopRV],
        tensor_intrin: str,
        preserve_unit_iters: bool = True,
    ) -> None:
        """Replace the computation of a block (or of the subtree of a loop, blockized first) by a
        tensor intrinsic's implementation, after checking that it matches the intrinsic's
        description.

        Parameters
        ----------
        block_or_loop : BlockRV or LoopRV
            What to replace.
        tensor_intrin : str
            The name the intrinsic was registered under (`TensorIntrin.register`); `"mac16_f32"`
            ships: `C[0:16] += A[0] * B[0:16]`.
        preserve_unit_iters : bool
            As in `blockize`.

        Returns
        -------
        None

        Examples
        --------
        Before:

        ```python
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 32), "float32"),
                 C: T.Buffer((8, 32), "float32")):
            for i, j, k in T.grid(8, 32, 16):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        ```

        With `sch = tir.Schedule(main)`:

        ```python
        i, j, k = sch.get_loops(sch.get_block("C"))
        j_0, j_1 = sch.split(j, factors=[None, 16])
        sch.reorder(j_0, k, j_1)
        sch.tensorize(j_1, "mac16_f32")
        ```

        After:

        ```python
        @T.prim_func
        def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 32), "float32"), C: T.Buffer((8, 32), "float32")):
            # with T.block("root"):
            for i, j_0, k in T.grid(8, 2, 16):
                with T.block("C_o"):
                    vi_o, vj_o, vk_o = T.axis.remap("SSR", [i, j_0, k])
                    T.reads(A[vi_o, vk_o], B[vk_o, vj_o * 16:vj_o * 16 + 16])
                    T.writes(C[vi_o, vj_o * 16:vj_o * 16 + 16])
                    A_1 = T.match_buffer(A[vi_o, vk_o], (1,))
                    B_1 = T.match_buffer(B[vk_o, vj_o * 16:vj_o * 16 + 16], (16,))
                    C_1 = T.match_buffer(C[vi_o, vj_o * 16:vj_o * 16 + 16], (16,))
                    with T.init():
                        for j_1 in range(16):
                            with T.block("C_init"):
                                vj_i_init = T.axis.spatial(16, j_1)
                                T.reads()
                                T.writes(C[vi_o, vj_o * 16 + vj_i_init])
                                C[vi_o, vj_o * 16 + vj_i_init] = T.float32(0.0)
                    for j in T.vectorized(16):
                        C_1[j] = C_1[j] + A_1[0] * B_1[j]
        ```
        """
        intrin = TensorIntrin.get(tensor_intrin)
        if isinstance(block_or_loop, LoopRV):
            loop = Loop(self._resolve(block_or_loop, LoopRV))
            _tensorize.check_loop(
                self._mod,
                loop,
                intrin.desc_func,
                intrin.impl_func,
                tensor_intrin,
                preserve_unit_iters,
            )
            block = _blockize.blockize(loop, preserve_unit_iters)
        else:
            block = Block(self._block(block_or_loop))
        _tensorize.tensorize(block, intrin.desc_func, intrin.impl_func, tensor_intrin)
