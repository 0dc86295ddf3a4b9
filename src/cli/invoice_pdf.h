// An invoice as a PDF, printed here by headless Chromium from the page allotd serves: the
// controller stays free of a browser, and the document is exactly the printable HTML page.
#pragma once

#include <string>

namespace allot::cli {

// Prints `html` (a self-contained page) to a PDF at `pdf_path` with headless Chromium: the one
// $ALLOT_CHROMIUM names, else chromium, chromium-browser or google-chrome on the PATH. Returns
// an empty string, or why it failed.
std::string print_pdf(const std::string& html, const std::string& pdf_path);

}  // namespace allot::cli
