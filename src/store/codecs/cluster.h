// The cluster domain's rows in the store: join tokens, nodes, registry credentials, image
// pulls, instances.
#pragma once

#include "store/codecs/codec.h"

namespace allot {

[[nodiscard]] Status write_row(Db& db, const JoinToken& token);
[[nodiscard]] Status load_rows(Db& db, Tag<JoinToken> tag, std::vector<Row>& out);
const DocumentCodec<Node>& codec_of(Tag<Node> tag);
const DocumentCodec<RegistryCredential>& codec_of(Tag<RegistryCredential> tag);
const DocumentCodec<ImagePull>& codec_of(Tag<ImagePull> tag);
const DocumentCodec<Instance>& codec_of(Tag<Instance> tag);

}  // namespace allot
