// Risk against the population (docs/method.md, "Risk against the population"): the journalist and
// marketer measures of a release, uniqueness in the sample and in the population, the share of records
// above a stated risk, and k-map, from the records and the residents of each released class. After
// El Emam and Dankar, "Protecting privacy using k-anonymity" (JAMIA 2008).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vbas
{

//! One released class: its records f (weighted by the count field) and the residents F of the population in it, counted or estimated.
struct ClassPopulation
{
    std::int64_t records = 0;
    double residents = 0;
};

//! The measures of risk against the population of a release (docs/method.md, Risk against the population).
struct PopulationRisk
{
    std::int64_t records = 0;     //!< n: the released records
    double smallestResidents = 0; //!< min F: the release is a k-map for every k up to it; 0 without classes
    double journalistMax = 0;     //!< 1 / min F
    double journalistAverage = 0; //!< (1 / n) sum f / F over the classes
    /**
     * The expected share of records re-identified by an attacker who matches every identity of the
     * population: (1 / n) sum f / F, the journalist average's formula; with no other population than
     * the release (F = f), it is classes / n, the prosecutor average.
     */
    double marketer = 0;
    std::int64_t sampleUniques = 0;     //!< records alone in their released class (f = 1)
    std::int64_t populationUniques = 0; //!< records alone in the population (F = 1)
    double aboveThreshold = 0;          //!< the share of the records whose journalist risk 1 / F exceeds the threshold
};

/**
 * The measures over classes, threshold the stated risk. Throws std::invalid_argument naming the class
 * (its index) when a class holds no records, or fewer residents than records: the population cannot be
 * the one its records were drawn from.
 */
PopulationRisk populationRisk( const std::vector<ClassPopulation> &classes, double threshold );

//! k-map (El Emam and Dankar 2008): the index of the first class with fewer than k residents, or -1 when every class has k or more.
std::ptrdiff_t firstBelowKMap( const std::vector<ClassPopulation> &classes, double k );

} // namespace vbas
