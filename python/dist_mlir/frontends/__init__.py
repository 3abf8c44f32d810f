"""Front doors: programs of other frameworks as dist programs (SPEC §7a).

``dist_mlir.frontends.torch.export``: a PyTorch module or function;
``dist_mlir.frontends.jax.export``: a jitted JAX function. The
frameworks come from the virtual environment utils/setup-frontends.sh
creates; dist itself never needs them (docs/frontends.md).
"""
