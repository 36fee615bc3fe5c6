// Lightning's Trainer ThroughputMonitor scenarios (reference spec §5.2), reproduced with a
// fake loop: placeholder until the scenarios below are filled in.
#include <gtest/gtest.h>
