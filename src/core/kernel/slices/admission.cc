#include "core/kernel/slices/admission.h"

#include "core/kernel/slices/find.h"

namespace allot {

const Quota* AdmissionSlice::quota(const std::string& id) const { return find_by_id(quotas, id); }

const Reservation* AdmissionSlice::reservation(const std::string& id) const {
  return find_by_id(reservations, id);
}

}  // namespace allot
