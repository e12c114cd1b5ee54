#include "cli/exit_codes.h"

#include <cstdio>

#include "cli/terminal_text.h"
#include "core/model_client.h"
#include "core/session_store.h"
#include "core/store_location.h"

namespace codex::cli {

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
      // A request the server refused is not a mistake on our command line.
      return status.reason() == core::reason::kRejectedByServer ? kExitError : kExitUsage;
    case StatusCode::kNotFound:
      return kExitNotFound;
    case StatusCode::kUnauthenticated:
      return kExitAuth;
    case StatusCode::kCancelled:
      return kExitInterrupted;
    case StatusCode::kFailedPrecondition:
      return status.reason() == core::reason::kSessionAdvanced ||
                     status.reason() == core::reason::kSessionBusy
                 ? kExitConflict
                 : kExitError;
    default:
      return kExitError;
  }
}

namespace {

// Messages quote what they were given; a 100 KB argument must not make a
// 100 KB line. Longer than this, the middle is left out: the start says what
// was wrong, the end what to do.
constexpr size_t kMaxErrorLine = 1024;
constexpr size_t kErrorLineKept = 480;  // bytes kept at each end

// `text` with at most kMaxErrorLine bytes, cut on UTF-8 character boundaries.
std::string Clipped(const std::string& text) {
  if (text.size() <= kMaxErrorLine) return text;
  const auto continuation = [&](size_t i) { return (text[i] & 0xC0) == 0x80; };
  size_t head = kErrorLineKept;
  while (head > 0 && continuation(head)) --head;
  size_t tail = text.size() - kErrorLineKept;
  while (tail < text.size() && continuation(tail)) ++tail;
  return text.substr(0, head) + " … (" + std::to_string(tail - head) + " bytes left out) … " +
         text.substr(tail);
}

}  // namespace

void PrintError(const Status& status) {
  if (status.reason() == kStdoutReaderGone) return;
  // A store URL may be quoted; its password never is (core/store_location.h).
  // One line whatever the message quotes (an argument, a title, a server's
  // answer): a line break in it is shown as \n or \r, so none can split the
  // line or forge a second "error:" line.
  std::string line;
  for (char c : Clipped(core::RedactSecrets(status.message()))) {
    if (c == '\n') {
      line += "\\n";
    } else if (c == '\r') {
      line += "\\r";
    } else {
      line += c;
    }
  }
  PrintF(stderr, "error: %s\n", line.c_str());
}

int ReportError(const Status& status) {
  PrintError(status);
  return ExitCodeFor(status);
}

void CommandOutcome::Set(Status status) {
  if (status.ok()) {
    result_ = kExitOk;
  } else {
    result_ = std::move(status);
  }
}

void CommandOutcome::Set(Result<int> exit_code) { result_ = std::move(exit_code); }

int CommandOutcome::Finish() const {
  if (!result_.ok()) return ReportError(result_.status());
  // A command that succeeded but whose output did not all reach stdout has
  // lost it: that is a failure too (exit 1), never a silent 0.
  if (*result_ == kExitOk) {
    if (Status written = StdoutWritten(); !written.ok()) return ReportError(written);
  }
  return *result_;
}

}  // namespace codex::cli
