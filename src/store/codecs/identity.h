// The identity domain's rows in the store: tenants, projects, users, API keys.
#pragma once

#include "store/codecs/columns.h"

namespace allot {

const ColumnCodec<Tenant>& codec_of(Tag<Tenant> tag);
const ColumnCodec<Project>& codec_of(Tag<Project> tag);
const ColumnCodec<User>& codec_of(Tag<User> tag);
const ColumnCodec<ApiKey>& codec_of(Tag<ApiKey> tag);

}  // namespace allot
