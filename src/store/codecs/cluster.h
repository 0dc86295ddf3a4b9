// The cluster domain's rows in the store: join tokens, nodes, registry credentials, image
// pulls, instances, volumes, services, their keys and their use.
#pragma once

#include "store/codecs/columns.h"

namespace allot {

const ColumnCodec<JoinToken>& codec_of(Tag<JoinToken> tag);
const DocumentCodec<Node>& codec_of(Tag<Node> tag);
const DocumentCodec<RegistryCredential>& codec_of(Tag<RegistryCredential> tag);
const DocumentCodec<ImagePull>& codec_of(Tag<ImagePull> tag);
const DocumentCodec<Instance>& codec_of(Tag<Instance> tag);
const DocumentCodec<Volume>& codec_of(Tag<Volume> tag);
const DocumentCodec<HostedService>& codec_of(Tag<HostedService> tag);
const DocumentCodec<ServiceKey>& codec_of(Tag<ServiceKey> tag);
const DocumentCodec<ServiceUsage>& codec_of(Tag<ServiceUsage> tag);

}  // namespace allot
