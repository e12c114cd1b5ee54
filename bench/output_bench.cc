// Output capture: the memory and time RunProcess needs for long outputs now
// that it keeps a head and a tail ring instead of everything (issue 10).
// Prints, for each size, the wall time, the bytes kept and counted, and the
// growth of this process's peak RSS (VmHWM) while capturing.
#include <cstdio>
#include <fstream>
#include <string>

#include "sandbox/process.h"
#include "sandbox/truncate.h"

namespace {

long PeakRssKb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

}  // namespace

int main() {
  using namespace codex::sandbox;
  std::printf("%-14s %10s %12s %14s %14s %s\n", "output", "wall_ms", "kept_bytes", "omitted_bytes",
              "peak_rss_kb+", "last line seen");
  for (long mb : {1L, 10L, 100L, 500L}) {
    SpawnOptions options;
    options.argv = {"sh", "-c",
                    "head -c " + std::to_string(mb * 1000 * 1000) +
                        " /dev/zero | tr '\\0' x; echo; echo LAST-LINE"};
    options.timeout_ms = 600'000;
    const long before = PeakRssKb();
    auto r = RunProcess(options);
    const long after = PeakRssKb();
    if (!r.ok()) {
      std::printf("%ld MB: error: %s\n", mb, r.status().message().c_str());
      return 1;
    }
    const OutputGap gap{r->output_gap_offset, r->output_dropped, r->output_dropped_lines};
    const std::string shown = TruncateHeadTail(r->output, gap);
    std::printf("%-14s %10lld %12zu %14lld %14ld %s\n", (std::to_string(mb) + " MB").c_str(),
                static_cast<long long>(r->wall_ms), r->output.size(),
                static_cast<long long>(r->output_dropped), after - before,
                shown.ends_with("LAST-LINE\n") ? "yes" : "NO");
  }
  return 0;
}
