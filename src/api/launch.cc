#include "api/launch.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "api/placement_fields.h"
#include "api/routes_util.h"
#include "api/wire/cluster.h"
#include "common/image_ref.h"
#include "common/limits.h"
#include "common/money.h"
#include "core/cluster/cluster.h"
#include "core/kernel/validate.h"

namespace allot {

using nlohmann::json;

constexpr size_t kMaxTemplateName = 63;

namespace {

// "volumes": [{"volume": NAME or id, "path": "/data", "read_only": false}, ...]. The core checks
// the paths; create_instance finds the volumes.
Result<std::vector<VolumeMount>> read_volume_mounts(const json& value) {
  std::vector<VolumeMount> out;
  if (value.is_null()) return out;
  if (!value.is_array()) return fail(ErrorCode::kInvalidType, "'volumes' must be an array");
  if (value.size() > limits::kMaxVolumeMounts) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("an instance mounts at most {} volumes", limits::kMaxVolumeMounts));
  }
  for (const json& item : value) {
    if (!item.is_object()) {
      return fail(ErrorCode::kInvalidType,
                  "each of 'volumes' must be an object: {\"volume\", \"path\", \"read_only\"}");
    }
    JsonBody fields = JsonBody::from_document(item);
    auto [volume, path] = fields.required_string_fields({"volume", "path"});
    auto read_only = fields.optional_bool("read_only");
    if (auto ok = fields.finish(); !ok) {
      return fail(ok.error().code, "volumes: " + ok.error().message);
    }
    out.push_back(
        VolumeMount{.name = volume, .path = path, .read_only = read_only.value_or(false)});
  }
  return out;
}

// "ports": [8888, {"port": 8000, "protocol": "https", "public": true}, ...]: each 1..65535, once.
Result<std::vector<PublishedPort>> read_ports(const json& value) {
  std::vector<PublishedPort> out;
  if (value.is_null()) return out;
  if (!value.is_array()) return fail(ErrorCode::kInvalidType, "'ports' must be an array");
  if (value.size() > limits::kMaxPublishedPorts) {
    return fail(ErrorCode::kInvalidArgument,
                fmt::format("an instance publishes at most {} ports", limits::kMaxPublishedPorts));
  }
  for (const json& item : value) {
    PublishedPort port;
    std::optional<int64_t> number;
    if (item.is_number_integer()) {
      number = item.get<int64_t>();
    } else if (item.is_object()) {
      JsonBody fields = JsonBody::from_document(item);
      number = fields.optional_int("port", INT64_MIN, INT64_MAX);
      auto protocol = fields.optional_string("protocol");
      auto is_public = fields.optional_bool("public");
      if (auto ok = fields.finish(); !ok)
        return fail(ok.error().code, "ports: " + ok.error().message);
      if (!number) return fail(ErrorCode::kMissingField, "ports: 'port' is required");
      port.protocol = protocol.value_or("http");
      port.is_public = is_public.value_or(false);
    } else {
      return fail(ErrorCode::kInvalidType,
                  "each of 'ports' must be a number or an object: {\"port\", \"protocol\", "
                  "\"public\"}");
    }
    if (*number < 1 || *number > 65535) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("ports: {} is not a port (1 to 65535)", *number));
    }
    if (port.protocol != "http" && port.protocol != "https") {
      return fail(ErrorCode::kInvalidArgument, "ports: 'protocol' must be http or https");
    }
    port.port = static_cast<int>(*number);
    if (std::ranges::any_of(out, [&](const PublishedPort& p) { return p.port == port.port; })) {
      return fail(ErrorCode::kInvalidArgument,
                  fmt::format("ports: {} is published twice", port.port));
    }
    out.push_back(std::move(port));
  }
  return out;
}

}  // namespace

Result<Launch> read_launch(JsonBody& body) {
  auto project_id = body.optional_string("project_id");
  const PlacementFields placement = read_placement_fields(body);
  auto cpu_milli = body.optional_int("cpu_milli", 0, INT64_MAX / 4);
  auto memory_mib = body.optional_int("memory_mib", 0, INT64_MAX / 4);
  auto [region, image] = body.optional_string_fields({"region", "image"});
  auto command = body.optional_strings("command");
  auto env = body.optional_string_map("env");
  auto labels = body.optional_string_map("labels");
  auto max_run_s = body.optional_int("max_run_s", 0, INT64_MAX / 1000);
  auto interactive = body.optional_bool("interactive");
  auto requeue = body.optional_bool("requeue");
  auto nodes = body.optional_int("nodes", INT32_MIN, INT32_MAX);
  const json idle = body.optional_json("idle");
  const json volumes = body.optional_json("volumes");
  const json ports = body.optional_json("ports");
  ALLOT_TRY(body.finish());
  if (!command) return fail(ErrorCode::kMissingField, "'command' is required");
  if (image) {
    ALLOT_TRY(parse_image_ref(*image));
  }
  Launch launch{.project_id = project_id,
                .spec = {.cpu_milli = cpu_milli.value_or(0),
                         .memory_mib = memory_mib.value_or(0),
                         .region = region.value_or(""),
                         .image = image.value_or(""),
                         .command = *command,
                         .env = env.value_or(std::map<std::string, std::string>{}),
                         .labels = labels.value_or(std::map<std::string, std::string>{}),
                         .max_run_s = max_run_s.value_or(0),
                         .interactive = interactive.value_or(false),
                         .requeue = requeue.value_or(false),
                         .nodes = static_cast<int>(nodes.value_or(1))}};
  ALLOT_TRY(apply_placement_fields(placement, launch.spec));
  if (!idle.is_null()) {
    ALLOT_TRY_ASSIGN(launch.spec.idle, read_idle_policy(idle));
  }
  ALLOT_TRY_ASSIGN(launch.spec.volumes, read_volume_mounts(volumes));
  ALLOT_TRY_ASSIGN(launch.spec.ports, read_ports(ports));
  return launch;
}

Result<const LaunchTemplate*> find_template(const LaunchTemplates& templates,
                                            const std::string& name) {
  const auto found = templates.find(name);
  if (found != templates.end()) return &found->second;
  // A megabyte of a name is not sent back.
  const std::string shown = name.size() <= kMaxTemplateName ? name : "…";
  return fail(ErrorCode::kNotFound,
              fmt::format("no template '{}' (allot templates lists them)", shown));
}

json with_template(const LaunchTemplate& launch_template, const json& body) {
  json out = launch_template.fields;
  if (body.contains("gpus") || body.contains("gpu_milli")) {
    out.erase("gpus");
    out.erase("gpu_milli");
  }
  for (const auto& [name, value] : body.items()) {
    if (name == "template") continue;
    const bool merged = (name == "env" || name == "labels") && value.is_object() &&
                        out.contains(name) && out[name].is_object();
    if (merged) {
      out[name].update(value);  // Name by name, the body's winning.
    } else {
      out[name] = value;
    }
  }
  return out;
}

json launch_fields(const InstanceSpec& spec) {
  json out = {{"command", spec.command}, {"price_class", price_class_name(spec.price_class)}};
  if (spec.gpu_milli > 0) {
    out["gpu_milli"] = spec.gpu_milli;
  } else {
    out["gpus"] = spec.gpus;
  }
  auto put_set = [&out](const char* name, const auto& value, bool set) {
    if (set) out[name] = value;
  };
  put_set("gpu_models", spec.gpu_models, !spec.gpu_models.empty());
  put_set("regions", spec.regions, !spec.regions.empty());
  put_set("region", spec.region, !spec.region.empty());
  put_set("image", spec.image, !spec.image.empty());
  put_set("from", spec.from, !spec.from.empty());
  put_set("prefer", prefer_name(spec.prefer), spec.prefer != Prefer::kNone);
  put_set("max_price", Money::from_micros(spec.max_price_micros).to_string(),
          spec.max_price_micros > 0);
  put_set("cpu_milli", spec.cpu_milli, spec.cpu_milli > 0);
  put_set("memory_mib", spec.memory_mib, spec.memory_mib > 0);
  put_set("max_run_s", spec.max_run_s, spec.max_run_s > 0);
  put_set("env", spec.env, !spec.env.empty());
  put_set("labels", spec.labels, !spec.labels.empty());
  put_set("requeue", spec.requeue, spec.requeue);
  if (spec.idle) out["idle"] = to_json(*spec.idle);
  if (!spec.volumes.empty()) {
    json volumes = json::array();
    for (const VolumeMount& v : spec.volumes) {
      volumes.push_back({{"volume", v.name.empty() ? v.volume_id : v.name},
                         {"path", v.path},
                         {"read_only", v.read_only}});
    }
    out["volumes"] = std::move(volumes);
  }
  return out;
}

Status check_template(const LaunchTemplate& launch_template) {
  const std::string& name = launch_template.name;
  auto wrong = [&name](const std::string& why) {
    return fail(ErrorCode::kInvalidArgument, fmt::format("template '{}': {}", name, why));
  };
  // Names go in paths and on command lines.
  if (!is_plain_name(name, kMaxTemplateName)) {
    return wrong(
        "a name is 1 to 63 lowercase letters, digits, '-', '_' or '.', starting with a letter or "
        "digit");
  }
  if (!launch_template.fields.is_object()) return wrong("its fields must be a table");
  // Volumes are the tenant's, not the operator's: a template cannot name them.
  for (const char* field : {"project_id", "template", "volumes"}) {
    if (launch_template.fields.contains(field)) {
      return wrong(fmt::format("'{}' cannot be set in a template", field));
    }
  }
  // A template may leave the command to the launch: check the rest with a stand-in.
  json fields = launch_template.fields;
  if (!fields.contains("command")) fields["command"] = json::array({"true"});
  JsonBody body = JsonBody::from_document(std::move(fields));
  auto launch = read_launch(body);
  if (!launch) return wrong(launch.error().message);
  if (auto ok = check_instance_spec(launch->spec); !ok) return wrong(ok.error().message);
  return {};
}

json to_json(const LaunchTemplate& launch_template) {
  return {{"name", launch_template.name},
          {"description", launch_template.description},
          {"fields", launch_template.fields}};
}

}  // namespace allot
