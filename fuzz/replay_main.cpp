// SPDX-License-Identifier: Apache-2.0
// A main for a libFuzzer harness without libFuzzer: feeds it every file under the paths given
// (folders are walked) and a fixed set of pseudo-random byte strings, so the ordinary build
// compiles every harness and runs its invariants (the `fuzz replay` tests). A failed invariant
// aborts, as under libFuzzer; a reproducer saved by `./run fuzz` is replayed by naming it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

constexpr std::uintmax_t kLargestInput = 1 << 20;  // as the harnesses' max_len, bounded

bool replay_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot open %s\n", path.string().c_str());
    return false;
  }
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
        if (!entry.is_regular_file() || entry.file_size() > kLargestInput) continue;
        if (!replay_file(entry.path())) return 1;
        ++files;
      }
    } else {
      if (!replay_file(arg)) return 1;
      ++files;
    }
  }
  // Deterministic noise (a 64-bit LCG): lengths 0..1023, both printable and raw bytes.
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  std::vector<std::uint8_t> buf;
  constexpr int kNoiseInputs = 256;
  for (int k = 0; k < kNoiseInputs; ++k) {
    buf.resize(static_cast<std::size_t>(k) * 4);
    for (auto& b : buf) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const auto r = static_cast<std::uint8_t>(state >> 56);
      b = (k % 2 == 0) ? static_cast<std::uint8_t>(' ' + r % 95) : r;
    }
    LLVMFuzzerTestOneInput(buf.data(), buf.size());
  }
  std::printf("replay: %zu files and %d generated inputs, every invariant held\n", files, kNoiseInputs);
  return 0;
}
