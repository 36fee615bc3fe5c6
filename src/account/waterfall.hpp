// The time account as people read it in the run report: from 100% of the peak, one line per
// loss, down to the measured MFU; each line with its seconds per iteration and its share of the
// iteration. Without a peak, the categories' shares alone. Torch-free.
#pragma once

#include <ostream>

#include "account/time_account.hpp"

namespace tokbench::account {

void write_waterfall(const TimeAccount& account, std::ostream& out);

}  // namespace tokbench::account
