"""The wheel holds every package and data file that `pip install -e .` makes importable.

`dialect/`, `grammar/` and `passes/` install as `tir_mlir.dialect`, `tir_mlir.grammar` and
`tir_mlir.passes` through `[tool.setuptools.package-dir]`. An editable install finds a subpackage
missing from `packages` anyway, so only a check like this (or a wheel) notices it is gone.
"""

import fnmatch
import importlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent.parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
PACKAGES = CONFIG["packages"]
PACKAGE_DIR = CONFIG.get("package-dir", {})
PACKAGE_DATA = CONFIG.get("package-data", {})
# Top-level source folders and the package each one installs as.
SOURCES = {
    "tir_mlir": "tir_mlir",
    "dialect": "tir_mlir.dialect",
    "grammar": "tir_mlir.grammar",
    "passes": "tir_mlir.passes",
}
DATA_SUFFIXES = (".lark", ".irdl.mlir")


def package_folders():
    """Package name -> folder (relative to ROOT) for every folder holding an __init__.py."""
    out = {}
    for top, pkg in SOURCES.items():
        for init in sorted((ROOT / top).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / top)
            out[".".join([pkg, *rel.parts])] = init.parent.relative_to(ROOT).as_posix()
    return out


def mapped_folder(package):
    """The folder setuptools takes `package` from: the longest package-dir prefix wins."""
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in PACKAGE_DIR:
            return "/".join([PACKAGE_DIR[prefix].rstrip("/"), *parts[n:]])
    return "/".join([PACKAGE_DIR.get("", "").rstrip("/"), *parts]).lstrip("/")


@pytest.mark.parametrize("package,folder", sorted(package_folders().items()))
def test_folder_is_a_listed_package(package, folder):
    assert package in PACKAGES, f"{folder}/ is not in [tool.setuptools] packages as {package!r}"
    assert mapped_folder(package) == folder, (
        f"{package} is taken from {mapped_folder(package)}/, not {folder}/ (package-dir)"
    )


def test_listed_packages_exist():
    folders = package_folders()
    assert sorted(PACKAGES) == sorted(folders), "packages lists a folder with no __init__.py"


@pytest.mark.parametrize(
    "path",
    sorted(
        p.relative_to(ROOT).as_posix()
        for top in SOURCES
        for s in DATA_SUFFIXES
        for p in (ROOT / top).rglob("*" + s)
    ),
)
def test_data_file_is_package_data(path):
    folder, name = path.rsplit("/", 1)
    package = {f: p for p, f in package_folders().items()}[folder]
    patterns = PACKAGE_DATA.get(package, []) + PACKAGE_DATA.get("*", [])
    assert any(fnmatch.fnmatch(name, p) for p in patterns), (
        f"{path} is not matched by [tool.setuptools.package-data] {package!r}"
    )


def test_build_copies_every_file(tmp_path):
    """setuptools' build_py (what a wheel is made of) on a copy of the tree."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    for top in SOURCES:
        shutil.copytree(ROOT / top, src / top, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "lib"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import setuptools; setuptools.setup()",
            "-q",
            "build_py",
            "--build-lib",
            str(out),
        ],
        cwd=src,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    built = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    folders = package_folders()
    want = set()
    for package, folder in folders.items():
        for f in (ROOT / folder).iterdir():
            if f.suffix == ".py" or f.name.endswith(DATA_SUFFIXES):
                want.add("/".join([*package.split("."), f.name]))
    assert want - built == set(), "missing from the built package"
    assert "tir_mlir/grammar/tvmscript.lark" in built
    assert "tir_mlir/dialect/tir.irdl.mlir" in built


def test_installed_layout():
    passes = importlib.import_module("tir_mlir.passes")
    assert Path(passes.__file__).resolve() == (ROOT / "passes" / "__init__.py").resolve()
    from tir_mlir.dialect import IRDL_PATH

    assert IRDL_PATH.is_file() and "irdl.dialect @tir" in IRDL_PATH.read_text()
    from importlib import resources

    assert resources.files("tir_mlir.grammar").joinpath("tvmscript.lark").is_file()
