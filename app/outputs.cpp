// The files `collscope run` writes, checked before anything runs (collscope/files.h).
#include "outputs.h"

#include "collscope/files.h"

namespace collscope::app {

std::string failure_record_path(const RunFlags& f) {
  if (!f.flight_record.empty()) return f.flight_record;
  // Next to the trace, when there is one, a failed run's flight record is easy to find.
  if (!f.trace.empty()) return f.trace + ".flight.json";
  return "";
}

Status check_run_outputs(const RunFlags& f) {
  std::vector<OutputPath> outs;
  if (!f.trace.empty()) outs.push_back({f.trace, "--trace", "trace.io"});
  if (!f.flight_record.empty()) outs.push_back({f.flight_record, "--flight-record", "run.flight_record_io"});
  else if (!f.trace.empty())
    outs.push_back({failure_record_path(f), "the flight record of an aborted run", "run.flight_record_io"});
  std::vector<std::string> ins;
  if (!f.file.empty()) ins.push_back(f.file);
  return check_outputs(ins, outs);
}

}  // namespace collscope::app
