// quotas, reservations and prices: the operator's rules on who may hold which GPUs, and at what
// price.
#include "cli/commands.h"

namespace allot::cli {
namespace {

using nlohmann::json;

const std::vector<Column> kQuotaColumns = {
    {"id", "id"},           {"tenant", "tenant_id"}, {"project", "project_id"},
    {"model", "gpu_model"}, {"limit", "gpu_milli"},  {"used", "used_milli"}};
const std::vector<Column> kReservationColumns = {{"id", "id"},
                                                 {"tenant", "tenant_id"},
                                                 {"model", "gpu_model"},
                                                 {"gpus", "gpus"},
                                                 {"starts", "starts_at"},
                                                 {"ends", "ends_at"},
                                                 {"in force", "in_force"},
                                                 {"used", "used_milli"}};

const std::vector<Column> kPriceColumns = {{"model", "gpu_model"},   {"region", "region"},
                                           {"class", "price_class"}, {"gpu-hour", "gpu_hour"},
                                           {"from", "effective_at"}, {"in force", "in_force"}};

struct Options {
  std::string id, tenant, project, model, starts_at, ends_at, region, price_class, gpu_hour, at;
  int64_t gpus = -1;
  int limit = 0;
};

}  // namespace

void add_rules_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* quotas =
      app.add_subcommand("quotas", "hard GPU limits per tenant or project")->require_subcommand(1);
  add_tenant_list(*quotas, "list quotas with what they count now", "/v1/quotas", "include_ended",
                  "deleted ones", kQuotaColumns, action);
  CLI::App* quota_set = quotas->add_subcommand("set", "set a limit (operator admins)");
  quota_set->add_option("--tenant", o.tenant, "the tenant")->required();
  quota_set->add_option("--project", o.project, "only this project of it");
  quota_set->add_option("--model", o.model, "only GPUs of this model or family");
  quota_set->add_option("--gpus", o.gpus, "at most this many GPUs at once")
      ->required()
      ->check(CLI::NonNegativeNumber);
  quota_set->callback([&action] {
    action = show_call(
        "PUT", [] { return std::string("/v1/quotas"); },
        [] {
          json body{{"tenant_id", o.tenant}, {"gpus", o.gpus}};
          if (!o.project.empty()) body["project_id"] = o.project;
          if (!o.model.empty()) body["gpu_model"] = o.model;
          return body;
        });
  });
  CLI::App* quota_delete = quotas->add_subcommand("delete", "remove a limit (operator admins)");
  quota_delete->add_option("id", o.id, "its id")->required();
  quota_delete->callback(
      [&action] { action = show_call("DELETE", [] { return "/v1/quotas/" + o.id; }); });

  CLI::App* prices =
      app.add_subcommand("prices", "the price catalog: per GPU-hour, per model, region and class")
          ->require_subcommand(1);
  CLI::App* price_list = prices->add_subcommand("list", "prices in force, and changes to come");
  price_list->add_option("--at", o.at, "in force at this time (default: now)");
  price_list->add_option("--model", o.model, "only this GPU model");
  price_list->add_option("--region", o.region, "only this region");
  price_list->callback([&action] {
    action = show_list(
        [] {
          return "/v1/prices" +
                 query({{"at", &o.at}, {"gpu_model", &o.model}, {"region", &o.region}});
        },
        o.limit, kPriceColumns);
  });
  CLI::App* price_set = prices->add_subcommand("set", "set a price (operator admins)");
  price_set->add_option("--model", o.model, "GPU model, e.g. H100-80GB")->required();
  price_set->add_option("--region", o.region, "region")->required();
  price_set->add_option("--class", o.price_class, "on-demand (default), spot or reserved");
  price_set->add_option("--gpu-hour", o.gpu_hour, "per GPU-hour, e.g. 2.50")->required();
  price_set->add_option("--from", o.starts_at, "effective from (default: now; never earlier)");
  price_set->callback([&action] {
    action = show_call(
        "PUT", [] { return std::string("/v1/prices"); },
        [] {
          json body{{"gpu_model", o.model}, {"region", o.region}, {"gpu_hour", o.gpu_hour}};
          if (!o.price_class.empty()) body["price_class"] = o.price_class;
          if (!o.starts_at.empty()) body["effective_at"] = o.starts_at;
          return body;
        });
  });

  CLI::App* reservations =
      app.add_subcommand("reservations", "GPUs held for a tenant over a time window")
          ->require_subcommand(1);
  add_tenant_list(*reservations, "list reservations not yet over", "/v1/reservations",
                  "include_ended", "cancelled and past ones", kReservationColumns, action);
  CLI::App* res_create = reservations->add_subcommand("create", "reserve (operator admins)");
  res_create->add_option("--tenant", o.tenant, "for this tenant")->required();
  res_create->add_option("--model", o.model, "GPU model, e.g. H100-80GB")->required();
  res_create->add_option("--gpus", o.gpus, "how many")->required()->check(CLI::PositiveNumber);
  res_create->add_option("--from", o.starts_at, "start, e.g. 2026-12-01T09:00:00Z")->required();
  res_create->add_option("--until", o.ends_at, "end, e.g. 2026-12-02T09:00:00Z")->required();
  res_create->callback([&action] {
    action = show_call(
        "POST", [] { return std::string("/v1/reservations"); },
        [] {
          return json{{"tenant_id", o.tenant},
                      {"gpu_model", o.model},
                      {"gpus", o.gpus},
                      {"starts_at", o.starts_at},
                      {"ends_at", o.ends_at}};
        });
  });
  CLI::App* res_cancel = reservations->add_subcommand("cancel", "cancel one (operator admins)");
  res_cancel->add_option("id", o.id, "its id")->required();
  res_cancel->callback(
      [&action] { action = show_call("DELETE", [] { return "/v1/reservations/" + o.id; }); });
}

}  // namespace allot::cli
