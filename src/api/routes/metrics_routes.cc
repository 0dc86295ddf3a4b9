// GET /metrics: Prometheus's text format, for operator admins (it shows every tenant's money).
#include "api/app.h"
#include "api/auth.h"
#include "api/metrics.h"
#include "api/routes/operations.h"

namespace allot {
namespace {

Result<HttpResponse> get_metrics(Call& call) {
  ALLOT_TRY(require_operator_admin(call.caller));
  return HttpResponse{
      .status = 200,
      .body = call.metrics.render() + render_state_metrics(call.ctx.state(), call.ctx.now_ms()),
      .content_type = "text/plain; version=0.0.4; charset=utf-8"};
}

const Route kRoutes[] = {{"GET", "/metrics", get_metrics}};

}  // namespace

std::span<const Route> metrics_routes() { return kRoutes; }

}  // namespace allot
