# SPDX-License-Identifier: Apache-2.0
"""The checks of the public functions' arguments, made before anything reaches the library,
with the exception a Python user expects and a message that names the function and the
argument (and the interval, for a bad row given to `pack`):

- TypeError: a value of the wrong kind: 1.5, 2.0 or "3" for an integer (taken through
  `operator.index`, as `range()` takes them: int, numpy integers; never bool), a number for
  a name, None for seconds.
- ValueError: the right kind out of range: NaN or negative seconds, a negative size, an
  alignment that is not a power of two, a value above what the library holds (2**60 bytes or
  time steps, `max_packing_value` in packing/problem.hpp).
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any, Optional

MAX_VALUE = 1 << 60          # sizes, times, alignments (packing/problem.hpp)
MAX_CAPACITY = (1 << 63) - 1  # an int64 of bytes
MAX_SEED = (1 << 64) - 1     # a uint64


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _bound(n: int) -> str:
    if n < 0:
        return "-" + _bound(-n)
    for k in (60, 63, 64):
        if n == 1 << k:
            return f"2**{k}"
        if n == (1 << k) - 1:
            return f"2**{k} - 1"
    return str(n)


def integer(value: Any, where: str) -> int:
    """`value` as an int, or TypeError naming `where` (bool and floats are not integers here)."""
    if isinstance(value, bool):
        raise TypeError(f"{where} must be an integer, not bool ({value!r})")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{where} must be an integer, not {type(value).__name__} ({_shown(value)})") from None


def in_range(value: Any, where: str, low: int, high: int) -> int:
    """An integer in [low, high], else TypeError or ValueError naming `where`."""
    n = integer(value, where)
    if not low <= n <= high:
        raise ValueError(f"{where} is {n}, out of range: give {_bound(low)} to {_bound(high)}")
    return n


def alignment(value: Any, where: str, zero_means: Optional[str] = None) -> int:
    """A power of two up to 2**60 (or 0 when `zero_means` says what 0 is)."""
    n = integer(value, where)
    if n == 0 and zero_means:
        return 0
    if not (0 < n <= MAX_VALUE and n & (n - 1) == 0):
        choices = f"0 ({zero_means}) or " if zero_means else ""
        raise ValueError(f"{where} is {n}; give {choices}a power of two up to 2**60")
    return n


def count(value: Any, where: str) -> int:
    """A count of things to show: 0 or more (any larger than there are means all)."""
    n = integer(value, where)
    if n < 0:
        raise ValueError(f"{where} is {n}, negative; give 0 or more")
    return min(n, (1 << 63) - 1)


def seconds(value: Any, where: str) -> float:
    """A time limit: a real number of seconds, 0 or more; math.inf: no limit."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{where} must be a number of seconds, not {type(value).__name__} ({_shown(value)})")
    t = float(value)
    if math.isnan(t):
        raise ValueError(f"{where} is NaN; give seconds: 0 or more, math.inf for no limit")
    if t < 0:
        raise ValueError(f"{where} is {t:g} seconds, negative; give 0 or more (math.inf for no limit)")
    return t


def text(value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{where} must be a str, not {type(value).__name__} ({_shown(value)})")
    return value


def optional_text(value: Any, where: str) -> Optional[str]:
    return None if value is None else text(value, where)


def flag(value: Any, where: str) -> bool:
    """True or False (numpy's bools too); not 0, 1 or "yes"."""
    if isinstance(value, bool) or type(value).__name__ in ("bool_", "bool") and type(value).__module__ == "numpy":
        return bool(value)
    raise TypeError(f"{where} must be True or False, not {type(value).__name__} ({_shown(value)})")


ROW_KEYS = ("lower", "upper", "size", "alignment", "id")


def interval_row(item: Any, k: int) -> tuple[tuple[int, int, int, int], str]:
    """The (lower, upper, size, alignment) of `pack`'s interval number `k` and its id."""
    where = f"xlamem.pack: interval {k}"
    if isinstance(item, dict):
        unknown = [key for key in item if key not in ROW_KEYS]
        if unknown:
            raise ValueError(f"{where} has an unknown key {unknown[0]!r} (keys: lower, upper, size, "
                             "optional alignment and id)")
        try:
            fields = [item["lower"], item["upper"], item["size"], item.get("alignment", 1)]
        except KeyError as e:
            raise ValueError(f"{where} has no {e.args[0]!r} (keys: lower, upper, size, optional alignment "
                             "and id)") from None
        name = str(item.get("id", k))
    else:
        if isinstance(item, (str, bytes)) or not hasattr(item, "__iter__"):
            raise TypeError(f"{where} is {_shown(item)} ({type(item).__name__}); give (lower, upper, size), "
                            "(lower, upper, size, alignment) or a dict with those keys")
        t = tuple(item)
        if len(t) not in (3, 4):
            raise ValueError(f"{where} is {_shown(t)}; give (lower, upper, size) or (lower, upper, size, alignment)")
        fields = [t[0], t[1], t[2], t[3] if len(t) == 4 else 1]
        name = str(k)
    lower = in_range(fields[0], f"{where}: lower", -MAX_VALUE, MAX_VALUE)
    upper = in_range(fields[1], f"{where}: upper", -MAX_VALUE, MAX_VALUE)
    if lower >= upper:
        raise ValueError(f"{where}: lower {lower} is not below upper {upper} (a buffer is live on [lower, upper))")
    size = in_range(fields[2], f"{where}: size", 0, MAX_VALUE)
    return (lower, upper, size, alignment(fields[3], f"{where}: alignment")), name


def intervals(value: Any) -> tuple[list[tuple[int, int, int, int]], list[str]]:
    """`pack`'s rows and ids from tuples, dicts or a pandas DataFrame."""
    if hasattr(value, "to_dict") and hasattr(value, "columns"):  # a pandas DataFrame
        value = value.to_dict("records")
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise TypeError(f"xlamem.pack: intervals must be an iterable of (lower, upper, size[, alignment]) tuples, "
                        f"of dicts or a pandas DataFrame, not {type(value).__name__} ({_shown(value)})")
    rows, ids = [], []
    for k, item in enumerate(value):
        row, name = interval_row(item, k)
        rows.append(row)
        ids.append(name)
    return rows, ids
