// QI encoding: every QI value gets a dense code per QI, every QI tuple a dense class id,
// so the other components work on integer histograms and never on per-record objects.
#pragma once

#include "algorithms/base/string_index.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vbas
{

class QiEncoder
{
  public:
    explicit QiEncoder( std::size_t qiCount );

    std::size_t qiCount() const { return mValues.size(); }

    //! Dense code of one value of QI qi; std::nullopt is NULL, a category of its own.
    std::uint32_t valueCode( std::size_t qi, std::optional<std::string_view> value );

    //! Dense class id (equivalence class over the QIs) of one code per QI.
    std::uint32_t classId( const std::uint32_t *codes );

    //! The code of a value seen before, without adding it: a later pass over the same records.
    std::optional<std::uint32_t> findValueCode( std::size_t qi, std::optional<std::string_view> value ) const;

    //! The class id of codes seen before, without adding it.
    std::optional<std::uint32_t> findClass( const std::uint32_t *codes ) const;

    //! Number of distinct classes seen so far.
    std::size_t classCount() const { return mValues.empty() ? mClassCount : mClasses.size(); }

    //! |q| of eq. 4: distinct values of QI qi seen so far, NULL included (observed values, not the possible ones).
    std::size_t categoryCount( std::size_t qi ) const;

    //! The bytes of the value with this code (as given to valueCode), std::nullopt for NULL.
    const std::optional<std::string> &value( std::size_t qi, std::uint32_t code ) const { return mCodeValues[qi][code]; }

    //! The codes of every class, qiCount() per class in class id order: the tuple each id stands for.
    const std::vector<std::uint32_t> &classCodes() const { return mClassCodes; }

    //! Category counts of every QI.
    std::vector<std::size_t> categoryCounts() const;

  private:
    //! The bytes of a tuple of codes, the key of its class.
    std::string_view tuple( const std::uint32_t *codes ) const;

    std::vector<StringIndex> mValues;
    std::vector<std::optional<std::uint32_t>> mNullCode;
    std::vector<std::vector<std::optional<std::string>>> mCodeValues; //!< [qi][code] -> value bytes
    StringIndex mClasses;                                             //!< class ids of the code tuples, keyed by the tuples' bytes
    std::vector<std::uint32_t> mClassCodes;
    std::size_t mClassCount = 0; //!< without QIs: 1 once a record was seen
};

} // namespace vbas
