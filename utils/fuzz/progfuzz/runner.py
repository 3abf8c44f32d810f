"""Runs one program through dist-run and classifies the outcome.

The case file is the program's MLIR with one `// EXPECT result<k> = ...`
line per result (the NumPy reference, program.expect_lines). The comparison
is utils/e2e/check_shards.py's own (imported): the expected global values
come from those lines, every rank's padded shard from its block semantics.

Outcome classes, worst first:
  wrong-result  dist-run ran and some rank's result differs from NumPy
  crash         the compiler or a rank died (signal, assertion, stack
                dump, a rank failing at run time)
  invalid-ir    the compiler emitted an internal error, a verifier error or
                a legalization failure on a program dist-opt accepts
  timeout       compiling or running took longer than the limit
  refusal       a located "cannot be partitioned/localized/lowered" error on
                a valid program (semantics §6 op set)
  slow          right, but compiling and running took more than `slow`
                seconds (a program of a few hundred elements normally
                takes about one)
  pass
  fuzzer-error  the fuzzer's own fault: dist-opt rejects the generated
                program, or the reference cannot be evaluated (not a
                compiler failure; reported separately)
"""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "utils", "e2e"))
import check_shards  # noqa: E402  (the lit suite's independent checker)

from .program import TOPOLOGY_PREFIX, emit_mlir, expect_lines, topology_of  # noqa: E402

CLASSES = ["pass", "wrong-result", "crash", "invalid-ir", "timeout", "refusal", "slow",
           "fuzzer-error"]
FAILURES = ["wrong-result", "crash", "invalid-ir", "timeout", "refusal", "slow"]

# Failures already reported, recognised by their message: (name, class,
# pattern of the detail). A run counts them apart from new ones. Wrong
# results have no message to match; their known causes are feature
# switches instead (generate.DEFAULT_OFF).
KNOWN = [
    ("permute-no-axes", "invalid-ir", r"'dist\.permute' op requires at least one mesh axis"),
    # one value returned twice (here: two copies of it that fold into one)
    ("return-twice", "crash", r"promoteBufferResultsToOutParams"),
]

REFUSAL_RE = re.compile(r"cannot be (partitioned|localized|lowered)|cannot plan")
CRASH_RE = re.compile(r"PLEASE submit a bug report|Stack dump|Assertion .* failed|"
                      r"exited on signal|Segmentation fault|Aborted|terminate called|"
                      r"AddressSanitizer|runtime error:")
ERROR_RE = re.compile(r"^(?:[^:\s]+:\d+:\d+: |<unknown>:0: |loc\([^)]*\): )?error: (.*)$", re.M)


def find_tools(bin_dir=None):
    """The directory holding dist-run and dist-opt: --bin, else PATH (lit
    puts the build's tools first), else the build/bin of this checkout."""
    if bin_dir:
        return bin_dir
    found = shutil.which("dist-run")
    if found:
        return os.path.dirname(found)
    return os.path.join(ROOT, "build", "bin")


def case_text(prog, header=()):
    return emit_mlir(prog, list(header) + expect_lines(prog))


def signature(cls, output):
    """A failure's identity for the minimizer: the class, and for compiler
    errors the first error message with names and numbers blurred."""
    if cls in ("wrong-result", "timeout", "pass", "slow"):
        return cls
    m = ERROR_RE.search(output)
    text = m.group(1) if m else ""
    if cls == "crash":
        a = re.search(r"Assertion `([^']*)' failed", output)
        if a:
            text = a.group(1)
        elif "exited on signal" in output or "job failed" in output:
            text = "rank failed"
        elif m is None:
            text = "crash"
    text = re.sub(r"tensor<[^>]*(<[^>]*>[^>]*)*>", "T", text)
    text = re.sub(r"%[\w.]+", "%v", text)
    text = re.sub(r"\d+", "N", text)
    text = re.sub(r'"[^"]*"', '"A"', text)
    return f"{cls}: {text[:160]}"


class Outcome:
    def __init__(self, cls, detail="", output="", seconds=0.0):
        self.cls, self.detail, self.output, self.seconds = cls, detail, output, seconds
        self.known = None
        for name, kcls, pattern in KNOWN:
            if cls == kcls and re.search(pattern, detail):
                self.known = name

    @property
    def signature(self):
        if self.cls == "wrong-result":
            return "wrong-result"
        return signature(self.cls, self.output)


def _run(cmd, timeout, cwd=None):
    """(returncode or None on timeout, combined output)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            cwd=cwd, start_new_session=True, text=True, errors="replace")
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out


def reference_values(text, input_spec):
    """check_shards' reading of the case: (entry, {k: global value}); the
    evaluation of the EXPECT lines with the inputs dist-run will feed."""
    _, functions = check_shards.parse_program(text)
    expect = check_shards.parse_expectations(text)
    entry = [f for f in functions.values() if f.public][0]
    seed = int(input_spec.split(":")[1])
    inputs = [check_shards.global_input(t, "random", seed) for t in entry.args]
    wanted = {}
    with check_shards.np.errstate(all="ignore"):
        for k, tensor in enumerate(entry.results):
            wanted[k] = check_shards.evaluate_expectation(k, expect[k], tensor, inputs)
    return entry, wanted


def compare(entry, wanted, dump_dir):
    errors = []
    with check_shards.np.errstate(all="ignore"):
        for k, tensor in enumerate(entry.results):
            check_shards.check_result(k, tensor, wanted[k], dump_dir, errors, computed=True)
    return errors


def mutate(wanted):
    """Spoils result 0's first expected element (the fuzzer's self-test:
    every program must then come out wrong-result)."""
    v = wanted[0]
    if v.dtype == bool:
        v.flat[0] = not v.flat[0]
    else:
        v.flat[0] = v.flat[0] + 1 + 2 * abs(v.flat[0])


# The lowerings a program can be compiled with (docs/fuzzing.md): each is
# dist-run's flags. `--lowerings` of program_fuzzer.py names a list of them.
LOWERINGS = {
    # products through the runtime's GEMM, the rest fused and vectorized
    "default": [],
    # every op as the scalar loops linalg lowers it to
    "loops": ["--contractions", "loops", "--compute", "loops"],
    # the fused vector code with vectors of 8 bytes and blocks of 8 elements:
    # the fuzzer's small tensors go through every tiling path (partial
    # reductions, peeled remainders, blocks of rows) that real sizes take
    "narrow": ["--vector-bytes", "8", "--row-tile-elements", "8"],
}


def parse_lowerings(text):
    names = [t.strip() for t in (text or "default").split(",") if t.strip()]
    for name in names:
        if name not in LOWERINGS:
            raise ValueError(f"unknown lowering '{name}' (have: {', '.join(LOWERINGS)})")
    return names


def run_case(text, world, input_seed, tools, timeout=60, slow=30, workdir=None, keep=None,
             mutate_reference=False, lowerings=("default",)):
    """Runs the case text on `world` ranks under each lowering and
    classifies it (the worst outcome; a failure names its lowering unless
    it is the default). `keep`: a folder to copy the case into."""
    start = time.time()
    input_spec = f"random:{input_seed}"
    tmp = tempfile.mkdtemp(prefix="progfuzz-", dir=workdir)
    try:
        case = os.path.join(tmp, "case.mlir")
        with open(case, "w") as f:
            f.write(text)
        try:
            entry, wanted = reference_values(text, input_spec)
            if mutate_reference:
                mutate(wanted)
        except Exception as e:  # the reference is the fuzzer's
            return Outcome("fuzzer-error", f"reference: {type(e).__name__}: {e}", "", time.time() - start)
        rc, out = _run([os.path.join(tools, "dist-opt"), case, "-o", os.devnull], timeout)
        if rc != 0:
            return Outcome("fuzzer-error", "dist-opt rejects the program: " + first_error(out),
                           out, time.time() - start)
        outputs = []
        for lowering in lowerings:
            dump = os.path.join(tmp, "dump-" + lowering)
            outcome = _run_lowering(case, text, world, input_spec, tools, timeout, tmp, dump,
                                    LOWERINGS[lowering], entry, wanted, start)
            outputs.append(outcome.output)
            if outcome.cls != "pass":
                if lowering != "default":
                    outcome.detail = f"[--lowerings {lowering}] {outcome.detail}"
                return outcome
        seconds = time.time() - start
        if seconds > slow * len(lowerings):
            return Outcome("slow", f"{seconds:.0f} s (more than {slow} s per lowering)",
                           "\n".join(outputs), seconds)
        return Outcome("pass", "", "\n".join(outputs), seconds)
    finally:
        if keep:
            os.makedirs(keep, exist_ok=True)
            for name in ("case.mlir",):
                if os.path.exists(os.path.join(tmp, name)):
                    shutil.copy(os.path.join(tmp, name), os.path.join(keep, name))
        shutil.rmtree(tmp, ignore_errors=True)


def _run_lowering(case, text, world, input_spec, tools, timeout, tmp, dump, flags, entry,
                  wanted, start):
    """One dist-run of the case with `flags`, compared with the reference."""
    cmd = [os.path.join(tools, "dist-run"), "--np", str(world), "--timeout", str(timeout),
           "--input", input_spec, case, "--dump", dump] + list(flags)
    topology = topology_of(text)
    if topology is not None:
        # The program's own topology line (the `device` feature).
        path = os.path.join(tmp, "topology.json")
        with open(path, "w") as f:
            f.write(topology)
        cmd += ["--topology", path]
    # dist-run's --timeout bounds the job; compiling and starting, here.
    rc, out = _run(cmd, timeout + 30)
    seconds = time.time() - start
    if rc is None or "did not finish within" in out:
        return Outcome("timeout", f"no result within {timeout} s", out, seconds)
    if rc != 0:
        return classify_failure(rc, out, seconds)
    try:
        errors = compare(entry, wanted, dump)
    except Exception as e:
        return Outcome("fuzzer-error", f"compare: {type(e).__name__}: {e}", out, seconds)
    if errors:
        return Outcome("wrong-result", errors[0], out + "\n".join(errors), seconds)
    return Outcome("pass", "", out, seconds)


def check_program(text, tools, input_spec="random:1"):
    """None when dist-opt accepts the case and its reference evaluates,
    else what is wrong (the generator's fault)."""
    try:
        reference_values(text, input_spec)
    except Exception as e:
        return f"reference: {type(e).__name__}: {e}"
    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
        f.write(text)
        f.flush()
        rc, out = _run([os.path.join(tools, "dist-opt"), f.name, "-o", os.devnull], 120)
    if rc != 0:
        return "dist-opt rejects the program: " + first_error(out)
    return None


def first_error(out):
    m = ERROR_RE.search(out)
    if m:
        return m.group(1)
    lines = [l for l in out.splitlines() if l.strip()]
    return lines[-1] if lines else "(no output)"


def classify_failure(rc, out, seconds):
    if rc < 0 or CRASH_RE.search(out):
        return Outcome("crash", crash_detail(rc, out), out, seconds)
    if "the job failed" in out:
        return Outcome("crash", "a rank failed: " + rank_detail(out), out, seconds)
    err = first_error(out)
    if "internal error" in err:
        return Outcome("invalid-ir", err, out, seconds)
    if REFUSAL_RE.search(err):
        return Outcome("refusal", err, out, seconds)
    if ERROR_RE.search(out):
        return Outcome("invalid-ir", err, out, seconds)
    return Outcome("crash", f"exit {rc}: {err}", out, seconds)


def crash_detail(rc, out):
    a = re.search(r"Assertion `[^']*' failed", out)
    if a:
        return a.group(0)
    for pat in (r"exited on signal \d+", r"Segmentation fault", r"terminate called[^\n]*",
                r"AddressSanitizer[^\n]*", r"runtime error:[^\n]*"):
        m = re.search(pat, out)
        if m:
            return m.group(0)
    if "PLEASE submit" in out:
        # the first frames with a name past the signal handlers
        frames = re.findall(r"^\s*#\d+ 0x[0-9a-f]+ ((?:mlir|dist|llvm)::[^(\n]*)", out, re.M)
        frames = [f for f in frames if not f.startswith("llvm::sys::")][:3]
        return "compiler crash" + (f" in {' < '.join(frames)}" if frames else "")
    return f"signal {-rc}" if rc < 0 else f"exit {rc}"


def rank_detail(out):
    for line in out.splitlines():
        if re.search(r"dist-run(time)?: rank \d+", line):
            return line.strip()[:200]
    return "see the output"
