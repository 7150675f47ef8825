"""What linalg import refuses: each a TIRParseError at the op's FILE:LINE:COL naming it; the
CLI prints it with the source line and a caret, exit status 1, no traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import tir_mlir
from tir_mlir.errors import SourceLoc, TIRParseError
from tir_mlir.frontend.mlir_input import parse_mlir

DATA = Path(__file__).parent.parent / "data" / "linalg"

SOFTMAX = """func.func @f(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.softmax dimension(1) ins(%a : tensor<4x8xf32>) outs(%0 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}
"""


def _error(text, filename="in.mlir") -> TIRParseError:
    with pytest.raises(TIRParseError) as info:
        tir_mlir.from_linalg(text, filename)
    return info.value


def _generic(body: str, out_type: str = "f32", extra: str = "") -> str:
    return f"""#id = affine_map<(d0) -> (d0)>
func.func @f(%a: tensor<4xf32>) -> tensor<4x{out_type}> {{
{extra}  %e = tensor.empty() : tensor<4x{out_type}>
  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4x{out_type}>) {{
  ^bb0(%x: f32, %o: {out_type}):
{body}
  }} -> tensor<4x{out_type}>
  return %r : tensor<4x{out_type}>
}}
"""


@pytest.mark.parametrize(
    "text, loc, message",
    [
        (SOFTMAX, (3, 8), "unsupported linalg op 'linalg.softmax'"),
        (
            """func.func @f(%a: tensor<8x8xf32>) -> tensor<8x8xi32> {
  %s = tensor.bitcast %a : tensor<8x8xf32> to tensor<8x8xi32>
  return %s : tensor<8x8xi32>
}
""",
            (2, 8),
            "unsupported op 'tensor.bitcast'",
        ),
        (
            """func.func @f(%a: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %i = arith.constant 2 : index
  %s = tensor.extract_slice %a[%i, 0] [4, 8] [1, 1] : tensor<8x8xf32> to tensor<4x8xf32>
  return %s : tensor<4x8xf32>
}
""",
            (3, 8),
            "'tensor.extract_slice' with dynamic offsets, sizes or strides is not supported",
        ),
        (
            """func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %a, %c0 : tensor<?xf32>
  %d1 = tensor.dim %b, %c0 : tensor<?xf32>
  %m = arith.maxsi %d0, %d1 : index
  %e = tensor.empty(%m) : tensor<?xf32>
  return %e : tensor<?xf32>
}
""",
            (5, 8),
            "a dynamic size computed by 'arith.maxsi' (sizes may be made by tensor.dim, "
            "arith.constant, index casts, +, -, * and / by constants, affine.apply)",
        ),
        (
            """func.func @f(%a: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
""",
            (1, 33),
            "unsupported type f32: linalg import takes ranked tensors and memrefs",
        ),
        (
            _generic("""    %y = arith.remf %x, %x : f32
    linalg.yield %y : f32"""),
            (7, 10),
            "unsupported op 'arith.remf' in the body of a linalg op",
        ),
        (
            _generic(
                """    %y = arith.cmpf uno, %x, %x : f32
    linalg.yield %y : i1""",
                "i1",
            ),
            (7, 10),
            "unsupported comparison 'arith.cmpf uno'",
        ),
        (
            _generic(
                """    %y = arith.addf %x, %s : f32
    linalg.yield %y : f32""",
                extra="""  %i = arith.constant 0 : index
  %s = tensor.extract %a[%i] : tensor<4xf32>
""",
            ),
            (4, 8),
            "unsupported op 'tensor.extract'",
        ),
        (
            "func.func private @ext(tensor<4xf32>) -> tensor<4xf32>\n",
            (1, 1),
            "a function declaration has no body to import",
        ),
        (
            "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %b : tensor<4xf32>\n}\n",
            (2, 10),
            "use of undeclared SSA value name",
        ),
        ('"tir."() : () -> ()\n', (1, 1), "'tir.' is not an op name"),  # would abort MLIR
    ],
)
def test_refused_with_location(text, loc, message):
    e = _error(text)
    assert e.loc == SourceLoc("in.mlir", *loc)
    assert message in e.message


def test_error_points_into_the_producers_source():
    """With debug locations (a torch model's), the error is at the model's source line."""
    text = SOFTMAX.replace(
        "-> tensor<4x8xf32>\n  return", '-> tensor<4x8xf32> loc("model.py":12:4)\n  return'
    )
    assert _error(text).loc == SourceLoc("model.py", 12, 4)


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "tir_mlir.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )


def test_cli_error_has_caret_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(SOFTMAX)
    r = _cli("import", str(bad))
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert lines[0].startswith(f"{bad}:3:8: error: unsupported linalg op 'linalg.softmax'")
    assert (
        lines[1] == "  %1 = linalg.softmax dimension(1) ins(%a : tensor<4x8xf32>) "
        "outs(%0 : tensor<4x8xf32>) -> tensor<4x8xf32>"
    )
    assert lines[2] == "       ^"
    assert "Traceback" not in r.stderr


def test_cli_import_writes_tvmscript_and_mlir(tmp_path):
    src = DATA / "conv_relu.mlir"
    expected = tir_mlir.from_linalg(src.read_text(), str(src))
    r = _cli("import", str(src), "-o", str(tmp_path / "conv.tir"))
    assert r.returncode == 0, r.stderr
    tir_mlir.assert_structural_equal(tir_mlir.load(str(tmp_path / "conv.tir")), expected)
    r = _cli("import", str(src), "--emit", "mlir")
    assert r.returncode == 0, r.stderr
    tir_mlir.assert_structural_equal(parse_mlir(r.stdout), expected)


def test_imported_ops_carry_the_input_locations():
    """Every op built for a linalg op has its location in the input file (a later error, or
    `--emit mlir --debug-info`, points there)."""
    mod = tir_mlir.from_linalg(
        SOFTMAX.replace("linalg.softmax dimension(1)", "linalg.exp"), "in.mlir"
    )
    text = mod.mlir(debug_info=True)
    assert 'loc("in.mlir":3:8)' in text  # the block, its loops, loads and store
    assert '"-":' not in text
