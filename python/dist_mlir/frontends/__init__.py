"""Front doors: programs of other frameworks as dist programs (SPEC §7a).

``dist_mlir.frontends.torch.export``: a PyTorch module or function;
``dist_mlir.frontends.jax.export``: a jitted JAX function. The
frameworks come from the virtual environment utils/setup-frontends.sh
creates; dist itself never needs them (docs/frontends.md).
"""


class ExportError(RuntimeError):
    """A framework program a front door cannot read (the message says what
    and, where the exporter recorded it, at which line of the program)."""
