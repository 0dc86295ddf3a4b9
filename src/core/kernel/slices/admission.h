// Admission's part of the state: quotas and reservations.
#pragma once

#include <map>
#include <string>

#include "core/model/rules.h"

namespace allot {

struct AdmissionSlice {
  std::map<std::string, Quota> quotas;
  std::map<std::string, Reservation> reservations;

  const Quota* quota(const std::string& id) const;
  const Reservation* reservation(const std::string& id) const;
};

}  // namespace allot
