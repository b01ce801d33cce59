// The average risk model's cut (docs/method.md, "A release at a stated risk"): the released classes to
// suppress, the riskiest first, so that the released records' average risk is at most a threshold;
// over a list of classes once (averageRiskCut), and kept up to date over a changing set of classes
// (AverageCut, which the suppression search scores its moves with). Both sum whole units of 2^-62 of
// risk exactly, so they agree to the class whatever order the classes come in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

namespace vbas
{

//! An average risk within this, relatively, of the threshold meets it: the average is a sum of rounded quotients.
constexpr double kAverageRiskTolerance = 1e-12;

/**
 * Risk in units of 2^-62. GCC's and Clang's 128-bit integer: a sum over millions of classes stays
 * exact at that unit (64 bits would allow units of 2^-32 only, coarser than the tolerance).
 */
using RiskUnits = __int128;

/**
 * A class's excess over the threshold t, in units: its records' share of the sum of risks, f / F (F its
 * residents, at least 1; rounded up to a unit), less f t (1 + kAverageRiskTolerance) (rounded down).
 * The released records' average risk is at most t when the released classes' excesses sum to at most
 * 0: rounding makes the test stricter, never looser. Only a class of positive excess (1/F above t) is
 * worth cutting.
 */
class RiskExcess
{
  public:
    explicit RiskExcess( double threshold );
    RiskUnits operator()( std::int64_t records, std::int64_t residents ) const;

  private:
    RiskUnits mThreshold = 0; //!< t (1 + kAverageRiskTolerance) in units, rounded down
};

/**
 * The cut over released classes of records[i] records and residents[i] residents (the prosecutor's:
 * the records): the classes to suppress, the riskiest first (the fewest residents, then the fewest
 * records, then the lower index), the fewest in that order that bring the excesses' sum to at most 0.
 * Suppressing the class of highest risk lowers the average most per record suppressed.
 */
std::vector<char> averageRiskCut( const std::vector<std::int64_t> &records, const std::vector<std::int64_t> &residents, double threshold );

/**
 * The same cut kept up to date over a set of classes that changes one class at a time: the records it
 * suppresses equal those averageRiskCut suppresses over the set. Between mark() and rollback(), the
 * changes are remembered and rollback() undoes them (a move scored, then not taken).
 */
class AverageCut
{
  public:
    explicit AverageCut( double threshold );

    //! A class of these counts joins the set (delta 1) or leaves it (-1).
    void change( std::int64_t records, std::int64_t residents, int delta );
    //! The records the cut suppresses.
    std::int64_t records() const;
    //! The (residents, records) of the last group of classes it takes from, wholly or in part; none when it takes nothing.
    std::optional<std::pair<std::int64_t, std::int64_t>> lastGroup() const;
    void mark();
    void rollback();

  private:
    //! Calls take( group, classes cut from it ) for each group the cut takes from, the riskiest first.
    template<typename Take>
    void walk( Take take ) const;

    //! The classes of positive excess with the same counts: how many, and the excess of each.
    struct Group
    {
        std::int64_t classes = 0;
        RiskUnits excess = 0;
    };

    RiskExcess mExcess;
    RiskUnits mTotal = 0;                                          //!< the excesses of every class of the set
    std::map<std::pair<std::int64_t, std::int64_t>, Group> mRisky; //!< by (residents, records): the riskiest first; a group left empty stays
    std::vector<std::tuple<std::int64_t, std::int64_t, int>> mJournal;
    bool mMarked = false;
};

} // namespace vbas
