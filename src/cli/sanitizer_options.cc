// Sanitized builds only. The CLI is a short-lived process that tests run thousands of times: a
// leak check at each exit costs a third of its run under AddressSanitizer, and what a command
// keeps until it exits is no leak that matters. allotd and the agent keep the check.
#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer's hook for its default options.
// NOLINTNEXTLINE(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
#endif
