// Shared pieces of the collscope command line: printing errors, finding lessons,
// turning results into exit codes.
#pragma once

#include <string>
#include <vector>

#include "collscope/result.h"
#include "collscope/run.h"
#include "collscope/scenario.h"

namespace CLI {
class App;
}

namespace collscope::app {

// Prints an error in the one style of docs/ARCHITECTURE.md, "Errors", and returns its exit code.
int report_error(const Error& e);

// Folders where lessons live: $COLLSCOPE_SCENARIOS, next to the binary, the source tree.
std::string scenario_dir();
std::vector<std::string> lesson_files();  // sorted *.json of scenario_dir()

// The `run` flags that describe a one-call scenario.
struct RunFlags {
  std::string file;
  std::string coll, algo = "auto", dtype = "float32", op = "sum", backend = "cpu", mode = "fast";
  std::int32_t ranks = 4;
  std::int64_t count = 1024;  // signed, so that a negative count is reported as such
  std::int32_t root = 0;
  bool in_place = false;
  bool json = false;
  bool dry_run = false;
  bool explain = false;
  std::string ops;  // --ops all|N: a program's ops shown per rank ("" = 16, or all with --explain)
  std::string trace;
  std::vector<std::string> faults;            // RANK:STEP:KIND[:MS]
  double timeout_s = kDefaultTimeoutSeconds;  // abort a run in which no rank finishes a step for this long
  std::string flight_record;                  // write the flight record here (always; and on failure)
  std::string topology;                       // what the prediction is for (machine.h); "" = the backend's default
  std::int64_t nodes = 0;                     // nodes of that topology (0 = its own count)
  std::int32_t ranks_per_node = 0;            // --ranks-per-node: where node-aware algorithms split (0: the topology's)
  std::string hostfile;                       // multi-process backends started by collscope: the launcher's --hostfile
  std::string run_record;                     // (the window's child runs) write the whole outcome here
  std::uint64_t snapshot_budget = kDefaultSnapshotBudget;  // with run_record: bytes of snapshots kept
  const CLI::App* command = nullptr;                       // the subcommand these came from: which flags were given
};

// A scenario file says its own ranks, counts, types and algorithms: the flags that
// describe one collective are refused beside it (cli.usage), never silently ignored.
Status check_file_flags(const RunFlags& f);

// Parses --fault RANK:STEP:KIND[:MS] (kinds: delay, corrupt, crash, hang).
Result<Fault> parse_fault(const std::string& text);

// Builds a QuickSpec from flags; unknown names are bad input with a list of valid ones.
Result<QuickSpec> spec_from_flags(const RunFlags& f);
// --ranks-per-node: 0 (from the topology) or 1..ranks; cli.usage otherwise.
Status check_ranks_per_node(const RunFlags& f, std::int64_t ranks);

// --nodes: 0 (the topology's own) or at most one node a rank; cli.usage otherwise.
Status check_nodes(std::int64_t nodes, std::int64_t ranks);
// Inputs of a scenario's buffers as an InitFn.
InitFn scenario_init(const Scenario& s);

std::string human_bytes(double bytes);

int cmd_run(const RunFlags& f);
int cmd_list(bool json);
int cmd_validate(const std::vector<std::string>& files);
// `collscope analyze FILE...`: what a flight record (or a job's files) shows; 0 no problem,
// 1 a problem, 2 unreadable.
int cmd_analyze(const std::vector<std::string>& files, bool json);

struct BenchFlags {
  std::string coll = "allreduce", algo = "auto", dtype = "float32", op = "sum", backend = "cpu";
  std::int32_t ranks = 4;
  std::string min_bytes = "8", max_bytes = "64M";
  double factor = 2;
  std::int32_t iters = 20, warmup = 5, check = 1;
  std::int32_t root = 0;
  bool json = false;
  bool probe = true;
  std::string topology;    // what the predicted column is for ("": this machine's cpu model, as for run)
  std::int64_t nodes = 0;  // nodes of that topology the ranks fill (0: the topology's own)
};
int cmd_bench(const BenchFlags& f);

// `collscope gui`: the window, or one frame rendered offscreen (--screenshot).
struct GuiFlags {
  std::string file;        // scenario; "" = the default lesson
  std::int32_t step = 0;   // position shown by --screenshot (steps applied)
  std::string screenshot;  // write one frame to this PNG and exit
  std::string size;        // WxH; "" = 1600x900, or 1280x720 for --gif (a lesson of 8 ranks stays under 2 MB)
  bool presenter = false;
  std::int32_t bench_frames = 0;    // > 0: measure frame times while animating and exit
  std::string slides;               // write one PNG per step into this folder (the Export panel's sequence) and exit
  std::string export_trace;         // write the run's trace from the window (the Export panel's trace) and exit
  bool what_if = false;             // with --screenshot: the "what if" window open
  std::string gif;                  // write the lesson as an animated GIF and exit
  std::string video;                // write the lesson as a video through ffmpeg and exit
  std::string steps;                // with --gif or --video: "A..B", positions as --step counts ("" = all)
  bool quiz = false;                // quiz mode (Q): a question before every step
  bool matrix = false;              // the canvas as the matrix (M), whatever the lesson's ranks
  bool boxes = false;               // the canvas as boxes, even from 32 ranks
  std::string compare;              // compare mode: the second algorithm ("" = the lesson's own "compare", if any)
  std::string topology;             // what the lessons are priced with, and where their nodes are (as run's)
  std::int64_t nodes = 0;           // nodes of that topology (0: its own)
  std::int32_t ranks_per_node = 0;  // where the node-aware algorithms split the ranks (0: from the topology)
};
bool gui_built();
// A display is there to open a window on ($DISPLAY or $WAYLAND_DISPLAY).
bool display_present();
int cmd_gui(const GuiFlags& f);

// `collscope quiz FILE` (cmd_quiz.cpp): the window's quiz as a worksheet and its key.
struct QuizFlags {
  std::string file;
  bool no_key = false;    // the worksheet alone
  bool key_only = false;  // the key alone
};
int cmd_quiz(const QuizFlags& f);

// `collscope calibrate` (cmd_calibrate.cpp).
struct CalibrateFlags {
  CLI::App* command = nullptr;
  double seconds = 30;
  std::string output;  // "" = the config folder's calibration.json
  bool json = false;
  bool placement = false;  // measure again only what the cores' placement changes
};
void add_calibrate_command(CLI::App& app, CalibrateFlags& f);
int cmd_calibrate(const CalibrateFlags& f);

// `collscope predict` (cmd_predict.cpp): the run flags that describe a call, plus where.
struct PredictFlags {
  CLI::App* command = nullptr;
  RunFlags run;                      // the call, and --topology / --nodes
  std::string min_bytes, max_bytes;  // -b / -e: a sweep of sizes ("" = --count alone)
  double factor = 2;                 // -f
};
void add_predict_command(CLI::App& app, PredictFlags& f);
int cmd_predict(const PredictFlags& f);

}  // namespace collscope::app
