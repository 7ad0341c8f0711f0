// The part of a map's metadata that describes how it was computed, shared by every writer of maps
// (main job, --method both, batch).
#pragma once
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/io/map_metadata.hpp"

namespace dcsgrid::engine {

// Units, temperature, method and its parameters, dielectric model, ionic strength, minimum
// distance and program version; the caller adds atoms, input and command line.
io::MapMetadata method_metadata(const Physics& physics, Method method, const CutoffOptions& cutoff,
                                const MsmOptions& msm = {});

}  // namespace dcsgrid::engine
