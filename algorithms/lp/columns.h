// Columns gathered before they go to CLP in one call (internal to vbas_lp).
#pragma once

#include <ClpSimplex.hpp>

#include <vector>

namespace vbas::lp
{

class ColumnBuffer
{
  public:
    //! Starts a column with this cost and bounds; entries follow.
    void begin( double cost, double upper = COIN_DBL_MAX )
    {
      mCost.push_back( cost );
      mUpper.push_back( upper );
      mStarts.push_back( static_cast<CoinBigIndex>( mRows.size() ) );
    }
    void entry( int row, double value )
    {
      mRows.push_back( row );
      mElements.push_back( value );
    }
    std::size_t size() const { return mCost.size(); }

    //! Loads the buffered columns as the whole problem, with these row bounds.
    void load( ClpSimplex &model, const std::vector<double> &rowLower, const std::vector<double> &rowUpper ) const
    {
      const std::vector<double> lower( size(), 0.0 );
      model.loadProblem( static_cast<int>( size() ), static_cast<int>( rowLower.size() ), starts().data(), mRows.data(), mElements.data(), lower.data(), mUpper.data(), mCost.data(), rowLower.data(),
                         rowUpper.data() );
    }

    //! Appends the buffered columns to model (which keeps its basis: the new columns are non-basic at 0) and empties the buffer.
    void append( ClpSimplex &model )
    {
      const std::vector<double> lower( size(), 0.0 );
      model.addColumns( static_cast<int>( size() ), lower.data(), mUpper.data(), mCost.data(), starts().data(), mRows.data(), mElements.data() );
      *this = ColumnBuffer();
    }

  private:
    //! Column starts with the end of the last column.
    std::vector<CoinBigIndex> starts() const
    {
      std::vector<CoinBigIndex> starts = mStarts;
      starts.push_back( static_cast<CoinBigIndex>( mRows.size() ) );
      return starts;
    }

    std::vector<double> mCost, mUpper, mElements;
    std::vector<int> mRows;
    std::vector<CoinBigIndex> mStarts;
};

} // namespace vbas::lp
