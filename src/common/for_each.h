// ALLOT_FOR_EACH(macro, a, b, c) expands to macro(a) macro(b) macro(c): one list written once
// where the language needs a declaration per item. Up to 64 items.
#pragma once

#define ALLOT_FOR_EACH(macro, ...) \
  __VA_OPT__(ALLOT_FOR_EACH_RESCAN(ALLOT_FOR_EACH_STEP(macro, __VA_ARGS__)))

// Each step expands one item and leaves the call for the rest to the next rescan.
#define ALLOT_FOR_EACH_STEP(macro, first, ...) \
  macro(first) __VA_OPT__(ALLOT_FOR_EACH_AGAIN ALLOT_FOR_EACH_PARENS(macro, __VA_ARGS__))
#define ALLOT_FOR_EACH_AGAIN() ALLOT_FOR_EACH_STEP
#define ALLOT_FOR_EACH_PARENS ()

// 64 rescans, one a step.
#define ALLOT_FOR_EACH_RESCAN(...) \
  ALLOT_FOR_EACH_RESCAN16(         \
      ALLOT_FOR_EACH_RESCAN16(ALLOT_FOR_EACH_RESCAN16(ALLOT_FOR_EACH_RESCAN16(__VA_ARGS__))))
#define ALLOT_FOR_EACH_RESCAN16(...) \
  ALLOT_FOR_EACH_RESCAN4(            \
      ALLOT_FOR_EACH_RESCAN4(ALLOT_FOR_EACH_RESCAN4(ALLOT_FOR_EACH_RESCAN4(__VA_ARGS__))))
#define ALLOT_FOR_EACH_RESCAN4(...) \
  ALLOT_FOR_EACH_RESCAN1(           \
      ALLOT_FOR_EACH_RESCAN1(ALLOT_FOR_EACH_RESCAN1(ALLOT_FOR_EACH_RESCAN1(__VA_ARGS__))))
#define ALLOT_FOR_EACH_RESCAN1(...) __VA_ARGS__
