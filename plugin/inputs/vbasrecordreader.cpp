#include "plugin/support/vbasqgiscompat.h"
#include "plugin/inputs/vbasrecordreader.h"

#include "plugin/support/vbasvaluecodec.h"

#include <qgsexception.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

namespace
{

int lookup( const QgsFields &fields, const QString &name, const QString &role )
{
  const int index = fields.lookupField( name );
  if ( index < 0 )
    throw QgsProcessingException( QObject::tr( "The records table has no field '%1' (%2)." ).arg( name, role ) );
  return index;
}

bool isTextOrNumber( vbasqgis::FieldType type )
{
  return type == vbasqgis::Field::String || type == vbasqgis::Field::Int || type == vbasqgis::Field::UInt || type == vbasqgis::Field::LongLong || type == vbasqgis::Field::ULongLong
         || type == vbasqgis::Field::Double;
}

//! Field types whose values VbasValueCodec keys exactly.
bool isKeyable( vbasqgis::FieldType type )
{
  return isTextOrNumber( type ) || type == vbasqgis::Field::Bool || type == vbasqgis::Field::Date || type == vbasqgis::Field::Time || type == vbasqgis::Field::DateTime
         || type == vbasqgis::Field::ByteArray || type == vbasqgis::Field::StringList || type == vbasqgis::Field::List || type == vbasqgis::Field::Map;
}

bool inRange( long double number )
{
  return number >= 0 && number <= static_cast<long double>( kVbasMaxCount );
}

std::optional<std::int64_t> wholeNumber( double number )
{
  // NaN fails the range test, infinities too.
  if ( !inRange( number ) || number != std::floor( number ) )
    return std::nullopt;
  return static_cast<std::int64_t>( number );
}

std::optional<std::int64_t> wholeNumber( const QVariant &value )
{
  if ( value.isNull() )
    return std::nullopt;
  switch ( VbasValueCodec::wholeNumber( value ) )
  {
    case VbasValueCodec::WholeNumber::Signed:
    {
      const qlonglong number = value.toLongLong();
      return inRange( number ) ? std::optional<std::int64_t>( number ) : std::nullopt;
    }
    case VbasValueCodec::WholeNumber::Unsigned:
    {
      const qulonglong number = value.toULongLong();
      return inRange( number ) ? std::optional<std::int64_t>( static_cast<std::int64_t>( number ) ) : std::nullopt;
    }
    case VbasValueCodec::WholeNumber::None:
      break;
  }
  switch ( static_cast<QMetaType::Type>( value.userType() ) )
  {
    case QMetaType::Double:
    case QMetaType::Float:
      return wholeNumber( value.toDouble() );
    case QMetaType::QString:
    {
      // Plain digits only: ' 5', '+5', '5.0' or '1e1' are refused, never read leniently.
      const QString text = value.toString();
      const bool digits = !text.isEmpty() && std::all_of( text.begin(), text.end(), []( QChar c ) { return c >= '0' && c <= '9'; } );
      bool ok = false;
      const qlonglong number = digits ? text.toLongLong( &ok ) : 0;
      return ok && inRange( number ) ? std::optional<std::int64_t>( number ) : std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

//! A value as a message shows it: NULL, 'text', or the number as it reads.
QString shown( const QVariant &value )
{
  if ( value.isNull() )
    return QStringLiteral( "NULL" );
  if ( value.userType() == QMetaType::QString )
    return QStringLiteral( "'%1'" ).arg( value.toString() );
  return value.toString();
}

} // namespace

QgsAttributeList VbasRecordFields::counted() const
{
  QgsAttributeList fields = qis;
  if ( region >= 0 )
    fields.append( region );
  if ( count >= 0 )
    fields.append( count );
  if ( sensitive >= 0 )
    fields.append( sensitive );
  return fields;
}

QgsAttributeList VbasRecordFields::read() const
{
  const QgsAttributeList countedFields = counted();
  std::set<int> fields( released.begin(), released.end() );
  fields.insert( countedFields.begin(), countedFields.end() );
  return QgsAttributeList( fields.begin(), fields.end() );
}

VbasRecordFields VbasRecordReader::resolve( const QgsFields &fields, const QString &regionField, const QStringList &qiFields, const QString &countField, const QStringList &releaseFields,
                                            const QgsAttributeList &identityFields, const QString &sensitiveField )
{
  VbasRecordFields roles;
  roles.region = regionField.isEmpty() ? -1 : lookup( fields, regionField, QObject::tr( "record region field, RECORD_REGION" ) );
  if ( roles.region >= 0 && !isTextOrNumber( fields.at( roles.region ).type() ) )
    throw QgsProcessingException(
      QObject::tr( "The record region field '%1' is of type %2: region ids must be text or numbers." ).arg( regionField, vbasqgis::typeName( fields.at( roles.region ) ) ) );
  for ( const QString &qi : qiFields )
  {
    const int index = lookup( fields, qi, QObject::tr( "QI field, QI_FIELDS" ) );
    if ( index == roles.region )
      throw QgsProcessingException( QObject::tr( "The QI field '%1' is the record region field: the region is the geographic QI that VBAS aggregates." ).arg( qi ) );
    if ( roles.qis.contains( index ) )
      throw QgsProcessingException( QObject::tr( "The QI field '%1' is listed twice in QI_FIELDS: each QI counts once." ).arg( fields.at( index ).name() ) );
    if ( !isKeyable( fields.at( index ).type() ) )
      throw QgsProcessingException( QObject::tr( "The QI field '%1' is of type %2, whose values cannot be compared exactly." ).arg( qi, vbasqgis::typeName( fields.at( index ) ) ) );
    roles.qis.append( index );
  }
  if ( !countField.isEmpty() )
  {
    roles.count = lookup( fields, countField, QObject::tr( "count field, COUNT_FIELD" ) );
    if ( roles.count == roles.region )
      throw QgsProcessingException(
        QObject::tr( "The count field '%1' is also the record region field: a count says how many records a row stands for, a region id where they live." ).arg( countField ) );
    if ( roles.qis.contains( roles.count ) )
      throw QgsProcessingException( QObject::tr( "The count field '%1' is also a QI field: a count says how many records a row stands for, it is not a property of the records." ).arg( countField ) );
  }
  if ( !sensitiveField.isEmpty() )
  {
    roles.sensitive = lookup( fields, sensitiveField, QObject::tr( "sensitive field, SENSITIVE_FIELD" ) );
    if ( roles.sensitive == roles.region || roles.sensitive == roles.count || roles.qis.contains( roles.sensitive ) )
      throw QgsProcessingException( QObject::tr( "The sensitive field '%1' is also the record region, count or a QI field: a field has one role." ).arg( sensitiveField ) );
    if ( !isKeyable( fields.at( roles.sensitive ).type() ) )
      throw QgsProcessingException(
        QObject::tr( "The sensitive field '%1' is of type %2, whose values cannot be compared exactly." ).arg( sensitiveField, vbasqgis::typeName( fields.at( roles.sensitive ) ) ) );
  }

  // Released fields (docs/outputs.md): the QIs, the count and the sensitive field always; any other field only when named.
  std::set<int> released( roles.qis.begin(), roles.qis.end() );
  if ( roles.count >= 0 )
    released.insert( roles.count );
  if ( roles.sensitive >= 0 )
    released.insert( roles.sensitive );
  for ( const QString &name : releaseFields )
  {
    const int index = lookup( fields, name, QObject::tr( "released field, RELEASE_FIELDS" ) );
    if ( index == roles.region )
      throw QgsProcessingException( QObject::tr( "The released field '%1' is the record region field: the release replaces it with aggregate_id." ).arg( name ) );
    if ( identityFields.contains( index ) )
      throw QgsProcessingException( QObject::tr( "The released field '%1' is the records table's feature id: it carries the order of the input and is never released." ).arg( name ) );
    released.insert( index );
  }
  for ( const int index : released )
  {
    roles.released.append( index );
    if ( !roles.qis.contains( index ) && index != roles.count && index != roles.sensitive )
      roles.others.append( index );
  }
  return roles;
}

VbasRecordReader::VbasRecordReader( const QgsFields &fields, const VbasRecordFields &roles )
  : mFields( fields )
  , mRoles( roles )
  , mCodes( static_cast<std::size_t>( roles.qis.size() ) )
  , mNulls( roles.qis.size() )
{
}

std::int64_t VbasRecordReader::count( const QgsAttributes &attributes, std::int64_t row, QgsFeatureId id ) const
{
  if ( mRoles.count < 0 )
    return 1;
  return countValue( attributes.at( mRoles.count ), mFields.at( mRoles.count ).name(), row, id );
}

std::int64_t VbasRecordReader::countValue( const QVariant &value, const QString &countField, std::int64_t row, QgsFeatureId id )
{
  return countValue( value, countField, rowName( row, id ) );
}

std::int64_t VbasRecordReader::countValue( const QVariant &value, const QString &countField, const QString &rowName )
{
  const std::optional<std::int64_t> count = wholeNumber( value );
  if ( !count )
    throw QgsProcessingException( QObject::tr( "%1: the count field '%2' holds %3, not a whole number from 0 to %4." ).arg( rowName, countField, shown( value ) ).arg( kVbasMaxCount ) );
  return *count;
}

std::optional<std::string_view> VbasRecordReader::key( const QgsAttributes &attributes, int field, std::int64_t row, QgsFeatureId id )
{
  const QVariant &value = attributes.at( field );
  if ( value.isNull() )
    return std::nullopt;
  mKey.clear();
  const QString reason = VbasValueCodec::encodeKey( value, mKey );
  if ( !reason.isEmpty() )
    throw QgsProcessingException( QObject::tr( "%1: the %2 field '%3' holds %4. Convert the field to text or numbers, or repair its values." )
                                    .arg( rowName( row, id ), field == mRoles.sensitive ? QObject::tr( "sensitive" ) : QObject::tr( "QI" ), mFields.at( field ).name(), reason ) );
  return std::string_view( mKey );
}

std::uint32_t VbasRecordReader::addClass( const QgsAttributes &attributes, vbas::QiEncoder &encoder, std::int64_t row, QgsFeatureId id )
{
  for ( int q = 0; q < mRoles.qis.size(); ++q )
  {
    const std::optional<std::string_view> k = key( attributes, mRoles.qis[q], row, id );
    if ( !k )
      ++mNulls[q];
    mCodes[static_cast<std::size_t>( q )] = encoder.valueCode( static_cast<std::size_t>( q ), k );
  }
  return encoder.classId( mCodes.data() );
}

std::uint32_t VbasRecordReader::addSensitive( const QgsAttributes &attributes, vbas::QiEncoder &values, std::int64_t row, QgsFeatureId id )
{
  return values.valueCode( 0, key( attributes, mRoles.sensitive, row, id ) );
}

QString VbasRecordReader::rowName( std::int64_t row, QgsFeatureId id )
{
  return QObject::tr( "Record row %1 (feature id %2)" ).arg( row ).arg( id );
}
