"""tir-mlir as a package a person installs and uses from notebooks and other frameworks:
license and metadata, `__version__`, `py.typed`, the platforms up front in the README,
`dir(tir_mlir)` with the lazily loaded names, `show()` and `_repr_html_` in notebooks,
export_library files under the umask, DLPack tensors in place, GPU arrays that never turn
into host arrays."""

import importlib.util
import os
import sys
import types
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
import tomllib

import tir_mlir
from tir_mlir.errors import RuntimeCallError

ROOT = Path(__file__).parent.parent.parent
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
MM = str(ROOT / "examples" / "mm_relu.tir")


def test_license_and_metadata():
    text = (ROOT / "LICENSE").read_text()
    assert [line.strip() for line in text.splitlines()[:2]] == [
        "Apache License",
        "Version 2.0, January 2004",
    ]
    assert "END OF TERMS AND CONDITIONS" in text
    assert PROJECT["license"] == "Apache-2.0" and PROJECT["license-files"] == ["LICENSE"]
    classifiers = set(PROJECT["classifiers"])
    assert {f"Programming Language :: Python :: 3.{m}" for m in (10, 11, 12, 13)} <= classifiers
    assert {"Operating System :: POSIX :: Linux", "Typing :: Typed"} <= classifiers


def test_version_and_typed_marker():
    assert tir_mlir.__version__ == version("tir-mlir") == PROJECT["version"]
    assert (ROOT / "tir_mlir" / "py.typed").is_file()
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "py.typed" in data["package-data"]["tir_mlir"]


def test_readme_states_platforms_and_ci_installs_what_it_says():
    readme = (ROOT / "README.md").read_text()
    top = readme[: readme.index("TVM's TensorIR rebuilt on MLIR")]
    assert "Runs on Linux x86_64 with CPython 3.10 to 3.13." in top
    first = top.split("```sh\n", 1)[1].splitlines()[0]
    install = first.split(" && ")[0]
    assert install == "pip install -e '.[test,tune]'"
    assert install in (ROOT / ".ci" / "run").read_text().splitlines()
    assert "pip install -e ." in top  # the lean install


def test_dir_lists_the_lazily_loaded_names():
    names = dir(tir_mlir)
    for name in (
        "Schedule",
        "build",
        "compile",
        "device",
        "load",
        "te",
        "tir",
        "nd",
        "script",
        "target",
        "__version__",
        "IRModule",
    ):
        assert name in names
    assert names == sorted(names)


def _fake_notebook(monkeypatch):
    """An IPython kernel as a notebook runs it: get_ipython() with IPKernelApp config."""
    shown = []
    ipython = types.ModuleType("IPython")
    ipython.get_ipython = lambda: types.SimpleNamespace(config={"IPKernelApp": {}})
    display = types.ModuleType("IPython.display")
    display.HTML = lambda text: ("HTML", text)
    display.display = shown.append
    ipython.display = display
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    return shown


def test_show_displays_html_in_a_notebook(monkeypatch, capsys):
    sch = tir_mlir.Schedule(tir_mlir.load(MM))
    sch.split(sch.get_loops(sch.get_block("Y"))[1], factors=[None, 4])
    shown = _fake_notebook(monkeypatch)
    sch.show()
    assert capsys.readouterr().out == ""
    assert [kind for kind, _ in shown] == ["HTML", "HTML"]  # the module, the trace
    texts = [t for _, t in shown]
    assert "mm_relu" in texts[0] and "split" in texts[1]
    assert texts[0].startswith(("<div", "<pre"))


def test_show_prints_text_outside_a_notebook(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    tir_mlir.load(MM).show(style="plain")
    assert "def mm_relu(" in capsys.readouterr().out


def test_html_reprs_of_a_built_module_and_an_ndarray():
    lib = tir_mlir.build(tir_mlir.load(MM))
    assert lib._repr_html_() == (
        "<b>Module</b> (1 function)<table><tr><td><code>mm_relu</code></td><td><code>"
        "A: float32[128, 128], B: float32[128, 128], C: float32[128, 128]</code></td></tr>"
        "</table>"
    )
    a = tir_mlir.nd.array(np.arange(3, dtype="int32"))
    assert a._repr_html_() == "<b>NDArray</b> int32[3] on cpu(0)<pre>[0 1 2]</pre>"


@pytest.mark.parametrize(
    "umask, so_mode, json_mode", [(0o022, 0o755, 0o644), (0o077, 0o700, 0o600)]
)
def test_export_library_files_respect_the_umask(tmp_path, umask, so_mode, json_mode):
    lib = tir_mlir.build(tir_mlir.load(MM))
    old = os.umask(umask)
    try:
        lib.export_library(tmp_path / "mm.so")
    finally:
        os.umask(old)
    assert (tmp_path / "mm.so").stat().st_mode & 0o777 == so_mode
    assert (tmp_path / "mm.so.json").stat().st_mode & 0o777 == json_mode
    assert "mm_relu" in tir_mlir.load_module(tmp_path / "mm.so")


class Foreign:
    """Another framework's tensor: only `__dlpack__` / `__dlpack_device__` (here over a numpy
    array's memory, as a torch CPU tensor or a JAX array would give its own)."""

    def __init__(self, a, device=(1, 0)):
        self.a, self.device = a, device

    def __dlpack__(self, **kwargs):
        return self.a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


def test_cpu_dlpack_tensors_are_used_in_place():
    lib = tir_mlir.build(tir_mlir.load(MM))
    rng = np.random.default_rng(0)
    a, b = (rng.random((128, 128), dtype=np.float32) for _ in "ab")
    c = np.zeros((128, 128), np.float32)
    lib["mm_relu"](Foreign(a), Foreign(b), Foreign(c))
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-5)  # written in place
    assert lib.time_evaluator("mm_relu", number=1)(Foreign(a), Foreign(b), Foreign(c)).mean > 0
    with pytest.raises(RuntimeCallError, match="buffer 'A' is a tensor in device memory"):
        lib["mm_relu"](Foreign(a, device=(2, 0)), b, c)
    if importlib.util.find_spec("torch") is not None:  # torch's own CPU tensors
        import torch

        ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.zeros(128, 128)
        lib["mm_relu"](ta, tb, tc)
        np.testing.assert_allclose(tc.numpy(), c, rtol=1e-6)


def test_nd_array_on_cuda_is_never_a_host_array():
    from tir_mlir.runtime.cuda import DeviceArray

    x = np.arange(6, dtype="float32")
    assert isinstance(tir_mlir.nd.array(Foreign(x)), tir_mlir.nd.NDArray)
    for make in (
        lambda: tir_mlir.nd.array(x, tir_mlir.cuda(0)),
        lambda: tir_mlir.nd.empty((6,), "float32", tir_mlir.cuda(0)),
    ):
        try:
            out = make()
        except RuntimeCallError as e:  # no GPU here
            assert "CUDA" in str(e)
        else:
            assert isinstance(out, DeviceArray) and out.shape == (6,)
    with pytest.raises(RuntimeCallError, match="only cuda\\(0\\)"):
        tir_mlir.nd.array(x, tir_mlir.cuda(1))


def test_readme_tvm_lane_is_what_ci_run_tvm_runs():
    readme = (ROOT / "README.md").read_text()
    lane = next(ln for ln in readme.splitlines() if ln.startswith("| TVM lane |"))
    script = (ROOT / ".ci" / "run_tvm").read_text().splitlines()
    assert "pip install -e '.[test,tvm]'" in lane and "pip install -e '.[test,tvm]'" in script
    assert "`pytest tests/differential`" in lane and "pytest -rs tests/differential" in script
    assert '`pytest -m "tvm or not slow"`' in lane
    assert 'pytest -rs -m "tvm or not slow" --ignore=tests/differential' in script
