"""Stage `gpu-place-buffers` (affine level, after `gpu-map-threads`): move each buffer to where
its scope says it lives. tir-to-affine hoisted every buffer to the function entry (host code);

    workgroup (shared)  -> a workgroup attribution of each launch using it (one per block)
    private (local)     -> a private attribution of each launch using it (one per thread)
    global              -> device memory: `gpu.alloc` at its place on the host, `gpu.dealloc`
                           before every return (host code never reads it: gpu-check-bindings)
"""

from mlir import ir
from mlir.dialects import gpu

from tir_mlir.passes.lowering.common import ancestors, build_error, functions, walk
from tir_mlir.passes.lowering.gpu_scopes import address_space

ALLOCS = ("memref.alloc", "memref.alloca")


class GpuPlaceBuffers:
    name = "gpu-place-buffers"

    def __call__(self, module: ir.Module):
        for f in functions(module):
            launches = [o for o in walk(f) if o.name == "gpu.launch"]
            attributions = [([], []) for _ in launches]
            placed = []
            for alloc in [o for o in walk(f) if o.name in ALLOCS and _launch_of(o) is None]:
                value = alloc.results[0]
                for use in [u.owner for u in value.uses if u.owner.name == "memref.dealloc"]:
                    use.erase()
                space = address_space(value.type)
                if not space:
                    _to_device_memory(f, alloc)
                    continue
                users = [_launch_of(u.owner) for u in value.uses]
                if any(u is None for u in users):
                    raise build_error(alloc, "a shared/local buffer is used outside kernels")
                for k, launch in enumerate(launches):
                    if any(launch == u for u in users):
                        attributions[k][space == "private"].append(value)
                placed.append(alloc)
            for launch, (workgroup, private) in zip(launches, attributions):
                _attribute(launch, workgroup, private)
            for alloc in placed:
                alloc.erase()


def _launch_of(op):
    return next((p for p in ancestors(op) if p.name == "gpu.launch"), None)


def _attribute(launch, workgroup, private):
    """Append the buffers as attributions of `launch` (workgroup ones first, as the op
    requires) and use them inside instead of the host allocations."""
    body = launch.regions[0].blocks[0]
    for value in workgroup + private:
        arg = body.add_argument(value.type, value.owner.location)
        for use in list(value.uses):
            if _launch_of(use.owner) == launch:
                use.owner.operands[use.operand_number] = arg
    launch.attributes["workgroup_attributions"] = ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), len(workgroup)
    )


def _to_device_memory(f, alloc):
    """alloc -> gpu.alloc (synchronous: wait for it), freed before each return."""
    loc, t = alloc.location, alloc.results[0].type
    # AsyncTokenType comes from the GPU dialect's native module; the stub omits it
    token = gpu.AsyncTokenType.get()  # pyright: ignore[reportAttributeAccessIssue]
    with ir.InsertionPoint(alloc), loc:
        ready = gpu.WaitOp(token, []).result
        new = gpu.AllocOp(t, token, [ready], [], [])
        gpu.WaitOp(None, [new.asyncToken])
    alloc.results[0].replace_all_uses_with(new.memref)
    alloc.erase()
    for ret in [o for o in walk(f) if o.name == "func.return"]:
        with ir.InsertionPoint(ret), loc:
            ready = gpu.WaitOp(token, []).result
            done = gpu.DeallocOp(token, [ready], new.memref).result
            gpu.WaitOp(None, [done])
