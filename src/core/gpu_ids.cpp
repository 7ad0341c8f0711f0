#include "dcsgrid/core/gpu_ids.hpp"

#include <cstdlib>
#include <numeric>
#include <string>

#include "dcsgrid/core/error.hpp"
#include "dcsgrid/core/text.hpp"

namespace dcsgrid {
namespace {

// The user's ids of the GPUs CUDA sees, once narrowed (set before any thread or CUDA starts).
std::vector<int>& narrowed_ids() {
  static std::vector<int> ids;
  return ids;
}

}  // namespace

void require_valid_gpu_ids(const std::vector<int>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0) throw Error("--gpus: GPU numbers start at 0, got " + std::to_string(ids[i]));
    for (std::size_t j = 0; j < i; ++j)
      if (ids[j] == ids[i]) throw Error("--gpus: GPU " + std::to_string(ids[i]) + " is listed twice");
  }
}

std::vector<int> narrow_visible_gpus(const std::vector<int>& ids) {
  if (ids.empty()) return ids;
  std::vector<int> renumbered(ids.size());
  std::iota(renumbered.begin(), renumbered.end(), 0);
  if (!narrowed_ids().empty()) {
    if (narrowed_ids() != ids) throw Error("internal: --gpus narrowed twice to different GPUs");
    return renumbered;
  }
  require_valid_gpu_ids(ids);
  const char* set = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::vector<std::string> entries = set ? split_list(set) : std::vector<std::string>{};
  std::string visible;
  for (const int id : ids) {
    if (set && std::size_t(id) >= entries.size())
      throw Error("--gpus: there is no GPU " + std::to_string(id) + " (CUDA_VISIBLE_DEVICES='" + set +
                  "' lists " + std::to_string(entries.size()) + ", numbered from 0)");
    visible += (visible.empty() ? "" : ",") + (set ? entries[std::size_t(id)] : std::to_string(id));
  }
  setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
  narrowed_ids() = ids;
  return renumbered;
}

bool visible_gpus_narrowed() { return !narrowed_ids().empty(); }

int user_gpu_id(int device) {
  const std::vector<int>& ids = narrowed_ids();
  return device >= 0 && std::size_t(device) < ids.size() ? ids[std::size_t(device)] : device;
}

}  // namespace dcsgrid
