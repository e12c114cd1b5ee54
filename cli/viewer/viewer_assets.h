// The viewer page's files (cli/viewer/assets/), embedded into the binary at
// build time by embed_assets.cmake: nothing is read from disk or fetched.
#pragma once

#include <string_view>

namespace codex::cli::viewer {

struct ViewerAsset {
  std::string_view content_type;
  std::string_view body;
};

// "index.html", "app.js", "style.css"; nullptr for any other name.
const ViewerAsset* FindViewerAsset(std::string_view name);

}  // namespace codex::cli::viewer
