// The commit this binary was built from, as every result records it: 12 hex digits, with
// "-dirty" when tracked files had uncommitted changes, or "unknown" outside a git checkout.
// Taken at build time (cmake/git_revision.cmake), so a rebuild after a commit never reports
// the revision of an earlier configure.
#pragma once

namespace tokbench {

const char* git_revision();

}  // namespace tokbench
