// WorkProgress: the progress of a long command (sessions import, migrate) on
// stderr, the one home for it. On a terminal, one line redrawn in place with a
// bar, the count, the rate and the time left:
//   importing [##########----------]  1234/20001 files  512/s  ETA 0:37
// otherwise a plain line every 2 s (a log or a CI job keeps them all):
//   importing: 1234/20001 files, 512/s, ETA 37 s
// and nothing when silent (--json: the command prints a summary object
// instead). A run that ends within the first interval prints nothing at all.
// The bar fits the terminal's width as it is at each redraw (the bar goes
// first, then the ETA, the rate, the verb): a line wider than the terminal would wrap,
// and erasing the row would leave the wrapped part behind. A terminal that
// knows no erase (TERM=dumb) gets the plain lines. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace codex::cli {

class WorkProgress {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  enum class Output { kTerminal, kLines, kSilent };

  // `verb` ("importing"), `unit` ("files"), `total` (0: unknown). `clock`
  // defaults to steady_clock::now (tests pass their own).
  WorkProgress(std::string verb, std::string unit, int64_t total, Output output,
               std::FILE* out = stderr, Clock clock = {});
  // kTerminal when stderr is a terminal, else kLines; kSilent when `silent`.
  static Output OutputFor(bool silent);

  // `done` units finished so far, and `part` (0 to 1) of the next one: the
  // bar, the rate and the ETA move within one big unit (a 1 GB rollout).
  void Update(int64_t done, double part = 0);
  // The total once the work has counted it (rm: the items a session takes).
  void SetTotal(int64_t total) { total_ = total; }
  // Erases the bar (terminal) before the command prints a line of its own;
  // the next Update draws it again, below that line.
  void Clear();
  // Ends the bar's line (terminal) once anything was shown.
  void Finish();

  // "1:05:07", "0:37": a duration for ETA.
  static std::string FormatDuration(std::chrono::seconds s);

 private:
  struct Parts {
    std::string count, rate, eta, bar;  // "1234/20001 files", "512/s", "ETA 0:37", "[##--]"
  };
  // `progress` = done + the part of the next unit.
  Parts PartsOf(int64_t done, double progress, double rate) const;
  // The plain line: "importing: 1234/20001 files, 512/s, ETA 37 s".
  std::string Line(int64_t done, double progress, double rate) const;
  // The bar's line for a terminal `columns` wide (0: unknown): the widest
  // form that fits, dropping the bar, the ETA, the rate, then the verb.
  std::string FittedLine(int64_t done, double progress, double rate, int columns) const;

  std::string verb_, unit_;
  int64_t total_;
  Output output_;
  std::FILE* out_;
  Clock clock_;
  std::chrono::steady_clock::time_point start_, last_;
  bool shown_ = false;
  bool cleared_ = false;  // shown, then erased by Clear: redraw at the next Update
};

}  // namespace codex::cli
