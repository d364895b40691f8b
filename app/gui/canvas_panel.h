// The canvas: ranks as boxes (ring, tree or grid), each buffer a row of cells coloured
// by whose data they hold, and the current step's transfers as arrows with tokens.
#pragma once

#include <vector>

#include "gui/image_texture.h"
#include "gui/lesson_state.h"
#include "gui/view/canvas.h"
#include "gui/view/playback.h"

namespace collscope::app {

// What quiz mode asks of the canvas: no arrows while a step's question is open (they
// would give the answer away), and the cells of one row that can be picked, outlined
// when picked. The canvas reports a click on one of them.
struct CanvasQuiz {
  bool hide_arrows = false;
  std::int32_t rank = -1, buf = -1;               // the row whose cells can be picked (-1: none)
  std::vector<std::uint64_t> picked;              // first element of every picked cell
  std::int64_t clicked_first = -1;                // out: the cell clicked this frame (-1: none)
  std::uint64_t clicked_count = 0, per_cell = 1;  // out: its elements, and the row's elements per cell
};

class CanvasPanel {
 public:
  // Draws into the current ImGui window's remaining space.
  void draw(LessonState& lesson, const view::Playback& pb, Highlight& hl, bool presenter, float scale,
            CanvasQuiz* quiz = nullptr);

 private:
  std::int32_t draw_boxes(ImDrawList* dl, const LessonState& lesson, const view::LessonRun& run,
                          const view::CellsView& cv, const view::CanvasGeometry& g, const Highlight& hl, bool presenter,
                          float scale, CanvasQuiz* quiz);
  void draw_arrows(ImDrawList* dl, LessonState& lesson, const view::CellsView& cv, const view::CanvasGeometry& g,
                   const view::Playback& pb, const Highlight& hl, float scale, const view::MeasureText& measure);

  // Cells too narrow for text or marks are drawn as one image per rank: one texel per
  // cell, one texture row per buffer row, rebuilt when the cells change.
  std::uint64_t cells_version_ = 0;  // of the cells in the image (0: none yet)
  ImageTexture cells_image_;
  std::vector<ImU32> cells_pixels_;

  // Tokens and landing flashes as images in one texture, drawn 1:1 (two triangles each
  // instead of a circle's dozens): a disc, the token's ring, the flash's ring.
  enum Sprite { kDisc, kTokenRing, kFlashRing, kSprites };
  void make_sprites(float radius, float scale);
  void draw_sprite(ImDrawList* dl, Sprite which, ImVec2 centre, ImU32 colour) const;
  ImageTexture sprites_;
  float sprites_radius_ = -1, sprites_scale_ = -1;
  int sprite_x_[kSprites] = {}, sprite_size_[kSprites] = {};
};

}  // namespace collscope::app
