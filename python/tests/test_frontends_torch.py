"""dist_mlir.frontends.torch (SPEC §7a): PyTorch programs exported by
torch-mlir, planned in PyTorch's vocabulary, run on MPI ranks and compared
with torch's own output.

Needs the frameworks' virtual environment (utils/setup-frontends.sh); lit
runs this file with its python (test/python/frontends-torch.test).
"""

from __future__ import annotations

import fnmatch

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir")
transformers = pytest.importorskip("transformers")
numpy = pytest.importorskip("numpy")

from torch.distributed.tensor import Replicate, Shard  # noqa: E402
from torch.distributed.tensor.parallel import (  # noqa: E402
    ColwiseParallel, RowwiseParallel, SequenceParallel)

from dist_mlir import Layout, Mesh  # noqa: E402
from dist_mlir.frontends.torch import export  # noqa: E402

MEGATRON = {"up": ColwiseParallel(), "down": RowwiseParallel()}


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = torch.nn.Linear(16, 32)
        self.down = torch.nn.Linear(32, 16)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def _close(got, want) -> None:
    scale = max(1.0, float(numpy.abs(want).max()))
    assert got.shape == want.shape
    assert numpy.abs(got - want).max() <= 1e-4 * scale


@pytest.fixture(scope="module")
def mlp():
    torch.manual_seed(0)
    model, x = MLP(), torch.randn(8, 16)
    return model, x, model(x).detach().numpy()


def test_megatron_plan_is_pytorchs(mlp) -> None:
    model, x, want = mlp
    program = export(model, (x,), mesh=Mesh({"tp": 2}), plan=MEGATRON)
    layouts = program.layouts
    # parallelize_module's meaning: column-wise splits the output features
    # of the weight ([out, in]) and the bias; row-wise the input features.
    assert str(layouts["up.weight"]) == '[{"tp"}, {}]'
    assert str(layouts["up.bias"]) == '[{"tp"}]'
    assert str(layouts["down.weight"]) == '[{}, {"tp"}]'
    assert str(layouts["down.bias"]) == "[{}]"
    assert "{dist.sharding = #dist.sharding<@mesh" in program.mlir
    [y] = program.run()
    _close(y, want)


def test_auto_and_new_inputs(mlp) -> None:
    model, x, want = mlp
    program = export(model, (x,), mesh=Mesh({"tp": 2}), plan="auto")
    _close(program.run()[0], want)
    other = torch.randn(8, 16)
    _close(program.run(inputs=[other])[0], model(other).detach().numpy())


def test_dtensor_placements(mlp) -> None:
    model, x, want = mlp
    mesh = Mesh({"dp": 2, "tp": 2})
    plan = {"up.weight": (Replicate(), Shard(0)), "*.bias": (Replicate(), Replicate())}
    program = export(model, (x,), mesh=mesh, plan=plan)
    assert program.layouts["up.weight"] == Layout(mesh, '[{"tp"}, {}]')
    _close(program.run()[0], want)


def test_function_and_save(tmp_path) -> None:
    a, b = torch.randn(6, 4), torch.randn(4, 5)
    program = export(lambda x, y: torch.tanh(x @ y), (a, b), mesh=Mesh({"x": 2}))
    _close(program.run()[0], torch.tanh(a @ b).numpy())
    path = tmp_path / "program.mlir"
    program.save(path)
    assert path.read_text() == program.mlir


def test_plan_errors(mlp) -> None:
    model, x, _ = mlp
    with pytest.raises(ValueError, match="names no module"):
        export(model, (x,), mesh=Mesh({"tp": 2}), plan={"nothing": ColwiseParallel()})
    with pytest.raises(ValueError, match="2 placements for a mesh of 1 axes"):
        export(model, (x,), mesh=Mesh({"tp": 2}), plan={"up.weight": (Shard(0), Shard(1))})
    with pytest.raises(ValueError, match="'tp'"):
        export(model, (x,), mesh=Mesh({"a": 2, "b": 2}), plan=MEGATRON)
    with pytest.raises(TypeError, match="mesh"):
        export(model, (x,), mesh={"tp": 2})


def _llama():
    config = transformers.LlamaConfig(
        vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
        attn_implementation="eager")
    torch.manual_seed(0)
    return _logits(transformers.LlamaForCausalLM(config).eval())


def _logits(model):
    """A causal LM as a module of the tokens returning its logits."""
    class Logits(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.m = model

        def forward(self, ids):
            return self.m(input_ids=ids, use_cache=False).logits
    return Logits()


LLAMA_MEGATRON = {
    "*.q_proj": ColwiseParallel(), "*.k_proj": ColwiseParallel(),
    "*.v_proj": ColwiseParallel(), "*.o_proj": RowwiseParallel(),
    "*.gate_proj": ColwiseParallel(), "*.up_proj": ColwiseParallel(),
    "*.down_proj": RowwiseParallel(), "*norm": SequenceParallel(),
    "m.model.embed_tokens": RowwiseParallel(), "m.lm_head": ColwiseParallel(),
}


@pytest.mark.parametrize("axes,plan", [
    ({"tp": 2}, "auto"),
    ({"tp": 2}, "megatron"),
    ({"tp": 4}, "megatron"),
    ({"tp": 4}, "auto"),
    ({"dp": 2, "tp": 2}, "megatron"),
])
def test_transformers_llama(axes, plan) -> None:
    """A transformers LlamaForCausalLM with random weights (grouped-query
    attention, rotary embeddings, the causal mask transformers builds, the
    embedding lookup and the lm_head) against torch's logits."""
    model = _llama()
    ids = torch.randint(0, 128, (1, 16), generator=torch.Generator().manual_seed(1))
    want = model(ids).detach().numpy()
    program = export(model, (ids,), mesh=Mesh(axes),
                     plan=LLAMA_MEGATRON if plan == "megatron" else "auto")
    if plan == "megatron":
        for name, layout in program.layouts.items():
            if fnmatch.fnmatchcase(name, "*.q_proj.weight"):
                assert str(layout) == '[{"tp"}, {}]'
            if fnmatch.fnmatchcase(name, "*.o_proj.weight"):
                assert str(layout) == '[{}, {"tp"}]'
    _close(program.run(timeout=600)[0], want)


def test_rowwise_embedding_is_vocabulary_parallel() -> None:
    """RowwiseParallel() on an nn.Embedding splits its vocabulary, and a
    table this large (32000 x 256 f32) is looked up where it lies: each rank
    finds the ids in its rows, the partial sums are reduced, and the table
    is never gathered."""
    class Embed(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = torch.nn.Embedding(32000, 256)
            self.out = torch.nn.Linear(256, 8)

        def forward(self, ids):
            return self.out(self.emb(ids))

    torch.manual_seed(0)
    model = Embed().eval()
    ids = torch.randint(0, 32000, (2, 8), generator=torch.Generator().manual_seed(1))
    program = export(model, (ids,), mesh=Mesh({"tp": 4}),
                     plan={"emb": RowwiseParallel()})
    assert str(program.layouts["emb.weight"]) == '[{"tp"}, {}]'
    partitioned = program._partition()
    table = program.names.index("emb.weight")
    # The lookup reads the table argument itself (no reshard of it), and its
    # result is a partial sum over "tp".
    assert f"dist.reshard %arg{table} " not in partitioned
    assert 'tensor<2x8x256xf32, #dist.sharding<@mesh, [{}, {}, {}], partial = sum {"tp"}>>' \
        in partitioned
    _close(program.run()[0], model(ids).detach().numpy())


def test_tensor_attribute_becomes_an_argument() -> None:
    """A tensor attribute that is neither a parameter nor a buffer is a
    constant of the export; a large one becomes an argument (const[0])."""
    class WithTable(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(128, 128)
            self.table = torch.randn(128, 128, generator=torch.Generator().manual_seed(3))

        def forward(self, x):
            return self.lin(x) @ self.table

    model = WithTable()
    x = torch.randn(8, 128, generator=torch.Generator().manual_seed(4))
    program = export(model, (x,), mesh=Mesh({"tp": 4}))
    assert program.names == ["const[0]", "lin.weight", "lin.bias", "args[0]"]
    assert "dense_resource" not in program.mlir
    _close(program.run()[0], model(x).detach().numpy())


def test_gpt2_auto_on_four_ranks() -> None:
    """transformers' GPT-2 (its Conv1D projections, learned positions, tied
    lm_head, GELU) with random weights, every layout dist's choice, tp=4."""
    config = transformers.GPT2Config(vocab_size=96, n_positions=32, n_embd=64,
                                     n_layer=2, n_head=4,
                                     attn_implementation="eager")
    torch.manual_seed(0)
    model = _logits(transformers.GPT2LMHeadModel(config).eval())
    ids = torch.randint(0, 96, (2, 16), generator=torch.Generator().manual_seed(1))
    program = export(model, (ids,), mesh=Mesh({"tp": 4}))
    _close(program.run(timeout=600)[0], model(ids).detach().numpy())


def test_refusals_name_the_torch_line() -> None:
    """An op torch-mlir leaves outside linalg (torch.sort's tm_tensor.sort)
    is refused at export, at the line of the module that made it."""
    from dist_mlir.frontends.torch import ExportError

    class Sorts(torch.nn.Module):
        def forward(self, x):
            return torch.sort(x, -1).values * 2

    with pytest.raises(ExportError, match=r"test_frontends_torch\.py:\d+: "
                                          r"torch-mlir made tm_tensor\.sort"):
        export(Sorts(), (torch.randn(4, 8),), mesh=Mesh({"tp": 2}))
