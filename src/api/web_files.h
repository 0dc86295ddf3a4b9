// The dashboard's built files (web/dist), served by allotd at `/`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "api/http.h"

namespace allot {

// The file at `segments` under `web_dir` (`/` is index.html), or nullopt when there is none: a
// segment that is empty, `.` or `..`, or holds a NUL or a backslash, names nothing, so no request
// reaches outside the folder. Hashed bundles under assets/ may be cached for good; everything
// else is checked again on every load, so a new build shows at once.
std::optional<HttpResponse> web_file(const std::string& web_dir,
                                     const std::vector<std::string>& segments);

// The content type a file name's extension calls for.
std::string content_type_for(const std::string& name);

}  // namespace allot
