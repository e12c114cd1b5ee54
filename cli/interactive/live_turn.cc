#include "cli/interactive/live_turn.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "base/strings.h"

namespace codex::cli {

void LiveTurn::RunOnUi(const std::function<void()>& fn) {
  std::unique_lock<std::mutex> lock(mutex_);
  calls_.push_back(&fn);
  size_t ticket = calls_run_ + calls_.size();
  terminal_.Wake();
  done_.wait(lock, [&] { return calls_run_ >= ticket; });
}

void LiveTurn::RunUiCalls() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!calls_.empty()) {
    const std::function<void()>* fn = calls_.front();
    lock.unlock();
    (*fn)();
    show_composer_();
    lock.lock();
    calls_.pop_front();
    ++calls_run_;
    done_.notify_all();
  }
}

void LiveTurn::Handle(const EditorEvent& ev, core::CancelToken& cancel, bool* cancelled,
                      const std::function<void(const std::string&)>& steer) {
  switch (ev.kind) {
    case EditorEventKind::kSubmit:
      if (Trim(ev.text).empty()) break;
      // Commands and "!cmd" are not messages for the model: they wait.
      if (ev.queue || !steer || *cancelled || ev.text[0] == '/' || ev.text[0] == '!') {
        composer_.Queue(ev.text);
      } else {
        steer(ev.text);
      }
      break;
    case EditorEventKind::kEscape:
    case EditorEventKind::kInterrupt:
      if (!*cancelled) {
        *cancelled = true;
        cancel.Cancel();
      }
      // Ctrl-C again right after warns (as Codex does); a third quits.
      if (ev.kind == EditorEventKind::kInterrupt && ev.count == 2) {
        composer_.set_hint("Press Ctrl-C again to quit");
        quit_warned_ = true;
      }
      if (ev.kind == EditorEventKind::kInterrupt && ev.count >= 3) quit_requested_ = true;
      break;
    case EditorEventKind::kClearScreen:
      terminal_.Write("\x1b[H\x1b[2J");
      view_.Redraw(true);
      break;
    case EditorEventKind::kEof:
      // Ctrl-D on an empty composer: leave once the turn has ended (it is not
      // cut short: Esc or Ctrl-C do that).
      quit_requested_ = true;
      composer_.set_hint("leaving when this turn ends (Esc interrupts it)");
      break;
    case EditorEventKind::kNone:
      break;
  }
}

void LiveTurn::Run(const std::function<void()>& work, core::CancelToken& cancel,
                   std::function<void(const std::string&)> steer) {
  std::atomic<bool> done{false};
  std::thread worker([&] {
    work();
    done = true;
    terminal_.Wake();
  });
  composer_.set_turn_running(true);
  quit_warned_ = false;
  show_composer_();
  bool cancelled = false;
  while (!done) {
    RunUiCalls();
    std::string bytes;
    ReadStatus status = terminal_.Read(&bytes, composer_.has_pending() ? 50 : -1);
    if (status == ReadStatus::kEof) {
      cancel.Cancel();  // the terminal is gone: stop the turn, then leave
      break;
    }
    if (status == ReadStatus::kWoken || status == ReadStatus::kResized) {
      show_composer_();  // laid out again for the terminal's width
      continue;
    }
    EditorEvent ev = composer_.Feed(bytes, status == ReadStatus::kTimeout);
    while (ev.kind != EditorEventKind::kNone) {
      Handle(ev, cancel, &cancelled, steer);
      ev = composer_.Feed("", false);
    }
    show_composer_();
  }
  while (!done) {  // after EOF: let the cancelled turn finish, answering what it asks
    RunUiCalls();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // Read() would return at once
  }
  worker.join();
  composer_.set_turn_running(false);
  RunUiCalls();
}

}  // namespace codex::cli
