// Colours of the canvas: one colour per source rank, a mix for partial reductions
// and a distinct colour for a cell that holds every rank's contribution.
// Plain data, no ImGui: the panels convert an Rgba to whatever they draw with.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collscope/result.h"

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

// The colours the window uses, from assets/palette.json (or $COLLSCOPE_PALETTE):
//   {"ranks": ["#4d8fd6", ...], "empty": "#383b42", "complete": "#ffd640"}
// "ranks" gives the first ranks' colours; ranks beyond the list continue with the
// built-in golden-ratio walk. Every key is optional.
struct Palette {
  std::vector<Rgba> ranks;
  Rgba empty{0.22f, 0.23f, 0.26f, 1.0f};
  Rgba complete{1.0f, 0.84f, 0.25f, 1.0f};  // gold: "everyone is in here"
};

// Reads a palette file. Errors (gui.palette, exit 2) name the file, line and column
// and the JSON Pointer of what is wrong: not JSON, an unknown key, a colour that is not
// "#rrggbb", more than 1024 rank colours.
Result<Palette> read_palette(const std::string& path);
// The palette rank_colour and colour_of use from now on (the built-in one until then).
void use_palette(Palette p);
const Palette& palette();
// The file the window reads at start: $COLLSCOPE_PALETTE, else assets/palette.json.
std::string palette_file();
// Reads palette_file() and uses it. Without $COLLSCOPE_PALETTE a missing shipped file
// leaves the built-in palette; any other failure is the file's error.
Status load_palette();

// A rank's colour: the palette's for the first ranks, then distinct, readable hues
// from the golden-ratio walk around the colour wheel, which keeps neighbours (which
// exchange data on a ring) far apart.
Rgba rank_colour(std::int32_t rank);
// The walk alone, whatever the palette says (the built-in colours).
Rgba walk_colour(std::int32_t rank);

// The mix of several ranks' colours (a partial reduction).
Rgba mix_colour(const std::vector<std::int32_t>& ranks);

// The colour of a cell holding data from `ranks` (sorted, unique) in a world of `world` ranks.
CellColour colour_of(const std::vector<std::int32_t>& ranks, std::int32_t world);

// The built-in colours of things that are not data (Palette's defaults).
inline constexpr Rgba kEmptyCell{0.22f, 0.23f, 0.26f, 1.0f};
inline constexpr Rgba kCompleteCell{1.0f, 0.84f, 0.25f, 1.0f};

// Black or white, whichever reads better on `background` (for the value text in a cell).
Rgba text_on(Rgba background);

}  // namespace collscope::view
