#include "sm/warp_scheduler/resident_warps.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpumux {

ResidentWarps::ResidentWarps(std::uint32_t capacity) : resident_(capacity, 0), age_(capacity, 0) {
  if (capacity == 0) throw std::invalid_argument("warp scheduler: capacity must be at least 1 warp");
  by_age_.reserve(capacity);
}

void ResidentWarps::add(WarpSlot warp, std::uint64_t age) {
  if (warp >= capacity()) {
    throw std::logic_error("warp scheduler: add_warp slot " + std::to_string(warp) + " outside 0.." +
                           std::to_string(capacity() - 1));
  }
  if (resident_[warp] != 0) {
    throw std::logic_error("warp scheduler: add_warp slot " + std::to_string(warp) + " already resident");
  }
  resident_[warp] = 1;
  age_[warp] = age;
  // Warps usually arrive in launch order, so this lands at the end; upper_bound keeps equal ages in
  // arrival order (ages are meant to be unique, and the order stays deterministic if they are not).
  const auto at = std::upper_bound(by_age_.begin(), by_age_.end(), age,
                                   [this](std::uint64_t a, WarpSlot w) { return a < age_[w]; });
  by_age_.insert(at, warp);  // within the reserved capacity: no allocation
}

void ResidentWarps::remove(WarpSlot warp) {
  require(warp, "remove_warp");
  resident_[warp] = 0;
  by_age_.erase(std::find(by_age_.begin(), by_age_.end(), warp));
}

void ResidentWarps::require(WarpSlot warp, const char* event) const {
  if (!resident(warp)) {
    throw std::logic_error(std::string("warp scheduler: ") + event + " on slot " + std::to_string(warp) +
                           ", which holds no warp");
  }
}

}  // namespace gpumux
