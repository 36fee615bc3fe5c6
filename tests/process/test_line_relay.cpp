// process::LineRelay over a real pipe into an in-memory FILE*: whole lines with their prefix, a
// partial line held until it ends, the remainder at EOF, and the bound on a line that never ends.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "process/line_relay.hpp"

namespace tokbench::process {
namespace {

// A relay reading a pipe this test writes, into a memory stream it reads back.
class Relayed {
 public:
  explicit Relayed(const std::string& prefix) {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    EXPECT_EQ(::fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
    writer_ = Fd(fds[1]);
    sink_ = ::open_memstream(&buffer_, &size_);
    relay = LineRelay(Fd(fds[0]), sink_, prefix);
  }
  ~Relayed() {
    std::fclose(sink_);
    std::free(buffer_);
  }
  void write(const std::string& text) {
    ASSERT_EQ(::write(writer_.get(), text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void close_writer() { writer_.reset(); }
  std::string written() {
    std::fflush(sink_);
    return std::string(buffer_, size_);
  }
  // Relays until the pipe has nothing more now, or has ended.
  void relay_all() {
    while (relay.is_open() && relay.relay_available() == LineRelay::Outcome::data) {
    }
  }

  LineRelay relay;
  Fd writer_;

 private:
  char* buffer_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* sink_ = nullptr;
};

TEST(LineRelay, WholeLinesGoOutPrefixedAndAPartialOneWaits) {
  Relayed r("[rank 1] ");
  r.write("first\nsecond\npart");
  r.relay_all();
  EXPECT_EQ(r.written(), "[rank 1] first\n[rank 1] second\n");
  r.write("ial\n");
  r.relay_all();
  EXPECT_EQ(r.written(), "[rank 1] first\n[rank 1] second\n[rank 1] partial\n");
  EXPECT_TRUE(r.relay.is_open());
}

TEST(LineRelay, APrefixedPartialLineAtTheEndGetsANewline) {
  Relayed r("[rank 2] ");
  r.write("done\nno newline");
  r.close_writer();
  r.relay_all();
  EXPECT_FALSE(r.relay.is_open());  // EOF closed it
  EXPECT_EQ(r.written(), "[rank 2] done\n[rank 2] no newline\n");
}

TEST(LineRelay, AnUnprefixedStreamStaysByteExact) {
  Relayed r("");
  r.write("{\"json\": 1}\n{\"tail\": true}");
  r.close_writer();
  r.relay_all();
  EXPECT_EQ(r.written(), "{\"json\": 1}\n{\"tail\": true}");
}

TEST(LineRelay, ClosingWritesWhatIsPending) {
  Relayed r("> ");
  r.write("half");
  r.relay_all();
  EXPECT_EQ(r.written(), "");
  r.relay.close();
  EXPECT_FALSE(r.relay.is_open());
  EXPECT_EQ(r.written(), "> half\n");
}

TEST(LineRelay, ALineThatNeverEndsIsWrittenOnceItReachesTheBound) {
  Relayed r("> ");
  const std::string endless(kMaxPendingLine + 100 * 1024, 'x');  // more left over than one read takes
  // More than a pipe holds: a writer thread, the relay reading meanwhile.
  std::thread writer([&] {
    r.write(endless);
    r.close_writer();
  });
  while (r.relay.is_open()) {
    if (r.relay.relay_available() == LineRelay::Outcome::would_block) std::this_thread::yield();
  }
  writer.join();
  // Two prefixed pieces (where the first ends depends on how the reads fell), nothing lost.
  const std::string out = r.written();
  const std::size_t first_end = out.find('\n');
  ASSERT_NE(first_end, std::string::npos);
  EXPECT_EQ(out.substr(0, 2), "> ");
  EXPECT_GE(first_end - 2, kMaxPendingLine);
  const std::string second = out.substr(first_end + 1);
  EXPECT_EQ(second, "> " + std::string(endless.size() - (first_end - 2), 'x') + "\n");
}

TEST(LineRelay, DrainStopsAtTheEndOfAReapedChildsOutput) {
  Relayed r("[c] ");
  r.write("last words\n");
  r.close_writer();
  r.relay.drain(64);
  EXPECT_FALSE(r.relay.is_open());
  EXPECT_EQ(r.written(), "[c] last words\n");
}

}  // namespace
}  // namespace tokbench::process
