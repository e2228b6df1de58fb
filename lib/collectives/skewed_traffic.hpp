// The skewed counts of `embscale collectives alltoallv`: a config's first embedding layer's key
// exchange, captured from the real engine (step_capture.hpp) iteration by iteration.
#pragma once

#include <cstddef>
#include <string>

#include "collectives/alltoallv.hpp"
#include "comm/mpi_communicator.hpp"
#include "config/config.hpp"

namespace embscale::collectives {

// Collective over `world`: runs the engine of `config` (validated for world's size) for iterations
// [0, iterations) and returns this rank's rows of each step's key exchange (scheme_traffic.hpp),
// with the mean over ranks and calls. Throws InputError (on every rank) when the layer's scheme
// sends no alltoallv on the layer's communicator, or when it sends no rows at all.
SkewedTraffic capture_skewed_traffic(comm::MpiCommunicator& world, const config::Config& config,
                                     std::size_t iterations);

}  // namespace embscale::collectives
