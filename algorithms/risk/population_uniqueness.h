// Population uniqueness estimated from the sample alone (docs/method.md, "Population uniques estimated
// from the sample"): how many residents are alone in their class in the population, when only the
// released classes' sizes and the population's size are known. Three models (Pitman: Hoshino 2001;
// Zayatz 1991; the slide negative binomial, SNB: Chen and Keller-McNulty 1998) and the rule of Dankar,
// El Emam, Neisa and Roffey (BMC Medical Informatics and Decision Making 2012) that chooses among them.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace vbas
{

//! The released classes by size: size j -> c_j, the number of classes of j records (sizes >= 1).
using ClassSizes = std::map<std::int64_t, std::int64_t>;

//! The sizes of classes whose records are classRecords; throws std::invalid_argument on a class of no records.
ClassSizes classSizes( const std::vector<std::int64_t> &classRecords );

//! Pitman's sampling formula's parameters (Hoshino 2001), found by maximum likelihood; found is false when the likelihood has no maximum inside 0 < alpha < 1, theta > -alpha.
struct PitmanParameters
{
    double theta = 0;
    double alpha = 0;
    bool found = false;
};

//! The SNB model's parameters (Chen and Keller-McNulty 1998): K non-empty classes in the population, whose sizes less one are negative binomial (alpha, beta).
struct SnbParameters
{
    double classes = 0; //!< K, by Shlosser's estimator
    double alpha = 0;
    double beta = 0;
    bool found = false; //!< false when the two equations have no root with alpha > 0 and 0 < beta < 1
};

enum class UniquenessModel
{
  None,    //!< no sample uniques: no population uniques among the records, nothing to estimate
  Pitman,  //!< chosen at a sampling fraction of at most 0.1
  Zayatz,  //!< chosen above 0.1 when it is below SNB's or SNB has none, and below 0.1 when Pitman has none
  Snb,     //!< chosen above 0.1 when it is below Zayatz's
  Counted, //!< not estimated: counted in a population table
};

//! "Pitman", "Zayatz", "SNB", "counted" or "none".
const char *modelName( UniquenessModel model );

constexpr double kNoEstimate = std::numeric_limits<double>::quiet_NaN();

//! Each model's estimate of the residents unique in the population (NaN where a model has none) and the one Dankar's rule chose.
struct UniquenessEstimate
{
    double pitman = kNoEstimate;
    double zayatz = kNoEstimate;
    double snb = kNoEstimate;
    UniquenessModel model = UniquenessModel::None;
    double uniques = 0;  //!< the chosen model's estimate; 0 with no sample uniques
    double fraction = 0; //!< the sampling fraction, records / residents
};

PitmanParameters pitmanParameters( const ClassSizes &sizes );
SnbParameters snbParameters( const ClassSizes &sizes, double fraction );
//! Shlosser's estimate of the classes of the population that hold someone (Haas, Naughton, Seshadri and Stokes 1995).
double shlosserClasses( const ClassSizes &sizes, double fraction );

//! The three models' estimates of the population uniques, population the residents N; NaN where a model has none.
double pitmanUniques( const ClassSizes &sizes, double population );
double zayatzUniques( const ClassSizes &sizes, double population );
double snbUniques( const ClassSizes &sizes, double population );

/**
 * Dankar et al.'s rule: at a sampling fraction of at most 0.1, Pitman's estimate (Zayatz's where Pitman
 * has none); above, the smaller of Zayatz's and SNB's (Zayatz's where SNB has none). Throws
 * std::invalid_argument when population is smaller than the records.
 */
UniquenessEstimate estimatePopulationUniques( const ClassSizes &sizes, double population );

} // namespace vbas
