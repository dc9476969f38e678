"""pytest configuration: tests import helpers (random_fusion) from this folder.

Generated programs go to a fresh cache folder per test session (ALLOT_CACHE_DIR),
so that a stale program on disk never hides a code-generation change. Without a
GPU, Triton's interpreter is chosen before anything imports Triton.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True, scope="session")
def _allot_cache_dir(tmp_path_factory: pytest.TempPathFactory):
    old = os.environ.get("ALLOT_CACHE_DIR")
    os.environ["ALLOT_CACHE_DIR"] = str(tmp_path_factory.mktemp("allot_cache"))
    yield
    if old is None:
        os.environ.pop("ALLOT_CACHE_DIR", None)
    else:
        os.environ["ALLOT_CACHE_DIR"] = old
