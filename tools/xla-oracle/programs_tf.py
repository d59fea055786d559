# SPDX-License-Identifier: Apache-2.0
"""TensorFlow programs."""

from registry import normal, program, rng  # noqa: F401
