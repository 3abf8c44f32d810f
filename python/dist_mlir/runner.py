"""run(): execute a dist program on N ranks with ``dist-run`` (semantics §5)."""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._errors import RunError
from ._tools import find_tool
from .compiler import program_path

if TYPE_CHECKING:
    import numpy

__all__ = ["run"]

_DUMP_NAME = re.compile(r"result(\d+)\.rank(\d+)\.npy")
_INPUTS = re.compile(r"iota|random:\d+")


def run(program: str | os.PathLike, np: int, backend: str = "mpi",
        inputs: str | Sequence[numpy.ndarray] = "iota",
        entry: str | None = None, *,
        options: Sequence[str] = (),
        microbatches: int = 1,
        timeout: float | None = None) -> list[list[numpy.ndarray]]:
    """Compiles ``program`` and runs its entry function on ``np`` ranks.

    A wrapper of ``dist-run --np N [--backend B] FILE [--entry NAME]
    [--input INPUTS] --dump DIR`` for small experiments: it writes the
    program (and array inputs) to a temporary folder, runs the tool, and
    loads the dumped results.

    Args:
        program: MLIR text, or a path (a ``pathlib.Path`` or a one-line
            string ending in ``.mlir``).
        np: number of ranks; it must exceed every rank a mesh names (meshes
            may cover only some ranks: pipeline stages).
        backend: ``"mpi"`` (host buffers) or ``"nccl"`` (one GPU per rank).
        inputs: every argument's global value: ``"iota"`` (element = its
            row-major index), ``"random:SEED"``, or a sequence of NumPy
            arrays, one per argument in order, each the argument's *global*
            tensor (its global shape; float, integer or bool dtype). The
            arrays are saved as ``arg<k>.npy`` and passed as ``--input
            npy:DIR``: dist-run converts them to the element types (floats
            to nearest even, bf16 included; integers wrap; float arrays for
            integer arguments are refused, a RunError).
        entry: function to run; default: the only public function.
        options: extra dist-run flags, e.g. ``["--strategy=greedy"]``;
            with ``--reps R``, dist-run's timing line is printed (stdout).
        microbatches: a function whose compute spans several meshes runs as
            a pipeline of this many microbatches of its ``dist.batch_dim``
            arguments (``--microbatches``, semantics §3c); 1: as written.
        timeout: seconds before the job is killed (``None``: no limit).

    Returns:
        ``results[k][r]``: result ``k`` of rank ``r``, a NumPy array of the
        local padded shape (semantics §2) with the padding zeroed; ``None`` for a
        rank outside the mesh of result ``k``.

    Raises:
        ValueError: a bad argument; FileNotFoundError: dist-run is not built;
        RunError: dist-run failed (its stderr names the rank and reason).
    """
    import numpy

    if isinstance(np, bool) or not isinstance(np, int) or np < 1:
        raise ValueError(f"np: expected a positive int, got {np!r}")
    if backend not in ("mpi", "nccl"):
        raise ValueError(f"backend: {backend!r} is not one of mpi, nccl")
    arrays = None
    if isinstance(inputs, str):
        if not _INPUTS.fullmatch(inputs):
            raise ValueError(f"inputs: expected 'iota', 'random:SEED' or a "
                             f"sequence of arrays, got {inputs!r}")
    elif isinstance(inputs, Sequence) and not isinstance(inputs, bytes):
        arrays = [_input_array(k, value) for k, value in enumerate(inputs)]
    else:
        raise ValueError(f"inputs: expected 'iota', 'random:SEED' or a "
                         f"sequence of arrays, got {type(inputs).__name__}")
    if entry is not None and (not isinstance(entry, str) or not entry):
        raise ValueError(f"entry: expected a function name, got {entry!r}")
    if isinstance(options, str):
        raise TypeError("options must be a sequence of flags, not one string")
    if isinstance(microbatches, bool) or not isinstance(microbatches, int) \
            or microbatches < 1:
        raise ValueError(f"microbatches: expected a positive int, got {microbatches!r}")
    tool = find_tool("dist-run")

    with tempfile.TemporaryDirectory(prefix="dist_mlir-run-") as scratch:
        path = program_path(program)
        if path is None:
            path = os.path.join(scratch, "program.mlir")
            with open(path, "w", encoding="utf-8") as file:
                file.write(program)
        elif not os.path.isfile(path):
            raise FileNotFoundError(errno.ENOENT, "no such MLIR file", path)
        dump = os.path.join(scratch, "dump")
        os.mkdir(dump)
        if arrays is not None:
            folder = os.path.join(scratch, "inputs")
            os.mkdir(folder)
            for k, array in enumerate(arrays):
                numpy.save(os.path.join(folder, f"arg{k}.npy"), array,
                           allow_pickle=False)
            inputs = "npy:" + folder
        command = [tool, "--np", str(np), "--backend", backend, path,
                   "--input", inputs, "--dump", dump]
        if entry is not None:
            command += ["--entry", entry]
        if microbatches != 1:
            command += ["--microbatches", str(microbatches)]
        command += list(options)
        # A session of its own, so that a timeout can kill mpirun and every
        # rank it started, not just the front process.
        process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            try:
                _, stderr = process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                # A rank that left the session still holds the pipes.
                process.stdout.close()
                process.stderr.close()
                process.wait()
                stderr = ""
            raise RunError(f"dist-run timed out after {timeout} s",
                           None, stderr, command) from None
        if process.returncode != 0:
            raise RunError(
                f"dist-run failed (exit code {process.returncode}):\n"
                f"{stderr.rstrip()}", process.returncode, stderr, command)

        # With --reps, dist-run's timing line (semantics §8), as the tool
        # prints it.
        for line in stdout.splitlines():
            if line.startswith("dist-run: per call:"):
                print(line, flush=True)

        found: dict[int, dict[int, str]] = {}
        for name in os.listdir(dump):
            match = _DUMP_NAME.fullmatch(name)
            if match:
                k, r = int(match.group(1)), int(match.group(2))
                found.setdefault(k, {})[r] = os.path.join(dump, name)
        results = []
        for k in range(len(found)):
            ranks = found.get(k, {})
            # Ranks outside a result's mesh dump nothing for it (semantics §5).
            if not ranks or not set(ranks) <= set(range(np)):
                raise RunError(
                    f"dist-run succeeded but result {k} was dumped by ranks "
                    f"{sorted(ranks)}, expected some of 0..{np - 1}", 0,
                    stderr, command)
            results.append([numpy.load(ranks[r], allow_pickle=False)
                            if r in ranks else None for r in range(np)])
        return results


def _input_array(k: int, value: object) -> numpy.ndarray:
    """Argument k's array as dist-run reads it: C order, little endian."""
    import numpy

    if isinstance(value, (str, bytes)):
        raise ValueError(f"inputs[{k}]: expected an array, got {value!r}")
    array = numpy.asarray(value)
    if array.dtype.kind not in "fiub":
        raise ValueError(f"inputs[{k}]: dtype {array.dtype} is not a float, "
                         "integer or bool dtype")
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    # Not ascontiguousarray: it makes a 0-d array (a scalar argument) 1-d.
    return numpy.array(array, order="C", copy=not array.flags.c_contiguous)
