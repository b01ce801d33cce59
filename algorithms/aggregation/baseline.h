// The usual alternatives that a comparison shows beside the aggregations (docs/method.md, "Comparing
// candidate releases"): the regions as they are, a parent geography that groups them by a key (a
// field of the regions, or the region id cropped to its first characters: the paper's cropping, and
// the 3-digit ZIP code of HIPAA's Safe Harbor), and no geography at all. Each is a regionAggregate
// for vbas::release, which suppresses under the criterion as for any aggregation.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace vbas
{

//! Each region its own aggregate: the initial regions, unaggregated.
std::vector<std::size_t> eachRegionAlone( std::size_t regions );

//! One aggregate of every region: no geography, the QIs alone.
std::vector<std::size_t> oneAggregate( std::size_t regions );

//! One aggregate per distinct key, numbered in the order the keys first appear.
std::vector<std::size_t> groupByKey( const std::vector<std::string> &keys );

/**
 * HIPAA's Safe Harbor rule for the 3-digit ZIP code (45 CFR 164.514(b)(2)(i)(B)): the aggregates
 * with `limit` residents or fewer (20,000 in the rule) are merged into one, the rule's "000"; the
 * others are kept. regionResidents: each region's residents. Numbered as groupByKey numbers.
 */
std::vector<std::size_t> mergeSparse( const std::vector<std::size_t> &regionAggregate, const std::vector<double> &regionResidents, double limit );

} // namespace vbas
