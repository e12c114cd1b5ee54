// LiveTurn: drives one turn (or a "!cmd") on a thread of its own while the
// thread that owns the terminal keeps the composer live: keys typed go to the
// composer, Enter steers the turn (the message is sent now, at the turn's next
// request boundary, as Codex does), Tab queues it for after the turn (so do
// Enter on a "/command" or "!cmd", and Enter while no model turn runs), Esc or
// Ctrl-C cancel the turn (Ctrl-C again warns, a third asks to quit; Ctrl-D
// asks to quit once it has ended), Ctrl-L
// and a resize redraw. Work the turn's thread must not do itself (an approval
// menu reads the keys) is handed over with RunOnUi and runs between keys.
//
// Threads: Run() on the terminal's thread; RunOnUi() from the turn's thread
// while Run() is in progress.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

#include "cli/interactive/composer.h"
#include "cli/interactive/terminal.h"
#include "cli/interactive/turn_view.h"
#include "core/cancel.h"

namespace codex::cli {

class LiveTurn {
 public:
  // `show_composer` draws the composer again (laid out for the width now).
  LiveTurn(Terminal& terminal, TurnView& view, Composer& composer,
           std::function<void()> show_composer)
      : terminal_(terminal),
        view_(view),
        composer_(composer),
        show_composer_(std::move(show_composer)) {}

  // Runs `work` on a new thread and returns when it has ended; the keys
  // cancel it through `cancel`. `steer`, when given, takes a message sent
  // with Enter during the turn; without it Enter queues.
  void Run(const std::function<void()>& work, core::CancelToken& cancel,
           std::function<void(const std::string&)> steer = {});
  // Runs `fn` on the thread in Run() and returns when it has run.
  void RunOnUi(const std::function<void()>& fn);

  // Ctrl-D (or Ctrl-C three times) during a turn: leave when it has ended.
  bool quit_requested() const { return quit_requested_; }
  // The last Run showed "Press Ctrl-C again to quit" (a second Ctrl-C while
  // the turn stopped): the next Ctrl-C at the prompt quits.
  bool quit_warned() const { return quit_warned_; }

 private:
  void RunUiCalls();
  // Acts on one event from the composer while the turn runs.
  void Handle(const EditorEvent& ev, core::CancelToken& cancel, bool* cancelled,
              const std::function<void(const std::string&)>& steer);

  Terminal& terminal_;
  TurnView& view_;
  Composer& composer_;
  std::function<void()> show_composer_;
  bool quit_requested_ = false;
  bool quit_warned_ = false;

  std::mutex mutex_;
  std::condition_variable done_;
  std::deque<const std::function<void()>*> calls_;
  size_t calls_run_ = 0;
};

}  // namespace codex::cli
