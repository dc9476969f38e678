"""The README's snippets run exactly as pasted: every ```python block, and every
line of a ```sh block that starts with `.venv/bin/allot-` (with this interpreter's
tools), from the repository root, on the CPU."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
BIN = Path(sys.executable).parent


def blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README) if lang == language]


PYTHON = blocks("python")
TOOL_LINES = [
    line.strip() for body in blocks("sh") for line in body.splitlines() if line.strip().startswith(".venv/bin/allot-")
]


def cpu_environment() -> dict[str, str]:
    """This environment without a GPU, as a newcomer has it: CUDA hidden, TRITON_INTERPRET unset."""
    return {**{k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}, "CUDA_VISIBLE_DEVICES": ""}


def test_the_readme_has_snippets() -> None:
    assert len(PYTHON) >= 3 and len(TOOL_LINES) >= 3


def test_the_readme_links_to_docs_in_the_repository() -> None:
    assert "../shared" not in README
    for link in re.findall(r"\]\(([^)#]+)\)", README):
        if not link.startswith("http"):
            assert (ROOT / link).exists(), link


@pytest.mark.parametrize("code", PYTHON, ids=[f"python{i}" for i in range(len(PYTHON))])
def test_python_snippet_runs(code: str) -> None:
    r = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=cpu_environment(), capture_output=True, text=True, timeout=600
    )
    assert r.returncode == 0, f"{code}\n--- stderr ---\n{r.stderr}"


@pytest.mark.parametrize("line", TOOL_LINES)
def test_tool_line_runs(line: str) -> None:
    argv = shlex.split(line, comments=True)
    argv[0] = str(BIN / argv[0].removeprefix(".venv/bin/"))
    r = subprocess.run(argv, cwd=ROOT, env=cpu_environment(), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{line}\n--- stderr ---\n{r.stderr}"
    assert r.stdout
