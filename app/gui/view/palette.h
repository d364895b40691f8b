// Colours of the canvas: one colour per source rank, a mix for partial reductions
// and a distinct colour for a cell that holds every rank's contribution.
// Plain data, no ImGui: the panels convert an Rgba to whatever they draw with.
#pragma once

#include <cstdint>
#include <vector>

namespace collscope::view {

struct Rgba {
  float r = 0, g = 0, b = 0, a = 1;
};

// How much of the world a cell holds.
enum class Coverage : std::uint8_t {
  none,      // no input at all (zeros of an output buffer, scratch not yet written)
  single,    // exactly one rank's data: the colour of that rank
  partial,   // several ranks, not all: a mix of their colours (a partial reduction)
  complete,  // every rank: the finished result, drawn with its own colour and mark
};

struct CellColour {
  Rgba fill;
  Coverage coverage = Coverage::none;
};

// Distinct, readable hues for up to 64 ranks: the golden-ratio walk around the
// colour wheel keeps neighbours (which exchange data on a ring) far apart.
Rgba rank_colour(std::int32_t rank);

// The mix of several ranks' colours (a partial reduction).
Rgba mix_colour(const std::vector<std::int32_t>& ranks);

// The colour of a cell holding data from `ranks` (sorted, unique) in a world of `world` ranks.
CellColour colour_of(const std::vector<std::int32_t>& ranks, std::int32_t world);

// Colours used for things that are not data.
inline constexpr Rgba kEmptyCell{0.22f, 0.23f, 0.26f, 1.0f};
inline constexpr Rgba kCompleteCell{1.0f, 0.84f, 0.25f, 1.0f};  // gold: "everyone is in here"

// Black or white, whichever reads better on `background` (for the value text in a cell).
Rgba text_on(Rgba background);

}  // namespace collscope::view
