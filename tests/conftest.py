"""pytest configuration: tests import helpers (random_fusion) from this folder."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
