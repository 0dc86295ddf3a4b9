#include "store/codecs/cluster.h"

#include "store/cluster_json.h"
#include "store/image_json.h"
#include "store/registry_json.h"
#include "store/volume_json.h"

namespace allot {
namespace {

constexpr auto kJoinTokenColumns =
    ALLOT_COLUMNS(JoinToken, id, name, token_hash, created_at_ms, expires_at_ms, revoked_at_ms);
constexpr ColumnCodec<JoinToken> kJoinTokens{
    .table = "join_tokens", .columns = kJoinTokenColumns, .updated = "revoked_at_ms"};

constexpr DocumentCodec<Node> kNodes{
    .table = "nodes", .keys = "id, name", .encode = node_document, .decode = node_from_document};
constexpr DocumentCodec<RegistryCredential> kRegistryCredentials{
    .table = "registry_credentials",
    .keys = "tenant_id, host",
    .encode = registry_credential_document,
    .decode = registry_credential_from_document,
    .conflict = "tenant_id, host"};
constexpr DocumentCodec<ImagePull> kImagePulls{.table = "image_pulls",
                                               .keys = "id, created_at_ms",
                                               .encode = image_pull_document,
                                               .decode = image_pull_from_document,
                                               .order = "created_at_ms, id"};
constexpr DocumentCodec<Volume> kVolumes{.table = "volumes",
                                         .keys = "id, tenant_id, created_at_ms",
                                         .encode = volume_document,
                                         .decode = volume_from_document,
                                         .order = "created_at_ms, id"};
constexpr DocumentCodec<HostedService> kServices{.table = "services",
                                                 .keys = "id, tenant_id, created_at_ms",
                                                 .encode = service_document,
                                                 .decode = service_from_document,
                                                 .order = "created_at_ms, id"};
constexpr DocumentCodec<ServiceKey> kServiceKeys{.table = "service_keys",
                                                 .keys = "id, tenant_id, created_at_ms",
                                                 .encode = service_key_document,
                                                 .decode = service_key_from_document,
                                                 .order = "created_at_ms, id"};
constexpr DocumentCodec<ServiceUsage> kServiceUsage{.table = "service_usage",
                                                    .keys = "id, caller_tenant_id, hour_ms",
                                                    .encode = service_usage_document,
                                                    .decode = service_usage_from_document,
                                                    .order = "hour_ms, id"};
// Oldest first, so that the queue is rebuilt in arrival order.
constexpr DocumentCodec<Instance> kInstances{
    .table = "instances",
    .keys = "id, tenant_id, project_id, state, created_at_ms",
    .encode = instance_document,
    .decode = instance_from_document,
    .updated = "state",
    .order = "created_at_ms, id"};

}  // namespace

const ColumnCodec<JoinToken>& codec_of(Tag<JoinToken> /*tag*/) { return kJoinTokens; }
const DocumentCodec<Node>& codec_of(Tag<Node> /*tag*/) { return kNodes; }
const DocumentCodec<RegistryCredential>& codec_of(Tag<RegistryCredential> /*tag*/) {
  return kRegistryCredentials;
}
const DocumentCodec<ImagePull>& codec_of(Tag<ImagePull> /*tag*/) { return kImagePulls; }
const DocumentCodec<Instance>& codec_of(Tag<Instance> /*tag*/) { return kInstances; }
const DocumentCodec<Volume>& codec_of(Tag<Volume> /*tag*/) { return kVolumes; }
const DocumentCodec<HostedService>& codec_of(Tag<HostedService> /*tag*/) { return kServices; }
const DocumentCodec<ServiceKey>& codec_of(Tag<ServiceKey> /*tag*/) { return kServiceKeys; }
const DocumentCodec<ServiceUsage>& codec_of(Tag<ServiceUsage> /*tag*/) { return kServiceUsage; }

}  // namespace allot
