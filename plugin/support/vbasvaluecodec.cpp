#include "plugin/support/vbasvaluecodec.h"

#include <QDateTime>
#include <QObject>
#include <QStringList>
#include <QTimeZone>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace
{

enum Tag : unsigned char
{
  Null,
  Text,
  Integer,
  Unsigned,
  Real,
  Boolean,
  Date,
  Time,
  DateTime,
  Binary,
  TextList,
  List,
  Map,
  OtherText,    //!< a released value of a type without exact bytes, kept as its text
  SizedInteger, //!< a released whole number with its own width (int, short, ...), as it was read
};

constexpr char16_t kReplacement = 0xfffd; // what a UTF-8 decoder puts in place of invalid bytes

template<typename T>
void put( std::string &out, T value )
{
  char bytes[sizeof( T )];
  std::memcpy( bytes, &value, sizeof( T ) );
  out.append( bytes, sizeof( T ) );
}

template<typename T>
T get( std::string_view data, std::size_t &pos )
{
  if ( pos > data.size() || data.size() - pos < sizeof( T ) )
    throw std::out_of_range( "truncated value" );
  T value;
  std::memcpy( &value, data.data() + pos, sizeof( T ) );
  pos += sizeof( T );
  return value;
}

void putBytes( std::string &out, const char *bytes, std::size_t size )
{
  put<std::uint32_t>( out, static_cast<std::uint32_t>( size ) );
  out.append( bytes, size );
}

std::string_view getBytes( std::string_view data, std::size_t &pos )
{
  const std::uint32_t size = get<std::uint32_t>( data, pos );
  if ( data.size() - pos < size ) // get() left pos <= data.size()
    throw std::out_of_range( "truncated value" );
  pos += size;
  return data.substr( pos - size, size );
}

void putText( std::string &out, const QString &text )
{
  putBytes( out, reinterpret_cast<const char *>( text.utf16() ), static_cast<std::size_t>( text.size() ) * sizeof( QChar ) );
}

QString getText( std::string_view data, std::size_t &pos )
{
  const std::string_view bytes = getBytes( data, pos );
  QString text( static_cast<int>( bytes.size() / sizeof( QChar ) ), Qt::Uninitialized );
  std::memcpy( text.data(), bytes.data(), bytes.size() );
  return text;
}

//! Why text has no exact key: U+FFFD (bytes that were not UTF-8), or a NUL, after which every output format (OGR's C strings) drops the rest.
QString inexactTextReason( const QString &text )
{
  if ( text.contains( QChar( kReplacement ) ) )
    return QObject::tr( "text holding U+FFFD, the character that stands in for bytes that are not valid UTF-8, so different values may read as the same text" );
  if ( text.contains( QChar( 0 ) ) )
    return QObject::tr( "text holding a NUL character (U+0000), after which the output formats drop the rest of the text" );
  return QString();
}

/**
 * Whole numbers of any width share one key: 5 as an int and 5 as a 64-bit int are the same value.
 * A released value keeps its width too, so it is written back as it was read.
 */
bool putWholeNumber( const QVariant &value, std::string &out, bool exact )
{
  const VbasValueCodec::WholeNumber kind = VbasValueCodec::wholeNumber( value );
  if ( kind == VbasValueCodec::WholeNumber::None )
    return false;
  if ( !exact )
  {
    out.push_back( SizedInteger );
    put<std::int32_t>( out, value.userType() );
  }
  const qulonglong number = value.toULongLong();
  const bool fits = kind == VbasValueCodec::WholeNumber::Signed || number <= static_cast<qulonglong>( std::numeric_limits<std::int64_t>::max() );
  out.push_back( fits ? Integer : Unsigned );
  put<std::uint64_t>( out, kind == VbasValueCodec::WholeNumber::Signed ? static_cast<std::uint64_t>( value.toLongLong() ) : number );
  return true;
}

void putReal( double number, std::string &out )
{
  out.push_back( Real );
  put<double>( out, std::isnan( number ) ? std::numeric_limits<double>::quiet_NaN() : number ); // one NaN
}

void putDateTime( const QDateTime &when, std::string &out )
{
  out.push_back( DateTime );
  put<std::int64_t>( out, when.date().toJulianDay() );
  put<std::int32_t>( out, when.time().msecsSinceStartOfDay() );
  put<std::uint8_t>( out, static_cast<std::uint8_t>( when.timeSpec() ) );
  put<std::int32_t>( out, when.offsetFromUtc() );
  const QByteArray zone = when.timeSpec() == Qt::TimeZone ? when.timeZone().id() : QByteArray();
  putBytes( out, zone.constData(), static_cast<std::size_t>( zone.size() ) );
}

QDateTime getDateTime( std::string_view data, std::size_t &pos )
{
  const QDate date = QDate::fromJulianDay( get<std::int64_t>( data, pos ) );
  const QTime time = QTime::fromMSecsSinceStartOfDay( get<std::int32_t>( data, pos ) );
  const auto spec = static_cast<Qt::TimeSpec>( get<std::uint8_t>( data, pos ) );
  const std::int32_t offset = get<std::int32_t>( data, pos );
  const std::string_view zone = getBytes( data, pos );
  if ( spec == Qt::TimeZone )
    return QDateTime( date, time, QTimeZone( QByteArray( zone.data(), static_cast<int>( zone.size() ) ) ) );
  return QDateTime( date, time, spec, offset );
}

//! Appends value; exact: refuse (with the reason) what has no exact bytes, else keep its text.
QString putValue( const QVariant &value, std::string &out, bool exact );

template<typename Container>
QString putSequence( Tag tag, const Container &items, std::string &out, bool exact )
{
  out.push_back( tag );
  put<std::uint32_t>( out, static_cast<std::uint32_t>( items.size() ) );
  for ( const QVariant &item : items )
  {
    const QString reason = putValue( item, out, exact );
    if ( !reason.isEmpty() )
      return reason;
  }
  return QString();
}

QString putMap( const QVariantMap &map, std::string &out, bool exact )
{
  out.push_back( Map );
  put<std::uint32_t>( out, static_cast<std::uint32_t>( map.size() ) );
  for ( auto it = map.constBegin(); it != map.constEnd(); ++it ) // QMap: keys in order
  {
    const QString reason = exact ? inexactTextReason( it.key() ) : QString();
    if ( !reason.isEmpty() )
      return reason;
    putText( out, it.key() );
    const QString valueReason = putValue( it.value(), out, exact );
    if ( !valueReason.isEmpty() )
      return valueReason;
  }
  return QString();
}

QString putValue( const QVariant &value, std::string &out, bool exact )
{
  if ( value.isNull() )
  {
    out.push_back( Null );
    return QString();
  }
  if ( putWholeNumber( value, out, exact ) )
    return QString();
  switch ( static_cast<QMetaType::Type>( value.userType() ) )
  {
    case QMetaType::QString:
    {
      const QString text = value.toString();
      const QString reason = exact ? inexactTextReason( text ) : QString();
      if ( reason.isEmpty() )
      {
        out.push_back( Text );
        putText( out, text );
      }
      return reason;
    }
    case QMetaType::Double:
    case QMetaType::Float:
      putReal( value.toDouble(), out );
      return QString();
    case QMetaType::Bool:
      out.push_back( Boolean );
      put<std::uint8_t>( out, value.toBool() );
      return QString();
    case QMetaType::QDate:
      out.push_back( Date );
      put<std::int64_t>( out, value.toDate().toJulianDay() );
      return QString();
    case QMetaType::QTime:
      out.push_back( Time );
      put<std::int32_t>( out, value.toTime().msecsSinceStartOfDay() );
      return QString();
    case QMetaType::QDateTime:
      putDateTime( value.toDateTime(), out );
      return QString();
    case QMetaType::QByteArray:
    {
      const QByteArray bytes = value.toByteArray();
      out.push_back( Binary );
      putBytes( out, bytes.constData(), static_cast<std::size_t>( bytes.size() ) );
      return QString();
    }
    case QMetaType::QStringList:
    {
      QVariantList items;
      for ( const QString &text : value.toStringList() )
        items << text;
      return putSequence( TextList, items, out, exact );
    }
    case QMetaType::QVariantList:
      return putSequence( List, value.toList(), out, exact );
    case QMetaType::QVariantMap:
      return putMap( value.toMap(), out, exact );
    default:
      if ( exact )
        return QObject::tr( "values of type %1, which cannot be compared exactly" ).arg( QString::fromLatin1( value.typeName() ) );
      out.push_back( OtherText );
      putText( out, value.toString() );
      return QString();
  }
}

QVariantList getSequence( std::string_view data, std::size_t &pos )
{
  const std::uint32_t size = get<std::uint32_t>( data, pos );
  QVariantList items;
  for ( std::uint32_t i = 0; i < size; ++i )
    items << VbasValueCodec::decode( data, pos );
  return items;
}

QVariantMap getMap( std::string_view data, std::size_t &pos )
{
  const std::uint32_t size = get<std::uint32_t>( data, pos );
  QVariantMap map;
  for ( std::uint32_t i = 0; i < size; ++i )
  {
    const QString key = getText( data, pos );
    map.insert( key, VbasValueCodec::decode( data, pos ) );
  }
  return map;
}

} // namespace

namespace VbasValueCodec
{

WholeNumber wholeNumber( const QVariant &value )
{
  switch ( static_cast<QMetaType::Type>( value.userType() ) )
  {
    case QMetaType::Int:
    case QMetaType::LongLong:
    case QMetaType::Short:
    case QMetaType::Long:
    case QMetaType::SChar:
      return WholeNumber::Signed;
    case QMetaType::UInt:
    case QMetaType::ULongLong:
    case QMetaType::UShort:
    case QMetaType::ULong:
    case QMetaType::UChar:
      return WholeNumber::Unsigned;
    default:
      return WholeNumber::None;
  }
}

QString encodeKey( const QVariant &value, std::string &out )
{
  return putValue( value, out, true );
}

void encode( const QVariant &value, std::string &out )
{
  putValue( value, out, false );
}

QVariant decode( std::string_view data, std::size_t &pos )
{
  switch ( get<unsigned char>( data, pos ) )
  {
    case Null:
      return QVariant();
    case Text:
    case OtherText:
      return getText( data, pos );
    case SizedInteger:
    {
      const int type = get<std::int32_t>( data, pos );
      QVariant number = decode( data, pos );
      number.convert( type );
      return number;
    }
    case Integer:
      return static_cast<qlonglong>( get<std::int64_t>( data, pos ) );
    case Unsigned:
      return static_cast<qulonglong>( get<std::uint64_t>( data, pos ) );
    case Real:
      return get<double>( data, pos );
    case Boolean:
      return get<std::uint8_t>( data, pos ) != 0;
    case Date:
      return QDate::fromJulianDay( get<std::int64_t>( data, pos ) );
    case Time:
      return QTime::fromMSecsSinceStartOfDay( get<std::int32_t>( data, pos ) );
    case DateTime:
      return getDateTime( data, pos );
    case Binary:
    {
      const std::string_view bytes = getBytes( data, pos );
      return QByteArray( bytes.data(), static_cast<int>( bytes.size() ) );
    }
    case TextList:
    {
      QStringList texts;
      for ( const QVariant &item : getSequence( data, pos ) )
        texts << item.toString();
      return texts;
    }
    case List:
      return getSequence( data, pos );
    case Map:
      return getMap( data, pos );
    default:
      throw std::out_of_range( "unknown value tag" );
  }
}

QString regionKey( const QVariant &value, QString &key )
{
  switch ( static_cast<QMetaType::Type>( value.userType() ) )
  {
    case QMetaType::QString:
      key = value.toString();
      return inexactTextReason( key );
    case QMetaType::Int:
    case QMetaType::LongLong:
    case QMetaType::UInt:
    case QMetaType::ULongLong:
      key = value.toString();
      return QString();
    case QMetaType::Double:
      if ( !std::isfinite( value.toDouble() ) )
        return QObject::tr( "the number %1" ).arg( value.toString() );
      key = value.toString(); // Qt 5.15: the shortest text that reads back as the same double
      return QString();
    default:
      return QObject::tr( "values of type %1; region ids must be text or numbers" ).arg( QString::fromLatin1( value.typeName() ) );
  }
}

} // namespace VbasValueCodec
