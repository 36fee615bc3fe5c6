// Closed-form parameter and FLOP counts (counting.hpp). Being written in this session; the
// definitions land in the next commit.
