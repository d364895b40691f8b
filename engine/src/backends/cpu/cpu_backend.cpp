// The cpu backend: one thread per rank, each owning its buffers (DESIGN §6).
//
// A transfer is executed by its receiver, which reads straight from the sender's
// buffer (one copy, like NCCL's peer-to-peer read). Two ways to run:
//   observable: the main thread hands out one step at a time; every rank runs its
//               part and reports back (a barrier per step);
//   fast:       every rank walks the whole schedule on its own and waits only for
//               the ranks it depends on (deps.h), without any global barrier.
// Compute spans (Action::compute) run on a second thread per rank, its compute lane,
// so that a rank's computation and its communication overlap (deps.h).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collscope/backend.h"
#include "deps.h"
#include "kernels.h"
#include "wait.h"

namespace collscope {
namespace cpu {
namespace {

struct Op {
  Action action;
  const std::uint8_t* src;
  std::uint8_t* dst;
  std::uint64_t count;
  std::uint32_t divisor;
  std::int32_t transfer;
  std::uint32_t duration_us;
};

struct RankPlan {
  std::vector<std::vector<Op>> ops;   // per step
  std::vector<std::vector<Dep>> deps;  // per step
};

struct FreeDeleter {
  void operator()(std::uint8_t* p) const { std::free(p); }
};
using Memory = std::unique_ptr<std::uint8_t, FreeDeleter>;

enum class Command : std::uint32_t { none, step, all, quit };

// The session keeps a reference to the schedule: it must outlive the session.
class CpuSession final : public Session {
 public:
  CpuSession(const Schedule& s, const SessionOptions& o) : s_(s), opts_(o), origin_(Clock::now()) {}
  ~CpuSession() override { stop(); }

  Status start() {
    const auto R = static_cast<std::size_t>(s_.ranks);
    lanes_ = lane_count(s_);
    const auto L = static_cast<std::size_t>(lanes_);
    const int cores = opts_.cores > 0 ? opts_.cores : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // Spin only when every rank can have a core (the launching thread sleeps while
    // the ranks run); otherwise a spinning rank steals the core of the rank it waits for.
    const bool own_core = s_.ranks <= cores;
    spins_ = own_core ? 2000u : 0u;
    yields_ = own_core ? 16u : 64u;
    // COLLSCOPE_WAIT=spin|yield|sleep forces one strategy, to measure them (bench/RESULTS.md).
    if (const char* w = std::getenv("COLLSCOPE_WAIT")) {
      const std::string how(w);
      if (how == "spin") spins_ = 2000u, yields_ = 0u;
      if (how == "yield") spins_ = 0u, yields_ = 64u;
      if (how == "sleep") spins_ = 0u, yields_ = 0u;
    }
    esize_ = size_of(s_.dtype);
    mem_.resize(R);
    for (std::size_t r = 0; r < R; ++r)
      for (const auto& b : s_.buffers) {
        const std::uint64_t bytes = b.count[r] * esize_;
        Memory m;
        if (bytes) {
          const std::uint64_t rounded = (bytes + 63) / 64 * 64;
          m.reset(static_cast<std::uint8_t*>(std::aligned_alloc(64, rounded)));
          if (!m)
            return make_error("backend.out_of_memory",
                              "cpu backend: cannot allocate " + std::to_string(bytes) + " bytes for rank " +
                                  std::to_string(r) + "'s " + b.name,
                              "use fewer ranks or a smaller count", {}, ExitCode::backend_failure);
          std::memset(m.get(), 0, rounded);
        }
        mem_[r].push_back(std::move(m));
      }
    // Per-rank plans.
    auto deps = compute_deps(s_);
    plans_.resize(L);
    for (std::size_t r = 0; r < L; ++r) {
      plans_[r].ops.resize(s_.steps.size());
      plans_[r].deps = std::move(deps[r]);
    }
    for (std::size_t k = 0; k < s_.steps.size(); ++k) {
      const auto& st = s_.steps[k];
      for (std::size_t t = 0; t < st.transfers.size(); ++t) {
        const auto& x = st.transfers[t];
        // A signal (count 0) moves nothing; it is kept as an op so that it is timed.
        const bool data = x.count && x.action != Action::compute;
        Op op{x.action, data ? ptr(x.src) : nullptr, data ? ptr(x.dst) : nullptr, x.count, x.divisor,
              static_cast<std::int32_t>(t), x.duration_us};
        plans_[static_cast<std::size_t>(lane_of(s_, x))].ops[k].push_back(op);
      }
    }
    progress_ = std::make_unique<Counter[]>(L);
    window_.assign(L, {0.0, 0.0});
    events_.resize(L);
    threads_.reserve(L);
    for (std::size_t r = 0; r < L; ++r) threads_.emplace_back([this, r] { worker(static_cast<std::int32_t>(r)); });
    return ok_status();
  }

  std::string device_label(std::int32_t) const override { return "cpu"; }

  Status write_buffer(std::int32_t rank, std::int32_t buf, const void* data, std::uint64_t bytes) override {
    if (bytes) std::memcpy(mem_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(buf)].get(), data, bytes);
    return ok_status();
  }
  Status read_buffer(std::int32_t rank, std::int32_t buf, void* data, std::uint64_t bytes) override {
    if (bytes) std::memcpy(data, mem_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(buf)].get(), bytes);
    return ok_status();
  }

  Status run_step(std::int32_t step) override {
    command(Command::step, step);
    return ok_status();
  }
  Status run_all(std::int32_t iterations) override {
    for (std::size_t r = 0; r < static_cast<std::size_t>(lanes_); ++r) progress_[r].value.store(0);
    command(Command::all, iterations);
    return ok_status();
  }

  std::vector<TransferTiming> take_events() override {
    std::vector<TransferTiming> all;
    for (auto& e : events_) {
      all.insert(all.end(), e.begin(), e.end());
      e.clear();
    }
    return all;
  }

  double last_run_us() const override {
    double start = 0, end = 0;
    for (const auto& w : window_) start = std::max(start, w.first), end = std::max(end, w.second);
    return std::max(0.0, end - start);
  }

  double now_us() const override { return std::chrono::duration<double, std::micro>(Clock::now() - origin_).count(); }

 private:
  using Clock = std::chrono::steady_clock;

  std::uint8_t* ptr(const Loc& l) const {
    return mem_[static_cast<std::size_t>(l.rank)][static_cast<std::size_t>(l.buf)].get() + l.offset * esize_;
  }

  void command(Command c, std::int32_t arg) {
    cmd_ = c;
    arg_ = arg;
    const std::uint32_t target = done_.value.load() + static_cast<std::uint32_t>(lanes_);
    publish(epoch_, epoch_.value.load() + 1);
    // The launching thread sleeps: it must not compete with the ranks for a core.
    wait_at_least(done_, target, 0);
  }

  void stop() {
    if (threads_.empty()) return;
    cmd_ = Command::quit;
    publish(epoch_, epoch_.value.load() + 1);
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  void execute(std::int32_t lane, std::int32_t step) {
    const std::int32_t rank = lane % s_.ranks;
    if (!opts_.faults.empty() && lane < s_.ranks) inject_before(rank, step);
    const auto& ops = plans_[static_cast<std::size_t>(lane)].ops[static_cast<std::size_t>(step)];
    for (const Op& op : ops) {
      const double t0 = opts_.record_events ? now_us() : 0.0;
      switch (op.action) {
        case Action::copy:
          if (op.count) std::memcpy(op.dst, op.src, op.count * esize_);
          break;
        case Action::reduce: reduce_bytes(s_.dtype, op_kind(op_of_step(step)), op.dst, op.src, op.count); break;
        case Action::scale: scale_bytes(s_.dtype, op.dst, op.count, op.divisor); break;
        case Action::compute: std::this_thread::sleep_for(std::chrono::microseconds(op.duration_us)); break;
      }
      if (!opts_.faults.empty()) inject_after(step, op);
      if (opts_.record_events)
        events_[static_cast<std::size_t>(lane)].push_back({step, op.transfer, rank, t0, now_us()});
    }
  }

  // Faults: a delayed rank sleeps before its part of the step; a corrupting rank's
  // outgoing data arrives with its lowest bit flipped.
  void inject_before(std::int32_t rank, std::int32_t step) {
    for (const Fault& f : opts_.faults)
      if (f.kind == Fault::Kind::delay && f.rank == rank && f.step == step)
        std::this_thread::sleep_for(std::chrono::milliseconds(f.ms));
  }
  void inject_after(std::int32_t step, const Op& op) {
    const auto& t = s_.steps[static_cast<std::size_t>(step)].transfers[static_cast<std::size_t>(op.transfer)];
    for (const Fault& f : opts_.faults)
      if (f.kind == Fault::Kind::corrupt && f.step == step && t.src.rank == f.rank && t.dst.rank != f.rank && t.count)
        op.dst[0] ^= 1;
  }

  ReduceOp op_of_step(std::int32_t step) const {
    return s_.calls[static_cast<std::size_t>(s_.steps[static_cast<std::size_t>(step)].call)].args.op;
  }

  void run_fast(std::int32_t lane, std::int32_t iterations) {
    const auto S = static_cast<std::int32_t>(s_.steps.size());
    const auto& plan = plans_[static_cast<std::size_t>(lane)];
    Counter& mine = progress_[static_cast<std::size_t>(lane)];
    for (std::int32_t it = 0; it < iterations; ++it) {
      const std::int64_t base = static_cast<std::int64_t>(it) * S;
      for (std::int32_t k = 0; k < S; ++k) {
        for (const Dep& d : plan.deps[static_cast<std::size_t>(k)]) {
          const std::int64_t need = base + d.step + 1;
          if (need <= 0) continue;
          wait_at_least(progress_[static_cast<std::size_t>(d.rank)], static_cast<std::uint32_t>(need), spins_, yields_);
        }
        execute(lane, k);
        publish(mine, static_cast<std::uint32_t>(base + k + 1));
      }
    }
  }

  void worker(std::int32_t lane) {
    std::uint32_t seen = 0;
    for (;;) {
      wait_at_least(epoch_, seen + 1, spins_);
      seen = epoch_.value.load(std::memory_order_acquire);
      const Command c = cmd_;
      if (c == Command::quit) return;
      if (c == Command::step) execute(lane, arg_);
      if (c == Command::all) {
        const double t0 = now_us();
        run_fast(lane, arg_);
        window_[static_cast<std::size_t>(lane)] = {t0, now_us()};
      }
      done_.value.fetch_add(1, std::memory_order_seq_cst);
      if (done_.waiters.load(std::memory_order_seq_cst) != 0) futex_wake_all(&done_.value);
    }
  }

  const Schedule& s_;
  SessionOptions opts_;
  Clock::time_point origin_;
  std::size_t esize_ = 1;
  std::uint32_t spins_ = 64;
  std::uint32_t yields_ = 0;
  std::vector<std::vector<Memory>> mem_;  // [rank][buf]
  std::vector<RankPlan> plans_;
  std::unique_ptr<Counter[]> progress_;
  std::vector<std::vector<TransferTiming>> events_;
  std::vector<std::pair<double, double>> window_;  // per rank: start and end of the last run_all
  std::vector<std::thread> threads_;
  Counter epoch_, done_;
  Command cmd_ = Command::none;
  std::int32_t arg_ = 0;
  std::int32_t lanes_ = 0;  // threads: one per rank, plus one per rank for compute spans
};

class CpuBackend final : public Backend {
 public:
  BackendInfo info() const override {
    return {"cpu", "one thread per rank, receivers read straight from the sender's memory", true, ""};
  }
  Result<std::unique_ptr<Session>> open(const Schedule& s, const SessionOptions& o) const override {
    auto session = std::make_unique<CpuSession>(s, o);
    if (auto st = session->start(); !st) return st.error();
    return std::unique_ptr<Session>(std::move(session));
  }
};

}  // namespace
}  // namespace cpu

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<cpu::CpuBackend>(); }

}  // namespace collscope
