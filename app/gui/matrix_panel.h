// The canvas as a matrix, for many ranks (view/matrix*.h): one row per rank, one column
// per chunk of the buffer the step's call writes, in the canvas's colours, the step's
// transfers as marks on the cells they write and ticks in two margin columns (what
// each rank sends, what it receives), rank and chunk numbers along the axes. The cells
// are one image, uploaded when a step changes it, so 1024 ranks draw as fast as 32.
// It also decides when the canvas is the matrix: from 32 ranks, when the lesson says
// "view": "matrix", or when asked (M, the View panel, `collscope gui --matrix`).
#pragma once

#include <string>

#include "gui/image_texture.h"
#include "gui/lesson_state.h"
#include "gui/view/matrix_cache.h"
#include "gui/view/playback.h"

namespace collscope::app {

class MatrixPanel {
 public:
  // Whether the canvas shows the matrix for this lesson now.
  bool shown(const LessonState& lesson) const;
  void toggle(const LessonState& lesson) { choice_ = shown(lesson) ? CanvasView::boxes : CanvasView::matrix; }
  // An explicit choice (automatic: the lesson's own, or the rank count, decides).
  void choose(CanvasView v) { choice_ = v; }
  // The canvas window's title: which picture it is, and the key that changes it.
  std::string title(bool matrix) const;
  // Draws into the current ImGui window's remaining space.
  void draw(LessonState& lesson, const view::Playback& pb, bool presenter, float scale);

 private:
  void draw_axes(ImDrawList* dl, const view::MatrixGeometry& g) const;
  void draw_margins(ImDrawList* dl, const view::MatrixGeometry& g) const;
  void tooltip(const view::MatrixGeometry& g, ImVec2 mouse);

  CanvasView choice_ = CanvasView::automatic;
  view::MatrixCache cache_;
  ImageTexture image_;
};

}  // namespace collscope::app
