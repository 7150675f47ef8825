"""The code `T.call_extern` calls: `build(mod, extern_libs=[...])` links it into the library.

Each entry is a path: a shared library (`.so`, linked by name and found again at load time
through an rpath), an object or archive (`.o`, `.a`, copied in), C or C++ source (`.c`, `.cc`,
`.cpp`, `.cxx`, compiled with `cc -O3 -fPIC`, C++ with `c++`), or LLVM IR (`.ll`, `.bc`, compiled
by the shipped `llc`). The files' contents are part of the compile cache key, so editing the C
kernel rebuilds. A symbol that nothing defines fails when the library is loaded, naming it.
"""

import atexit
import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import List, Sequence, Tuple

from tir_mlir.errors import BuildError

SOURCES = {".c": "cc", ".cc": "c++", ".cpp": "c++", ".cxx": "c++"}
# TVM's way to ship the code with the program: a loop annotation holding LLVM IR or C source
# (`s[C].pragma(x, "import_llvm", ll_code)`, `sch.annotate(loop, "pragma_import_c", c_code)`).
PRAGMAS = {"pragma_import_llvm": ".ll", "pragma_import_c": ".c"}
LINKED = (".so", ".o", ".a")
LLVM = (".ll", ".bc")


def _kind(path: Path) -> str:
    return ".so" if path.suffix == ".so" or ".so." in path.name else path.suffix


def _paths(extern_libs) -> List[Path]:
    if isinstance(extern_libs, (str, Path)):
        extern_libs = [extern_libs]
    out = []
    for p in extern_libs:
        path = Path(p).resolve()
        kind = _kind(path)
        if kind not in SOURCES and kind not in LINKED and kind not in LLVM:
            raise BuildError(
                f"extern_libs: {p}: expected a .so, .o, .a, C/C++ source or LLVM IR (.ll, .bc) file"
            )
        if not path.is_file():
            raise BuildError(f"extern_libs: {p} does not exist")
        out.append(path)
    return out


def with_embedded(extern_libs, module) -> List[Path]:
    """`extern_libs` (a path or a list) and the code of the module's import pragmas, each
    written once to a file named by its hash."""
    if isinstance(extern_libs, (str, Path)):
        extern_libs = [extern_libs]
    out = [Path(p) for p in extern_libs or ()]
    from mlir import ir
    from tir_mlir.dialect.ops import Loop
    from tir_mlir.ir.ir_walk import walk_all
    from tir_mlir.ir.user_cache import private_dir

    for f in [o.operation for o in module.body.operations]:
        for op in walk_all(f):
            if not Loop.is_loop(op):
                continue
            for name, value in Loop(op).annotations.items():
                if name in PRAGMAS and isinstance(value, ir.StringAttr):
                    code = value.value
                    path = private_dir() / (
                        hashlib.sha256(code.encode()).hexdigest() + PRAGMAS[name]
                    )
                    if not path.exists():
                        path.write_text(code)
                    out.append(path)
    return out


def cache_key(extern_libs) -> str:
    """What the libraries contribute to the compile cache key: each path and a hash of it."""
    return ";".join(
        f"{p}:{hashlib.sha256(p.read_bytes()).hexdigest()}" for p in _paths(extern_libs or ())
    )


def link_inputs(extern_libs, workdir: Path) -> Tuple[List[str], List[str]]:
    """(files to put on the link line, extra linker flags), compiling sources into `workdir`."""
    files, flags = [], []
    for n, path in enumerate(_paths(extern_libs or ())):
        suffix = _kind(path)
        if suffix in SOURCES:
            obj = workdir / f"extern{n}.o"
            _run([SOURCES[suffix], "-O3", "-fPIC", "-c", str(path), "-o", str(obj)], path)
            files.append(str(obj))
        elif suffix in LLVM:
            from tir_mlir.passes.lowering.cpu_target import LLVM_BIN
            from tir_mlir.passes.lowering.llvm_ir import LLC_FLAGS

            obj = workdir / f"extern{n}.o"
            _run(
                [str(LLVM_BIN / "llc"), *LLC_FLAGS, "-filetype=obj", str(path), "-o", str(obj)],
                path,
            )
            files.append(str(obj))
        else:
            files.append(str(path))
            if suffix == ".so":
                flags.append(f"-Wl,-rpath,{path.parent}")
    return files, flags


def shared_library(extern_libs) -> List[str]:
    """The libraries as shared objects (for MLIR's JIT, which loads .so files only)."""
    paths = _paths(extern_libs or ())
    if all(_kind(p) == ".so" for p in paths):
        return [str(p) for p in paths]
    if shutil.which("cc") is None:
        raise BuildError(
            "extern_libs: compiling or linking non-.so libraries needs a C compiler (cc)"
        )
    workdir = Path(tempfile.mkdtemp(prefix="tir-mlir-extern-"))
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)  # loaded until then
    files, flags = link_inputs(paths, workdir)
    out = workdir / "extern.so"
    _run(["cc", "-shared", "-o", str(out), *files, *flags], paths[0])
    return [str(out)]


def _run(cmd: Sequence[str], path: Path):
    try:
        p = subprocess.run(list(cmd), capture_output=True, text=True)
    except OSError as e:
        raise BuildError(f"extern_libs: cannot run {cmd[0]} for {path}: {e}") from None
    if p.returncode:
        raise BuildError(f"extern_libs: {Path(cmd[0]).name} failed on {path}: {p.stderr[-2000:]}")
