"""Adversarial inputs and the isolated workers that feed them to tir-mlir and to TVM.

Inputs (`inputs(n, seed)`, deterministic): valid programs (tests/data, tests/golden) with
token-level mutations (delete, duplicate, swap, replace by a TVMScript token), line-level ones
(delete, duplicate, swap, re-indent), truncation at any character, and hostile tokens (Python
that TVMScript must never run, huge and odd literals, control characters, deep nesting, absurd
shapes); plus a fixed list of whole-file oddities. `mlir_inputs(n, seed)`: the seed programs
as tir-dialect MLIR, token-mutated (for `.mlir` input).

Each side runs in a worker process (`Worker`), so a signal or a hang is recorded against the
input that caused it instead of ending the run. tests/support/parse_differential.py drives them.
"""

import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
TESTS = HERE.parent
TOKEN = re.compile(r"\s+|\w+|.", re.S)
SOUP = [
    "T.",
    "block",
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    "=",
    "+",
    "*",
    "//",
    "%",
    "for",
    "in",
    "with",
    "if",
    "else",
    "\n",
    "    ",
    "\t",
    "A",
    "vi",
    "i",
    "0",
    "1.0",
    '"Y"',
    "T.grid",
    "T.axis.remap",
    '"SR"',
    "T.float32",
    "range",
    "def",
    "None",
    "and",
    "not",
    "T.Buffer",
    "(128,)",
    '"float32"',
    "T.init()",
    "+=",
    "T.where",
    "-",
    "**",
    "1e309",
    "09",
    "1__0",
    "0",
    "// 0",
    "% 0",
    "x=1",
    "T.reads",
    "T.writes",
    "vj",
    "k",
    "B",
    "C",
    "2**40",
    "9" * 30,
    'T.float32("inf")',
    "T.max",
    "T.min",
    "lambda",
    "pass",
    "#",
    "'",
    '"',
    "\\",
]
# Harmless if a parser does evaluate them (TVM's does evaluate some Python): nothing is written.
HOSTILE = [
    "__import__('os').getpid()",
    "eval('1')",
    "exec('x = 1')",
    "open('/dev/null')",
    "().__class__.__bases__[0].__subclasses__()",
    "globals()",
    "lambda: 0",
    "yield",
    "await x",
    "global x",
    "nonlocal x",
    "del A",
    "assert False",
    "raise",
    "try:",
    "except:",
    "async",
    "print(1)",
    "\x00",
    "\r",
    "\x0c",
    "\ufeff",
    "\u2028",
    "é",
    "变量",
    "𝔸",
    "\\\n",
    ";",
    "...",
    "1j",
    "0x10",
    "0b2",
    "0o8",
    "1_000",
    "1e-400",
    "-0.0",
    "nan",
    "inf",
    "2**63",
    "-2**63",
    "(" * 300,
    "[" * 300,
    ")" * 50,
    "x" * 5000,
    "9" * 4400,
    '"""',
    "'''",
    'f"{A}"',
    'b"x"',
    'r"\\d"',
    "u'x'",
    '"\\x4"',
    '"\\N{BULLET}"',
    ":=",
    "*A",
    "**A",
    'T.Buffer((2**31,), "float32")',
    'T.Buffer((0,), "float32")',
    'T.Buffer((-1,), "float32")',
    "T.int32(2**40)",
    "T.float16(70000)",
    "T.bool(2)",
    "T.uint8(-1)",
    "T.int8(128)",
    "T.grid(*range(3))",
    "T.serial(-5)",
    "T.serial(0, -1)",
    "T.serial(1e9)",
    "T.serial(2**40)",
    "@T.prim_func",
    "@I.ir_module",
    "class C:",
    "def f():",
    "if True:",
    "else:",
    "elif x:",
    "while True:",
    "for x in A:",
    "return A",
    'T.alloc_buffer((10**12,), "float32")',
    'T.alloc_buffer((1 << 40,), "int8")',
    "T.match_buffer",
    "T.axis.spatial(0, i)",
    "T.axis.reduce(-1, i)",
    "T.evaluate(0)",
    "T.call_extern('f')",
    "T.address_of(A[0])",
    'T.block_attr({"x": 1e400})',
    'T.func_attr({"global_symbol": 1})',
    "# comment",
    "\t",
    "    " * 40,
    "T.Cast('float32', A)",
    "T.if_then_else(1, 2)",
    "T.exp(1)",
    "A[0:0]",
    "A[-1]",
    "A[2**40]",
    "T.reads(A[0:2**40])",
    "T.writes()",
    "T.where(1 // 0)",
    "vi // 0",
]
# Whole files that are odd as a whole.
ODD_FILES = [
    "",
    "\n" * 1000,
    "\ufeff",
    "\x00" * 100,
    "# only a comment\n",
    "pass\n",
    "@T.prim_func\n",
    "@T.prim_func\ndef f():\n",
    "@T.prim_func\ndef f():\n    pass\n",
    "(" * 10000,
    "[" * 10000,
    "A" * 200000,
    "@I.ir_module\nclass M:\n    pass\n",
    "\r\n".join(
        [
            "@T.prim_func",
            'def f(A: T.Buffer((4,), "float32")):',
            "    for i in range(4):",
            '        with T.block("B"):',
            "            vi = T.axis.spatial(4, i)",
            "            A[vi] = 1.0",
            "",
        ]
    ),
    "\r".join(["@T.prim_func", 'def f(A: T.Buffer((4,), "float32")):', "    pass", ""]),
    "\udcff\udcfe# not UTF-8 (bytes 0xff 0xfe in a file)\n",
]


def seeds():
    files = sorted((TESTS / "data").glob("*.tir")) + sorted((TESTS / "golden").glob("*.tir"))
    return [p.read_text() for p in files]


def mutate_tokens(text: str, rng: random.Random, pool=SOUP) -> str:
    toks = TOKEN.findall(text)
    for _ in range(rng.randint(1, 3)):
        if not toks:
            break
        i = rng.randrange(len(toks))
        op = rng.choice(["delete", "duplicate", "swap", "replace", "replace", "char"])
        if op == "delete":
            del toks[i]
        elif op == "duplicate":
            toks.insert(i, toks[i])
        elif op == "swap":
            j = rng.randrange(len(toks))
            toks[i], toks[j] = toks[j], toks[i]
        elif op == "replace":
            toks[i] = rng.choice(pool)
        else:
            t = toks[i]
            k = rng.randint(0, len(t))
            toks[i] = t[:k] + chr(rng.randint(32, 126)) + t[k:]
    return "".join(toks)


def mutate_lines(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(1, 2)):
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        op = rng.choice(["delete", "duplicate", "swap", "indent", "dedent", "tab"])
        if op == "delete":
            del lines[i]
        elif op == "duplicate":
            lines.insert(j, lines[i])
        elif op == "swap":
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "indent":
            lines[i] = "    " + lines[i]
        elif op == "dedent":
            lines[i] = lines[i][4:] if lines[i].startswith("    ") else lines[i].lstrip()
        else:
            lines[i] = lines[i].replace("    ", "\t", 1)
        if not lines:
            break
    return "\n".join(lines)


def truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randrange(len(text) + 1)]


def hostile(text: str, rng: random.Random) -> str:
    toks = TOKEN.findall(text)
    i = rng.randrange(len(toks) + 1)
    if rng.random() < 0.5 and i < len(toks):
        toks[i] = rng.choice(HOSTILE)
    else:
        toks.insert(i, rng.choice(HOSTILE))
    return "".join(toks)


KINDS = {"tokens": mutate_tokens, "lines": mutate_lines, "truncate": truncate, "hostile": hostile}


def mlir_inputs(n: int, seed: int = 0):
    """n (kind, text) pairs of tir-dialect MLIR: the seed programs as MLIR, token-mutated."""
    import tir_mlir

    rng = random.Random(seed)
    base = [tir_mlir.parse(t).mlir() for t in seeds()]
    pool = [
        "index",
        "f32",
        "i64",
        "memref<0xf32>",
        "memref<4xindex>",
        "affine_map<(d0) -> ()>",
        "[[0, 0]]",
        '["X"]',
        '"tir.block"',
        "gpu.yield",
        "0",
        "-1",
        "%arg0",
        "}",
        "{",
    ]
    for _ in range(n):
        yield "mlir", mutate_tokens(rng.choice(base), rng, pool + SOUP)


def inputs(n: int, seed: int = 0):
    """n (kind, text) pairs: the odd files first, then mutations of random seed programs."""
    rng = random.Random(seed)
    base = seeds()
    for k in range(n):
        if k < len(ODD_FILES):
            yield "odd", ODD_FILES[k]
            continue
        kind = rng.choice(["tokens", "tokens", "lines", "truncate", "hostile", "hostile"])
        yield kind, KINDS[kind](rng.choice(base), rng)


class Worker:
    """A Python process answering one JSON line per JSON line; a crash or a reply later than
    `timeout` seconds is reported (as {"signal": n} / {"hang": True}) and the process
    restarted for the next input."""

    def __init__(self, code: str, timeout: float):
        self.code, self.timeout, self.proc = code, timeout, None

    def ask(self, request) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", self.code],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                cwd=HERE,
            )
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died()
        line = _readline(self.proc, self.timeout)
        if line is None:
            self.close()
            return {"hang": True}
        return json.loads(line) if line else self._died()

    def _died(self):
        rc = self.proc.wait()
        self.proc = None
        return {"signal": -rc if rc < 0 else 0, "exit": rc}

    def close(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def _readline(proc, timeout):
    """A line from proc's stdout, "" at end of file, None after `timeout` seconds."""
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not sel.select(left):
            return None
        return proc.stdout.readline()


# Both workers answer on a copy of fd 1 and point fd 1 at stderr, so that nothing the code
# under test prints (LLVM, compiled code) can corrupt the replies.
TVM_WORKER = """
import contextlib, io, json, os, sys
out = os.fdopen(os.dup(1), "w"); os.dup2(2, 1)
import tvm
from fault_handlers import reset_after_tvm
reset_after_tvm()          # a crash in TVM ends the worker instead of deadlocking it
for line in sys.stdin:
    text = json.loads(line)["text"]
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            tvm.script.from_source(text)
            ok = True
        except Exception:
            ok = False
    print(json.dumps({"accepted": ok}), file=out, flush=True)
"""

# tir-mlir's side: the API (parse; for an accepted program also print, re-parse, and build and
# run with bounds checks) or the CLI (the same through `tir-mlir parse`/`run --bounds-check`).
OURS_WORKER = """
import json, os, re, sys, tempfile
out = os.fdopen(os.dup(1), "w"); os.dup2(2, 1)
import tir_mlir
from tir_mlir import TIRError, TIRParseError
from click.testing import CliRunner
from tir_mlir.cli import main
from tir_mlir.runtime.run_program import run_program
from tir_mlir.frontend.mlir_input import parse_mlir

LOCATED = re.compile(r"^\\S.*:\\d+:\\d+: error: ", re.M)
MAX_WORK = 10 ** 7       # block instances: an accepted program is run only up to this size

def work(mod):
    from tir_mlir.dialect.ops import Loop
    from tir_mlir.ir.ir_walk import walk
    total = 0
    for op in walk(mod.module.operation):
        if op.name == "tir.block":
            n, p = 1, op.parent
            while p is not None and p.name != "func.func":
                if p.name == "affine.for":
                    n *= Loop(p).extent
                p = p.parent
            total += n
    return total

def api(text, mlir=False):
    try:
        mod = (parse_mlir if mlir else tir_mlir.parse)(text, "fuzz.tir")
    except TIRParseError as e:
        if e.loc is None or e.loc.file != "fuzz.tir":
            return {"crash": f"error without a location: {e}"}
        return {"accepted": False, "message": e.message}
    except Exception as e:
        return {"crash": f"{type(e).__name__}: {e}"}
    try:
        printed = mod.script()
        if tir_mlir.parse(printed, "printed.tir").script() != printed:
            return {"crash": "the printed program prints differently after a re-parse"}
    except Exception as e:
        return {"crash": f"printed output does not re-parse: {type(e).__name__}: {e}"}
    try:
        for _ in run_program(mod, debug=True) if work(mod) <= MAX_WORK else ():
            pass
    except TIRError:
        pass            # a located run-time error (out of bounds, ...) is a fine answer
    except Exception as e:
        return {"crash": f"build/run: {type(e).__name__}: {e}"}
    return {"accepted": True, "message": ""}

def cli(data):
    fd, path = tempfile.mkstemp(suffix=".tir")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    try:
        commands = [["parse", path], ["parse", "--emit", "mlir", path]]
        accepted = None
        while commands:
            args = commands.pop(0)
            r = CliRunner().invoke(main, args)
            out = r.output
            if r.exit_code not in (0, 1) or "Traceback" in out or "internal error" in out:
                return {"crash": f"{' '.join(args[:-1])}: exit {r.exit_code}: {out[-600:]}"}
            if r.exit_code == 1 and not LOCATED.search(out):
                return {"crash": f"{' '.join(args[:-1])}: error without a location: {out[-300:]}"}
            if args[0] == "parse" and accepted is None:
                accepted = r.exit_code == 0
                if accepted and work(tir_mlir.load(path)) <= MAX_WORK:
                    commands.append(["run", "--bounds-check", path])
        return {"accepted": accepted, "message": ""}
    finally:
        os.unlink(path)

for line in sys.stdin:
    req = json.loads(line)
    if req["mode"] in ("api", "mlir"):
        reply = api(req["text"], req["mode"] == "mlir")
    else:
        reply = cli(req["text"].encode("utf-8", "surrogateescape"))
    print(json.dumps(reply), file=out, flush=True)
"""
