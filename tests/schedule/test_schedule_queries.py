"""Schedule queries and the non-rewriting surface: get_output_blocks, sch.get / get_sref views,
work_on / func_working_on, remove_rv, enter_postproc, same_as, state, show, constructor
options, and dir(Schedule) against TVM 0.21's."""

import inspect
import io

import pytest

import tir_mlir
from schedule_check import check_replay, parse
from tir_mlir import Schedule, ScheduleError
from tir_mlir.schedule.views import BlockView, ForKind, LoopView

CHAIN = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), D: T.Buffer((8, 8), "float32"), E: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = B[vi, vj] + T.float32(1)
    for i in T.parallel(8):
        for k in T.serial(2, 8, annotations={"pragma_x": 4}):
            with T.block("E"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    E[vi] = T.float32(0)
                E[vi] = E[vi] + B[vi, vk]
"""
TWO_FUNCS = """
@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("X"):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(1)

    @T.prim_func
    def g(A: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("X"):
                vi = T.axis.spatial(4, i)
                A[vi] = T.float32(2)
"""


def public(cls):
    return {n for n in dir(cls) if not n.startswith("_")}


@pytest.mark.tvm
def test_dir_covers_tvm_schedule():
    """Every public name of tvm.tir.Schedule (68 in 0.21), and our extras."""
    import tvm

    assert not public(tvm.tir.Schedule) - public(Schedule)
    assert {"tile", "compute_root", "prefetch", "set_store_predicate"} <= public(Schedule)
    assert "names" in inspect.signature(Schedule.split).parameters  # named split


def both(src, fn):
    """`fn` on TVM's schedule and ours: (their result, our result, their trace, ours)."""
    import tvm

    theirs = tvm.tir.Schedule(tvm.script.from_source(src))
    ours = Schedule(parse(src))
    return fn(theirs), fn(ours), str(theirs.trace), str(ours.trace), theirs, ours


def test_get_output_blocks():
    sch = Schedule(parse(CHAIN))
    assert [sch.get(b).name_hint for b in sch.get_output_blocks("root")] == ["D", "E"]
    check_replay(sch, parse(CHAIN))


@pytest.mark.tvm
def test_get_output_blocks_like_tvm():
    def fn(sch):
        return [sch.get(b).name_hint for b in sch.get_output_blocks("root")]

    theirs, ours, ttrace, otrace, _, sch = both(CHAIN, fn)
    assert ours == theirs == ["D", "E"]
    assert otrace == ttrace
    check_replay(sch, parse(CHAIN))


@pytest.mark.tvm
def test_get_output_blocks_nested_scope_like_tvm():
    def fn(sch):  # (TVM fails on a block inside T.init(): no reduction here)
        i, j = sch.get_loops(sch.get_block("D"))
        outer = sch.blockize(j)
        return (
            [sch.get(b).name_hint for b in sch.get_output_blocks("root")],
            [sch.get(b).name_hint for b in sch.get_output_blocks(outer)],
        )

    theirs, ours, ttrace, otrace, _, _ = both(CHAIN, fn)
    assert ours == theirs
    assert otrace == ttrace


@pytest.mark.tvm
def test_views_have_tvm_attributes():
    def fn(sch):
        e = sch.get(sch.get_block("E"))
        i, k = (sch.get(lp) for lp in sch.get_loops(sch.get_block("E")))
        return (
            e.name_hint,
            [str(r) for r in e.reads],
            [str(r) for r in e.writes],
            [
                (
                    str(v.var),
                    v.dom[0] if isinstance(v.dom, tuple) else int(v.dom.min),
                    v.dom[1] if isinstance(v.dom, tuple) else int(v.dom.extent),
                    int(v.iter_type),
                )
                for v in e.iter_vars
            ],
            [
                (
                    str(x.loop_var),
                    int(x.min),
                    int(x.extent),
                    int(x.kind),
                    {key: int(v) for key, v in x.annotations.items()},
                )
                for x in (i, k)
            ],
        )

    theirs, ours, *_ = both(CHAIN, fn)
    assert ours == theirs


def test_view_prints_its_statement_and_compares_equal():
    sch = Schedule(parse(CHAIN))
    b = sch.get_block("D")
    i, j = sch.get_loops(b)
    assert isinstance(sch.get(b), BlockView) and isinstance(sch.get(i), LoopView)
    assert sch.get(b) == sch.get(sch.get_block("D")) and sch.get(b).same_as(sch.get(b))
    assert sch.get(b) != sch.get(sch.get_block("B"))
    assert (
        str(sch.get(j))
        == """for j in range(8):
    with T.block("D"):
        vi, vj = T.axis.remap("SS", [i, j])
        T.reads(B[vi, vj])
        T.writes(D[vi, vj])
        D[vi, vj] = B[vi, vj] + T.float32(1.0)"""
    )
    assert str(sch.get(i)).startswith("for i, j in T.grid(8, 8):\n")
    assert sch.get(i).kind is ForKind.SERIAL and str(sch.get(i).kind) == "serial"
    assert sch.get(sch.get_loops(sch.get_block("E"))[0]).kind == ForKind.PARALLEL
    assert sch.get(sch.get_block("E")).init and not sch.get(b).init
    sch.annotate(b, "meta_schedule.x", [1, "a"])
    assert sch.get(b).annotations == {"meta_schedule.x": [1, "a"]}
    assert "D" in sch.get(b)._repr_html_()


def test_get_sref_parent_chain():
    sch = Schedule(parse(CHAIN))
    b = sch.get_block("D")
    i, j = sch.get_loops(b)
    s = sch.get_sref(b)
    assert s.stmt == sch.get(b) and sch.get(s) == sch.get(b)
    assert s.parent == sch.get_sref(j) and s.parent.parent == sch.get_sref(i)
    assert s.parent.parent.parent is None
    assert sch.get_sref(sch.get(j)) == sch.get_sref(j)
    assert sch.state.get_sref(sch.get(b)) == s and sch.state.mod is sch.mod
    assert len(sch.trace) == 2  # get_block, get_loops: views and srefs are not traced


def test_work_on_picks_the_function():
    sch = Schedule(parse(TWO_FUNCS))
    assert sch.func_working_on is None
    with pytest.raises(ScheduleError, match="several functions"):
        sch.get_block("X")
    sch.work_on("g")
    assert sch.func_working_on == "g"
    b = sch.get_block("X")
    assert 'func_name="g"' in str(sch.trace)
    sch.split(sch.get_loops(b)[0], [None, 2])
    assert "i_0" in tir_mlir.printer.script_func(sch.mod["g"])
    assert "i_0" not in tir_mlir.printer.script_func(sch.mod["f"])
    with pytest.raises(ScheduleError, match="no function named 'h'"):
        sch.work_on("h")
    assert Schedule(parse(CHAIN)).func_working_on == "main"


@pytest.mark.tvm
def test_work_on_like_tvm():
    def fn(sch):
        sch.work_on("g")
        sch.get_block("X")
        return None

    *_, ttrace, otrace, _, _ = both(TWO_FUNCS, fn)
    assert otrace == ttrace


def test_remove_rv():
    sch = Schedule(parse(CHAIN))
    b = sch.get_block("D")
    b2 = sch.get_block("D")
    n = len(sch.trace)
    sch.remove_rv(b)
    with pytest.raises(ScheduleError, match="removed by remove_rv"):
        sch.get_loops(b)
    assert len(sch.trace) == n  # not an instruction (TVM neither)
    assert len(sch.get_loops(b2)) == 2  # another handle of the block still works
    other = sch.copy()
    assert len(other.get_loops(b2)) == 2
    with pytest.raises(ScheduleError):
        sch.remove_rv(b)


def test_enter_postproc_ends_replay_without_postproc():
    mod = parse(CHAIN)
    sch = Schedule(mod)
    i, j = sch.get_loops(sch.get_block("D"))
    sch.split(j, [None, 2])
    sch.enter_postproc()
    sch.parallel(i)
    assert "  sch.enter_postproc()\n  sch.parallel(loop=l1)" in str(sch.trace)
    check_replay(sch, mod)
    fresh = Schedule(mod)
    sch.trace.apply_to_schedule(fresh, remove_postproc=True)
    assert "T.parallel" not in tir_mlir.printer.script_func(fresh.mod["main"]).split('"D"')[0]
    assert "sch.parallel" not in str(fresh.trace)


@pytest.mark.tvm
def test_enter_postproc_trace_like_tvm():
    def fn(sch):
        sch.get_block("D")
        sch.enter_postproc()

    *_, ttrace, otrace, _, _ = both(CHAIN, fn)
    assert otrace == ttrace


def test_root_block_handle():
    sch = Schedule(parse(CHAIN))
    root = sch.get_block("root")
    assert [sch.get(b).name_hint for b in sch.get_child_blocks(root)] == ["B", "D", "E"]
    with pytest.raises(ScheduleError, match="root block"):
        sch.get_loops(root)
    view = sch.get(root)  # TVM's root block: no iter vars, no regions
    assert (view.name_hint, view.iter_vars, view.reads, view.init) == ("root", [], [], None)


def test_same_as_state_and_options():
    mod = parse(CHAIN)
    sch = Schedule(mod, seed=3, debug_mask="all", error_render_level="fast", enable_check=False)
    assert sch.same_as(sch) and not sch.same_as(sch.copy())
    assert sch.state.debug_mask == -1 and not sch.state.enable_check
    assert Schedule(mod, debug_mask=5).state.debug_mask == 5
    with pytest.raises(ValueError, match="debug_mask"):
        Schedule(mod, debug_mask="some")
    with pytest.raises(ValueError, match="error_render_level"):
        Schedule(mod, error_render_level="loud")


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_show_plain_when_piped_colored_on_a_terminal(capsys, monkeypatch):
    pytest.importorskip("pygments")
    from tir_mlir.show import show_text

    sch = Schedule(parse(CHAIN))
    sch.get_block("D")
    sch.show()
    out = capsys.readouterr().out
    assert out == sch.mod.script() + "\n" + str(sch.trace) + "\n"
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = _Tty()
    show_text(sch.mod.script(), file=tty)
    assert "\x1b[" in tty.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    tty = _Tty()
    show_text(sch.mod.script(), file=tty)
    assert tty.getvalue() == sch.mod.script() + "\n"
    sch.trace.show()
    sch.get(sch.get_block("D")).show()
    assert capsys.readouterr().out.startswith("# from tvm import tir\n")
    for obj in (sch, sch.mod, sch.trace):
        assert obj._repr_html_().startswith("<div")
