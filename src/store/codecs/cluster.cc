#include "store/codecs/cluster.h"

#include "store/cluster_json.h"
#include "store/image_json.h"
#include "store/registry_json.h"

namespace allot {
namespace {

constexpr std::string_view kUpsertJoinToken =
    "INSERT INTO join_tokens (id, name, token_hash, created_at_ms, expires_at_ms, revoked_at_ms) "
    "VALUES ($1, $2, $3, $4, $5, $6) "
    "ON CONFLICT (id) DO UPDATE SET revoked_at_ms = excluded.revoked_at_ms";

}  // namespace

Status write_row(Db& db, const JoinToken& o) {
  const DbValue p[] = {o.id,           o.name, o.token_hash, o.created_at_ms, o.expires_at_ms,
                       o.revoked_at_ms};
  return db.exec(kUpsertJoinToken, p);
}

Status load_rows(Db& db, Tag<JoinToken> /*tag*/, std::vector<Row>& out) {
  auto rows = db.query(
      "SELECT id, name, token_hash, created_at_ms, expires_at_ms, revoked_at_ms "
      "FROM join_tokens ORDER BY id",
      {});
  if (!rows) return std::unexpected(rows.error());
  for (const DbRow& r : *rows) {
    out.emplace_back(JoinToken{.id = db_text(r[0]),
                               .name = db_text(r[1]),
                               .token_hash = db_text(r[2]),
                               .created_at_ms = db_int(r[3]),
                               .expires_at_ms = db_int(r[4]),
                               .revoked_at_ms = db_int(r[5])});
  }
  return {};
}

const DocumentCodec<Node>& codec_of(Tag<Node> /*tag*/) {
  static const DocumentCodec<Node> kCodec{
      .table = "nodes",
      .upsert =
          "INSERT INTO nodes (id, name, doc) VALUES ($1, $2, $3) "
          "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc",
      .order = "id",
      .columns = [](const Node& o) { return std::vector<DbValue>{o.id, o.name}; },
      .encode = node_document,
      .decode = node_from_document};
  return kCodec;
}

const DocumentCodec<RegistryCredential>& codec_of(Tag<RegistryCredential> /*tag*/) {
  static const DocumentCodec<RegistryCredential> kCodec{
      .table = "registry_credentials",
      .upsert =
          "INSERT INTO registry_credentials (tenant_id, host, doc) VALUES ($1, $2, $3) "
          "ON CONFLICT (tenant_id, host) DO UPDATE SET doc = excluded.doc",
      .order = "tenant_id, host",
      .columns =
          [](const RegistryCredential& o) { return std::vector<DbValue>{o.tenant_id, o.host}; },
      .encode = registry_credential_document,
      .decode = registry_credential_from_document};
  return kCodec;
}

const DocumentCodec<ImagePull>& codec_of(Tag<ImagePull> /*tag*/) {
  static const DocumentCodec<ImagePull> kCodec{
      .table = "image_pulls",
      .upsert =
          "INSERT INTO image_pulls (id, created_at_ms, doc) VALUES ($1, $2, $3) "
          "ON CONFLICT (id) DO UPDATE SET doc = excluded.doc",
      .order = "created_at_ms, id",
      .columns = [](const ImagePull& o) { return std::vector<DbValue>{o.id, o.created_at_ms}; },
      .encode = image_pull_document,
      .decode = image_pull_from_document};
  return kCodec;
}

// Oldest first, so that the queue is rebuilt in arrival order.
const DocumentCodec<Instance>& codec_of(Tag<Instance> /*tag*/) {
  static const DocumentCodec<Instance> kCodec{
      .table = "instances",
      .upsert =
          "INSERT INTO instances (id, tenant_id, project_id, state, created_at_ms, doc) "
          "VALUES ($1, $2, $3, $4, $5, $6) "
          "ON CONFLICT (id) DO UPDATE SET state = excluded.state, doc = excluded.doc",
      .order = "created_at_ms, id",
      .columns =
          [](const Instance& o) {
            return std::vector<DbValue>{o.id, o.tenant_id, o.project_id,
                                        std::string(instance_state_name(o.state)), o.created_at_ms};
          },
      .encode = instance_document,
      .decode = instance_from_document};
  return kCodec;
}

}  // namespace allot
