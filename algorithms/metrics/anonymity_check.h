// An independent check of a released table (docs/concepts.md): its equivalence classes recounted from
// the table itself, with their records (k-anonymity), the distinct sensitive values (distinct
// l-diversity) and the earth mover's distance of their sensitive values to the whole table's
// (t-closeness). It shares no code with the steps that make a release: the caller gives each row's
// EC and sensitive value as exact byte strings, and the records the row stands for.
#pragma once

#include "algorithms/base/string_index.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vbas
{

//! What a release must meet: every EC holds k records or more, l distinct sensitive values or more, and lies within t of the table (docs/concepts.md).
struct AnonymityThresholds
{
    std::int64_t k = 5;
    std::int64_t l = 1; //!< 1: not checked
    double t = 1;       //!< 1: not checked (the distance never exceeds 1)
};

//! A t within this of the threshold is no violation: the distance is a sum of rounded quotients.
constexpr double kClosenessTolerance = 1e-12;

//! One equivalence class as measured.
struct EcMeasures
{
    std::string key; //!< the EC's key as given to AnonymityCheck::add; set for the violating ECs of a report
    std::int64_t records = 0;
    std::int64_t l = 0; //!< distinct sensitive values with records; 0 without a sensitive attribute
    double t = 0;       //!< earth mover's distance to the table's distribution; 0 without a sensitive attribute
    bool violatesK = false;
    bool violatesL = false;
    bool violatesT = false;

    bool violates() const { return violatesK || violatesL || violatesT; }
};

struct AnonymityReport
{
    std::int64_t records = 0;
    std::size_t ecs = 0;
    std::optional<std::int64_t> smallestEc; //!< none without ECs
    std::size_t violatingEcs = 0;
    std::int64_t violatingRecords = 0;
    std::optional<std::int64_t> smallestL; //!< none without ECs or without a sensitive attribute
    std::optional<double> largestT;        //!< likewise
    std::vector<EcMeasures> violations;    //!< the violating ECs, in the order of their first row
};

class AnonymityCheck
{
  public:
    explicit AnonymityCheck( bool withSensitive );

    /**
     * Counts a row standing for records records (0 or more) of EC ecKey, whose sensitive value is
     * sensitiveKey (ignored without a sensitive attribute). A row of 0 records counts nothing.
     * Throws std::overflow_error when the records add up to more than 2^63 - 1.
     */
    void add( std::string_view ecKey, std::string_view sensitiveKey, std::int64_t records );

    AnonymityReport report( const AnonymityThresholds &thresholds ) const;

  private:
    struct Ec
    {
        std::int64_t records = 0;
        std::map<std::uint32_t, std::int64_t> values; //!< sensitive value -> records
    };

    EcMeasures measure( const Ec &ec, const AnonymityThresholds &thresholds ) const;
    double distance( const Ec &ec ) const;

    bool mWithSensitive = false;
    StringIndex mEcIndex; //!< EC key -> its index in mEcs
    std::vector<Ec> mEcs;
    StringIndex mValueIndex;
    std::vector<std::int64_t> mValueRecords; //!< records of each sensitive value in the whole table
    std::int64_t mRecords = 0;
};

} // namespace vbas
