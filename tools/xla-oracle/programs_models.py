# SPDX-License-Identifier: Apache-2.0
"""Programs from model libraries (filled below)."""

from registry import normal, program, rng  # noqa: F401
