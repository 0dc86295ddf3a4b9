// The books' part of the state: the operator's assets, sites, fixed costs, rental prices and
// energy (core/model/books.h).
#pragma once

#include "core/model/books.h"

namespace allot {

struct BooksSlice {
  Books books;
};

}  // namespace allot
