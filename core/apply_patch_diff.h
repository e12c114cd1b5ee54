// Unified diffs of apply_patch edits: "@@ -a,b +c,d @@" hunks with 3 lines
// of context and no file header lines, as `file_change` events and approval
// prompts show them. Pure functions; thread-safe. Internal to core/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/apply_patch_match.h"

namespace codex::core::patch_internal {

std::string UnifiedDiff(const std::vector<DiffOp>& script);

// Every line of `text` as one op (an added file: '+'; a deleted one: '-').
std::vector<DiffOp> WholeFileScript(std::string_view text, char op);

}  // namespace codex::core::patch_internal
