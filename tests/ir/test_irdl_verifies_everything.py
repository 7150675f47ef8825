"""`mlir-opt --irdl-file=dialect/tir.irdl.mlir` verifies every module the test programs give,
after parsing and after every schedule primitive: the IRDL file declares everything TensorIR
holds (its ops and the `#tir.*` attributes on upstream ops), so a hand-off of any state of a
schedule to MLIR tools reads back as written.

The programs: tests/data (*.tir, symbolic/*.tir, programs/*.tir, frontend/*.tir), the golden
programs (tests/golden/*.tir) and the linalg imports (tests/data/linalg/*.mlir). The
schedules: random ones over every primitive (tests/support/schedule_random.py) and everyday
ones (tests/support/schedule_everyday.py) on the programs those use. Each state of a module
is written once (deduplicated) into one `--split-input-file` batch, verified by one mlir-opt
process.
"""

import re
import subprocess
from pathlib import Path

import mlir
import pytest
from mlir import ir

import tir_mlir
from tir_mlir.context import get_context
from tir_mlir.dialect import attrs as tir_attrs
from tir_mlir.dialect.buffers import (
    ALIGN,
    AXIS_SEPARATORS,
    SCOPE,
    axis_separators_attr,
    axis_separators_of,
    int_attr,
    int_of,
    scope_attr,
    scope_of,
)
from tir_mlir.dialect.ops import LOOP_KINDS, THREAD_TAGS
from tir_mlir.errors import ScheduleError, TIRError
from tir_mlir.frontend.mlir_input import parse_mlir

import schedule_everyday
import schedule_random

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
IRDL = ROOT / "dialect" / "tir.irdl.mlir"
MLIR_OPT = next(
    (
        Path(p) / "bin" / "mlir-opt"
        for p in mlir.__path__
        if (Path(p) / "bin" / "mlir-opt").exists()
    ),
    None,
)
SPLIT = "// -----"
RANDOM_SEEDS = range(60)
EVERYDAY_SEEDS = range(3)


class Recorder:
    """A Schedule seen through a proxy: the module's MLIR after every primitive that changed it."""

    def __init__(self, sch, label, out: dict):
        self._sch, self._label, self._out, self._step = sch, label, out, 0

    def __getattr__(self, name):
        attr = getattr(self._sch, name)
        if not callable(attr) or name.startswith("_"):
            return attr

        def call(*args, **kwargs):
            n = len(self._sch.trace.insts)
            got = attr(*args, **kwargs)
            if len(self._sch.trace.insts) != n:
                self._step += 1
                _record(self._out, self._sch.mod, f"{self._label} step {self._step} ({name})")
            return got

        return call


def _record(out: dict, mod, label: str):
    out.setdefault(mod.mlir(), label)


def _programs() -> dict:
    paths = (
        sorted(DATA.glob("*.tir"))
        + sorted((DATA / "symbolic").glob("*.tir"))
        + sorted((DATA / "programs").glob("*.tir"))
        + sorted((DATA / "frontend").glob("*.tir"))
        + sorted((ROOT / "tests" / "golden").glob("*.tir"))
    )
    return {str(p.relative_to(ROOT)): p.read_text() for p in paths}


def _modules() -> dict:
    """MLIR text -> what it is (program, schedule step)."""
    out = {}
    for name, text in _programs().items():
        try:
            mod = tir_mlir.parse(text, name)
        except TIRError:
            continue  # (data of error tests)
        _record(out, mod, f"{name} parsed")
    for path in sorted((DATA / "linalg").glob("*.mlir")):
        _record(out, tir_mlir.from_linalg(path.read_text(), str(path)), f"{path.name} imported")
    for seed in RANDOM_SEEDS:
        prog, steps = schedule_random.from_seed(seed)
        src = schedule_random.program(prog)
        sch = Recorder(tir_mlir.Schedule(tir_mlir.parse(src)), f"random seed {seed} ({prog})", out)
        blocks = [sch.get_block(n) for n in schedule_random.block_names(src)]
        for step in steps:
            try:
                schedule_random._step(sch, blocks, *step)
            except (ScheduleError, ValueError, IndexError, TypeError):
                pass  # a refused step leaves the module as it was
    src = schedule_random.program("matmul")
    _gpu_schedule(Recorder(tir_mlir.Schedule(tir_mlir.parse(src)), "gpu matmul", out))
    for wname, src in schedule_everyday.workloads(small=True).items():
        for seed in EVERYDAY_SEEDS:
            code = schedule_everyday.draw(src, seed)
            sch = Recorder(
                tir_mlir.Schedule(tir_mlir.parse(src)), f"everyday {wname} seed {seed}", out
            )
            env = {"sch": sch}
            for line in code.splitlines():  # (one statement a line: a refused one ends it)
                try:
                    exec(compile(line, "<everyday>", "exec"), env)  # noqa: S102
                except ScheduleError:
                    break
    return out


def _gpu_schedule(sch):
    """What the random draws rarely reach: thread bindings, a shared-memory cache with its
    layout attributes, a decomposed reduction, an unrolled and a vectorized loop."""
    c = sch.get_block("C")
    i, j, k = sch.get_loops(c)
    bx, tx = sch.split(i, factors=[None, 32])
    by, ty = sch.split(j, factors=[None, 4])
    sch.reorder(bx, by, tx, ty)
    sch.bind(bx, "blockIdx.x")
    sch.bind(by, "blockIdx.y")
    sch.bind(tx, "threadIdx.x")
    ko, ki = sch.split(k, factors=[None, 8])
    a_shared = sch.cache_read(c, 0, "shared")
    sch.compute_at(a_shared, ko)
    sch.storage_align(a_shared, 0, axis=0, factor=16, offset=1)
    sch.set_axis_separator(a_shared, ("write", 0), [1])
    sch.unroll(ki)
    sch.decompose_reduction(c, ko)
    sch.vectorize(sch.get_loops(a_shared)[-1])
    sch.annotate(ko, "pragma_auto_unroll_max_step", 16)


@pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt is not installed")
def test_mlir_opt_verifies_every_parsed_and_scheduled_module(tmp_path):
    modules = _modules()
    assert len(modules) > 100
    texts = list(modules)
    batch = tmp_path / "all.mlir"
    batch.write_text(f"\n{SPLIT}\n".join(texts))
    r = subprocess.run(
        [
            str(MLIR_OPT),
            f"--irdl-file={IRDL}",
            "--split-input-file",
            "--verify-each",
            str(batch),
            "-o",
            "/dev/null",
        ],
        capture_output=True,
        text=True,
    )
    if r.returncode:
        # name the modules that failed: each chunk's first line in the batch file
        starts, line = [], 1
        for t in texts:
            starts.append(line)
            line += t.count("\n") + 2
        bad = set()
        for err in r.stderr.splitlines():
            parts = err.split(":")
            if len(parts) > 2 and parts[1].isdigit():
                k = max(i for i, s in enumerate(starts) if s <= int(parts[1]))
                bad.add(modules[texts[k]])
        pytest.fail(
            f"mlir-opt refused {len(bad)} of {len(texts)} modules: {sorted(bad)[:10]}"
            f"\n{r.stderr[:3000]}"
        )


@pytest.mark.skipif(MLIR_OPT is None, reason="mlir-opt is not installed")
def test_a_kind_tir_lacks_is_refused(tmp_path):
    """The attributes are checked: a loop kind TensorIR does not have does not parse."""
    sch = tir_mlir.Schedule(tir_mlir.parse((DATA / "mm_relu.tir").read_text()))
    sch.parallel(sch.get_loops(sch.get_block("Y"))[0])
    text = sch.mod.mlir()
    assert '#tir.for_kind<"parallel">' in text
    bad = tmp_path / "bad.mlir"
    bad.write_text(text.replace('#tir.for_kind<"parallel">', '#tir.for_kind<"parallell">'))
    r = subprocess.run(
        [str(MLIR_OPT), f"--irdl-file={IRDL}", str(bad)], capture_output=True, text=True
    )
    assert r.returncode != 0
    assert "does not satisfy the constraint" in r.stderr


def _choices(attribute: str) -> set:
    """The strings `irdl.is` allows for the parameter of IRDL attribute `attribute`."""
    text = IRDL.read_text()
    body = text.split(f"irdl.attribute @{attribute} {{", 1)[1].split("\n  }", 1)[0]
    return set(re.findall(r'irdl\.is "([^"]+)"', body))


def test_the_irdl_constraints_are_the_views_constants():
    assert _choices("for_kind") == set(LOOP_KINDS)
    assert _choices("thread") == set(THREAD_TAGS)
    with get_context(), ir.Location.unknown():
        for kind in LOOP_KINDS:
            assert tir_attrs.string_value(tir_attrs.for_kind(kind), "for_kind") == kind
        for tag in THREAD_TAGS:
            assert tir_attrs.string_value(tir_attrs.thread(tag), "thread") == tag
        with pytest.raises(ir.MLIRError, match="does not satisfy the constraint"):
            tir_attrs.thread("warp.x")
        assert axis_separators_of({AXIS_SEPARATORS: axis_separators_attr([1, 2])}) == (1, 2)
        assert int_of({ALIGN: int_attr(ALIGN, 16)}, ALIGN) == 16
        assert scope_of({SCOPE: scope_attr("shared.dyn")}) == "shared.dyn"
        assert scope_of({}) == "global"


@pytest.mark.parametrize(
    "old,new,message",
    [
        (
            '} {tir.name = "j"}',
            '} {tir.kind = "parallel", tir.name = "j"}',
            'loop: tir.kind must be a #tir.for_kind<...>, got "parallel"',
        ),
        (
            'tir.scope = #tir.scope<"global">',
            'tir.scope = "global"',
            'Y: tir.scope must be a #tir.scope<...>, got "global"',
        ),
        (
            '} {tir.name = "j"}',
            '} {tir.index_dtype = "int64", tir.name = "j"}',
            "tir.index_dtype must be a #tir.index_dtype<...>",
        ),
    ],
    ids=["kind", "scope", "index_dtype"],
)
def test_mlir_input_in_the_untyped_spelling_is_refused_with_its_place(old, new, message):
    """A `.mlir` written before the attributes were declared (plain strings): MLIR itself
    accepts any value under a discardable key, so the reader checks the keys it knows."""
    text = (ROOT / "tests" / "data" / "printer" / "mm_relu.mlir").read_text()
    assert old in text
    with pytest.raises(TIRError) as e:
        parse_mlir(text.replace(old, new, 1), "old.mlir")
    assert message in e.value.message
    assert e.value.loc.file == "old.mlir" and e.value.loc.line > 1
