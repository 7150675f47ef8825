"""Differential parse fuzzer: malformed TVMScript, accepted or rejected by tir-mlir and by TVM
0.21's `tvm.script.from_source`. Every input must give a module or a located TIRParseError
(never another exception, a signal or a hang), and both must decide alike unless the
difference is a documented, deliberate one (docs/tvm_compat.md, "Front end").

    python tests/parse_differential.py 2000          # long mode: report of N inputs
    python tests/parse_differential.py 2000 --show   # ... printing each disagreement
    python tests/parse_differential.py 2000 --seed 7 # another sample

The test suite runs a fixed-seed slice (tests/test_parse_tvm_differential.py).
"""
import contextlib
import json
import random
import re
import signal
import subprocess
import sys
from pathlib import Path

import tir_mlir
from tir_mlir import TIRParseError

DATA = Path(__file__).parent / "data"
GOLDEN = Path(__file__).parent / "golden"
TOKEN = re.compile(r"\s+|\w+|.", re.S)
SOUP = ["T.", "block", "(", ")", "[", "]", ":", ",", "=", "+", "*", "//", "%", "for", "in", "with",
        "if", "else", "\n", "    ", "\t", "A", "vi", "i", "0", "1.0", '"Y"', "T.grid",
        "T.axis.remap", '"SR"', "T.float32", "range", "def", "None", "and", "not", "T.Buffer",
        "(128,)", '"float32"', "T.init()", "+=", "T.where", "-", "**", "1e309", "09", "1__0",
        "0", "// 0", "% 0", "x=1", "T.reads", "T.writes", "vj", "k", "B", "C", "2**40", "9" * 30,
        'T.float32("inf")', "T.max", "T.min", "lambda", "pass", "#", "'", '"', "\\"]


def seeds():
    files = sorted(DATA.glob("*.tir")) + sorted(GOLDEN.glob("*.tir"))
    return [p.read_text() for p in files]


def mutate(text: str, rng: random.Random) -> str:
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
            toks[i] = rng.choice(SOUP)
        else:
            t = toks[i]
            k = rng.randint(0, len(t))
            toks[i] = t[:k] + chr(rng.randint(32, 126)) + t[k:]
    return "".join(toks)


def inputs(n: int, seed: int = 0):
    rng = random.Random(seed)
    base = seeds()
    for _ in range(n):
        yield mutate(rng.choice(base), rng)


class Hang(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: int):
    def on_alarm(*_):
        raise Hang()
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def ours(text: str):
    """(accepted, message): any exception but TIRParseError is a failure of its own."""
    try:
        with time_limit(20):
            tir_mlir.parse(text, "fuzz.tir")
        return True, ""
    except TIRParseError as e:
        if e.loc is None or e.loc.file != "fuzz.tir":
            raise AssertionError(f"error without a location: {e}") from None
        return False, e.message


_WORKER = """
import contextlib, io, json, sys
import tvm
for line in sys.stdin:
    text = json.loads(line)
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            tvm.script.from_source(text)
            ok = True
        except Exception:
            ok = False
    print(json.dumps(ok), flush=True)
"""


class TvmOracle:
    """TVM's parser in a worker process: TVM itself segfaults on some malformed programs
    (counted as a rejection), and the worker is restarted after that."""

    def __init__(self):
        self.proc = None

    def _start(self):
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)

    def accepts(self, text: str) -> bool:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(text) + "\n")
            self.proc.stdin.flush()
            with time_limit(60):
                line = self.proc.stdout.readline()
        except (BrokenPipeError, Hang):
            line = ""
        if not line:                 # TVM crashed or hung on this input
            self.close()
            return False
        return json.loads(line)

    def close(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


# Deliberate differences (docs/tvm_compat.md, "Front end"): what we reject and TVM accepts,
# recognised by our error message; and what we accept and TVM rejects, by a test of the text.
WE_REJECT = {
    "unsupported": re.compile(r"not supported|symbolic|scalar parameter|vector dtype|"
                              r"is not affine|not affine|needs a positive constant"),
    "redundant or unused": re.compile(r"given twice|more than once|already defined|"
                                      r"defined twice|shadows"),
    "only the standard dtypes (TVM accepts any bit width)": re.compile(r"unknown dtype"),
    "a statement that only computes a value is an error": re.compile(r"has no effect"),
    "a def/class without its decorator": re.compile(r"needs the decorator"),
    "zero-extent block iterators": re.compile(r"empty or malformed iterator domain"),
    "check TVM leaves to later passes": re.compile(
        r"does not fit|out of range|outside|not well-formed|unknown storage scope|"
        r"bad indentation|must be|expects|expected"),
}


def we_accept_reason(text: str):
    """Why an input TVM rejects is accepted here, when the difference is deliberate."""
    if re.search(r"^\s*(import|from)\s", text, re.M):
        return "import statements are skipped"
    if re.search(r"@tvm\.script\.tir\b|tir\.block\(\[|T\.Buffer\[|@tvm\.script\.ir_module", text):
        return "older TVMScript syntaxes (2021 @tvm.script.tir, tutorial T.Buffer[...])"
    return None


def classify(text: str, tvm: TvmOracle):
    """'agree', 'crash' (with message), or the kind of disagreement."""
    try:
        ok, msg = ours(text)
    except Hang:
        return "hang", ""
    except Exception as e:     # noqa: BLE001 - reported
        return "crash", f"{type(e).__name__}: {e}"
    theirs = tvm.accepts(text)
    if ok == theirs:
        return "agree", ""
    if ok:
        why = we_accept_reason(text)
        return ("documented", why) if why else ("we accept, TVM rejects", "")
    for why, pattern in WE_REJECT.items():
        if pattern.search(msg):
            return "documented", why
    return "we reject, TVM accepts", msg


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 2000
    show = "--show" in argv
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 0
    counts = {}
    tvm = TvmOracle()
    for k, text in enumerate(inputs(n, seed)):
        kind, msg = classify(text, tvm)
        counts[kind] = counts.get(kind, 0) + 1
        if kind not in ("agree", "documented") and show:
            print(f"--- #{k} {kind}: {msg}\n{text}\n", flush=True)
    tvm.close()
    print(counts)
    return 0 if not set(counts) - {"agree", "documented"} else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
