"""`make setup` notices a changed TORCH_SPEC, and its default installs a Triton whose
interpreter runs every kernel on CPU tensors.

The Makefile runs for real in a temporary copy of the repository's root, with a stub
`python3` first on PATH: its `-m venv` makes a `bin/python` that logs its arguments and
succeeds, so nothing is downloaded or installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

STUB = """#!/bin/sh
# python3 -m venv DIR: a fake environment whose python logs each call
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  mkdir -p "$3/bin"
  printf '#!/bin/sh\\necho "python $*" >> "%s/calls.log"\\n' "$(cd "$3" && pwd)" > "$3/bin/python"
  chmod +x "$3/bin/python"
  exit 0
fi
exit 1
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    assert shutil.which("make") is not None, "make is needed: the README's two commands are make targets"
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    stub = tmp_path / "stubbin"
    stub.mkdir()
    (stub / "python3").write_text(STUB)
    (stub / "python3").chmod(0o755)
    return tmp_path


def make(repo: Path, *args: str) -> str:
    env = {**os.environ, "PATH": f"{repo / 'stubbin'}:{os.environ['PATH']}"}
    env.pop("TORCH_SPEC", None)
    env.pop("EXTRAS", None)
    done = subprocess.run(["make", "--no-print-directory", "setup", *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def up_to_date(out: str) -> bool:
    return "is up to date" in out or "Nothing to be done" in out


def test_a_changed_torch_spec_recreates_the_environment(repo: Path) -> None:
    make(repo)
    venv = repo / ".venv"
    assert (venv / ".torch-spec").read_text() == "torch==2.13.0\n"
    assert up_to_date(make(repo))
    (venv / "left-by-the-cpu-build").touch()

    out = make(repo, "TORCH_SPEC=torch")
    assert "TORCH_SPEC changed ('torch==2.13.0' -> 'torch'): recreating .venv" in out
    assert not (venv / "left-by-the-cpu-build").exists()
    assert (venv / ".torch-spec").read_text() == "torch\n"
    assert up_to_date(make(repo, "TORCH_SPEC=torch"))


def test_an_environment_from_the_old_makefile_counts_as_the_default_spec(repo: Path) -> None:
    venv = repo / ".venv"
    venv.mkdir()
    (venv / ".installed").touch()  # the stamp the Makefile wrote before it recorded the spec
    assert "recreating" not in make(repo)
    (venv / ".installed").touch()
    (venv / ".torch-spec").unlink()
    assert "recreating .venv" in make(repo, "TORCH_SPEC=torch")


def test_an_environment_the_makefile_did_not_make_is_never_removed(repo: Path) -> None:
    venv = repo / "mine"
    venv.mkdir()
    (venv / "precious").touch()
    make(repo, "VENV=mine", "TORCH_SPEC=torch")
    assert (venv / "precious").exists()


def test_the_default_setup_installs_the_cpu_extra(repo: Path) -> None:
    make(repo)
    calls = (repo / ".venv" / "calls.log").read_text()
    assert "pip install -q -e .[test,cpu]" in calls
    make(repo, "TORCH_SPEC=torch")
    calls = (repo / ".venv" / "calls.log").read_text()
    assert "pip install -q -e .[test]" in calls and "cpu" not in calls


def test_the_cpu_extra_asks_for_an_interpreter_that_runs_looped_reductions() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["cpu"] == ["triton>=3.7"]
    readme = (ROOT / "README.md").read_text()
    assert "the Triton that `torch==2.13.0` brings" not in readme  # torch==2.13.0+cpu depends on no Triton
    assert "cpu" in readme and "3.7" in readme
