// The release at a node as it is written (docs/method.md, Generalization): each record's class is
// its generalized labels with its starred QIs as "*" (records of several generalized classes may
// share one), or dropped. Written classes are what the release's ECs,
// metrics and checks count, so a "*" class is a class of its own.
#pragma once

#include "lattice.h"
#include "release.h"
#include "sensitive.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

struct WrittenClasses
{
    std::vector<std::uint32_t> generalized; //!< per written class: a generalized class of it (they agree on every QI not starred)
    std::vector<std::uint32_t> starred;     //!< per written class: the QIs written as "*" (every QI when dropped)
    std::vector<char> dropped;              //!< per written class: not released
    std::vector<std::uint32_t> entryClass;  //!< per entry of the region histograms: its written class
    SparseHistograms regions;               //!< per region: written class -> records
};

//! The written classes of node's release, regionHistograms the records of each region over the original classes.
WrittenClasses writtenClasses( const SparseHistograms &regionHistograms, const NodeRelease &node );

//! The sensitive pairs over the written classes: each pair's class replaced by its region entry's written class.
SensitiveHistograms writtenSensitive( const SensitiveHistograms &sensitive, const SparseHistograms &regionHistograms, const WrittenClasses &written );

//! The release of the written classes in node's aggregation: the dropped classes (each below k) suppressed.
Release writtenRelease( const WrittenClasses &written, const NodeRelease &node, std::int64_t k );

} // namespace vbas
