"""Generic schedules tried on every program of the shared symbolic workload (*.tir here), the
same calls for TVM 0.21's tir.Schedule and tir-mlir's: (name, fn) per block name of a program.
record_sweep_goldens.py stores what TVM prints (or that it refuses) for each;
tests/test_schedule_symbolic_sweep.py compares ours."""
import re


def block_names(source: str) -> list:
    return [b for b in re.findall(r'with T.block\("(\w+)"\)', source) if b != "root"]


def _loops(s, b):
    return s.get_loops(s.get_block(b))


def steps(names: list) -> list:
    out = []
    for b in names:
        out += [
            (f"split0 {b}", lambda s, b=b: s.split(_loops(s, b)[0], [None, 4])),
            (f"splitlast {b}", lambda s, b=b: s.split(_loops(s, b)[-1], [None, 8])),
            (f"fuseall {b}", lambda s, b=b: s.fuse(*_loops(s, b))),
            (f"reorder {b}", lambda s, b=b: s.reorder(*reversed(_loops(s, b)))),
            (f"parallel0 {b}", lambda s, b=b: s.parallel(_loops(s, b)[0])),
            (f"vec {b}", lambda s, b=b: s.vectorize(s.split(_loops(s, b)[-1], [None, 4])[1])),
            (f"unroll {b}", lambda s, b=b: s.unroll(_loops(s, b)[-1])),
            (f"cache_read {b}", lambda s, b=b: s.compute_at(
                s.cache_read(s.get_block(b), 0, "global"), _loops(s, b)[0])),
            (f"cache_write {b}", lambda s, b=b: s.reverse_compute_at(
                s.cache_write(s.get_block(b), 0, "global"), _loops(s, b)[0])),
            (f"decompose {b}", lambda s, b=b: s.decompose_reduction(s.get_block(b),
                                                                    _loops(s, b)[0])),
            (f"rfactor {b}", lambda s, b=b: s.rfactor(
                s.split(_loops(s, b)[-1], [None, 4])[1], 0)),
            (f"compute_inline {b}", lambda s, b=b: s.compute_inline(s.get_block(b))),
            (f"rev_inline {b}", lambda s, b=b: s.reverse_compute_inline(s.get_block(b))),
            (f"tile {b}", lambda s, b=b: [s.split(lp, [None, 4]) for lp in _loops(s, b)]),
        ]
    for b in names:
        for c in names:
            if b != c:
                out += [
                    (f"compute_at {b}->{c}", lambda s, b=b, c=c: s.compute_at(
                        s.get_block(b), _loops(s, c)[0])),
                    (f"rev_compute_at {b}->{c}", lambda s, b=b, c=c: s.reverse_compute_at(
                        s.get_block(b), _loops(s, c)[0])),
                ]
    return out


def body(text: str) -> str:
    """What the primitives made: the statements under the root block."""
    return text.split('# with T.block("root"):', 1)[-1].strip()
