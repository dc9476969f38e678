"""IR text is data: hostile names compile, run, match the reference, and never run as code.

The corpus: function names (`@"..."`) with quotes, triple quotes, backslashes,
newlines, carriage returns, tabs and non-ASCII characters, each carrying a
canary (Python that would create a file or exit the process if it ever ran);
value names that are every keyword and soft keyword, builtins, module names
and every name the code generators make; names that differ only by a character
the sanitizer maps to `_`; hostile kernel names, buffer `name` attributes and
`alloc.check` messages in hand-allocated IR.

Each program is checked three ways: it runs on CPU tensors (Triton's
interpreter) and matches `allotment.reference.evaluate`; the canary file does
not exist afterwards (and the process is still here); and its source, parsed
with `ast` and `tokenize`, holds IR text only inside string constants and
comments, imports only what the code generators import, and defines nothing at
module level but functions.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import io
import keyword
import os
import subprocess
import sys
import tokenize
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402
from backend_check import check, compare, tolerance  # noqa: E402
from xdsl.context import Context  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import launch  # noqa: E402
from allotment.backend.host_codegen import emit_program  # noqa: E402
from allotment.backend.identifiers import Namespace, comment, ir_form, literal  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.passes.alloc_place import AllocPlacePass  # noqa: E402
from allotment.passes.fusion_allocate import FusionAllocatePass  # noqa: E402
from allotment.passes.fusion_segment import FusionSegmentPass  # noqa: E402
from allotment.reference import evaluate  # noqa: E402


def payloads(path: Path) -> list[str]:
    """Function-name texts that would run Python if they escaped a string or a comment."""
    p = str(path)
    run = f"open({p!r}, 'w').write('ran'); raise SystemExit(7)"
    return [
        f'f"""\nimport os; os.system("touch {p}")\n"""',
        f"f'''\n{run}\n'''",
        f'f"\n{run}\n"',
        f"f'\n{run}\n#",
        f"f\\\n{run}",
        f"f\r\n{run}\r\n",
        f"f\t\x0c\n{run}",
        f"caf\u00e9_\ufb01\u2028{run}\u2029",
        f'"""\'\'\'\\"\\\'\n{run}',
    ]


GENERATED = [
    "run", "device", "huge", "rt", "torch", "triton", "tl", "math", "libdevice", "os", "sys",
    "launch_k0", "launch_k0_", "k0_pointwise", "k0_pointwise_", "k0_persistent", "k0_looped", "k1_persistent",
    "in0", "in1", "out0", "out1", "in0_ptr", "in0_s0", "in0_n0", "D0", "D1", "M", "N", "n0_0", "row",
    "use_i64", "bm", "bn", "warps", "kernel", "pid", "tiles_n", "rm", "rn", "mask_m", "mask_n", "i0", "i1",
    "t1", "ld1", "acc1", "red1", "BLOCK_M", "BLOCK_N", "USE_I64", "start",
    "_pow", "_int_pow", "_tanh", "_max_nan", "_min_nan", "_mul_combine", "_trunc_div",
    "c0", "c0_", "x_d0", "x_d0_", "v", "v_", "v__", "arg0",
]
BUILTINS = ["print", "len", "object", "int", "float", "max", "min", "range", "open", "exec", "eval", "type",
            "__import__", "__builtins__", "__name__", "__debug__", "__file__", "None", "True", "False"]
COLLIDING = ["a.b", "a_b", "a$b", "a-b", "a_b_2", "a_b_2_", "a..b", "a__b", "_", "__", "___", "7"]
VALUE_NAMES = list(dict.fromkeys(keyword.kwlist + keyword.softkwlist + BUILTINS + GENERATED + COLLIDING))
GROUPS = [VALUE_NAMES[i:i + 6] for i in range(0, len(VALUE_NAMES), 6)]
if len(GROUPS[-1]) < 6:
    GROUPS[-1] = (GROUPS[-1] + VALUE_NAMES)[:6]


def mlir_string(s: str) -> str:
    """`s` as an MLIR string literal (what goes between the quotes of `@"..."` or `"..."`)."""
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif c.isprintable() or not c.isascii():
            out.append(c)  # raw: xDSL's parse_str_literal rejects escaped non-ASCII bytes (`\C3\A9`)
        else:
            out.append("".join(f"\\{b:02X}" for b in c.encode()))
    return '"' + "".join(out) + '"'


def fusion(fname: str, names: list[str]) -> str:
    """Three dynamic inputs and three results (a pointwise pair and a row sum) with hostile names."""
    a, b, c, d, e, r = (f"%{n}" for n in names)
    t = "tensor<?x4xf32>"
    return (
        f"func.func @{mlir_string(fname)}({a}: {t}, {b}: {t}, {c}: {t}) -> ({t}, {t}, tensor<?x1xf32>) {{\n"
        f"  {d} = fusion.add {a}, {b} : {t}\n"
        f"  {e} = fusion.mul {d}, {c} : {t}\n"
        f"  {r} = fusion.sum {e} dims [1] keepdim : {t} -> tensor<?x1xf32>\n"
        f"  func.return {d}, {e}, {r} : {t}, {t}, tensor<?x1xf32>\n"
        "}\n"
    )


def inputs(rows: int = 2) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return [torch.randn(rows, 4, generator=g) for _ in range(3)]


ALLOWED_IMPORTS = {"torch", "triton", "triton.language", "triton.language.extra", "allotment.backend"}
CODE_MARKERS = ("os", "sys", "system", "SystemExit", "exit", "open", "write", "touch", "ran")


def assert_ir_text_is_data(source: str, canary: Path) -> None:
    """The generated source parses; IR text is only in string constants and comments."""
    assert source.isascii(), "generated source is not ASCII"
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Expr):
            assert isinstance(node.value, ast.Constant) and isinstance(node.value.value, str), ast.dump(node)
        elif isinstance(node, ast.Import):
            assert all(a.name in ALLOWED_IMPORTS for a in node.names), ast.dump(node)
        elif isinstance(node, ast.ImportFrom):
            assert node.module in ALLOWED_IMPORTS, ast.dump(node)
        elif isinstance(node, ast.Assign):  # only the program's `REPLAYABLE = True/False`
            assert [ast.dump(t) for t in node.targets] == [ast.dump(ast.Name("REPLAYABLE", ast.Store()))], ast.dump(node)
            assert isinstance(node.value, ast.Constant) and isinstance(node.value.value, bool), ast.dump(node)
        else:
            assert isinstance(node, ast.FunctionDef), f"module-level code: {ast.dump(node)[:200]}"
    nodes = list(ast.walk(tree))
    imports = [n for n in nodes if isinstance(n, ast.Import | ast.ImportFrom)]
    assert all(n in tree.body for n in imports), "an import inside a function"
    for node in nodes:
        names = []
        if isinstance(node, ast.Name):
            names.append(node.id)
        elif isinstance(node, ast.arg):
            names.append(node.arg)
        elif isinstance(node, ast.FunctionDef):
            names.append(node.name)
        for name in names:
            assert name.isidentifier() and not keyword.iskeyword(name) and not keyword.issoftkeyword(name), name
            assert name not in ("os", "sys", "exec", "eval", "open", "__import__", "compile", "exit", "quit"), name
            if name.endswith("_") and hasattr(builtins, name):
                raise AssertionError(f"IR-derived name {name} is a builtin")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.STRING, tokenize.COMMENT):
            continue
        assert tok.string not in CODE_MARKERS, f"IR text as code at line {tok.start[0]}: {tok.line!r}"
        if canary.name in tok.string:  # IR text outside strings and comments: only in sanitized identifiers
            assert tok.type == tokenize.NAME and tok.string.endswith("_"), tok.line


@pytest.mark.parametrize("case", range(len(GROUPS)), ids=lambda i: "-".join(GROUPS[i])[:40])
def test_hostile_names_compile_run_and_match(case: int, tmp_path: Path) -> None:
    canary = tmp_path / "pwned"
    names = GROUPS[case]
    fname = payloads(canary)[case % len(payloads(canary))]
    text = fusion(fname, names)
    xs = inputs(2 + case % 2)
    check(text, *xs)
    source = allotment.compile(text).source("cpu")
    assert not canary.exists(), "IR text ran as code"
    assert_ir_text_is_data(source, canary)
    for n in names:  # IR value names survive, recognizably, as identifiers (`%7` has no name)
        assert n.isdigit() or ir_form(n)[:-1] in source


@pytest.mark.parametrize("index", range(9))
def test_hostile_function_name_never_runs(index: int, tmp_path: Path) -> None:
    canary = tmp_path / "pwned"
    fname = payloads(canary)[index]
    text = fusion(fname, ["x", "y", "z", "s", "p", "r"])
    module = parse_module(text)
    assert find_function(module, None).sym_name.data == fname
    check(text, *inputs())
    assert not canary.exists()
    source = allotment.compile(text).source("cpu")
    assert_ir_text_is_data(source, canary)
    assert literal(f"@{fname}: generated by Allotment; returns a tuple of tensors.") in source


def allocated(text: str) -> str:
    module = parse_module(text)
    FusionSegmentPass().apply(Context(), module)
    FusionAllocatePass().apply(Context(), module)
    AllocPlacePass(target="cpu").apply(Context(), module)
    return str(module)


def load(source: str, path: Path) -> object:
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"hostile_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    launch.bind_kernels(module.__dict__, "cpu")  # the CPU target: kernels through Triton's interpreter
    return module


@pytest.mark.parametrize("index", [0, 1, 3, 4, 7, 8])
def test_hostile_kernel_buffer_and_message_texts(index: int, tmp_path: Path) -> None:
    """Kernel names, buffer `name`s and check messages (text that only hand-written
    allocated IR can hold) are data too: two kernels with hostile names that differ
    only by characters the sanitizer maps to `_` stay two kernels."""
    canary = tmp_path / "pwned"
    hostile = payloads(canary)[index]
    text = (
        "func.func @f(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>, %z: tensor<3xf32>)"
        " -> (tensor<?x4xf32>, tensor<?x1xf32>, tensor<3xf32>) {\n"
        "  %s = fusion.add %x, %y : tensor<?x4xf32>\n"
        "  %m = fusion.max %x dims [1] keepdim : tensor<?x4xf32> -> tensor<?x1xf32>\n"
        "  %t = fusion.neg %z : tensor<3xf32>\n"
        "  func.return %s, %m, %t : tensor<?x4xf32>, tensor<?x1xf32>, tensor<3xf32>\n"
        "}\n"
    )
    ir = allocated(text)
    assert '"k0"' in ir and '"k1"' in ir and "alloc.check" in ir
    ir = ir.replace('"k0"', mlir_string(hostile + ".k")).replace('"k1"', mlir_string(hostile + "-k"))
    ir = ir.replace('name = "s"', f"name = {mlir_string(hostile)}")
    head, sep, rest = ir.partition("alloc.check eq ")
    lhs, rhs_msg = rest.split(", ", 1)
    rhs, _, tail = rhs_msg.partition(", ")
    ir = head + sep + f"{lhs}, {rhs}, {mlir_string(hostile)}\n" + tail.split("\n", 1)[1]
    f = find_function(parse_module(ir), "f")
    source = emit_program(f, "cpu").source
    assert not canary.exists()
    assert_ir_text_is_data(source, canary)
    assert literal(hostile) in source and comment(hostile + ".k") in source
    program = load(source, tmp_path / f"program_{index}.py")
    xs = [*inputs()[:2], torch.arange(3.0)]
    expected = evaluate(find_function(parse_module(text), "f"), xs)
    compare(program.run(*xs), expected, tolerance(text))
    with pytest.raises(allotment.RunError, match="got 2 and 3"):
        program.run(xs[0], torch.randn(3, 4), xs[2])
    assert not canary.exists()


def test_namespace_never_gives_a_keyword_builtin_or_generated_name() -> None:
    ns = Namespace()
    made = [ns.name(n) for n in VALUE_NAMES + ["", "a b", "\u00e9", "\ufb01", "fi", "e\u0301", "9lives"]]
    assert len(set(made)) == len(made)
    for name in made:
        assert name.isidentifier() and name.isascii() and name.endswith("_")
        assert not keyword.iskeyword(name) and not keyword.issoftkeyword(name)
        assert not hasattr(builtins, name) and not (name.startswith("__") and name.endswith("__"))
        assert name not in GENERATED or name in ("launch_k0_", "k0_pointwise_", "c0_", "x_d0_", "v_", "v__")
    fresh = Namespace()
    made = [fresh.name(n) for n in ["while", "a.b", "a_b", "a$b", "_", "__import__", "7", "\u00e9", "\ufb01"]]
    assert made == ["while_", "a_b_", "a_b_2_", "a_b_3_", "v__", "v__import___", "v7_", "_u00e9_", "_ufb01_"]


def test_literal_and_comment_escape_everything() -> None:
    for text in ['"""', "'''", "\\", "\n", "\r", "\x00", "\x0c", "\u2028", "\u00e9", "\x85"]:
        assert ast.literal_eval(literal(text)) == text
        line = f"x = 1  # {comment(text)}"
        assert line.isascii() and len(line.splitlines()) == 1
        assert len(list(ast.parse(line).body)) == 1


@pytest.mark.parametrize("index", [0, 1, 4, 5])
def test_allot_run_of_a_hostile_fusion(index: int, tmp_path: Path) -> None:
    """`allot-run --check` (a separate process) compiles, runs and checks a fusion whose function
    name carries a canary and whose values are named after keywords and generated names:
    it exits 0, its three outputs pass, and the canary file does not exist."""
    canary = tmp_path / "pwned"
    path = tmp_path / "hostile.mlir"
    path.write_text(fusion(payloads(canary)[index], ["while", "huge", "rt", "launch_k0", "torch", "_"]))
    env = {**os.environ, "ALLOT_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "allot-run"), str(path), "--check", "--dump", "--shapes", "while=3x4,huge=3x4,rt=3x4"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(" PASS") == 3 and "def run(while_, huge_, rt_):" in done.stdout
    assert not canary.exists()
