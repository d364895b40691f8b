// The engine's writers (traces, flight records) use the one safe writer of
// collscope/files.h: atomic replacement, never over a device, FIFO or folder.
#pragma once

#include "collscope/files.h"
