// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A half-open range of indices, shared by the replay split and the forecasters.

#include <cstddef>

namespace foxhunt {

/// A half-open range [begin, end) of indices (bars, or window anchors).
struct IndexRange {
    std::size_t begin = 0; ///< first index
    std::size_t end = 0;   ///< one past the last index
    /// Number of indices in the range (0 when end <= begin).
    std::size_t size() const { return end > begin ? end - begin : 0; }
    friend bool operator==(const IndexRange&, const IndexRange&) = default;
};

} // namespace foxhunt
