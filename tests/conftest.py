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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run the tests marked many_ranks (ALLOT_SLOW=1 too)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "many_ranks: a long test of many processes (8 ranks); runs with --run-slow or ALLOT_SLOW=1"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-slow") or os.environ.get("ALLOT_SLOW") not in (None, "", "0"):
        return
    skip = pytest.mark.skip(reason="many_ranks: run with --run-slow or ALLOT_SLOW=1")
    for item in items:
        if "many_ranks" in item.keywords:
            item.add_marker(skip)
