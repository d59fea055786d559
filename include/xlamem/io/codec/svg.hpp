// SPDX-License-Identifier: Apache-2.0
/// @file
/// A memory-layout picture as SVG: time on x, offset on y (0 at the bottom), one rectangle per
/// buffer, with the peak and (optionally) the capacity marked as horizontal lines. Generic:
/// it draws `layout_rect`s, so anything with a live range and a byte range can use it (a
/// packing placement (`layout_of`, `io/packing/packing_report.hpp`), the temporary heap of a
/// compiled program). Readable for thousands of rectangles: fills without outlines below a few
/// pixels, a tooltip (`<title>`) per buffer, colours from a hash of the label so neighbours
/// differ.
///
/// Level of detail: above `layout_svg_options::max_rects` rectangles (10^5-10^6 buffers: a
/// picture of 100 MB or more that no viewer opens), the largest `max_rects` by drawn area are
/// drawn one by one and the others are merged into grey cells of `merge_cell` pixels that
/// show where they lie, with a note saying how many were merged. Tooltips are cut to
/// `max_label` bytes. So the output is bounded whatever the input: about 450 bytes per drawn
/// rectangle plus 90 per merged run (at most one per two cells), some 12 MB at the defaults.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "xlamem/error.hpp"
#include "xlamem/io/codec/safe_text.hpp"
#include "xlamem/io/codec/text_format.hpp"
#include "xlamem/output_file.hpp"

namespace xlamem {

/// One rectangle: live on `[begin, end)` (x), bytes `[offset, offset + size)` (y).
struct layout_rect {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t offset = 0;
  std::int64_t size = 0;
  std::string label;  ///< shown in the tooltip; also picks the colour
};

/// What to draw around the rectangles.
struct layout_svg_options {
  std::string title;           ///< heading above the plot
  std::int64_t capacity = -1;  ///< drawn as a line when >= 0
  std::int64_t peak = -1;      ///< drawn as a line; computed from the rectangles when < 0
  int width = 1200;            ///< picture size in pixels
  int height = 700;
  std::size_t max_rects = 20000;  ///< drawn one by one, the largest first; the rest merged (0: none merged)
  int merge_cell = 4;             ///< side in pixels of the cells the merged rectangles fill
  std::size_t max_label = 200;    ///< bytes of a label shown in its tooltip
};

namespace detail {

inline std::string svg_escape(const std::string& s) { return xml_text(s); }

inline std::string svg_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

/// A "nice" tick step (1, 2 or 5 times a power of ten, or of 1024 for bytes) giving about
/// `count` ticks over `range`.
inline double svg_tick(double range, int count, bool bytes) {
  if (range <= 0) return 1;
  const double raw = range / count;
  double base = 1;
  if (bytes) {
    while (base * 1024 <= raw) base *= 1024;
  }
  double p = base;
  while (p * 10 <= raw) p *= 10;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (p * m >= raw) return p * m;
  }
  return p * 10;
}

/// The plot area of a picture, in pixels.
struct svg_plot {
  double left, head, width, height;
};

/// Splits the rectangles of positive size into those drawn one by one (`shown`, the `max`
/// largest by drawn area, in input order) and the rest (`merged`); all are shown when `max`
/// is 0 or not exceeded.
template <class FX, class FY>
void svg_split_by_area(const std::vector<layout_rect>& rects, std::size_t max, FX X, FY Y, std::vector<std::size_t>& shown,
                       std::vector<std::size_t>& merged) {
  for (std::size_t i = 0; i < rects.size(); ++i) {
    if (rects[i].size > 0) shown.push_back(i);
  }
  if (max == 0 || shown.size() <= max) return;
  std::vector<double> areas(rects.size(), 0.0);
  for (const auto i : shown) {
    const auto& r = rects[i];
    areas[i] = (X(static_cast<double>(r.end)) - X(static_cast<double>(r.begin))) *
               (Y(static_cast<double>(r.offset)) - Y(static_cast<double>(r.offset + r.size)));
  }
  const auto larger = [&](std::size_t a, std::size_t b) { return areas[a] != areas[b] ? areas[a] > areas[b] : a < b; };
  std::nth_element(shown.begin(), shown.begin() + static_cast<std::ptrdiff_t>(max), shown.end(), larger);
  merged.assign(shown.begin() + static_cast<std::ptrdiff_t>(max), shown.end());
  shown.resize(max);
  std::sort(shown.begin(), shown.end());  // drawn in the input's order, as without merging
}

/// Draws the `merged` rectangles as grey cells of `cell` pixels where any of them lies, and a
/// note under the title. A rectangle marks, row by row, +1 at its first and -1 past its last
/// column (O(rows it spans)); then one rectangle per run of covered cells in a row.
template <class FX, class FY>
void svg_merged_cells(std::string& out, const std::vector<layout_rect>& rects, std::size_t shown,
                      const std::vector<std::size_t>& merged, FX X, FY Y, svg_plot plot, int merge_cell) {
  const int cell = std::max(1, merge_cell);
  const auto cols = static_cast<std::size_t>(std::ceil(plot.width / cell));
  const auto rows = static_cast<std::size_t>(std::ceil(plot.height / cell));
  std::vector<std::int32_t> edge(rows * (cols + 1), 0);
  auto index = [&](double v, double origin, std::size_t limit) {
    return std::min(limit, static_cast<std::size_t>(std::max(0.0, (v - origin) / cell)));
  };
  for (const auto i : merged) {
    const auto& r = rects[i];
    const auto c0 = index(X(static_cast<double>(r.begin)), plot.left, cols - 1);
    const auto c1 = std::max(c0 + 1, index(X(static_cast<double>(r.end)) + cell - 1e-9, plot.left, cols));
    const auto r0 = index(Y(static_cast<double>(r.offset + r.size)), plot.head, rows - 1);
    const auto r1 = std::max(r0 + 1, index(Y(static_cast<double>(r.offset)) + cell - 1e-9, plot.head, rows));
    for (auto row = r0; row < r1; ++row) {
      ++edge[row * (cols + 1) + c0];
      --edge[row * (cols + 1) + c1];
    }
  }
  out += "<g fill=\"#8a8a8a\"><title>" + std::to_string(merged.size()) + " smaller buffers merged (level of detail)</title>\n";
  const auto step = static_cast<std::size_t>(cell);
  for (std::size_t row = 0; row < rows; ++row) {
    std::int32_t depth = 0;
    std::size_t run = 0;
    for (std::size_t c = 0; c <= cols; ++c) {
      const bool was = depth > 0;
      depth += edge[row * (cols + 1) + c];
      if (!was && depth > 0) run = c;
      if (was && depth <= 0) {
        out += "<rect x=\"" + svg_num(plot.left + static_cast<double>(run * step)) + "\" y=\"" +
               svg_num(plot.head + static_cast<double>(row * step)) + "\" width=\"" + std::to_string((c - run) * step) +
               "\" height=\"" + std::to_string(cell) + "\"/>\n";
      }
    }
  }
  out += "</g>\n<text x=\"" + svg_num(plot.left + plot.width) + "\" y=\"" + svg_num(plot.head - 6) +
         "\" text-anchor=\"end\" font-size=\"11\" fill=\"#555\">level of detail: the " + std::to_string(shown) +
         " largest of " + std::to_string(shown + merged.size()) + " buffers drawn, " + std::to_string(merged.size()) +
         " merged into grey " + std::to_string(cell) + "-pixel cells</text>\n";
}

}  // namespace detail

/// Renders the rectangles as a standalone SVG document.
[[nodiscard]] inline std::string layout_svg(const std::vector<layout_rect>& rects, const layout_svg_options& o = {}) {
  using detail::svg_num;
  std::int64_t t0 = 0, t1 = 1, peak = 0;
  bool first = true;
  for (const auto& r : rects) {
    if (first) {
      t0 = r.begin;
      t1 = r.end;
      first = false;
    }
    t0 = std::min(t0, r.begin);
    t1 = std::max(t1, r.end);
    if (r.size > 0) peak = std::max(peak, r.offset + r.size);
  }
  if (t1 <= t0) t1 = t0 + 1;
  if (o.peak >= 0) peak = o.peak;
  const std::int64_t top = std::max<std::int64_t>({peak, o.capacity, 1});
  const double ymax = static_cast<double>(top) * 1.06;
  const int w = std::max(200, o.width), h = std::max(150, o.height);
  const double left = 90, right = 20, head = o.title.empty() ? 20 : 44, bottom = 40;
  const double pw = w - left - right, ph = h - head - bottom;
  auto X = [&](double t) { return left + (t - static_cast<double>(t0)) / static_cast<double>(t1 - t0) * pw; };
  auto Y = [&](double b) { return head + ph - b / ymax * ph; };

  std::string out;
  out.reserve(256 + std::min(rects.size(), o.max_rects > 0 ? o.max_rects : rects.size()) * 160);
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) + "\" height=\"" + std::to_string(h) +
         "\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(h) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (!o.title.empty()) {
    out += "<text x=\"" + svg_num(left) + "\" y=\"26\" font-size=\"16\" font-weight=\"bold\">" +
           detail::svg_escape(o.title) + "</text>\n";
  }
  // Axes and grid.
  out += "<g stroke=\"#ddd\" stroke-width=\"1\">\n";
  const double ystep = detail::svg_tick(ymax, 8, true);
  for (double b = 0; b <= ymax; b += ystep) {
    out += "<line x1=\"" + svg_num(left) + "\" x2=\"" + svg_num(left + pw) + "\" y1=\"" + svg_num(Y(b)) + "\" y2=\"" +
           svg_num(Y(b)) + "\"/>\n";
  }
  out += "</g>\n<g fill=\"#444\" text-anchor=\"end\">\n";
  for (double b = 0; b <= ymax; b += ystep) {
    out += "<text x=\"" + svg_num(left - 6) + "\" y=\"" + svg_num(Y(b) + 4) + "\">" +
           human_bytes(static_cast<std::int64_t>(b)) + "</text>\n";
  }
  out += "</g>\n<g fill=\"#444\" text-anchor=\"middle\">\n";
  const double tstep = detail::svg_tick(static_cast<double>(t1 - t0), 10, false);
  for (double t = std::ceil(static_cast<double>(t0) / tstep) * tstep; t <= static_cast<double>(t1); t += tstep) {
    out += "<text x=\"" + svg_num(X(t)) + "\" y=\"" + svg_num(head + ph + 16) + "\">" +
           std::to_string(static_cast<std::int64_t>(t)) + "</text>\n";
  }
  out += "<text x=\"" + svg_num(left + pw / 2) + "\" y=\"" + svg_num(h - 6.0) + "\">time</text>\n</g>\n";
  out += "<rect x=\"" + svg_num(left) + "\" y=\"" + svg_num(head) + "\" width=\"" + svg_num(pw) + "\" height=\"" +
         svg_num(ph) + "\" fill=\"none\" stroke=\"#888\"/>\n";
  // Level of detail: the largest rectangles on the picture drawn one by one, the rest merged.
  std::vector<std::size_t> shown, merged;
  detail::svg_split_by_area(rects, o.max_rects, X, Y, shown, merged);
  if (!merged.empty()) detail::svg_merged_cells(out, rects, shown.size(), merged, X, Y, {left, head, pw, ph}, o.merge_cell);
  // Buffers.
  out += "<g>\n";
  for (const auto index : shown) {
    const auto& r = rects[index];
    const double x = X(static_cast<double>(r.begin)), x2 = X(static_cast<double>(r.end));
    const double y = Y(static_cast<double>(r.offset + r.size)), y2 = Y(static_cast<double>(r.offset));
    std::uint64_t hash = 1469598103934665603ULL;
    for (const char c : r.label) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    const int hue = static_cast<int>(hash % 360);
    const int light = 55 + static_cast<int>((hash >> 16) % 20);
    const bool outline = (x2 - x) > 3 && (y2 - y) > 3;
    out += "<rect x=\"" + svg_num(x) + "\" y=\"" + svg_num(y) + "\" width=\"" + svg_num(std::max(0.3, x2 - x)) +
           "\" height=\"" + svg_num(std::max(0.3, y2 - y)) + "\" fill=\"hsl(" + std::to_string(hue) + ",60%," +
           std::to_string(light) + "%)\"" + (outline ? " stroke=\"#333\" stroke-width=\"0.4\"" : "") + "><title>" +
           detail::svg_escape(clip(r.label, o.max_label)) + ": [" + std::to_string(r.begin) + ", " + std::to_string(r.end) + "), " +
           std::to_string(r.size) + " B at " + std::to_string(r.offset) + "</title></rect>\n";
  }
  out += "</g>\n";
  // Peak and capacity.
  auto hline = [&](std::int64_t v, const char* colour, const std::string& text, bool dashed) {
    out += "<line x1=\"" + svg_num(left) + "\" x2=\"" + svg_num(left + pw) + "\" y1=\"" + svg_num(Y(static_cast<double>(v))) +
           "\" y2=\"" + svg_num(Y(static_cast<double>(v))) + "\" stroke=\"" + colour + "\" stroke-width=\"1.5\"" +
           (dashed ? " stroke-dasharray=\"6,4\"" : "") + "/>\n";
    out += "<text x=\"" + svg_num(left + pw - 4) + "\" y=\"" + svg_num(Y(static_cast<double>(v)) - 4) +
           "\" text-anchor=\"end\" fill=\"" + colour + "\">" + detail::svg_escape(text) + "</text>\n";
  };
  if (o.capacity >= 0) hline(o.capacity, "#1f5fbf", "capacity " + human_bytes(o.capacity), false);
  hline(peak, "#c0392b", "peak " + human_bytes(peak), true);
  out += "</svg>\n";
  return out;
}

/// Writes an SVG document to a file.
[[nodiscard]] inline result<void> write_svg_file(const std::string& path, const std::string& svg) {
  return write_output_file(path, svg);
}

}  // namespace xlamem
