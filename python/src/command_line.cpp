// SPDX-License-Identifier: Apache-2.0
// `python -m xlamem ARGS...`: the xlamem tool's own front door (tools/xlamem/command_line.hpp),
// compiled into the extension, so that its commands, options, defaults, help, output and exit
// status are the tool's by construction. What Python adds: the tool's standard streams are
// Python's sys.stdout, sys.stderr and sys.stdin (a notebook, pytest's capture and
// contextlib.redirect_stdout see its output), and Ctrl-C raises KeyboardInterrupt
// (`interruptible`) after the solvers of plan, diff and pack stop.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <vector>

#include "command_line.hpp"
#include "interruptible.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

/// One standard stream of the tool as Python gives it: `call` is write(bytes) or
/// read(size) -> bytes, called with the GIL from the thread the tool runs on.
struct python_stream {
  const nb::callable* call;
  const xlamem::cancellation_flag* cancel;  // once set, output is dropped, as the answer is
};

ssize_t write_to_python(void* cookie, const char* data, std::size_t size) {
  const auto* s = static_cast<const python_stream*>(cookie);
  if (s->cancel->load(std::memory_order_relaxed)) return static_cast<ssize_t>(size);
  nb::gil_scoped_acquire gil;
  try {
    (*s->call)(nb::bytes(data, size));
    return static_cast<ssize_t>(size);
  } catch (const nb::python_error& e) {  // the tool says it cannot write, as for a closed pipe
    errno = e.matches(PyExc_BrokenPipeError) ? EPIPE : EIO;
    return -1;
  }
}

ssize_t read_from_python(void* cookie, char* buffer, std::size_t size) {
  const auto* s = static_cast<const python_stream*>(cookie);
  nb::gil_scoped_acquire gil;
  try {
    const auto data = nb::cast<nb::bytes>((*s->call)(size));
    const std::size_t n = std::min(size, data.size());
    std::memcpy(buffer, data.c_str(), n);
    return static_cast<ssize_t>(n);
  } catch (const nb::python_error&) {  // pytest's captured stdin, a closed one: a read error
    errno = EIO;
    return -1;
  } catch (const nb::cast_error&) {
    errno = EIO;
    return -1;
  }
}

/// A C stream over `s`: glibc's fopencookie (musl has it too).
std::FILE* open_python_stream(python_stream& s, const char* mode) {
  cookie_io_functions_t io{};
  if (mode[0] == 'r') {
    io.read = read_from_python;
  } else {
    io.write = write_to_python;
  }
  return fopencookie(&s, mode, io);
}

/// The process's stdout, stderr and stdin replaced by Python's while the tool runs, and put
/// back after. The tool's commands print to the C streams (fmt::print), as an executable
/// does; glibc lets a program assign them. One run at a time: the streams are the process's.
class python_standard_streams {
 public:
  python_standard_streams(python_stream& out, python_stream& err, python_stream& in)
      : lock_(runs_), saved_{stdout, stderr, stdin} {
    std::fflush(stdout);
    std::fflush(stderr);
    stdout = open_python_stream(out, "w");
    stderr = open_python_stream(err, "w");
    stdin = open_python_stream(in, "r");
    if (!opened()) return;
    std::setvbuf(stderr, nullptr, _IONBF, 0);  // as the process's: each message as it comes
    std::setvbuf(stdin, nullptr, _IOFBF, std::size_t{1} << 20);  // few calls into Python
  }
  ~python_standard_streams() {
    std::FILE* mine[] = {stdout, stderr, stdin};
    stdout = saved_[0];
    stderr = saved_[1];
    stdin = saved_[2];
    for (std::FILE* f : mine) {
      if (f != nullptr) std::fclose(f);  // writes what is left (the tool flushed its output)
    }
  }
  python_standard_streams(const python_standard_streams&) = delete;
  python_standard_streams& operator=(const python_standard_streams&) = delete;

  /// Whether the three streams opened.
  [[nodiscard]] static bool opened() { return stdout != nullptr && stderr != nullptr && stdin != nullptr; }

 private:
  static inline std::mutex runs_;
  std::lock_guard<std::mutex> lock_;
  std::FILE* saved_[3];
};

/// `xlamem ARGS...` with Python's streams; its exit status.
int run_command_line(const std::vector<std::string>& args, const nb::callable& write_out,
                     const nb::callable& write_err, const nb::callable& read_in) {
  std::vector<const char*> argv{"xlamem"};
  for (const auto& a : args) argv.push_back(a.c_str());
  return xlamem::python::interruptible([&](const xlamem::cancellation_flag& cancel) {
    python_stream out{&write_out, &cancel}, err{&write_err, &cancel}, in{&read_in, &cancel};
    python_standard_streams streams(out, err, in);
    if (!python_standard_streams::opened()) throw std::runtime_error(std::string("xlamem: ") + std::strerror(errno));
    return xlamem::cli::run_command_line(static_cast<int>(argv.size()), argv.data(), &cancel);
  });
}

}  // namespace

/// Adds `run_command_line` to the extension (xlamem_module.cpp).
void add_command_line(nb::module_& m) {
  m.def("run_command_line", &run_command_line, "args"_a, "write_out"_a, "write_err"_a, "read_in"_a,
        "`xlamem ARGS...` (the tool's front door): write_out and write_err take bytes, read_in(size) gives "
        "bytes; returns the exit status");
}
