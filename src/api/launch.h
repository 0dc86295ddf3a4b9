// How a launch (POST /v1/instances) is read, and launch templates: named sets of its fields that
// the operator defines in allotd's config (`[templates.NAME]` tables) and that tenants launch with
// `"template": NAME`, overriding any of them.
#pragma once

#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/request.h"
#include "common/error.h"
#include "core/model/cluster.h"

namespace allot {

// A launch's fields as read: the project it names (none: the tenant's only one) and its spec.
struct Launch {
  std::optional<std::string> project_id;
  InstanceSpec spec;
};

// Reads every field of a launch strictly: unknown fields, wrong types and malformed values each
// fail with their own code. The core checks the spec's values (CreateInstance).
[[nodiscard]] Result<Launch> read_launch(JsonBody& body);

struct LaunchTemplate {
  std::string name;
  std::string description;
  // Fields of a launch: any but project_id and template. A template without a command takes the
  // launch's.
  nlohmann::json fields = nlohmann::json::object();
};

using LaunchTemplates = std::map<std::string, LaunchTemplate>;
// Templates allotd takes from its config: GET /v1/templates lists them on a few pages.
inline constexpr size_t kMaxLaunchTemplates = 200;

// The template of that name; kNotFound otherwise (the name echoed only when it could be one).
[[nodiscard]] Result<const LaunchTemplate*> find_template(const LaunchTemplates& templates,
                                                          const std::string& name);

// The launch a template and a request body make: the template's fields with the body's (all but
// "template") in their place. env and labels are merged name by name, the body's values winning;
// a body that asks for GPUs (gpus or gpu_milli) replaces the template's GPU request whole.
nlohmann::json with_template(const LaunchTemplate& launch_template, const nlohmann::json& body);

// The launch fields that make `spec` again (read_launch's names): its GPU request, placement,
// resources, image, command, env, labels, limits, idle policy and volumes (by name). Not its
// ports, nodes or project, which a service replica's launch fields never hold.
nlohmann::json launch_fields(const InstanceSpec& spec);

// Reads a template's fields as a launch would and checks the spec as the core would, so that a
// template that no launch could use is refused when allotd starts. kInvalidArgument (or the
// field's own code) names the template and what is wrong.
[[nodiscard]] Status check_template(const LaunchTemplate& launch_template);

// The template as GET /v1/templates shows it: its name, description and fields.
nlohmann::json to_json(const LaunchTemplate& launch_template);

}  // namespace allot
