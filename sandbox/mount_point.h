// MountPoint: the empty directory bubblewrap needs to mount over a protected
// path that does not exist yet (a `.git` or `.codex` the command must not
// create), reserved for as long as a sandbox may use it and removed again
// when no sandbox does, so that running a command leaves no `.git` or
// `.codex` behind in the user's workspace or in /tmp.
//
// Every user of the path holds a shared flock(2) on the directory for the
// sandbox's whole life; the one that created it removes it at the end only
// when it can take the lock exclusively (nobody else mounts it) and the
// directory is still empty. A user that finds the directory removed under it
// (the lock taken on a deleted directory) makes it again. The lock's
// descriptor is close-on-exec and never reaches the sandboxed command (with
// it the command could write into the real directory under the mount).
//
// Within one process, every Confinement of the same path shares one
// reservation (the last one to end removes it). Left behind: the directory
// when its creating process ends while another process still uses it
// (neither then removes it: the other one did not create it),
// and when the process is killed before it can clean up. Git ignores an empty `.git` directory.
// Thread-safe: the lock is per descriptor, and each MountPoint has its own.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "sandbox/unique_fd.h"

namespace codex::sandbox {

class MountPoint {
 public:
  // Reserves `path` (absolute; its parent exists): makes it an empty
  // directory (0755) unless one is there, and takes the shared lock; or
  // shares this process's live reservation of it. Errors:
  // kFailedPrecondition when something other than a directory is there (the
  // path changed since the policy was computed: run again).
  static Result<std::shared_ptr<MountPoint>> Reserve(const std::string& path);

  // Releases the lock; removes the directory when this reservation made it,
  // no other process holds it and it is still empty.
  ~MountPoint();

  MountPoint(const MountPoint&) = delete;
  MountPoint& operator=(const MountPoint&) = delete;

  const std::string& path() const { return path_; }
  bool created() const { return created_; }

 private:
  MountPoint(std::string path, UniqueFd fd, bool created)
      : path_(std::move(path)), fd_(std::move(fd)), created_(created) {}

  std::string path_;
  UniqueFd fd_;
  bool created_ = false;
};

}  // namespace codex::sandbox
