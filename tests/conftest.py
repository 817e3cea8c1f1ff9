"""Shared test settings.

Hypothesis: no per-example deadline (timing on a shared CI machine is not what these tests
check), and a fixed seed under CI so that a failure there can be replayed exactly.
"""
import os

from hypothesis import settings

settings.register_profile("recmetrics", deadline=None, derandomize=bool(os.environ.get("CI")),
                          print_blob=True)
settings.load_profile("recmetrics")
