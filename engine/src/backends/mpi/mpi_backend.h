// The mpi backend: one rank per process, started by a launcher (session.h).
#pragma once

#include <memory>

#include "collscope/backend.h"

namespace collscope::mpi {

std::unique_ptr<Backend> make_mpi_backend();

}  // namespace collscope::mpi
