// Launch templates from allotd's config file: one `[templates.NAME]` table each, holding a
// `description` and any fields of POST /v1/instances but project_id (api/launch.h).
#pragma once

#include <string_view>

#include <toml++/toml.h>

#include "api/launch.h"
#include "common/error.h"

namespace allot {

// Reads the `templates` table and checks every template as a launch would read it. Fails with
// kInvalidArgument naming the file, the template and the field at fault.
[[nodiscard]] Result<LaunchTemplates> read_templates(const toml::node& node, std::string_view path);

}  // namespace allot
