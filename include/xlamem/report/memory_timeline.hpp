// SPDX-License-Identifier: Apache-2.0
/// @file
/// A program's memory as a person reads it: every buffer with its kind, allocation, offset,
/// live range and source line, and the questions asked of it when chasing an out-of-memory
/// error or a regression: when is the peak, what is live then, how much of the temporary heap
/// is wasted and how large is its largest free hole, and what changed between two
/// compilations.
///
/// The timeline is plain data, filled from whatever knows the plan (xlamem's own
/// `buffer_assignment`, or XLA's `*-buffer-assignment.txt` read by `io/buffer_assignment_dump`),
/// so the same report serves a plan xlamem made and a plan XLA made. Memory at a time is the
/// bytes in use then: a temporary heap counts the bytes its live buffers cover (bytes two live
/// buffers share, an operand and the in-place user that overwrites it, count once), any other
/// allocation its largest live buffer (they take its bytes one after the other); constants,
/// thread-local and host allocations are kept apart from the device total, as in
/// `buffer_assignment`'s `peak_memory_in_bytes` (which counts an in-place pair twice at the
/// step where they meet, so it can be larger).
///
/// Cost: O(buffers log buffers + time) for `usage_over_time` and the rest. Plain values, no
/// state.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace xlamem::report {

/// What an allocation holds, as a person groups memory (the stacks of the chart).
enum class buffer_kind : std::uint8_t {
  parameter,     ///< an entry parameter (also when an output aliases it)
  output,        ///< lives out of the program
  temp,          ///< the temporary heap
  constant,      ///< a constant (not in XLA's peak)
  thread_local_, ///< inside reduce / sort / map regions (not in XLA's peak)
};
inline constexpr std::size_t buffer_kind_count = 5;

[[nodiscard]] constexpr std::string_view name_of(buffer_kind k) noexcept {
  switch (k) {
    case buffer_kind::parameter: return "parameter";
    case buffer_kind::output: return "output";
    case buffer_kind::temp: return "temp";
    case buffer_kind::constant: return "constant";
    default: return "thread-local";
  }
}

/// Where in the user's program an instruction comes from: XLA's `OpMetadata`.
struct op_source {
  std::string op_name;      ///< e.g. "jit(train_step)/jit(main)/dot_general"
  std::string source_file;  ///< e.g. "/home/me/model.py"
  std::int64_t source_line = 0;
  std::int64_t stack_frame_id = -1;  ///< newer JAX: the place is in the module's StackFrames table
  [[nodiscard]] bool empty() const noexcept { return op_name.empty() && source_file.empty(); }
  /// "model.py:42" (the file's last component), or "" without a file.
  [[nodiscard]] std::string location() const {
    if (source_file.empty()) return {};
    const auto slash = source_file.find_last_of('/');
    std::string s = slash == std::string::npos ? source_file : source_file.substr(slash + 1);
    if (source_line > 0) s += ":" + std::to_string(source_line);
    return s;
  }
  friend bool operator==(const op_source&, const op_source&) = default;
};

/// The value of `key` in a `{key=value key="quoted" ...}` text (HLO metadata, the entries of
/// the stack-frame tables), unquoted; empty when absent.
[[nodiscard]] inline std::string attribute_value(std::string_view text, std::string_view key) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '{' || text[i] == '}' || text[i] == ',')) ++i;
    const std::size_t key_start = i;
    while (i < text.size() && text[i] != '=' && text[i] != ' ' && text[i] != '}') ++i;
    const std::string_view k = text.substr(key_start, i - key_start);
    if (i >= text.size() || text[i] != '=') continue;
    ++i;
    std::string value;
    if (i < text.size() && text[i] == '"') {
      ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        value += text[i++];
      }
      if (i < text.size()) ++i;
    } else {
      int depth = 0;
      while (i < text.size() && (depth > 0 || (text[i] != ' ' && text[i] != '}'))) {
        if (text[i] == '{') ++depth;
        if (text[i] == '}') --depth;
        value += text[i++];
      }
    }
    if (k == key) return value;
  }
  return {};
}

/// A nonnegative decimal integer, or -1.
[[nodiscard]] inline std::int64_t decimal_or_minus_one(std::string_view s) noexcept {
  if (s.empty() || s.size() > 17) return -1;
  std::int64_t n = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

/// Reads the value of an HLO `metadata=` attribute (`{op_name="a" source_file="f.py"
/// source_line=3 ...}`); unknown keys are skipped, so any XLA version's metadata reads. Text
/// that is not metadata gives an empty source: a report never fails on it.
[[nodiscard]] inline op_source parse_op_metadata(std::string_view text) {
  op_source out;
  out.op_name = attribute_value(text, "op_name");
  out.source_file = attribute_value(text, "source_file");
  out.source_line = std::max<std::int64_t>(0, decimal_or_minus_one(attribute_value(text, "source_line")));
  out.stack_frame_id = decimal_or_minus_one(attribute_value(text, "stack_frame_id"));
  return out;
}

/// One buffer on the timeline (for XLA's dumps, one value).
struct timeline_buffer {
  std::string name;             ///< `instruction` or `instruction{index}`
  std::string shape;            ///< e.g. "f32[256,512]{1,0}"
  std::int64_t size = 0;        ///< bytes
  buffer_kind kind = buffer_kind::temp;
  std::int64_t start = 0;       ///< first time live (inclusive)
  std::int64_t end = 0;         ///< last time live (inclusive)
  std::int64_t allocation = 0;  ///< index of the allocation holding it
  std::int64_t offset = 0;      ///< offset inside that allocation
  std::int64_t color = 0;       ///< memory space
  op_source source;
};

/// One allocation, as far as the report needs it.
struct timeline_allocation {
  std::int64_t index = 0;
  std::int64_t size = 0;
  buffer_kind kind = buffer_kind::temp;
  std::int64_t color = 0;
  bool is_heap = false;  ///< a preallocated-temp heap: its buffers are summed, not shared
};

/// A program's memory: the schedule, the allocations and the buffers in them.
struct memory_timeline {
  std::string module;
  std::vector<std::string> schedule;  ///< the instruction running at each time
  std::vector<timeline_allocation> allocations;
  std::vector<timeline_buffer> buffers;
  std::int64_t host_color = 5;        ///< allocations of this colour are host memory

  /// Times run 0 .. horizon() - 1.
  [[nodiscard]] std::int64_t horizon() const noexcept {
    std::int64_t h = static_cast<std::int64_t>(schedule.size());
    for (const auto& b : buffers) h = std::max(h, b.end + 1);
    return std::max<std::int64_t>(h, 1);
  }
  /// The allocation with `index`, or null.
  [[nodiscard]] const timeline_allocation* find_allocation(std::int64_t index) const noexcept {
    // Allocations are usually listed by index: look there first (a report asks once per buffer).
    if (index >= 0 && static_cast<std::size_t>(index) < allocations.size() &&
        allocations[static_cast<std::size_t>(index)].index == index) {
      return &allocations[static_cast<std::size_t>(index)];
    }
    for (const auto& a : allocations) {
      if (a.index == index) return &a;
    }
    return nullptr;
  }
  /// Whether allocation `a` counts toward the device peak (XLA leaves constants,
  /// thread-local and host allocations out).
  [[nodiscard]] bool counts_in_peak(const timeline_allocation& a) const noexcept {
    return a.kind != buffer_kind::constant && a.kind != buffer_kind::thread_local_ && a.color != host_color;
  }
};

/// Bytes in use at one time, by kind.
using kind_bytes = std::array<std::int64_t, buffer_kind_count>;

namespace detail {

/// `bytes` in use over the times `[begin, end]`.
struct usage_piece {
  std::int64_t begin = 0, end = 0, bytes = 0;
};

/// The bytes of one allocation in use over time, as pieces of constant use (times of no use
/// left out), from a sweep over its buffers' starts and ends: O(k log k) for k buffers. A heap
/// uses the bytes its live buffers cover (a segment tree over the buffers' byte boundaries
/// counts how many live buffers cover each stretch); another allocation its largest live
/// buffer. Times are clamped to [0, horizon).
[[nodiscard]] inline std::vector<usage_piece> allocation_usage(const std::vector<const timeline_buffer*>& buffers,
                                                               bool is_heap, std::int64_t horizon) {
  struct event {
    std::int64_t time;
    int delta;  // +1 starts, -1 ends
    const timeline_buffer* buffer;
  };
  std::vector<event> events;
  events.reserve(2 * buffers.size());
  for (const auto* b : buffers) {
    if (b->size <= 0) continue;
    const auto s = std::clamp<std::int64_t>(b->start, 0, horizon - 1);
    const auto e = std::min(std::max(b->end, b->start), horizon - 1);
    if (e < s) continue;
    events.push_back({s, +1, b});
    events.push_back({e + 1, -1, b});
  }
  std::sort(events.begin(), events.end(), [](const event& x, const event& y) { return x.time < y.time; });

  // The heap's byte boundaries and, per tree node, how many live buffers cover all of its
  // stretch and how many of its bytes are covered.
  std::vector<std::int64_t> bounds;
  if (is_heap) {
    for (const auto& ev : events) {
      bounds.push_back(ev.buffer->offset);
      bounds.push_back(ev.buffer->offset + ev.buffer->size);
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  }
  const std::size_t stretches = bounds.empty() ? 0 : bounds.size() - 1;
  std::vector<int> cover(4 * stretches + 4, 0);
  std::vector<std::int64_t> covered(4 * stretches + 4, 0);
  auto update = [&](auto&& self, std::size_t node, std::size_t lo, std::size_t hi, std::size_t from, std::size_t to,
                    int delta) -> void {  // stretches [lo, hi) of `node`; change [from, to)
    if (to <= lo || hi <= from) return;
    if (from <= lo && hi <= to) {
      cover[node] += delta;
    } else {
      const std::size_t mid = lo + (hi - lo) / 2;
      self(self, 2 * node, lo, mid, from, to, delta);
      self(self, 2 * node + 1, mid, hi, from, to, delta);
    }
    if (cover[node] > 0) {
      covered[node] = bounds[hi] - bounds[lo];
    } else {
      covered[node] = hi - lo == 1 ? 0 : covered[2 * node] + covered[2 * node + 1];
    }
  };
  auto stretch_of = [&](std::int64_t byte) {
    return static_cast<std::size_t>(std::lower_bound(bounds.begin(), bounds.end(), byte) - bounds.begin());
  };
  std::multiset<std::int64_t> live_sizes;

  std::vector<usage_piece> out;
  for (std::size_t i = 0; i < events.size();) {
    const std::int64_t time = events[i].time;
    for (; i < events.size() && events[i].time == time; ++i) {
      const auto* b = events[i].buffer;
      if (is_heap) {
        update(update, 1, 0, stretches, stretch_of(b->offset), stretch_of(b->offset + b->size), events[i].delta);
      } else if (events[i].delta > 0) {
        live_sizes.insert(b->size);
      } else {
        live_sizes.erase(live_sizes.find(b->size));
      }
    }
    const std::int64_t bytes = is_heap ? (stretches > 0 ? covered[1] : 0) : (live_sizes.empty() ? 0 : *live_sizes.rbegin());
    const std::int64_t until = i < events.size() ? events[i].time - 1 : horizon - 1;
    if (bytes > 0 && time <= until && time < horizon) out.push_back({time, std::min(until, horizon - 1), bytes});
  }
  return out;
}

}  // namespace detail

/// Device bytes in use at every time 0 .. horizon()-1, by kind (the kind of the allocation;
/// host allocations are left out). A heap
/// counts the bytes its live buffers cover (the union of their byte ranges: an operand and
/// the in-place user that overwrites it share bytes and count once); another allocation the
/// largest live buffer (they take its bytes one after the other).
[[nodiscard]] inline std::vector<kind_bytes> usage_over_time(const memory_timeline& t) {
  const auto horizon = t.horizon();
  std::map<std::int64_t, std::vector<const timeline_buffer*>> by_alloc;
  for (const auto& b : t.buffers) by_alloc[b.allocation].push_back(&b);
  // Each piece adds its bytes at `begin` and takes them away after `end`; a running sum reads.
  std::vector<kind_bytes> out(static_cast<std::size_t>(horizon) + 1, kind_bytes{});
  for (const auto& a : t.allocations) {
    const auto it = by_alloc.find(a.index);
    if (it == by_alloc.end() || a.color == t.host_color) continue;
    const auto k = static_cast<std::size_t>(a.kind);
    for (const auto& piece : detail::allocation_usage(it->second, a.is_heap, horizon)) {
      out[static_cast<std::size_t>(piece.begin)][k] += piece.bytes;
      out[static_cast<std::size_t>(piece.end) + 1][k] -= piece.bytes;
    }
  }
  for (std::size_t x = 1; x < out.size(); ++x) {
    for (std::size_t k = 0; k < buffer_kind_count; ++k) out[x][k] += out[x - 1][k];
  }
  out.pop_back();
  return out;
}

/// The peak of the device memory: XLA's `peak_memory_in_bytes` and when it happens.
struct peak_info {
  std::int64_t time = 0;
  std::int64_t bytes = 0;
  kind_bytes by_kind{};
  std::vector<std::size_t> live;  ///< indices into `buffers` live then (peak allocations), largest first
};

/// The first time with the most device bytes in use, and the buffers live then.
[[nodiscard]] inline peak_info find_peak(const memory_timeline& t) {
  // Per-time totals over the allocations that count, recomputed per allocation so that kinds
  // which do not count (constants, host) stay out.
  memory_timeline counted;
  counted.host_color = t.host_color;
  counted.schedule = t.schedule;
  for (const auto& a : t.allocations) {
    if (t.counts_in_peak(a)) counted.allocations.push_back(a);
  }
  counted.buffers = t.buffers;
  const auto usage = usage_over_time(counted);
  peak_info p;
  for (std::size_t x = 0; x < usage.size(); ++x) {
    std::int64_t sum = 0;
    for (const auto v : usage[x]) sum += v;
    if (sum > p.bytes) {
      p.bytes = sum;
      p.time = static_cast<std::int64_t>(x);
      p.by_kind = usage[x];
    }
  }
  for (std::size_t i = 0; i < t.buffers.size(); ++i) {
    const auto& b = t.buffers[i];
    const auto* a = t.find_allocation(b.allocation);
    if (a == nullptr || !t.counts_in_peak(*a) || b.size <= 0) continue;
    if (b.start <= p.time && p.time <= b.end) p.live.push_back(i);
  }
  std::stable_sort(p.live.begin(), p.live.end(), [&](std::size_t x, std::size_t y) {
    if (t.buffers[x].size != t.buffers[y].size) return t.buffers[x].size > t.buffers[y].size;
    return t.buffers[x].name < t.buffers[y].name;
  });
  return p;
}

/// How much of a temporary heap is in use at one time.
struct fragmentation {
  std::int64_t allocation = -1;  ///< the heap's allocation index
  std::int64_t heap_size = 0;
  std::int64_t live_bytes = 0;   ///< bytes of buffers live then
  std::int64_t wasted = 0;       ///< heap_size - live_bytes
  std::int64_t largest_hole = 0; ///< the largest free byte range then
  std::int64_t hole_offset = 0;  ///< where it starts
};

/// Fragmentation of heap allocation `a` at time `time`: the free ranges between the live
/// buffers' byte ranges (overlaps are merged, so buffers sharing bytes count once).
[[nodiscard]] inline fragmentation fragmentation_at(const memory_timeline& t, const timeline_allocation& a,
                                                    std::int64_t time) {
  fragmentation f;
  f.allocation = a.index;
  f.heap_size = a.size;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  for (const auto& b : t.buffers) {
    if (b.allocation != a.index || b.size <= 0 || b.start > time || time > b.end) continue;
    ranges.emplace_back(b.offset, b.offset + b.size);
  }
  std::sort(ranges.begin(), ranges.end());
  std::int64_t cursor = 0;
  auto hole = [&](std::int64_t from, std::int64_t to) {
    if (to - from > f.largest_hole) {
      f.largest_hole = to - from;
      f.hole_offset = from;
    }
  };
  for (const auto& [lo, hi] : ranges) {
    if (lo > cursor) hole(cursor, lo);
    if (hi > cursor) {
      f.live_bytes += hi - std::max(lo, cursor);
      cursor = hi;
    }
  }
  if (a.size > cursor) hole(cursor, a.size);
  f.wasted = a.size - f.live_bytes;
  return f;
}

/// Fragmentation of every heap allocation at the peak time, largest heap first.
[[nodiscard]] inline std::vector<fragmentation> fragmentation_at_peak(const memory_timeline& t, const peak_info& p) {
  std::vector<fragmentation> out;
  for (const auto& a : t.allocations) {
    if (a.is_heap && t.counts_in_peak(a)) out.push_back(fragmentation_at(t, a, p.time));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const fragmentation& x, const fragmentation& y) { return x.heap_size > y.heap_size; });
  return out;
}

/// The most bytes of allocation `a`'s buffers live at one time: for a heap, the lower bound
/// of any packing of it (its buffers must all fit then).
[[nodiscard]] inline std::int64_t live_bytes_bound(const memory_timeline& t, const timeline_allocation& a) {
  std::vector<const timeline_buffer*> mine;
  for (const auto& b : t.buffers) {
    if (b.allocation == a.index) mine.push_back(&b);
  }
  std::int64_t best = 0;
  for (const auto& piece : detail::allocation_usage(mine, a.is_heap, t.horizon())) best = std::max(best, piece.bytes);
  return best;
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

/// Total bytes of the allocations of each kind (XLA's argument / output / temp figures split
/// the same way; an aliased parameter counts as a parameter).
[[nodiscard]] inline kind_bytes allocation_bytes(const memory_timeline& t) {
  kind_bytes out{};
  for (const auto& a : t.allocations) out[static_cast<std::size_t>(a.kind)] += a.size;
  return out;
}

/// One buffer matched between two compilations.
struct buffer_change {
  std::string name;         ///< in the second program (the first when it vanished)
  std::string shape_before, shape_after;
  std::int64_t size_before = 0, size_after = 0;
  bool at_peak_before = false, at_peak_after = false;
  op_source source;         ///< from the second program when it has one, else the first
  [[nodiscard]] std::int64_t delta() const noexcept { return size_after - size_before; }
};

/// What changed between two compilations of one program.
struct timeline_diff {
  peak_info peak_before, peak_after;
  kind_bytes bytes_before{}, bytes_after{};     ///< `allocation_bytes`
  std::vector<buffer_change> changed;           ///< matched buffers whose size or shape changed, largest |delta| first
  std::vector<buffer_change> added, removed;    ///< unmatched, largest first
  std::size_t unchanged = 0;                    ///< matched with the same size and shape
  [[nodiscard]] bool identical() const noexcept {
    return changed.empty() && added.empty() && removed.empty() && peak_before.bytes == peak_after.bytes &&
           bytes_before == bytes_after;
  }
};

/// Matches the buffers of `a` and `b` and reports the differences. Matching goes from the
/// strictest key to the loosest, each buffer matched at most once: name + op_name + shape,
/// then name + op_name (the shape changed), then op_name + source line when the names moved
/// (XLA renumbers fusions between compilations).
[[nodiscard]] inline timeline_diff diff_timelines(const memory_timeline& a, const memory_timeline& b) {
  timeline_diff d;
  d.peak_before = find_peak(a);
  d.peak_after = find_peak(b);
  d.bytes_before = allocation_bytes(a);
  d.bytes_after = allocation_bytes(b);
  std::vector<char> at_peak_a(a.buffers.size(), 0), at_peak_b(b.buffers.size(), 0);
  for (auto i : d.peak_before.live) at_peak_a[i] = 1;
  for (auto i : d.peak_after.live) at_peak_b[i] = 1;
  std::vector<char> used_a(a.buffers.size(), 0), used_b(b.buffers.size(), 0);
  using key_fn = std::string (*)(const timeline_buffer&);
  const key_fn keys[] = {
      [](const timeline_buffer& x) { return x.name + '\x1f' + x.source.op_name + '\x1f' + x.shape; },
      [](const timeline_buffer& x) { return x.name + '\x1f' + x.source.op_name; },
      [](const timeline_buffer& x) {
        return x.source.op_name.empty() ? std::string() : x.source.op_name + '\x1f' + x.source.location();
      },
  };
  auto record = [&](std::size_t i, std::size_t j) {
    used_a[i] = used_b[j] = 1;
    const auto& x = a.buffers[i];
    const auto& y = b.buffers[j];
    if (x.size == y.size && x.shape == y.shape) {
      ++d.unchanged;
      return;
    }
    d.changed.push_back({y.name, x.shape, y.shape, x.size, y.size, at_peak_a[i] != 0, at_peak_b[j] != 0,
                         y.source.empty() ? x.source : y.source});
  };
  for (const auto key : keys) {
    std::multimap<std::string, std::size_t> index;
    for (std::size_t i = 0; i < a.buffers.size(); ++i) {
      if (used_a[i] == 0) {
        auto k = key(a.buffers[i]);
        if (!k.empty()) index.emplace(std::move(k), i);
      }
    }
    for (std::size_t j = 0; j < b.buffers.size(); ++j) {
      if (used_b[j] != 0) continue;
      const auto k = key(b.buffers[j]);
      if (k.empty()) continue;
      for (auto [lo, hi] = index.equal_range(k); lo != hi; ++lo) {
        if (used_a[lo->second] == 0) {
          record(lo->second, j);
          break;
        }
      }
    }
  }
  for (std::size_t i = 0; i < a.buffers.size(); ++i) {
    if (used_a[i] != 0) continue;
    const auto& x = a.buffers[i];
    d.removed.push_back({x.name, x.shape, {}, x.size, 0, at_peak_a[i] != 0, false, x.source});
  }
  for (std::size_t j = 0; j < b.buffers.size(); ++j) {
    if (used_b[j] != 0) continue;
    const auto& y = b.buffers[j];
    d.added.push_back({y.name, {}, y.shape, 0, y.size, false, at_peak_b[j] != 0, y.source});
  }
  auto by_delta = [](const buffer_change& x, const buffer_change& y) {
    const auto dx = x.delta() < 0 ? -x.delta() : x.delta();
    const auto dy = y.delta() < 0 ? -y.delta() : y.delta();
    return std::tie(dy, x.name) < std::tie(dx, y.name);
  };
  std::stable_sort(d.changed.begin(), d.changed.end(), by_delta);
  std::stable_sort(d.added.begin(), d.added.end(), by_delta);
  std::stable_sort(d.removed.begin(), d.removed.end(), by_delta);
  return d;
}

/// "1.50 MiB" / "512 B": byte counts for people (binary units, three significant digits).
[[nodiscard]] inline std::string human_bytes(std::int64_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  const bool negative = bytes < 0;
  double v = negative ? -static_cast<double>(bytes) : static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  std::string s = negative ? "-" : "";
  if (u == 0) return s + std::to_string(negative ? -bytes : bytes) + " B";
  // Three significant digits without <cstdio>: hundredths, tenths or units.
  const int decimals = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  double scale = decimals == 2 ? 100.0 : decimals == 1 ? 10.0 : 1.0;
  const auto n = static_cast<std::int64_t>(v * scale + 0.5);
  const auto whole = n / static_cast<std::int64_t>(scale);
  const auto frac = n % static_cast<std::int64_t>(scale);
  s += std::to_string(whole);
  if (decimals > 0) {
    std::string f = std::to_string(frac);
    while (static_cast<int>(f.size()) < decimals) f.insert(f.begin(), '0');
    s += "." + f;
  }
  return s + " " + units[u];
}

}  // namespace xlamem::report
