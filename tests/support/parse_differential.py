"""The adversarial run: malformed TVMScript (tests/support/adversarial.py: mutated valid programs,
truncations, hostile tokens, odd files) through tir-mlir's API and CLI, and through TVM 0.21's
`tvm.script.from_source`. Every input must give a module or a located error (never a
traceback, a signal or a hang; an accepted program must also print, re-parse, build and run
with bounds checks), and both must decide alike unless the difference is a documented,
deliberate one (docs/tvm_compat.md, "Front end").

    python tests/support/parse_differential.py 2000             # long mode: API and TVM, N inputs
    python tests/support/parse_differential.py 2000 --cli       # ... through the CLI as well
    python tests/support/parse_differential.py 2000 --show      # ... printing each failure
    python tests/support/parse_differential.py 2000 --seed 7    # another sample
    python tests/support/parse_differential.py 2000 --mlir      # mutated tir-dialect MLIR input instead
    python tests/support/parse_differential.py 5000 --time-limit 480   # stop after 8 minutes

It prints the count of each outcome (with --time-limit, also how many inputs it reached) and
exits 1 if any is not 'agree' or 'documented'.
The test suite runs a fixed-seed slice (tests/differential/test_parse_tvm_differential.py).
"""

import re
import sys
import time

from adversarial import OURS_WORKER, TVM_WORKER, Worker, inputs, mlir_inputs

# Deliberate differences (docs/tvm_compat.md, "Front end"): what we reject and TVM accepts,
# recognised by our error message; and what we accept and TVM rejects, by a test of the text.
WE_REJECT = {
    "not supported here": re.compile(
        r"not supported|symbolic|scalar parameter|vector dtype|is not affine|"
        r"needs a positive constant|T\.call_extern|T\.address_of|unknown function 'T\.|"
        r"is never bound by T\.match_buffer|T\.axis\.\w+ cannot be used inside an expression|"
        r"extent must be a constant"
    ),
    "given twice or shadowed": re.compile(
        r"given twice|more than once|already defined|"
        r"defined twice|shadows|duplicate"
    ),
    "only the standard dtypes": re.compile(r"unknown dtype"),
    "a statement that only computes a value": re.compile(r"has no effect"),
    "a def/class without its decorator": re.compile(r"needs the decorator"),
    "an unknown decorator": re.compile(r"unexpected decorator"),
    "zero-extent block iterators and loops": re.compile(
        r"empty or malformed iterator domain|"
        r"extent must be positive|"
        r"buffer dimensions must be positive"
    ),
    "values of the wrong kind (a string index, a float shape)": re.compile(
        r"expected a value, found the string|must be an integer constant|"
        r"an index must be an integer|found the literal|is not a value here|"
        r"an attribute value must be a constant|expects buffer regions"
    ),
    "checks TVM leaves to later passes": re.compile(
        r"does not fit|out of range|not well-formed|unknown storage scope|division by zero|"
        r"larger than the|outside the buffer|must be True, False or an integer|"
        r"unknown thread tag"
    ),
    "Python that is not TVMScript (TVM's parser evaluates it)": re.compile(
        r"undefined variable '(__import__|eval|exec|open|print|globals)'|'lambda'|"
        r"unknown function '(__import__|eval|exec|open|print|globals)'|"
        r"is Python, not TVMScript|only T\.\* functions can be called"
    ),
}


def we_accept_reason(text: str):
    """Why an input TVM rejects is accepted here, when the difference is deliberate."""
    if re.search(r"^\s*(import|from)\s", text, re.M):
        return "import statements are skipped"
    if re.search(r"""^[rRuU]?["']""", text, re.M):
        return "a string statement outside a function (a docstring) is skipped"
    if re.search(r"@tvm\.script\.tir\b|tir\.block\(\[|T\.Buffer\[|@tvm\.script\.ir_module", text):
        return "older TVMScript syntaxes (2021 @tvm.script.tir, tutorial T.Buffer[...])"
    return None


class Oracles:
    """tir-mlir and TVM, each in its worker process."""

    def __init__(self, tvm=True, timeout=60):
        self.ours = Worker(OURS_WORKER, timeout)
        self.tvm = Worker(TVM_WORKER, timeout) if tvm else None

    def close(self):
        self.ours.close()
        if self.tvm is not None:
            self.tvm.close()


def classify(text: str, oracles: Oracles, mode: str = "api"):
    """(outcome, detail): 'agree', 'documented' (with the reason), 'crash', 'signal', 'hang',
    or a disagreement with TVM ('we accept, TVM rejects' / 'we reject, TVM accepts')."""
    r = oracles.ours.ask({"mode": mode, "text": text})
    if "hang" in r:
        return "hang", ""
    if "signal" in r:
        return "signal", f"signal {r['signal']} (exit {r['exit']})"
    if "crash" in r:
        return "crash", r["crash"]
    if oracles.tvm is None:
        return "agree", ""
    t = oracles.tvm.ask({"text": text})
    theirs = bool(t.get("accepted"))  # TVM crashing or hanging on an input: a rejection
    if r["accepted"] == theirs:
        return "agree", ""
    if r["accepted"]:
        why = we_accept_reason(text)
        return ("documented", why) if why else ("we accept, TVM rejects", "")
    for why, pattern in WE_REJECT.items():
        if pattern.search(r["message"]):
            return "documented", why
    return "we reject, TVM accepts", r["message"]


def run(n, seed=0, modes=("api",), tvm=True, show=False, time_limit=None):
    """Counts of each (mode, outcome); failures as (index, kind, mode, outcome, detail, text).
    Mode "mlir": mutated MLIR input (through the API, nothing to compare with).
    `time_limit` (seconds): no new input after it."""
    counts, failures = {}, []
    deadline = None if time_limit is None else time.monotonic() + time_limit
    oracles = Oracles(tvm and modes != ("mlir",))
    source = mlir_inputs if modes == ("mlir",) else inputs
    try:
        for k, (kind, text) in enumerate(source(n, seed)):
            if deadline is not None and time.monotonic() > deadline:
                break
            for mode in modes:
                outcome, detail = classify(
                    text, oracles if mode == "api" else _no_tvm(oracles), mode
                )
                key = f"{mode}: {outcome}" + (f" ({detail})" if outcome == "documented" else "")
                counts[key] = counts.get(key, 0) + 1
                if outcome not in ("agree", "documented"):
                    failures.append((k, kind, mode, outcome, detail, text))
                    if show:
                        print(
                            f"--- #{k} ({kind}) {mode} {outcome}: {detail}\n{text[:3000]}\n",
                            flush=True,
                        )
    finally:
        oracles.close()
    return counts, failures


class _no_tvm:
    """The CLI pass: TVM was already asked in the API pass."""

    def __init__(self, oracles):
        self.ours, self.tvm = oracles.ours, None


def main(argv):
    n = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 2000
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 0
    modes = ("api", "cli") if "--cli" in argv else ("mlir",) if "--mlir" in argv else ("api",)
    try:
        import tvm  # noqa: F401

        has_tvm = True
    except ImportError:
        has_tvm = False
        print("TVM is not installed: checking for crashes only")
    limit = float(argv[argv.index("--time-limit") + 1]) if "--time-limit" in argv else None
    counts, failures = run(n, seed, modes, has_tvm, "--show" in argv, limit)
    for key in sorted(counts):
        print(f"{counts[key]:6d}  {key}")
    reached = sum(c for key, c in counts.items() if key.startswith(modes[0] + ":"))
    print(f"{reached} of {n} inputs checked")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
