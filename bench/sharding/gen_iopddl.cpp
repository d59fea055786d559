// SPDX-License-Identifier: Apache-2.0
// Writes a large generated IOPDDL problem (the JSON that io/sharding/iopddl_json.hpp reads) for the
// deadline and memory runs of `xlamem shard` (bench/sharding/large_problems.py):
//
//   gen_iopddl --nodes N [--edges M] [--shape mixed] [--min-strategies 1] [--max-strategies 8]
//              [--tightness 0.3] [--seed 1] [--output FILE]   (standard output without --output)
//
// Shapes of the edges: chain (i-1, i) then random pairs; random (uniform pairs); tree (each node
// below a recent one); grid (right and down neighbours on a sqrt(N)-wide grid); hubs (a third of
// the edges touch one of a few hundred hub nodes, so degrees are skewed as in real graphs); mixed
// (each edge from one of those at random). Past the shape's own edges, pairs are random.
//
// Nothing is picked to be easy: 1 to 8 strategies per node, a strategy that uses less memory
// costs more, live intervals mostly short with a few long ones, some nodes never live, edges
// whose matrices reward equal strategies, some "follow" edges (one permitted partner per
// strategy, as XLA writes aliases) and some with scattered forbidden (10^18) entries. A hidden
// labelling (every node at its least usage) is never forbidden, and the usage limit lies
// between that labelling's peak and the cheapest labelling's peak (`--tightness`, 0: the least
// peak), so a feasible answer exists but the cheapest does not fit.
//
// Every value is a hash of (seed, what, index), so memory is a few bytes per node whatever the
// size (10^7 nodes and 10^7 edges write about 2 GB).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::int64_t forbidden = 1'000'000'000'000'000'000;

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct options {
  std::uint64_t nodes = 1000, edges = 0, seed = 1;
  unsigned min_k = 1, max_k = 8;
  double tightness = 0.3;
  std::string shape = "mixed", output;
};

/// Deterministic random values: `at(what, i, j)` is uniform in [0, 2^64).
struct hasher {
  std::uint64_t seed;
  [[nodiscard]] std::uint64_t at(std::uint64_t what, std::uint64_t i, std::uint64_t j = 0) const {
    return mix(mix(mix(seed * 31 + what) ^ i) ^ (j * 0x632be59bd9b4e019ULL));
  }
  [[nodiscard]] std::uint64_t below(std::uint64_t n, std::uint64_t what, std::uint64_t i, std::uint64_t j = 0) const {
    return n == 0 ? 0 : at(what, i, j) % n;
  }
};

enum what : std::uint64_t { w_k, w_mem, w_cost, w_start, w_len, w_long, w_dead, w_shape, w_end, w_kind, w_entry, w_base, w_follow };

/// The generated problem, values computed on demand.
class generator {
 public:
  explicit generator(const options& o) : o_(o), h_{o.seed}, k_(o.nodes), least_(o.nodes) {
    width_ = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::sqrt(static_cast<double>(o.nodes))));
    hubs_ = std::max<std::uint64_t>(1, std::min<std::uint64_t>(o.nodes, 64 + o.nodes / 50000));
    for (std::uint64_t i = 0; i < o.nodes; ++i) {
      k_[i] = static_cast<std::uint8_t>(o.min_k + h_.below(o.max_k - o.min_k + 1, w_k, i));
      // The least usage, ties to the cheaper, then the first: as a solver's first answer picks.
      std::uint8_t best = 0;
      for (std::uint8_t s = 1; s < k_[i]; ++s) {
        if (usage(i, s) < usage(i, best) || (usage(i, s) == usage(i, best) && base_cost(i, s) < base_cost(i, best))) best = s;
      }
      least_[i] = best;
    }
  }

  [[nodiscard]] unsigned k(std::uint64_t i) const { return k_[i]; }
  /// A strategy that shards more (a higher divisor) uses less memory and costs more.
  [[nodiscard]] std::int64_t usage(std::uint64_t i, unsigned s) const {
    const auto mem = static_cast<std::int64_t>(1 + h_.below(1 << 20, w_mem, i));
    return mem >> divisor_log(i, s);
  }
  [[nodiscard]] std::int64_t cost(std::uint64_t i, unsigned s) const {
    if (s != least_[i] && h_.below(50, w_cost, i, s + 100) == 0) return forbidden;
    return base_cost(i, s);
  }
  /// [lo, hi): mostly short, one in a hundred long, one in fifty never live ([0, 0]).
  [[nodiscard]] std::pair<std::int64_t, std::int64_t> interval(std::uint64_t i) const {
    if (h_.below(50, w_dead, i) == 0) return {0, 0};
    const auto lo = static_cast<std::int64_t>(i + h_.below(8, w_start, i));
    const std::uint64_t len = h_.below(100, w_long, i) == 0 ? 1 + h_.below(std::max<std::uint64_t>(1, o_.nodes / 20), w_len, i)
                                                            : 1 + h_.below(24, w_len, i);
    return {lo, lo + static_cast<std::int64_t>(len)};
  }
  [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> edge(std::uint64_t e) const {
    const std::uint64_t n = o_.nodes;
    std::string_view shape = o_.shape;
    if (shape == "mixed") {
      static constexpr std::string_view shapes[] = {"chain", "random", "tree", "grid", "hubs"};
      shape = shapes[h_.below(5, w_kind, e, 7)];
    }
    std::uint64_t a = h_.below(n, w_shape, e), b = h_.below(n, w_end, e);
    if (shape == "chain" && e + 1 < n) a = e, b = e + 1;
    else if (shape == "tree" && a > 0) b = a - 1 - h_.below(std::min<std::uint64_t>(a, 64), w_end, e);
    else if (shape == "grid") b = h_.below(2, w_end, e) == 0 ? a + 1 : a + width_;
    else if (shape == "hubs" && h_.below(3, w_end, e, 1) == 0) b = h_.below(hubs_, w_end, e, 2) * (n / hubs_);
    if (b >= n || b == a) b = (a + 1) % n;
    return {a, b};
  }
  /// Entry (x, y) of edge e's matrix: equal strategies cost nothing; a follow edge permits one
  /// partner per strategy; a few edges forbid scattered pairs. (least, least) is always permitted.
  [[nodiscard]] std::int64_t edge_cost(std::uint64_t e, std::uint64_t a, std::uint64_t b, unsigned x, unsigned y) const {
    const std::uint64_t kind = h_.below(100, w_kind, e);
    const bool safe = x == least_[a] && y == least_[b];
    if (kind < 8 && !safe) {  // follow: y = f(x), f(least_a) = least_b
      const unsigned fx = x == least_[a] ? least_[b] : static_cast<unsigned>(h_.below(k_[b], w_follow, e, x));
      if (y != fx) return forbidden;
    }
    if (kind >= 8 && kind < 13 && !safe && h_.below(5, w_entry, e, x * 8 + y) == 0) return forbidden;
    if (x == y) return 0;
    return static_cast<std::int64_t>((1 + h_.below(2000, w_base, e)) * (1 + h_.below(4, w_entry, e, x * 8 + y + 64)));
  }
  /// The limit: the least peak plus `tightness` of the way to the cheapest labelling's peak.
  [[nodiscard]] std::int64_t limit() const {
    const auto least = peak([&](std::uint64_t i) { return static_cast<unsigned>(least_[i]); });
    const auto cheap = peak([&](std::uint64_t i) {
      unsigned best = 0;
      for (unsigned s = 1; s < k_[i]; ++s) if (cost(i, s) < cost(i, best)) best = s;
      return best;
    });
    return least + static_cast<std::int64_t>(o_.tightness * static_cast<double>(std::max<std::int64_t>(0, cheap - least)));
  }

 private:
  const options& o_;
  hasher h_;
  std::vector<std::uint8_t> k_, least_;
  std::uint64_t width_ = 1, hubs_ = 1;

  [[nodiscard]] std::int64_t base_cost(std::uint64_t i, unsigned s) const {
    return static_cast<std::int64_t>((1 + divisor_log(i, s)) * (1 + h_.below(1000, w_cost, i)) + h_.below(300, w_cost, i, s));
  }
  [[nodiscard]] unsigned divisor_log(std::uint64_t i, unsigned s) const {
    return static_cast<unsigned>(h_.below(4, w_mem, i, s + 1));
  }
  template <class Pick>
  [[nodiscard]] std::int64_t peak(Pick pick) const {
    std::vector<std::int64_t> diff(o_.nodes + o_.nodes / 20 + 64, 0);
    for (std::uint64_t i = 0; i < o_.nodes; ++i) {
      const auto [lo, hi] = interval(i);
      if (lo >= hi) continue;
      const std::int64_t u = usage(i, pick(i));
      diff[static_cast<std::size_t>(lo)] += u;
      diff[static_cast<std::size_t>(hi)] -= u;
    }
    std::int64_t load = 0, best = 0;
    for (const auto d : diff) best = std::max(best, load += d);
    return best;
  }
};

/// Buffered text output with fast integers.
class writer {
 public:
  explicit writer(std::FILE* f) : f_(f) { buf_.reserve(1 << 20); }
  ~writer() { flush(); }
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;
  void put(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= (1 << 20)) flush();
  }
  void num(std::int64_t v) {
    char tmp[24];
    const auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    put(std::string_view(tmp, static_cast<std::size_t>(r.ptr - tmp)));
  }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) {
      std::perror("gen_iopddl: write");
      std::exit(1);
    }
    buf_.clear();
  }

 private:
  std::FILE* f_;
  std::string buf_;
};

template <class Row>
void write_rows(writer& w, std::uint64_t count, Row row) {
  w.put("[");
  for (std::uint64_t i = 0; i < count; ++i) {
    w.put(i == 0 ? "\n" : ",\n");
    row(i);
  }
  w.put("]");
}

void write_problem(const options& o, const generator& g, writer& w) {
  w.put("{\"problem\": {\"name\": \"generated-" + o.shape + "-" + std::to_string(o.nodes) + "-seed-" + std::to_string(o.seed) +
        "\",\n\"nodes\": {\"intervals\": ");
  write_rows(w, o.nodes, [&](std::uint64_t i) {
    const auto [lo, hi] = g.interval(i);
    w.put("[");
    w.num(lo);
    w.put(",");
    w.num(hi);
    w.put("]");
  });
  for (const bool costs : {true, false}) {
    w.put(costs ? ",\n\"costs\": " : ",\n\"usages\": ");
    write_rows(w, o.nodes, [&](std::uint64_t i) {
      for (unsigned s = 0; s < g.k(i); ++s) {
        w.put(s == 0 ? "[" : ",");
        w.num(costs ? g.cost(i, s) : g.usage(i, s));
      }
      w.put("]");
    });
  }
  w.put("},\n\"edges\": {\"nodes\": ");
  write_rows(w, o.edges, [&](std::uint64_t e) {
    const auto [a, b] = g.edge(e);
    w.put("[");
    w.num(static_cast<std::int64_t>(a));
    w.put(",");
    w.num(static_cast<std::int64_t>(b));
    w.put("]");
  });
  w.put(",\n\"costs\": ");
  write_rows(w, o.edges, [&](std::uint64_t e) {
    const auto [a, b] = g.edge(e);
    for (unsigned x = 0; x < g.k(a); ++x) {
      for (unsigned y = 0; y < g.k(b); ++y) {
        w.put(x == 0 && y == 0 ? "[" : ",");
        w.num(g.edge_cost(e, a, b, x, y));
      }
    }
    w.put("]");
  });
  w.put("},\n\"usage_limit\": ");
  w.num(g.limit());
  w.put("}}\n");
}

[[noreturn]] void usage_error(const char* what) {
  std::fprintf(stderr,
               "gen_iopddl: %s\nusage: gen_iopddl --nodes N [--edges M] [--shape chain|random|tree|grid|hubs|mixed]\n"
               "                  [--min-strategies 1] [--max-strategies 8] [--tightness 0.3] [--seed 1] [--output FILE]\n",
               what);
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  bool edges_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (i + 1 >= argc) usage_error("every option takes a value");
    const char* v = argv[++i];
    char* end = nullptr;
    if (a == "--nodes") o.nodes = std::strtoull(v, &end, 10);
    else if (a == "--edges") o.edges = std::strtoull(v, &end, 10), edges_given = true;
    else if (a == "--seed") o.seed = std::strtoull(v, &end, 10);
    else if (a == "--min-strategies") o.min_k = static_cast<unsigned>(std::strtoul(v, &end, 10));
    else if (a == "--max-strategies") o.max_k = static_cast<unsigned>(std::strtoul(v, &end, 10));
    else if (a == "--tightness") o.tightness = std::strtod(v, &end);
    else if (a == "--shape") o.shape = v, end = const_cast<char*>(v) + std::strlen(v);
    else if (a == "--output") o.output = v, end = const_cast<char*>(v) + std::strlen(v);
    else usage_error("unknown option");
    if (end == v || *end != '\0') usage_error("a value is not a number");
  }
  if (!edges_given) o.edges = o.nodes;
  if (o.nodes < 2) usage_error("--nodes must be at least 2");
  if (o.min_k < 1 || o.max_k > 8 || o.min_k > o.max_k) usage_error("strategies must satisfy 1 <= min <= max <= 8");
  if (!(o.tightness >= 0 && o.tightness <= 1)) usage_error("--tightness must lie in [0, 1]");
  static constexpr std::string_view shapes[] = {"chain", "random", "tree", "grid", "hubs", "mixed"};
  if (std::find(std::begin(shapes), std::end(shapes), o.shape) == std::end(shapes)) usage_error("unknown --shape");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  std::FILE* f = o.output.empty() ? stdout : std::fopen(o.output.c_str(), "wb");
  if (f == nullptr) {
    std::perror(o.output.c_str());
    return 1;
  }
  const generator g(o);
  {
    writer w(f);
    write_problem(o, g, w);
  }
  if (f != stdout && std::fclose(f) != 0) {
    std::perror(o.output.c_str());
    return 1;
  }
  return 0;
}
