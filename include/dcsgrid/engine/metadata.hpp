// The part of a map's metadata that describes how it was computed, shared by every writer of maps
// (main job, --method both, batch).
#pragma once
#include "dcsgrid/engine/engine.hpp"
#include "dcsgrid/io/maps/metadata.hpp"

namespace dcsgrid::engine {

// Units, temperature, method and its parameters (a periodic method's cell and split as run),
// dielectric model, ionic strength, minimum distance and program version, from the request's
// settings (its atoms and grid are not read); the caller adds atoms, input and command line.
io::MapMetadata method_metadata(const PotentialRequest& request);

}  // namespace dcsgrid::engine
