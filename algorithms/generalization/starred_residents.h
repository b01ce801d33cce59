// The residents of generalized classes (docs/method.md, "A release at a stated risk", Generalization):
// a population table's cells, each a region, one value of each QI and its residents, counted under the
// labels a lattice node gives their values, a QI written as "*" matching every value. Under k-map each
// released class needs k residents so counted (El Emam and Dankar, JAMIA 2008).
#pragma once

#include "algorithms/generalization/generalization.h"
#include "algorithms/base/histograms.h"
#include "algorithms/base/string_index.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace vbas
{

//! A value of a population cell that its QI's hierarchy does not hold: only "*" (or a top level of one label) covers it.
constexpr std::uint32_t kValueOutsideHierarchy = ~std::uint32_t( 0 );

//! A population table's cells over the QIs' hierarchies.
struct PopulationCells
{
    std::size_t qiCount = 0;
    std::vector<std::uint32_t> region;   //!< per cell
    std::vector<std::uint32_t> values;   //!< qiCount per cell: the value's index in its QI's hierarchy, or kValueOutsideHierarchy
    std::vector<std::int64_t> residents; //!< per cell

    void add( std::uint32_t cellRegion, const std::vector<std::uint32_t> &cellValues, std::int64_t cellResidents );
};

/**
 * Residents of classes keyed by one key per QI (a label id, or what a label is written as), some QIs
 * starred: per row (an aggregate), the residents of the cells whose keys agree with the class's on
 * every QI not starred. Each starred set's sums are made when first asked for, over every cell.
 */
class StarredResidents
{
  public:
    //! keys: qiCount per cell; rows: the row of each cell.
    StarredResidents( std::size_t qiCount, std::vector<std::uint32_t> keys, std::vector<std::uint32_t> rows, const std::vector<std::int64_t> &residents );

    std::int64_t of( std::uint32_t row, const std::uint32_t *keys, std::uint32_t starred ) const;

  private:
    //! The row and the keys with the starred ones as kStarKey, as bytes.
    std::string_view maskedKey( std::uint32_t row, const std::uint32_t *keys, std::uint32_t starred ) const;

    struct Sums
    {
        StringIndex index;
        std::vector<std::int64_t> residents; //!< per id of index
    };

    std::size_t mQiCount;
    std::vector<std::uint32_t> mKeys;
    std::vector<std::uint32_t> mRows;
    const std::vector<std::int64_t> &mResidents;
    mutable std::map<std::uint32_t, Sums> mSums; //!< per starred set
    mutable std::vector<std::uint32_t> mKeyBuffer;
};

//! The label of each cell's value of each QI at node (qiCount per cell); kValueOutsideHierarchy where it has none.
std::vector<std::uint32_t> cellLabels( const PopulationCells &cells, const std::vector<QiHierarchy> &qis, const LatticeNode &node );

//! The residents at node over the aggregates: keys the labels at node, each cell's row its region's aggregate.
StarredResidents nodeResidents( const PopulationCells &cells, const std::vector<QiHierarchy> &qis, const LatticeNode &node, const std::vector<std::size_t> &regionAggregateIndex );

} // namespace vbas
