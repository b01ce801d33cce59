// Exact bytes for attribute values: the key of a QI value, the text key of a
// region id, and the reversible form in which released rows wait for the shuffle.
#pragma once

#include <QString>
#include <QVariant>

#include <string>
#include <string_view>

namespace VbasValueCodec
{

/**
 * Appends the canonical bytes of value to out: a type tag, then the value's own bytes (text as its
 * UTF-16 code units, whole numbers as 64 bits, reals as their bits, dates, times, binary, and lists
 * and maps element by element). Two different values never get the same bytes and two equal values
 * always do, so a QI value's bytes are its equivalence-class key. Returns why value has no exact key
 * (text holding U+FFFD, the mark of bytes that were not valid UTF-8, or a type without exact bytes),
 * or an empty string.
 */
QString encodeKey( const QVariant &value, std::string &out );

//! Appends the bytes of any value to out, reversible by decode(); a value without an exact key keeps its text.
void encode( const QVariant &value, std::string &out );

//! The value encoded at data[pos], advancing pos past it.
QVariant decode( std::string_view data, std::size_t &pos );

//! How a value holds a whole number: not at all, signed (int, short, long long, ...) or unsigned.
enum class WholeNumber
{
  None,
  Signed,
  Unsigned,
};
WholeNumber wholeNumber( const QVariant &value );

/**
 * The key under which a region id is matched between the regions layer and the records: its text,
 * so an integer id matches the same digits in a text field. Only text and numbers are region ids;
 * returns why value is not one (other types, non-finite numbers, text holding U+FFFD), or an empty
 * string. NULL has no key and is not a region.
 */
QString regionKey( const QVariant &value, QString &key );

} // namespace VbasValueCodec
