// Wall-clock timing for the app layer's reports (run_job, batch, compute).
#pragma once
#include "dcsgrid/core/clock.hpp"

namespace dcsgrid::app {

using dcsgrid::clock_type;
using dcsgrid::seconds_since;

}  // namespace dcsgrid::app
