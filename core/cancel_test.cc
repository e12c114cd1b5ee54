// CancelToken (core/cancel.h): a child token (a group of tool calls run
// together) stops with its parent (the user's Ctrl-C), never the reverse.
#include "core/cancel.h"

#include <catch2/catch.hpp>

using codex::core::CancelToken;

TEST_CASE("a child token is cancelled with its parent, and alone without it") {
  CancelToken user;
  CancelToken group(&user);
  CancelToken other_group(&user);
  CHECK_FALSE(group.cancelled());
  // One call stops its group: the user's token and the other group go on.
  group.Cancel();
  CHECK(group.cancelled());
  CHECK_FALSE(user.cancelled());
  CHECK_FALSE(other_group.cancelled());
  // The user's Ctrl-C reaches every group.
  user.Cancel();
  CHECK(other_group.cancelled());
  user.Reset();
  CHECK_FALSE(other_group.cancelled());
  CHECK(group.cancelled());  // its own flag stays
}
