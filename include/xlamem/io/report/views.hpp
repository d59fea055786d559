// SPDX-License-Identifier: Apache-2.0
/// @file
/// How the report's writers show its pieces, the same in every writer (summary, page, picture):
/// an op's source as one line (`source_text`) and the device memory of every time stacked into
/// one column (`stacked_segments`, the page's and the picture's whole-memory view). The report
/// itself (`report/`) is typed data and knows no presentation.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "xlamem/report/memory_timeline.hpp"
#include "xlamem/report/op_source.hpp"

namespace xlamem::report {

/// An op's source for people: the location ("model.py:42", the file's last component) and the
/// op_name, of which only the last `op_name_parts` components when that is above 0
/// ("jit(f)/jit(main)/transpose(jvp(g))/dot_general" with 2: "transpose(jvp(g))/dot_general");
/// "" for an empty source. Every writer of the report shows sources this way.
[[nodiscard]] inline std::string source_text(const op_source& s, std::size_t op_name_parts = 0) {
  if (s.empty()) return "";
  std::string op = s.op_name;
  if (op_name_parts > 0) {
    std::size_t cut = op.size();
    for (std::size_t parts = 0; parts < op_name_parts && cut != std::string::npos && cut > 0; ++parts) {
      cut = op.rfind('/', cut - 1);
    }
    if (cut != std::string::npos && cut < op.size()) op = op.substr(cut + 1);
  }
  const auto loc = s.location();
  if (loc.empty()) return op;
  return op.empty() ? loc : loc + " " + op;
}

/// One piece of a buffer in the stacked whole-memory view: over `[begin, end)` it occupies
/// `[base, base + bytes)` of the stack.
struct stacked_segment {
  std::size_t buffer = 0;  ///< index into `buffers`
  std::int64_t begin = 0, end = 0;
  std::int64_t base = 0, bytes = 0;
};

/// The device memory of every time stacked into one column: parameters at the bottom, then
/// outputs, temporaries and constants, each kind by allocation and offset. A heap buffer
/// takes the bytes of it no buffer below it in the heap covers then; in any other allocation
/// the largest live buffer takes it (the others share its bytes), so the column's height at
/// `t` is `usage_over_time` at `t`. Host allocations are left out. Consecutive times with the
/// same place are one segment.
[[nodiscard]] inline std::vector<stacked_segment> stacked_segments(const memory_timeline& t) {
  const auto horizon = t.horizon();
  std::vector<std::size_t> order;
  std::vector<const timeline_allocation*> alloc_of(t.buffers.size(), nullptr);
  for (std::size_t i = 0; i < t.buffers.size(); ++i) {
    const auto* a = t.find_allocation(t.buffers[i].allocation);
    if (a == nullptr || a->color == t.host_color || t.buffers[i].size <= 0) continue;
    alloc_of[i] = a;
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const auto& ax = *alloc_of[x];
    const auto& ay = *alloc_of[y];
    return std::tuple(static_cast<int>(ax.kind), ax.index, t.buffers[x].offset) <
           std::tuple(static_cast<int>(ay.kind), ay.index, t.buffers[y].offset);
  });
  // Nothing changes between two consecutive starts or ends, so the column is laid out once
  // per such stretch, over the buffers live in it only (kept in stacking order): time
  // O((stretches x live) + buffers log buffers), not O(times x buffers).
  std::vector<std::size_t> rank(t.buffers.size(), 0);
  for (std::size_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  struct change {
    std::int64_t time;
    bool starts;
    std::size_t rank;
  };
  std::vector<change> changes;
  for (const auto i : order) {
    const auto& b = t.buffers[i];
    const auto from = std::max<std::int64_t>(b.start, 0);
    const auto to = std::min<std::int64_t>(b.end, horizon - 1);
    if (to < from) continue;
    changes.push_back({from, true, rank[i]});
    changes.push_back({to + 1, false, rank[i]});
  }
  std::sort(changes.begin(), changes.end(), [](const change& x, const change& y) { return x.time < y.time; });
  std::vector<stacked_segment> out;
  std::vector<std::int64_t> open(t.buffers.size(), -1);  // index into out of the open segment
  std::set<std::size_t> live;                             // ranks of the buffers live now
  for (std::size_t c = 0; c < changes.size();) {
    const std::int64_t now = changes[c].time;
    for (; c < changes.size() && changes[c].time == now; ++c) {
      if (changes[c].starts) {
        live.insert(changes[c].rank);
      } else {
        live.erase(changes[c].rank);
        open[order[changes[c].rank]] = -1;
      }
    }
    const std::int64_t until = c < changes.size() ? changes[c].time : horizon;  // [now, until)
    if (now >= horizon || live.empty()) continue;
    std::int64_t base = 0;
    for (auto k = live.begin(); k != live.end();) {
      // One allocation at a time: its live buffers, in offset order.
      const auto* a = alloc_of[order[*k]];
      auto end = k;
      std::size_t largest = order.size();  // non-heap: the first largest live buffer takes the bytes
      for (; end != live.end() && alloc_of[order[*end]] == a; ++end) {
        const auto& b = t.buffers[order[*end]];
        if (largest == order.size() || b.size > t.buffers[largest].size) largest = order[*end];
      }
      std::int64_t cursor = 0;  // heap: the highest byte covered so far
      for (; k != end; ++k) {
        const auto i = order[*k];
        const auto& b = t.buffers[i];
        std::int64_t bytes = 0;
        if (a->is_heap) {
          bytes = std::max<std::int64_t>(0, b.offset + b.size - std::max(b.offset, cursor));
          cursor = std::max(cursor, b.offset + b.size);
        } else if (i == largest) {
          bytes = b.size;
        }
        if (bytes <= 0) {
          open[i] = -1;
          continue;
        }
        if (open[i] >= 0) {
          auto& seg = out[static_cast<std::size_t>(open[i])];
          if (seg.base == base && seg.bytes == bytes && seg.end == now) {
            seg.end = until;
            base += bytes;
            continue;
          }
        }
        open[i] = static_cast<std::int64_t>(out.size());
        out.push_back({i, now, until, base, bytes});
        base += bytes;
      }
    }
  }
  return out;
}

}  // namespace xlamem::report
