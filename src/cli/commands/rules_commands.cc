// quotas, reservations and prices: the operator's rules on who may hold which GPUs, and at what
// price.
#include "cli/commands.h"

namespace allot::cli {
namespace {

using nlohmann::json;

// Limits and use in GPUs, as `quotas set --gpus` takes them (the JSON keeps milli-GPUs).
const std::vector<Column> kQuotaColumns = {{"id", "id"},
                                           {"tenant", "tenant_id"},
                                           {"project", "project_id"},
                                           {"model", "gpu_model"},
                                           {"gpus", "gpu_milli", Unit::kThousandths},
                                           {"used", "used_milli", Unit::kThousandths}};
const std::vector<Column> kReservationColumns = {{"id", "id"},
                                                 {"tenant", "tenant_id"},
                                                 {"model", "gpu_model"},
                                                 {"gpus", "gpus"},
                                                 {"starts", "starts_at"},
                                                 {"ends", "ends_at"},
                                                 {"in force", "in_force"},
                                                 {"used", "used_milli", Unit::kThousandths}};

const std::vector<Column> kPriceColumns = {
    {"model", "gpu_model"},           {"region", "region"},
    {"class", "price_class"},         {"gpu-hour", "gpu_hour"},
    {"GB-month", "storage_gb_month"}, {"from", "effective_at"},
    {"in force", "in_force"}};

struct Options {
  std::string tenant, model, starts_at, ends_at;
  int64_t gpus = -1;
};

}  // namespace

void add_rules_commands(CLI::App& app, Action& action) {
  static Options o;  // Lives as long as the program: the actions read it after parsing.

  CLI::App* quotas = add_group(app, "quotas", "hard GPU limits per tenant or project");
  add_tenant_list(*quotas, "list quotas with what they count now", "/v1/quotas", "include_ended",
                  "deleted ones", kQuotaColumns, action);
  add_body_call(
      *quotas, "set", "set a limit (operator admins)", "PUT", "/v1/quotas",
      {{.flag = "--tenant", .name = "tenant_id", .help = "the tenant", .required = true},
       {.flag = "--project", .name = "project_id", .help = "only this project of it"},
       {.flag = "--model", .name = "gpu_model", .help = "only GPUs of this model or family"},
       {.flag = "--gpus",
        .name = "gpus",
        .help = "at most this many GPUs at once",
        .required = true,
        .whole = true,
        .check = &CLI::NonNegativeNumber}},
      action);
  add_id_call(*quotas, "delete", "remove a limit (operator admins)", "DELETE", "/v1/quotas",
              action);

  CLI::App* prices =
      add_group(app, "prices",
                "the price catalog: per GPU-hour, per model, region and class; storage per "
                "GB-month, per region");
  add_list(*prices, "list", "prices in force, and changes to come", "/v1/prices",
           {{.flag = "--at", .name = "at", .help = "in force at this time (default: now)"},
            {.flag = "--model", .name = "gpu_model", .help = "only this GPU model"},
            {.flag = "--region", .name = "region", .help = "only this region"}},
           kPriceColumns, action, Limit::kNone);
  add_body_call(
      *prices, "set", "set a price (operator admins)", "PUT", "/v1/prices",
      {{.flag = "--model", .name = "gpu_model", .help = "GPU model, e.g. H100-80GB"},
       {.flag = "--region", .name = "region", .help = "region", .required = true},
       {.flag = "--class", .name = "price_class", .help = "on-demand (default), spot or reserved"},
       {.flag = "--gpu-hour", .name = "gpu_hour", .help = "per GPU-hour, e.g. 2.50"},
       {.flag = "--storage-gb-month",
        .name = "storage_gb_month",
        .help = "instead of a GPU price: the region's storage price per GB-month, e.g. 0.10"},
       {.flag = "--from",
        .name = "effective_at",
        .help = "effective from (default: now; never earlier)"}},
      action);

  CLI::App* reservations =
      add_group(app, "reservations", "GPUs held for a tenant over a time window");
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
  add_id_call(*reservations, "cancel", "cancel one (operator admins)", "DELETE", "/v1/reservations",
              action);
}

}  // namespace allot::cli
