#include "core/apply_patch_tool.h"

namespace codex::core {
namespace {

// Written for this project from the format described in apply_patch.h. The
// first chunk of an Update may omit its @@ header; later chunks need one, so
// consecutive chunks never parse two ways.
constexpr std::string_view kGrammar = R"lark(start: begin_patch file_op+ end_patch

begin_patch: "*** Begin Patch" LF
end_patch: "*** End Patch" LF?

file_op: add_file | delete_file | update_file

add_file: "*** Add File: " path LF added_line*
delete_file: "*** Delete File: " path LF
update_file: "*** Update File: " path LF move_to? first_chunk chunk*

move_to: "*** Move to: " path LF

first_chunk: chunk_header* chunk_body
chunk: chunk_header+ chunk_body
chunk_header: "@@" LF | "@@ " /(.+)/ LF
chunk_body: chunk_line+ end_of_file?
chunk_line: (" " | "-" | "+") /(.*)/ LF
end_of_file: "*** End of File" LF

added_line: "+" /(.*)/ LF
path: /(.+)/

%import common.LF
)lark";

constexpr std::string_view kFreeformDescription =
    "Edit files by sending a patch. This is a FREEFORM tool: send the patch text itself, "
    "not JSON. Paths are relative to the working directory, never absolute.";

constexpr std::string_view kFunctionDescription =
    R"(Edit files by applying a patch. `input` is the whole patch:

*** Begin Patch
*** Add File: <path>            create (or overwrite) a file; every line follows with a leading +
+first line of the new file
*** Delete File: <path>         remove a file
*** Update File: <path>         change a file in place
*** Move to: <new path>         (optional, right after Update File) also rename it
@@ <enclosing line>             start of a change; the text after "@@ " (optional) names a line such as a class or function definition that comes before the change, to pick the right place
 an unchanged context line (leading space)
-a removed line
+an added line
*** End of File                 (optional) the change is at the very end of the file
*** End Patch

Show about 3 lines of unchanged context before and after each change, and use one @@ section per separate place in a file. Paths are relative to the working directory, never absolute.)";

constexpr std::string_view kInputDescription =
    "The whole patch, from '*** Begin Patch' to '*** End Patch'.";

}  // namespace

std::string_view ApplyPatchLarkGrammar() { return kGrammar; }

nlohmann::ordered_json ApplyPatchToolDefinition(ApplyPatchToolType type) {
  using Json = nlohmann::ordered_json;
  if (type == ApplyPatchToolType::kFreeform) {
    Json format = Json::object();
    format["type"] = "grammar";
    format["syntax"] = "lark";
    format["definition"] = std::string(kGrammar);
    Json tool = Json::object();
    tool["type"] = "custom";
    tool["name"] = "apply_patch";
    tool["description"] = std::string(kFreeformDescription);
    tool["format"] = std::move(format);
    return tool;
  }
  Json input = Json::object();
  input["type"] = "string";
  input["description"] = std::string(kInputDescription);
  Json parameters = Json::object();
  parameters["type"] = "object";
  parameters["properties"] = Json::object();
  parameters["properties"]["input"] = std::move(input);
  parameters["required"] = Json::array({"input"});
  parameters["additionalProperties"] = false;
  Json tool = Json::object();
  tool["type"] = "function";
  tool["name"] = "apply_patch";
  tool["description"] = std::string(kFunctionDescription);
  tool["parameters"] = std::move(parameters);
  tool["strict"] = false;
  return tool;
}

std::string ApplyPatchToolJson(ApplyPatchToolType type) {
  return ApplyPatchToolDefinition(type).dump();
}

}  // namespace codex::core
