// The emulated launch (include/cuda_runtime.h): blocks one after another, and in each block every
// thread a fiber (ucontext) on the calling thread. A scheduler resumes each ready fiber until it
// returns or waits at a barrier; when every thread of a warp waits at a shuffle, or every thread
// of the block at __syncthreads(), it releases them. A round that runs nothing and releases
// nothing is a barrier that can never open: the launch fails, saying which. The order threads
// and blocks run in is thread_order.hpp's.
#include <ucontext.h>

#include <algorithm>
#include <array>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cuda_runtime.h"
#include "thread_order.hpp"

namespace cuda_emulation {
namespace {

constexpr unsigned kWarp = 32;
constexpr unsigned kMaxThreads = 1024;
constexpr unsigned kMaxBlocks = 1u << 20;
constexpr std::size_t kStackBytes = 64 * 1024;  // the kernels keep a few scalars; this is ample

enum class State { ready, at_block_barrier, at_warp_barrier, returned, failed };

struct Thread {
  ucontext_t context{};
  State state = State::ready;
};

// The block being run: its threads, the scheduler's own context and the warps' shuffle slots.
struct Block {
  ucontext_t scheduler{};
  std::vector<Thread> threads;
  unsigned current = 0;
  const std::function<void()>* kernel_call = nullptr;
  std::array<std::array<std::uint32_t, kWarp>, kMaxThreads / kWarp> slots{};
  std::string failure;
};

Block* running = nullptr;
ThreadOrder thread_order = ThreadOrder::ascending;

// 0..n−1 in thread_order; `round` picks the shuffled order's permutation.
std::vector<unsigned> in_order(unsigned n, unsigned round) {
  std::vector<unsigned> order(n);
  std::iota(order.begin(), order.end(), 0u);
  if (thread_order == ThreadOrder::descending) std::reverse(order.begin(), order.end());
  if (thread_order == ThreadOrder::shuffled) std::shuffle(order.begin(), order.end(), std::mt19937(7919u * round + n));
  return order;
}
thread_local std::string last_failure_text;
thread_local cudaError_t last_error = cudaSuccess;

// One stack per thread slot, allocated on first use and kept for later launches.
char* stack_for(unsigned thread) {
  static std::vector<std::unique_ptr<char[]>> stacks(kMaxThreads);
  if (!stacks[thread]) stacks[thread].reset(new char[kStackBytes]);
  return stacks[thread].get();
}

void thread_main() {
  (*running->kernel_call)();
  running->threads[running->current].state = State::returned;
  // returning resumes uc_link: the scheduler
}

// Parks the running thread in `state` until the scheduler releases it.
void wait_as(State state) {
  Thread& self = running->threads[running->current];
  self.state = state;
  swapcontext(&self.context, &running->scheduler);
}

// Stops the running thread for good; the scheduler ends the launch with `why`.
[[noreturn]] void fail(const std::string& why) {
  running->failure = why;
  wait_as(State::failed);
  __builtin_unreachable();  // a failed thread is never resumed
}

std::string block_name() {
  return "block (" + std::to_string(blockIdx.x) + ", " + std::to_string(blockIdx.y) + ", " +
         std::to_string(blockIdx.z) + ")";
}

// After every warp ran ahead (run_block): opens __syncthreads() where every thread of the block
// waits at it; "" when it did, else why nothing can open.
std::string open_block_barrier(Block& block) {
  const unsigned n = static_cast<unsigned>(block.threads.size());
  unsigned at_block = 0, at_warp = 0, returned = 0;
  for (const Thread& t : block.threads) {
    at_block += t.state == State::at_block_barrier;
    at_warp += t.state == State::at_warp_barrier;
    returned += t.state == State::returned;
  }
  if (at_block == n) {
    for (Thread& t : block.threads) t.state = State::ready;
    return {};
  }
  if (at_block > 0 && returned > 0)
    return std::to_string(at_block) + " threads wait at __syncthreads() after " + std::to_string(returned) +
           " of the block returned";
  return "threads wait at barriers that cannot open: " + std::to_string(at_block) + " at __syncthreads(), " +
         std::to_string(at_warp) + " at a shuffle whose warp is not all there, " + std::to_string(returned) +
         " returned";
}

// Releases warp w's lanes when every one waits at a shuffle (the warp runs on); whether it did.
bool release_warp(Block& block, unsigned w) {
  const unsigned first = w * kWarp;
  const unsigned end = std::min<unsigned>(static_cast<unsigned>(block.threads.size()), first + kWarp);
  for (unsigned t = first; t < end; ++t)
    if (block.threads[t].state != State::at_warp_barrier) return false;
  for (unsigned t = first; t < end; ++t) block.threads[t].state = State::ready;
  return true;
}

// Each round takes the warps in the order their first lane comes in thread_order, and runs each
// warp ahead, through its shuffles, until its lanes wait at __syncthreads() or return, before
// the next warp starts: a schedule a GPU may choose, and the one under which a warp that writes
// shared memory another warp has yet to read shows (the ascending order runs warp 0 ahead).
std::string run_block(Block& block, const dim3& block_dim) {
  const unsigned n = block_dim.x;
  block.threads.assign(n, Thread{});
  for (unsigned t = 0; t < n; ++t) {
    Thread& thread = block.threads[t];
    getcontext(&thread.context);
    thread.context.uc_stack.ss_sp = stack_for(t);
    thread.context.uc_stack.ss_size = kStackBytes;
    thread.context.uc_link = &block.scheduler;
    makecontext(&thread.context, thread_main, 0);
  }
  for (unsigned round = 0;; ++round) {
    std::vector<unsigned> warps;                             // in the order their first lane comes
    std::vector<std::vector<unsigned>> lanes((n + kWarp - 1) / kWarp);  // each warp's, in thread_order
    for (const unsigned t : in_order(n, round)) {
      if (lanes[t / kWarp].empty()) warps.push_back(t / kWarp);
      lanes[t / kWarp].push_back(t);
    }
    for (const unsigned w : warps) {
      do {
        for (const unsigned t : lanes[w]) {
          if (block.threads[t].state != State::ready) continue;
          block.current = t;
          threadIdx = uint3{t, 0, 0};
          swapcontext(&block.scheduler, &block.threads[t].context);
          if (!block.failure.empty()) return block.failure;
        }
      } while (release_warp(block, w));
    }
    bool all_returned = true;
    for (const Thread& t : block.threads) all_returned = all_returned && t.state == State::returned;
    if (all_returned) return {};
    // Every warp ran as far as it could: what is left waits at __syncthreads(), or nowhere that opens.
    const std::string stuck = open_block_barrier(block);
    if (!stuck.empty()) return stuck;
  }
}

// A failed launch's error, kept for cudaGetLastError until read (a later successful launch leaves
// it, as CUDA's runtime does); its text is cudaGetErrorString's.
cudaError_t finish(cudaError_t error, std::string text) {
  if (error == cudaSuccess) return error;
  last_error = error;
  last_failure_text = std::move(text);
  return error;
}

}  // namespace

cudaError_t run_grid(dim3 grid, dim3 block_dim, std::size_t dynamic_shared_bytes,
                     const std::function<void()>& kernel_call) {
  if (running != nullptr) return finish(cudaErrorLaunchFailure, "emulation: a launch from inside a kernel");
  if (block_dim.x < 1 || block_dim.x > kMaxThreads || block_dim.y != 1 || block_dim.z != 1)
    return finish(cudaErrorInvalidConfiguration, "emulation: blocks of 1 to 1024 threads in x only, got (" +
                                                     std::to_string(block_dim.x) + ", " + std::to_string(block_dim.y) +
                                                     ", " + std::to_string(block_dim.z) + ")");
  if (grid.x < 1 || grid.y < 1 || grid.z < 1)
    return finish(cudaErrorInvalidConfiguration, "emulation: an empty grid");
  if (static_cast<std::uint64_t>(grid.x) * grid.y * grid.z > kMaxBlocks)
    return finish(cudaErrorInvalidConfiguration, "emulation: at most 2^20 blocks a launch (a test's sizes)");
  if (dynamic_shared_bytes != 0)
    return finish(cudaErrorInvalidConfiguration, "emulation: dynamic shared memory is not emulated");
  auto block = std::make_unique<Block>();
  block->kernel_call = &kernel_call;
  running = block.get();
  struct NotRunning {  // whatever leaves this function, no launch is left running
    ~NotRunning() { running = nullptr; }
  } not_running;
  blockDim = block_dim;
  gridDim = grid;
  std::string failure;
  for (const unsigned b : in_order(grid.x * grid.y * grid.z, 0)) {
    blockIdx = uint3{b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y)};
    failure = run_block(*block, block_dim);
    if (!failure.empty()) {
      failure = "emulation: " + block_name() + ": " + failure;
      break;
    }
  }
  return failure.empty() ? finish(cudaSuccess, {}) : finish(cudaErrorLaunchFailure, failure);
}

void set_thread_order(ThreadOrder order) { thread_order = order; }

void sync_threads() { wait_as(State::at_block_barrier); }

std::uint32_t shuffle_xor(unsigned mask, std::uint32_t bits, int lane_mask, int width) {
  if (mask != 0xffffffffu || width != static_cast<int>(kWarp) || lane_mask < 0 || lane_mask >= static_cast<int>(kWarp))
    fail("only full-warp shuffles (mask 0xffffffff, width 32, lane mask below 32) are emulated");
  if (blockDim.x % kWarp != 0)
    fail("a shuffle in a block of " + std::to_string(blockDim.x) + " threads, not whole warps");
  const unsigned t = running->current;
  auto& slots = running->slots[t / kWarp];
  slots[t % kWarp] = bits;
  wait_as(State::at_warp_barrier);  // every lane has written its value
  const std::uint32_t theirs = slots[(t % kWarp) ^ static_cast<unsigned>(lane_mask)];
  wait_as(State::at_warp_barrier);  // every lane has read before any writes again
  return theirs;
}

const char* last_failure() { return last_failure_text.c_str(); }

}  // namespace cuda_emulation

cudaError_t cudaGetLastError() {
  const cudaError_t error = cuda_emulation::last_error;
  cuda_emulation::last_error = cudaSuccess;
  return error;
}

// The emulation keeps one failure's text, the last: every error code it returns names that launch.
const char* cudaGetErrorString(cudaError_t error) {
  if (error == cudaSuccess) return "no error";
  const std::string& text = cuda_emulation::last_failure_text;
  return text.empty() ? "emulated launch failed" : text.c_str();
}
