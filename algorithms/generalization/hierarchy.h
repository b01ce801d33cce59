// Generalization hierarchies of a QI (docs/method.md, Generalization): each original value has one
// label per level, level 0 the value itself, each level a coarsening of the one below. Read from
// ARX's hierarchy format (one row per value: the value, then its label at level 1, 2, ...) or built
// in: intervals of doubling width, or value -> "*".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vbas
{

//! One row of a hierarchy file: its line number (1 = the first) and its fields.
struct HierarchyRow
{
    std::size_t line = 0;
    std::vector<std::string> fields;
};

//! A hierarchy refused: the line and the value at fault, and why, in the message.
class HierarchyError : public std::runtime_error
{
  public:
    HierarchyError( std::size_t line, std::string value, const std::string &message );
    std::size_t line; //!< 0: no line (a built-in hierarchy)
    std::string value;
};

class Hierarchy
{
  public:
    /**
     * ARX's format: every row the value then its labels, as many on every row (empty fields at the
     * end of a row are dropped, as ARX writes them). Refuses (HierarchyError) no rows, a row with
     * another number of labels than the first, an empty label, a value given twice, and a level
     * that is not a coarsening of the one below (two values sharing a label that part above it).
     */
    static Hierarchy fromRows( const std::vector<HierarchyRow> &rows );

    /**
     * Intervals for numbers (23, 23.5), whole-number bands (20-24) and open bands (85+): level j
     * groups the values into intervals of width `width` x 2^(j-1) counted from the lowest value's
     * multiple of `width`, labelled "[20, 30)" ("[80, inf)" for one holding an open band), until
     * one interval holds every value; the last level is "*". A value on an interval's boundary is in
     * the interval it starts, whatever the rounding of the quotient. Refuses a value that is none of
     * these, a band that an interval would split, and a width whose intervals would have the same
     * start and end in their label (too small for the values: 15 significant digits), naming the value.
     */
    static Hierarchy intervals( const std::vector<std::string> &values, double width );

    //! Two levels: the value, then "*".
    static Hierarchy suppressionOnly( const std::vector<std::string> &values );

    //! Levels, level 0 (the original values) included.
    std::size_t levels() const { return mLabelOf.size(); }
    std::size_t valueCount() const { return mValues.size(); }
    const std::string &value( std::size_t index ) const { return mValues[index]; }

    //! The index of a value, if the hierarchy has it.
    std::optional<std::size_t> find( std::string_view value ) const;

    //! The label id of a value at a level (ids are dense within a level).
    std::uint32_t labelId( std::size_t level, std::size_t valueIndex ) const { return mLabelOf[level][valueIndex]; }
    const std::string &label( std::size_t level, std::uint32_t labelId ) const { return mLabels[level][labelId]; }
    std::size_t labelCount( std::size_t level ) const { return mLabels[level].size(); }

    //! The first value (in hierarchy order) under a label.
    std::size_t firstValue( std::size_t level, std::uint32_t labelId ) const { return mFirst[level][labelId]; }

    //! Values of the hierarchy under a label: the leaves of LM/NCP.
    std::size_t leaves( std::size_t level, std::uint32_t labelId ) const { return mLeaves[level][labelId]; }

  private:
    //! The hierarchy of levels[0]'s values (distinct) with levels[l] their labels at level l.
    static Hierarchy fromLevels( const std::vector<std::vector<std::string>> &levels );
    //! Adds a level: the label of each value, in value order.
    void addLevel( const std::vector<std::string> &labelOfValue );

    std::vector<std::string> mValues;
    std::unordered_map<std::string, std::size_t> mIndex;
    std::vector<std::vector<std::uint32_t>> mLabelOf; //!< [level][value] -> label id
    std::vector<std::vector<std::string>> mLabels;    //!< [level][label id] -> text
    std::vector<std::vector<std::size_t>> mLeaves;    //!< [level][label id] -> values under it
    std::vector<std::vector<std::size_t>> mFirst;     //!< [level][label id] -> first value under it
};

} // namespace vbas
