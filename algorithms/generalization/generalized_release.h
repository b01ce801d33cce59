// The release at a node as it is written (docs/method.md, Generalization): each record's class is
// its generalized labels with its starred QIs as "*" (records of several generalized classes may
// share one), or dropped. Written classes are what the release's ECs,
// metrics and checks count, so a "*" class is a class of its own.
#pragma once

#include "algorithms/generalization/lattice.h"
#include "algorithms/generalization/starred_residents.h"
#include "algorithms/aggregation/release.h"
#include "algorithms/metrics/sensitive.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

struct WrittenClasses
{
    std::vector<std::uint32_t> generalized;  //!< per written class: a generalized class of it (its records are written alike on every QI)
    std::vector<char> dropped;               //!< per written class: not released
    std::vector<std::uint32_t> starred;      //!< per written class: the QIs every one of its records is starred on (what a written "*" covers)
    std::vector<std::uint32_t> entryClass;   //!< per entry of the region histograms: its written class
    std::vector<std::uint32_t> entryStarred; //!< per entry of the region histograms: the QIs its records are written with as "*"
    SparseHistograms regions;                //!< per region: written class -> records
};

/**
 * What each label of a QI is written as (docs/method.md, "Generalization", the release as written):
 * per QI, a token for each label id at the node's level, and the token of its "*". Two labels, or a
 * label and "*", with one token are written alike (a "*" written as NULL beside a NULL value, a
 * label "*" beside a starred value), so their records are one class of the release.
 */
struct WrittenTokens
{
    std::vector<std::vector<std::uint32_t>> ofLabel; //!< [qi][label id at the node's level] -> token
    std::vector<std::uint32_t> star;                 //!< [qi] -> token of "*"
};

/**
 * The written classes of node's release, regionHistograms the records of each region over the original
 * classes. tokens: what each label is written as; without them every label and "*" are written apart.
 */
WrittenClasses writtenClasses( const SparseHistograms &regionHistograms, const NodeRelease &node, const WrittenTokens *tokens = nullptr );

//! The sensitive pairs over the written classes: each pair's class replaced by its region entry's written class.
SensitiveHistograms writtenSensitive( const SensitiveHistograms &sensitive, const SparseHistograms &regionHistograms, const WrittenClasses &written );

/**
 * Each region's residents of each written class of node's release (rows: regions; classes: written
 * classes): a cell counts in every written class whose labels (as tokens writes them, when given) are
 * its own at node on each QI the class is not starred on (WrittenClasses::starred). What k-map counts
 * of a generalized release (docs/method.md, "A release at a stated risk").
 */
SparseHistograms writtenResidents( const PopulationCells &cells, const std::vector<QiHierarchy> &qis, const NodeRelease &node, const WrittenClasses &written, const WrittenTokens *tokens,
                                   std::size_t regions );

/**
 * The release of the written classes in node's aggregation under criterion (its residents, if any,
 * writtenResidents'): the classes below k and the dropped ones (below k, or cut by the node for the
 * average risk, which the node met) suppressed.
 */
Release writtenRelease( const WrittenClasses &written, const NodeRelease &node, const Criterion &criterion );

} // namespace vbas
