// The `notify` config key, as in Codex: after each completed turn the
// configured program runs with its configured arguments plus one more, the
// turn-complete notification as JSON:
//   {"type":"agent-turn-complete","thread-id":…,"turn-id":…,"cwd":…,
//    "input-messages":[…],"last-assistant-message":…}
// The program runs detached (codex does not wait for it), with stdin and
// stdout on /dev/null so it cannot disturb `--json` output; stderr is shared.
// A program named without a '/' is found in the PATH entries no sandboxed
// command can write (sandbox/host_path.h): never one the model planted.
#pragma once

#include <string>
#include <vector>

namespace codex::cli {

struct TurnCompleteNotification {
  std::string thread_id;
  std::string turn_id;
  std::string cwd;
  std::vector<std::string> input_messages;
  std::string last_assistant_message;
};

// The JSON argument for `n`.
std::string NotificationJson(const TurnCompleteNotification& n);

// Starts `program_and_args` + [json] without waiting for it. Does nothing
// when `program_and_args` is empty. A program that cannot be started prints
// one "warning: …" line on stderr; the turn's result is not affected.
// `writable`: the session's model-writable roots (core::ModelWritableRootsFor),
// whose PATH entries are not searched.
void RunNotify(const std::vector<std::string>& program_and_args, const std::string& json,
               const std::vector<std::string>& writable);

}  // namespace codex::cli
