"""nvFuser-style tests of the random-number ops (`rand`, `randn`, `uniform`, `normal`,
`rand_like`, `randn_like`) and `welford`.

Random values are compared bit for bit with `allotment.philox` (numpy's Philox, written
independently of the kernels' `backend/triton_random.py`): uniform values exactly on every
target, normal values exactly on the CPU (the interpreter and the reference both use numpy's
f64 log and cos) and within a few f32 spacings on CUDA (libdevice's). Shapes stay tiny:
on the CPU the kernels run in Triton's interpreter.
"""

from __future__ import annotations

import pytest
import torch
import triton
import triton.language as tl
from frontend_helpers import DEVICE, check, randn

from allotment import DataType, FusionDefinition, philox
from allotment.errors import ArgumentError

DTYPES = {DataType.Float: torch.float32, DataType.Double: torch.float64, DataType.Half: torch.float16,
          DataType.BFloat16: torch.bfloat16}


def expected_uniform(seed: int, offset: int, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
    n = 1
    for e in shape:
        n *= e
    return philox.uniform(seed, offset, n, dtype).reshape(shape).to(DEVICE)


def expected_normal(seed: int, offset: int, shape: tuple[int, ...], dtype: torch.dtype = torch.float32) -> torch.Tensor:
    n = 1
    for e in shape:
        n *= e
    return philox.normal(seed, offset, n, dtype).reshape(shape).to(DEVICE)


def same_normals(actual: torch.Tensor, expected: torch.Tensor) -> None:
    """Exact on the CPU; on CUDA libdevice's f64 log/cos may move the last f64 bit."""
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if DEVICE.type == "cpu":
        assert torch.equal(actual.cpu(), expected.cpu())
    else:
        check(actual, expected, rtol=2.0**-21, atol=1e-6)


def seeded(op: str, shape: list[int], dtype: DataType, seed: int, offset: int) -> FusionDefinition:
    with FusionDefinition() as fd:
        out = getattr(fd.ops, op)(shape, dtype=dtype, rng_seed=seed, rng_offset=offset)
        fd.add_output(out)
    return fd


# --------------------------------------------------------------------------- #
# Bits: kernels and reference against an independent Philox                  #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_rand_bits_exact(run_fusion, dtype: DataType) -> None:
    fd = seeded("rand", [6, 37], dtype, 1234, 5)
    (out,) = run_fusion(fd, [])
    assert out.device.type == DEVICE.type or out.device.type == "cpu"
    assert torch.equal(out.cpu(), expected_uniform(1234, 5, (6, 37), DTYPES[dtype]).cpu())


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_randn_bits(run_fusion, dtype: DataType) -> None:
    fd = seeded("randn", [5, 29], dtype, -77, 3)
    (out,) = run_fusion(fd, [])
    same_normals(out.to(DEVICE), expected_normal(-77, 3, (5, 29), DTYPES[dtype]))


@triton.jit
def _triton_words(out_ptr, seed, n: tl.constexpr):
    i = tl.arange(0, n)
    a, b, c, d = tl.randint4x(seed, i.to(tl.int64))
    tl.store(out_ptr + i, a.to(tl.int64) & 0xFFFFFFFF)
    tl.store(out_ptr + n + i, b.to(tl.int64) & 0xFFFFFFFF)
    tl.store(out_ptr + 2 * n + i, c.to(tl.int64) & 0xFFFFFFFF)
    tl.store(out_ptr + 3 * n + i, d.to(tl.int64) & 0xFFFFFFFF)


def test_philox_words_match_triton_randint4x() -> None:
    """With offset 0 the counter layout is Triton's `tl.randint4x(seed, index)`'s: our own
    Philox (numpy here, integer ops in the kernels) gives Triton's words."""
    from allotment.backend.launch import bind_kernels, launch

    namespace = {"words": _triton_words}
    bind_kernels(namespace, DEVICE.type)
    seed = 0x1234_5678_9ABC
    out = torch.zeros(4 * 64, dtype=torch.int64, device=DEVICE)
    launch(namespace["words"], (1,), (out, seed), {"n": 64}, 4)
    mine = torch.stack([torch.from_numpy(w.astype("int64")) for w in philox.philox_words(seed, 0, 64)])
    assert torch.equal(out.cpu().reshape(4, 64), mine)


# --------------------------------------------------------------------------- #
# Reproducibility                                                             #
# --------------------------------------------------------------------------- #


def test_same_seed_same_values_across_programs_and_blocks(run_fusion, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same (seed, offset) gives the same values alone, inside a larger pointwise kernel,
    feeding a row reduction, and with other block sizes."""
    x = randn(6, 40)
    alone = run_fusion(seeded("rand", [6, 40], DataType.Float, 99, 7), [])[0]
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype=DataType.Float)
        r = fd.ops.rand([6, 40], rng_seed=99, rng_offset=7)
        fd.add_output(fd.ops.add(t, r))
        fd.add_output(fd.ops.sum(fd.ops.mul(t, r), [1]))
    total, row_sums = run_fusion(fd, [x])
    check(total - x, alone, rtol=0, atol=1e-6)
    check(row_sums, (x * alone).sum(1))
    from allotment.backend import host_runtime

    monkeypatch.setattr(host_runtime, "_PW", (2, 8, 4))
    host_runtime.pointwise_blocks.cache_clear()
    try:
        small_blocks = run_fusion(seeded("rand", [6, 40], DataType.Float, 99, 7), [])[0]
    finally:
        host_runtime.pointwise_blocks.cache_clear()
    assert torch.equal(small_blocks.cpu(), alone.cpu())


def test_different_offsets_and_seeds_differ(run_fusion) -> None:
    a = run_fusion(seeded("rand", [4, 16], DataType.Float, 1, 0), [])[0]
    b = run_fusion(seeded("rand", [4, 16], DataType.Float, 1, 1), [])[0]
    c = run_fusion(seeded("rand", [4, 16], DataType.Float, 2, 0), [])[0]
    assert (a != b).float().mean() > 0.95
    assert (a != c).float().mean() > 0.95
    # offsets are independent streams, not a shift of one stream
    assert not torch.equal(a.flatten()[1:], b.flatten()[:-1])


def test_unseeded_calls_differ_and_manual_seed_reproduces(run_fusion) -> None:
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.rand([3, 20]))
        fd.add_output(fd.ops.rand([3, 20]))
    torch.manual_seed(3)
    first, second = run_fusion(fd, [])
    again = run_fusion(fd, [])[0]
    torch.manual_seed(3)
    replay = run_fusion(fd, [])[0]
    assert not torch.equal(first, second)  # two ops of one fusion: offsets 0 and 1
    assert not torch.equal(first, again)  # a new seed per execution
    assert torch.equal(first, replay)
    assert "%rng_seed: i64" in fd.ir()


def test_seed_and_offset_as_scalar_inputs(run_fusion) -> None:
    with FusionDefinition() as fd:
        s = fd.define_scalar(dtype=DataType.Int)
        o = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.randn([4, 9], rng_seed=s, rng_offset=o))
    (out,) = run_fusion(fd, [2**40 + 3, -5])
    same_normals(out.to(DEVICE), expected_normal(2**40 + 3, -5, (4, 9)))


# --------------------------------------------------------------------------- #
# Distributions                                                               #
# --------------------------------------------------------------------------- #


def test_rand_statistics(run_fusion) -> None:
    (u,) = run_fusion(seeded("rand", [64, 64], DataType.Float, 11, 0), [])
    assert 0.0 <= u.min() and u.max() < 1.0
    assert abs(u.mean().item() - 0.5) < 0.02
    assert abs(u.var().item() - 1 / 12) < 0.005
    hist = torch.histc(u.cpu(), bins=8, min=0, max=1) / u.numel()
    assert (hist - 0.125).abs().max() < 0.02


def test_randn_statistics(run_fusion) -> None:
    (n,) = run_fusion(seeded("randn", [64, 64], DataType.Float, 12, 0), [])
    assert abs(n.mean().item()) < 0.05
    assert abs(n.std().item() - 1.0) < 0.05
    assert abs((n.abs() < 1).float().mean().item() - 0.6827) < 0.03
    assert torch.isfinite(n).all()


def test_uniform_parameters(run_fusion) -> None:
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.uniform(-3.0, 5.0, [32, 64], rng_seed=4, rng_offset=0))
    (u,) = run_fusion(fd, [])
    assert u.dtype == torch.float32 and u.shape == (32, 64)
    assert -3.0 <= u.min() and u.max() < 5.0
    assert abs(u.mean().item() - 1.0) < 0.2
    check(u, -3.0 + 8.0 * expected_uniform(4, 0, (32, 64)))


def test_normal_parameters(run_fusion) -> None:
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.normal(2.0, 0.5, [32, 64], rng_seed=4, rng_offset=1))
    (n,) = run_fusion(fd, [])
    assert abs(n.mean().item() - 2.0) < 0.05
    assert abs(n.std().item() - 0.5) < 0.03
    check(n, 2.0 + 0.5 * expected_normal(4, 1, (32, 64)))


@pytest.mark.parametrize("dtype", [DataType.Half, DataType.BFloat16, DataType.Double])
def test_uniform_and_normal_dtypes(run_fusion, dtype: DataType) -> None:
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.uniform(1.0, 2.0, [8, 16], rng_seed=8, rng_offset=0, dtype=dtype))
        fd.add_output(fd.ops.normal(0.0, 3.0, [8, 16], rng_seed=8, rng_offset=0, dtype=dtype))
    u, n = run_fusion(fd, [])
    td = DTYPES[dtype]
    ct = torch.float64 if td == torch.float64 else torch.float32
    assert u.dtype == td and n.dtype == td
    assert 1.0 <= u.min() and u.max() <= 2.0
    check(u, (1.0 + expected_uniform(8, 0, (8, 16), ct)).to(td))
    check(n, (3.0 * expected_normal(8, 0, (8, 16), ct)).to(td))


def test_f64_uses_53_bits(run_fusion) -> None:
    (u,) = run_fusion(seeded("rand", [4, 32], DataType.Double, 21, 0), [])
    assert u.dtype == torch.float64
    assert ((u * 2.0**24) != torch.floor(u * 2.0**24)).any()  # finer than f32's 24 bits
    assert torch.equal((u * 2.0**53), torch.floor(u * 2.0**53))  # on the 2^-53 grid


# --------------------------------------------------------------------------- #
# Shapes and fusion                                                           #
# --------------------------------------------------------------------------- #


def test_rand_like_and_randn_like(run_fusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype=DataType.Half)
        fd.add_output(fd.ops.rand_like(t, rng_seed=5, rng_offset=2))
        fd.add_output(fd.ops.randn_like(t, rng_seed=5, rng_offset=2))
    x = randn(7, 11, dtype=torch.float16)
    u, n = run_fusion(fd, [x])
    assert u.dtype == torch.float16 and u.shape == x.shape
    assert torch.equal(u.cpu(), expected_uniform(5, 2, (7, 11), torch.float16).cpu())
    same_normals(n.to(DEVICE), expected_normal(5, 2, (7, 11), torch.float16))


def test_scalar_shape(run_fusion) -> None:
    with FusionDefinition() as fd:
        n = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.rand([n, 6], rng_seed=3, rng_offset=0))
    (u,) = run_fusion(fd, [9])
    assert u.shape == (9, 6)
    assert torch.equal(u.cpu(), expected_uniform(3, 0, (9, 6)).cpu())


def test_rank0_and_empty(run_fusion) -> None:
    with FusionDefinition() as fd:
        fd.add_output(fd.ops.randn([], rng_seed=13, rng_offset=2))
        fd.add_output(fd.ops.rand([0, 5], rng_seed=13, rng_offset=2))
    scalar, empty = run_fusion(fd, [])
    assert scalar.shape == () and empty.shape == (0, 5)
    same_normals(scalar.to(DEVICE), expected_normal(13, 2, ()))


def test_random_with_broadcast_input(run_fusion) -> None:
    """A random [rows, 1] column broadcast over a row: its linear index is the column's own."""
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype=DataType.Float)
        col = fd.ops.rand([fd.ops.size(t, 0), 1], rng_seed=23, rng_offset=0)
        fd.add_output(fd.ops.mul(t, col))
    x = randn(6, 10)
    (out,) = run_fusion(fd, [x])
    check(out, x * expected_uniform(23, 0, (6, 1)))


def test_shape_from_tensor_size(run_fusion) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype=DataType.Float)
        r = fd.ops.randn([fd.ops.size(t, 1), fd.ops.size(t, 0)], rng_seed=6, rng_offset=6)
        fd.add_output(fd.ops.add(fd.ops.permute(t, [1, 0]), r))
    x = randn(5, 12)
    (out,) = run_fusion(fd, [x])
    check(out, x.T + expected_normal(6, 6, (12, 5)))


def test_dropout_fused(run_fusion) -> None:
    """nvFuser's dropout: `rand_like(x) < keep`, then where and a scale; one kernel."""
    p = 0.3
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype=DataType.Float)
        mask = fd.ops.lt(fd.ops.rand_like(t, rng_seed=42, rng_offset=0), 1.0 - p)
        y = fd.ops.mul(fd.ops.where(mask, t, 0.0), 1.0 / (1.0 - p))
        fd.add_output(y)
        fd.add_output(mask)
    x = randn(8, 48)
    y, mask = run_fusion(fd, [x])
    keep = expected_uniform(42, 0, (8, 48)) < 1.0 - p
    assert torch.equal(mask.cpu(), keep.cpu())
    check(y, torch.where(keep, x, 0.0) * (1.0 / (1.0 - p)))
    assert abs(keep.float().mean().item() - (1 - p)) < 0.08
    from allotment.ir import find_function, parse_module
    from allotment.passes.fusion_segment import FusionSegmentPass
    from allotment.passes.pipeline import run_pipeline

    module = run_pipeline(parse_module(fd.ir()), [FusionSegmentPass()])
    segments = [op for op in find_function(module, "fusion").body.block.ops if op.name == "fusion.segment"]
    assert len(segments) == 1


def test_recomputed_in_each_consumer(run_fusion) -> None:
    """A random value read by two reduction kernels over different dims is recomputed in each
    (`fusion-segment`'s per-consumer recomputation) and is the same in both."""
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype=DataType.Float)
        r = fd.ops.rand([5, 24], rng_seed=17, rng_offset=4)
        fd.add_output(fd.ops.sum(fd.ops.mul(t, r), [0]))
        fd.add_output(fd.ops.sum(fd.ops.mul(t, r), [1]))
    x = randn(5, 24)
    cols, rows = run_fusion(fd, [x])
    r = expected_uniform(17, 4, (5, 24))
    check(cols, (x * r).sum(0))
    check(rows, (x * r).sum(1))


def test_randn_in_normalization(run_fusion) -> None:
    """Noise added before a softmax: the row is read twice inside one normalization kernel."""
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype=DataType.Float)
        z = fd.ops.add(t, fd.ops.randn_like(t, rng_seed=9, rng_offset=0))
        m = fd.ops.max(z, [1], keepdim=True)
        e = fd.ops.exp(fd.ops.sub(z, m))
        fd.add_output(fd.ops.div(e, fd.ops.sum(e, [1], keepdim=True)))
    x = randn(4, 30)
    (out,) = run_fusion(fd, [x])
    check(out, torch.softmax(x + expected_normal(9, 0, (4, 30)), dim=1))


def test_random_errors() -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1], dtype=DataType.Int)
        with pytest.raises(ArgumentError, match="rng_seed and rng_offset must be provided together"):
            fd.ops.rand([4], rng_seed=1)
        with pytest.raises(ArgumentError, match="only create floating-point types"):
            fd.ops.rand([4], dtype=DataType.Int)
        with pytest.raises(ArgumentError, match="rng_seed' must be an int or an integer Scalar"):
            fd.ops.randn([4], rng_seed=1.5, rng_offset=0)
        with pytest.raises(ArgumentError, match="rand_like: argument 'arg' must be a floating-point tensor"):
            fd.ops.rand_like(t)
        with pytest.raises(ArgumentError, match="uniform: argument 'minval' must be a Python number or a Scalar"):
            fd.ops.uniform(t, 1.0, [4])
        with pytest.raises(ArgumentError, match="symbolic"):
            fd.ops.rand([-1, 4])
        with pytest.raises(ArgumentError, match="welford: argument 'arg' must be a floating-point tensor"):
            fd.ops.welford(t, [0])
        fd.add_output(fd.ops.rand([2], rng_seed=0, rng_offset=0))


# --------------------------------------------------------------------------- #
# welford                                                                     #
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("dims", [[1], [0], [0, 1]])
def test_welford(run_fusion, dtype: torch.dtype, dims: list[int]) -> None:
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype={v: k for k, v in DTYPES.items()}[dtype])
        avg, var_sum, n = fd.ops.welford(t, dims)
        fd.add_output(avg)
        fd.add_output(var_sum)
        fd.add_output(n)
    x = randn(6, 20, dtype=dtype) + 3.0
    avg, var_sum, n = run_fusion(fd, [x])
    ct = torch.float64 if dtype == torch.float64 else torch.float32
    var, mean = torch.var_mean(x.to(ct), dims, correction=0)
    count = 1
    for d in dims:
        count *= x.shape[d]
    check(avg, mean)
    check(var_sum, var * count, rtol=1e-5 if ct == torch.float32 else 1e-7, atol=1e-4)
    assert n.dtype == torch.int64
    assert torch.equal(n.cpu(), torch.full(mean.shape, count, dtype=torch.int64))


def test_welford_layer_norm(run_fusion) -> None:
    """nvFuser's layer norm: welford, then (x - avg) * rsqrt(var_sum / n + eps)."""
    with FusionDefinition() as fd:
        t = fd.define_tensor([-1, -1], dtype=DataType.Float)
        avg, var_sum, n = fd.ops.welford(t, [1])
        var = fd.ops.div(var_sum, fd.ops.cast(n, DataType.Float))
        rstd = fd.ops.rsqrt(fd.ops.add(var, 1e-5))
        shape = [fd.ops.size(t, 0), fd.ops.size(t, 1)]
        y = fd.ops.mul(fd.ops.sub(t, fd.ops.broadcast_in_dim(avg, shape, [0])),
                       fd.ops.broadcast_in_dim(rstd, shape, [0]))
        fd.add_output(y)
    x = randn(5, 40)
    (y,) = run_fusion(fd, [x])
    check(y, torch.nn.functional.layer_norm(x, [40], eps=1e-5), rtol=1e-4, atol=1e-4)


def test_welford_after_random(run_fusion) -> None:
    """welford of a random tensor: the reduction reads values computed in its kernel."""
    with FusionDefinition() as fd:
        r = fd.ops.randn([4, 256], rng_seed=31, rng_offset=0)
        avg, var_sum, n = fd.ops.welford(r, [1])
        fd.add_output(avg)
        fd.add_output(var_sum)
    avg, var_sum = run_fusion(fd, [])
    e = expected_normal(31, 0, (4, 256))
    check(avg, e.mean(1), rtol=1e-4, atol=1e-5)
    check(var_sum, ((e - e.mean(1, keepdim=True)) ** 2).sum(1), rtol=1e-4, atol=1e-4)
    assert (var_sum / 256 - 1).abs().max() < 0.25



class _FakeCudaGenerator:
    def __init__(self, seed: int) -> None:
        self.seed, self.offset = seed, 0

    def initial_seed(self) -> int:
        return self.seed

    def get_offset(self) -> int:
        return self.offset

    def set_offset(self, offset: int) -> None:
        self.offset = offset


def test_hidden_seed_on_cuda_follows_the_cuda_generator(monkeypatch) -> None:
    """A CUDA fusion's hidden seed mixes the CUDA generator's seed and offset, advancing the
    offset by 4 a call: the same state gives the same seeds, neighbouring offsets unrelated
    62-bit ones; without a CUDA generator (or when it cannot give its state) the seed comes
    from the CPU generator."""
    from allotment.frontend import seeds as hidden_seeds

    gen = _FakeCudaGenerator(7)
    monkeypatch.setattr(hidden_seeds, "cuda_generator", lambda: gen)
    first = [hidden_seeds.draw_seed(cuda=True) for _ in range(3)]
    assert gen.offset == 12 and len(set(first)) == 3
    assert all(0 <= s < 1 << 62 for s in first)
    assert bin(first[0] ^ first[1]).count("1") > 10
    gen.offset = 0
    assert [hidden_seeds.draw_seed(cuda=True) for _ in range(3)] == first  # a restored state replays
    gen.seed, gen.offset = 8, 0
    assert hidden_seeds.draw_seed(cuda=True) != first[0]

    def refuse(offset: int) -> None:
        raise RuntimeError("capturing")

    gen.set_offset = refuse  # type: ignore[method-assign]
    torch.manual_seed(5)
    a = hidden_seeds.draw_seed(cuda=True)
    torch.manual_seed(5)
    assert a == hidden_seeds.draw_seed(cuda=False)  # the CPU generator's draw
    monkeypatch.setattr(hidden_seeds, "cuda_generator", lambda: None)
    torch.manual_seed(5)
    assert hidden_seeds.draw_seed(cuda=True) == a


def test_hidden_seeds_drawn_by_threads_at_once_differ(monkeypatch) -> None:
    """Threads drawing CUDA seeds at once each get an offset of their own (no two equal)."""
    import threading
    import time

    from allotment.frontend import seeds as hidden_seeds

    class Slow(_FakeCudaGenerator):
        def get_offset(self) -> int:
            value = self.offset
            time.sleep(0.001)  # a thread switch between reading and advancing the offset
            return value

    gen = Slow(3)
    monkeypatch.setattr(hidden_seeds, "cuda_generator", lambda: gen)
    seeds: list[int] = []

    def draw() -> None:
        for _ in range(5):
            seeds.append(hidden_seeds.draw_seed(cuda=True))

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(seeds) == 20 and len(set(seeds)) == 20 and gen.offset == 80
