// collscope: the command line (docs/ARCHITECTURE.md, "Layers"). Thin: every command calls the engine.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>

#include "cli.h"
#include "cmd_import.h"
#include "collscope/files.h"
#include "flags.h"

using namespace collscope;
using app::one_or_more;
using app::whole_number;

namespace {

// `collscope run`: its flags.
CLI::App* add_run_command(CLI::App& app, app::RunFlags& rf) {
  auto* run = app.add_subcommand("run", "lower, verify, execute and check a scenario file or one collective");
  rf.command = run;
  run->add_option("scenario", rf.file, "scenario JSON file (or describe one collective with the flags below)");
  run->add_option("--coll", rf.coll,
                  "collective: broadcast, reduce, allreduce, scatter, gather, allgather, "
                  "reduce_scatter, alltoall, alltoallv, barrier");
  run->add_option("--algo", rf.algo, "algorithm (see `collscope list`), default auto");
  run->add_option("--ranks", rf.ranks, "number of ranks (default 4)")
      ->check(whole_number<std::int32_t>(std::numeric_limits<std::int32_t>::min(), "", "1..1024"));
  run->add_option("--count", rf.count, "elements, with NCCL's meaning per collective (default 1024)")
      ->check(whole_number<std::int64_t>());
  run->add_option("--dtype", rf.dtype, "int8 uint8 int32 int64 float16 bfloat16 float32 float64 (default float32)");
  run->add_option("--op", rf.op, "sum prod min max avg (default sum)");
  run->add_option("--root", rf.root, "root rank (default 0)")->check(whole_number<std::int32_t>());
  run->add_option("--backend", rf.backend, "backend (default cpu)");
  run->add_option("--mode", rf.mode, "fast (dataflow) or observable (a barrier per step)");
  run->add_flag("--in-place", rf.in_place, "run in place (one buffer)");
  run->add_flag("--json", rf.json, "print one JSON object");
  run->add_option("--trace", rf.trace, "write a Chrome/Perfetto trace to this file");
  run->add_flag("--dry-run", rf.dry_run, "lower and verify symbolically, do not execute");
  run->add_flag("--explain", rf.explain, "print every step's phase and caption");
  run->add_option("--ops", rf.ops, "a program's ops shown per rank: all, or a number (default 16; all with --explain)");
  run->add_option("--fault", rf.faults,
                  "inject a fault RANK:STEP:KIND[:MS], KIND = delay (stall MS ms), corrupt (flip a bit it sends), "
                  "crash (the rank dies) or hang (it never arrives); repeatable");
  run->add_option("--timeout", rf.timeout_s,
                  "abort the run when no rank finishes a step for this many seconds (default 5; fractions allowed)");
  run->add_option("--flight-record", rf.flight_record,
                  "write every rank's last ops to this JSON file (`collscope analyze` reads it)");
  run->add_option("--topology", rf.topology, "predict for this topology: this-machine, a preset or a file");
  run->add_option("--nodes", rf.nodes, "nodes of that topology (default: its own)")->check(one_or_more<std::int64_t>());
  run->add_option(
         "--ranks-per-node", rf.ranks_per_node,
         "ranks per node for the node-aware algorithms (hierarchical, rings, double_tree); default: from --topology")
      ->check(one_or_more<std::int32_t>());
  run->add_option("--hostfile", rf.hostfile, "--backend mpi started by collscope: the machines (mpirun's --hostfile)");
  // For the window, which runs a lesson on several processes in a child: not for users.
  run->add_option("--run-record", rf.run_record)->group("");
  run->add_option("--snapshot-budget", rf.snapshot_budget)->group("");
  return run;
}

// `collscope bench`: its flags.
CLI::App* add_bench_command(CLI::App& app, app::BenchFlags& bf) {
  auto* bench = app.add_subcommand("bench", "size sweep with nccl-tests' flags and table");
  bench->add_option("-b,--minbytes", bf.min_bytes, "smallest size (e.g. 8, 1K, 32M; default 8)");
  bench->add_option("-e,--maxbytes", bf.max_bytes, "largest size (default 64M)");
  bench->add_option("-f,--stepfactor", bf.factor, "multiply the size by this each step (default 2)");
  bench->add_option("-n,--iters", bf.iters, "timed iterations per size (default 20)")
      ->check(whole_number<std::int32_t>());
  bench->add_option("-w,--warmup_iters", bf.warmup, "warm-up iterations (default 5)")
      ->check(whole_number<std::int32_t>());
  bench->add_option("-c,--check", bf.check, "check results (1) or not (0) (default 1)")
      ->check(whole_number<std::int32_t>());
  bench->add_option("--coll", bf.coll, "collective (default allreduce)");
  bench->add_option("--algo", bf.algo, "algorithm (default auto)");
  bench->add_option("--ranks", bf.ranks, "ranks (default 4)")
      ->check(whole_number<std::int32_t>(std::numeric_limits<std::int32_t>::min(), "", "1..1024"));
  bench->add_option("--backend", bf.backend, "backend (default cpu)");
  bench->add_option("-d,--datatype", bf.dtype, "dtype (default float32)");
  bench->add_option("-o,--op", bf.op, "reduction (default sum)");
  bench->add_option("-r,--root", bf.root, "root (default 0)")->check(whole_number<std::int32_t>());
  bench->add_flag("--json", bf.json, "print one JSON object per size");
  bench->add_option("--probe", bf.probe, "measure memory bandwidth first (default 1)");
  bench->add_option("--topology", bf.topology,
                    "what the predicted column prices with: this-machine (default), a preset or a file");
  bench->add_option("--nodes", bf.nodes, "nodes of that topology the ranks fill (default: the topology's)")
      ->check(one_or_more<std::int64_t>());
  return bench;
}

// `collscope gui`: its flags.
CLI::App* add_gui_command(CLI::App& app, app::GuiFlags& gf) {
  auto* gui = app.add_subcommand("gui", app::gui_built() ? "open the window on a lesson, or render one frame of it"
                                                         : "open the window (not built in this version)");
  gui->add_option("scenario", gf.file, "scenario file (default: the all-reduce lesson)");
  gui->add_option("--step", gf.step, "with --screenshot: steps applied before the frame (default 0)")
      ->check(whole_number<std::int32_t>());
  gui->add_option("--screenshot", gf.screenshot, "render one frame offscreen to this PNG file and exit");
  gui->add_option("--size", gf.size, "window size WxH (default 1600x900; 1280x720 for --gif)");
  gui->add_flag("--presenter", gf.presenter, "presenter mode: large fonts, high contrast (F11 in the window)");
  gui->add_option("--bench-frames", gf.bench_frames, "animate this many frames, print frame times and exit")
      ->check(whole_number<std::int32_t>());
  gui->add_option("--slides", gf.slides, "render every step offscreen to FOLDER/step-NNN.png (for slides) and exit");
  gui->add_option("--export-trace", gf.export_trace, "write the run's trace as the Export panel does, and exit");
  gui->add_option("--gif", gf.gif, "film the lesson (or --steps A..B) as an animated GIF with its captions, and exit");
  gui->add_option("--video", gf.video, "film it as a video (OUT.mp4, .mkv or .webm) through ffmpeg, and exit");
  gui->add_option("--steps", gf.steps, "with --gif or --video: positions A..B (steps applied, as --step counts)");
  gui->add_flag("--quiz", gf.quiz,
                "quiz mode (Q): a question before every step; with --screenshot, the question of --step");
  gui->add_flag("--matrix", gf.matrix, "the canvas as the matrix (M): a row per rank, a column per chunk");
  gui->add_flag("--boxes", gf.boxes, "the canvas as boxes, even from 32 ranks (where the matrix is the default)");
  gui->add_option("--compare", gf.compare,
                  "run the lesson's call a second time with this algorithm, side by side on one clock");
  gui->add_flag("--what-if", gf.what_if, "with --screenshot: open the \"what if\" window (W) on the lesson's call");
  gui->add_option("--topology", gf.topology,
                  "price the lessons (and open the \"what if\" window) on this topology: a preset or a file");
  gui->add_option("--nodes", gf.nodes, "nodes of that topology (default: its own)")->check(one_or_more<std::int64_t>());
  gui->add_option("--ranks-per-node", gf.ranks_per_node,
                  "ranks per node for the node-aware algorithms (default: from --topology)")
      ->check(one_or_more<std::int32_t>());
  return gui;
}

int run(int argc, char** argv) {
  CLI::App app{"collscope: see and measure what collective communication does to every rank's memory"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", "collscope 0.1.0");

  app::RunFlags rf;
  CLI::App* run = add_run_command(app, rf);

  std::vector<std::string> analyze_files;
  bool analyze_json = false;
  auto* analyze = app.add_subcommand("analyze", "explain a flight record, or a PyTorch or NCCL job's files");
  analyze
      ->add_option("files", analyze_files,
                   "a flight record (written by an aborted run or --flight-record), or a job's files or folder")
      ->required();
  analyze->add_flag("--json", analyze_json, "print one JSON object");

  bool list_json = false;
  auto* list = app.add_subcommand("list", "collectives, algorithms, dtypes, ops, backends and lessons");
  list->add_flag("--json", list_json, "print JSON");

  std::vector<std::string> files;
  auto* validate = app.add_subcommand("validate", "check scenario files without running them");
  validate->add_option("files", files, "scenario files")->required();

  app::BenchFlags bf;
  CLI::App* bench = add_bench_command(app, bf);

  app::GuiFlags gf;
  CLI::App* gui = add_gui_command(app, gf);

  app::QuizFlags qf;
  auto* quiz = app.add_subcommand("quiz", "the quiz of a lesson: a question before every step, then the answers");
  quiz->add_option("scenario", qf.file, "scenario file")->required();
  quiz->add_flag("--no-key", qf.no_key, "print the worksheet without the answers");
  quiz->add_flag("--key", qf.key_only, "print the answers only");

  app::CalibrateFlags cf;
  app::add_calibrate_command(app, cf);
  app::PredictFlags pf;
  app::add_predict_command(app, pf);
  app::ImportFlags imf;
  app::add_import_commands(app, imf);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::cout << "collscope 0.1.0\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    return app::report_error(make_error("cli.usage", e.what(), "see `collscope --help`"));
  }

  // The environment's settings are input too: a value that names no wait strategy is
  // refused, not silently ignored.
  if (const char* how = std::getenv("COLLSCOPE_WAIT"); how && *how) {
    const std::string h(how);
    if (h != "spin" && h != "yield" && h != "sleep")
      return app::report_error(make_error("cli.usage", "COLLSCOPE_WAIT=" + h + " names no wait strategy",
                                          "set COLLSCOPE_WAIT to spin, yield or sleep, or unset it for the "
                                          "default (spin where every rank has a core, else yield, then sleep)"));
  }
  if (*run) return app::cmd_run(rf);
  if (*list) return app::cmd_list(list_json);
  if (*validate) return app::cmd_validate(files);
  if (*analyze) return app::cmd_analyze(analyze_files, analyze_json);
  if (*bench) return app::cmd_bench(bf);
  if (*gui) return app::cmd_gui(gf);
  if (*quiz) return app::cmd_quiz(qf);
  if (*cf.command) return app::cmd_calibrate(cf);
  if (*pf.command) return app::cmd_predict(pf);
  if (*imf.import_cmd) return app::cmd_import(imf);
  if (*imf.record_cmd) return app::cmd_record(imf);
  // No arguments: the window on the default lesson when it can open, else how to start.
  if (app::gui_built() && app::display_present()) return app::cmd_gui(gf);
  std::cout << app.help();
  return 0;
}

void internal_error(const char* what) {
  std::cerr << "error[internal.error] collscope stopped on an unexpected failure: " << what
            << "\n  help: this is a bug; please report it with the command line that caused it\n";
}

}  // namespace

// Every way out of main is an exit code of the README: exceptions that escape a
// command (which none should) are an internal error, exit 3, never an abort.
int main(int argc, char** argv) {
  // SIGINT and SIGTERM remove the temporary files of writes in progress (collscope/files.h).
  install_interrupt_cleanup();
  // An exception escaping a thread would call std::terminate: the same error instead.
  std::set_terminate([] {
    internal_error("an exception escaped a thread");
    std::_Exit(static_cast<int>(ExitCode::backend_failure));
  });
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << "error[internal.out_of_memory] collscope ran out of memory"
              << "\n  help: use fewer ranks or smaller counts, or raise the memory limit\n";
  } catch (const std::exception& e) {
    internal_error(e.what());
  } catch (...) {
    internal_error("an unknown exception");
  }
  return static_cast<int>(ExitCode::backend_failure);
}
