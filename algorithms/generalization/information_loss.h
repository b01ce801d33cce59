// Information lost at a node of the generalization lattice (docs/method.md, Information loss): the
// generic non-uniform entropy of Prasser, Bild and Kuhn, Prec, LM (NCP) and DM*, over every QI at
// its level and the geography (region 0, aggregate 1, suppressed 2), a "*" at its QI's star level and
// a dropped record at the top of every hierarchy.
#pragma once

#include "algorithms/generalization/generalization.h"
#include "algorithms/base/histograms.h"
#include "algorithms/generalization/local_suppression.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

//! What the lattice search minimises.
enum class Objective
{
  GenericNue, //!< generic non-uniform entropy, in bits
  Prec,       //!< 1 - Prec
  Lm,         //!< LM / NCP
  DmStar,     //!< DM*: sum of squared EC sizes before suppression
};

struct NodeLoss
{
    double genericNue = 0;    //!< bits, QIs and geography
    double genericNueMax = 0; //!< bits with every record dropped: genericNue's scale
    double prec = 1;          //!< 1 - mean over records and attributes (QIs, geography) of level / height
    double lm = 0;            //!< mean over records and attributes of (leaves under the value - 1) / (leaves - 1), 1 for "*"
    double dmStar = 0;

    //! The value to minimise.
    double objective( Objective objective ) const;
};

//! The loss of every node of one input: the records of each value of each QI, and of each region.
class LossModel
{
  public:
    LossModel( const std::vector<QiHierarchy> &qis, const std::vector<std::uint32_t> &classCodes, const std::vector<std::int64_t> &classRecords, const std::vector<std::int64_t> &regionRecords );

    /**
     * A lower bound of objective at node, whatever the geography and the suppression: the QIs'
     * loss with nothing suppressed (starring or dropping only adds loss). Grows with every level.
     */
    double bound( Objective objective, const LatticeNode &node ) const;

    //! The information a value of each QI carries at node (entropy of its labels): local suppression stars the least first.
    std::vector<double> information( const LatticeNode &node ) const;

    /**
     * The loss at node of the ECs ecs (aggregate, generalized class; labels as Generalization::labels)
     * with suppression s, regionAggregateIndex the aggregate of each region.
     */
    NodeLoss loss( const LatticeNode &node, const SparseHistograms &ecs, const std::vector<std::uint32_t> &labels, const ValueSuppression &s,
                   const std::vector<std::size_t> &regionAggregateIndex ) const;

  private:
    //! Per QI and level: loss with every record at that level.
    struct Level
    {
        double genericNue = 0;
        double steps = 0;              //!< records x level / star level
        double lm = 0;                 //!< sum over records of LM
        double information = 0;        //!< entropy of the labels, bits
        std::vector<double> lmOfLabel; //!< LM of a value with each label
    };

    //! Generic NUE of the starred records of QI q from level `level` up, given their records per label.
    double starredNue( std::size_t q, std::size_t level, const std::vector<std::int64_t> &starred ) const;
    //! The geography's generic NUE with these records dropped per aggregate.
    double geographicNue( const std::vector<std::size_t> &regionAggregateIndex, const std::vector<std::int64_t> &dropped ) const;

    const std::vector<QiHierarchy> &mQis;
    std::vector<std::int64_t> mRegionRecords;
    std::int64_t mRecords = 0;
    std::vector<std::vector<Level>> mLevels; //!< [qi][level], up to the star level
};

} // namespace vbas
