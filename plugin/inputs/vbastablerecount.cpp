#include "plugin/inputs/vbastablerecount.h"

#include "plugin/inputs/vbasrecordreader.h"
#include "plugin/support/vbasinterrupt.h"

#include <qgsexception.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingutils.h>

#include <QBuffer>
#include <QDataStream>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace
{

//! The texts a QI field remembers the numbers of at most (a field of many more is mostly new texts).
constexpr int kRememberedTexts = 1 << 16;

//! The value types QGIS providers give whose QDataStream bytes are exact: a type tag, then the value itself.
bool isExactType( int type )
{
  switch ( type )
  {
    case QMetaType::QString:
    case QMetaType::Bool:
    case QMetaType::Short:
    case QMetaType::UShort:
    case QMetaType::Int:
    case QMetaType::UInt:
    case QMetaType::LongLong:
    case QMetaType::ULongLong:
    case QMetaType::Float:
    case QMetaType::Double:
    case QMetaType::QDate:
    case QMetaType::QTime:
    case QMetaType::QDateTime:
    case QMetaType::QByteArray:
    case QMetaType::QStringList:
    case QMetaType::QVariantList:
    case QMetaType::QVariantMap:
      return true;
    default:
      return false;
  }
}

//! Whether a value's QDataStream bytes are exact: NULL, or an exact type whose list or map elements are exact too.
bool isExact( const QVariant &value )
{
  if ( value.isNull() )
    return true;
  if ( value.userType() == QMetaType::QVariantList )
  {
    const QVariantList list = value.toList();
    return std::all_of( list.begin(), list.end(), isExact );
  }
  if ( value.userType() == QMetaType::QVariantMap )
  {
    const QVariantMap map = value.toMap();
    return std::all_of( map.begin(), map.end(), isExact );
  }
  return isExactType( value.userType() );
}

} // namespace

/**
 * The exact bytes of a row's values, written into one buffer reused from row to row: a QDataStream of
 * its own for each row would cost a QBuffer (a QObject) and an allocation per row.
 */
class VbasTableRecount::KeyBytes
{
  public:
    KeyBytes()
    {
      mBuffer.setBuffer( &mBytes );
      mBuffer.open( QIODevice::WriteOnly );
      mStream.setDevice( &mBuffer );
    }

    //! The stream, at the start of the buffer.
    QDataStream &restart()
    {
      mBuffer.seek( 0 );
      return mStream;
    }

    //! The bytes written since restart().
    std::string_view view() const { return std::string_view( mBytes.constData(), static_cast<std::size_t>( mBuffer.pos() ) ); }

  private:
    QByteArray mBytes;
    QBuffer mBuffer;
    QDataStream mStream;
};

VbasTableRecount::VbasTableRecount( QgsProcessingFeatureSource &source, const QgsVectorLayer *layer, const QgsAttributeList &qis, int count, int sensitive, bool typedCsv, VbasStoredValues::Rows rows )
  : mSource( source )
  , mStored( std::make_unique<VbasStoredValues>( source, layer, sensitive < 0 ? qis : qis + QgsAttributeList { sensitive }, count, typedCsv, rows ) )
  , mQis( qis )
  , mCount( count )
  , mSensitive( sensitive )
  , mValues( static_cast<std::size_t>( qis.size() ) )
  , mTextIds( static_cast<std::size_t>( qis.size() ) )
{
  if ( !mStored->asText() )
    checkExactTypes();
}

VbasTableRecount::~VbasTableRecount() = default;

void VbasTableRecount::checkExactTypes() const
{
  const QgsFields fields = mSource.fields();
  for ( const int index : mQis + QgsAttributeList { mSensitive } )
    if ( index >= 0 && !isExactType( fields.at( index ).type() ) )
      throw QgsProcessingException( QObject::tr( "The field '%1' is of type %2, whose values cannot be compared exactly." ).arg( fields.at( index ).name(), fields.at( index ).typeName() ) );
}

vbas::AnonymityCheck VbasTableRecount::recount( QgsProcessingFeedback *feedback, const RowVisitor &visit )
{
  vbas::AnonymityCheck check( mSensitive >= 0 );
  feedback->pushInfo( QObject::tr( "Compared: %1 (VALUES_READ %2)." ).arg( mStored->describe(), mStored->code() ) );
  if ( !mStored->fallback().isEmpty() )
    feedback->pushWarning( mStored->fallback() );
  const double step = mSource.featureCount() > 0 ? 100.0 / static_cast<double>( mSource.featureCount() ) : 0;
  std::int64_t row = 0;
  QgsFeatureId id = FID_NULL;
  QgsAttributes attributes;
  KeyBytes clsBytes, sensitiveBytes;
  while ( mStored->next( id, attributes ) )
  {
    if ( ( row & 0xfff ) == 0 )
    {
      VbasInterrupt::throwIfCanceled( feedback );
      feedback->setProgress( static_cast<double>( row ) * step );
    }
    ++row;
    const std::int64_t records = mCount < 0 ? 1 : VbasRecordReader::countValue( attributes.at( mCount ), mSource.fields().at( mCount ).name(), row, id );
    const std::string_view sensitive = mSensitive < 0 ? std::string_view() : valueBytes( sensitiveBytes, attributes, mSensitive, row, id );
    const std::string_view cls = classKey( clsBytes, attributes, row, id );
    if ( visit )
      visit( QByteArray( cls.data(), static_cast<int>( cls.size() ) ), attributes, records );
    try
    {
      check.add( cls, sensitive, records );
    }
    catch ( const std::overflow_error & )
    {
      throw QgsProcessingException(
        QObject::tr( "%1: the counts add up to more than %2 records, the most a 64-bit count holds." ).arg( VbasRecordReader::rowName( row, id ) ).arg( std::numeric_limits<std::int64_t>::max() ) );
    }
  }
  VbasInterrupt::throwIfCanceled( feedback );
  feedback->pushInfo( QObject::tr( "%1 row(s) read." ).arg( row ) );
  return check;
}

std::string_view VbasTableRecount::valueBytes( KeyBytes &bytes, const QgsAttributes &attributes, int field, std::int64_t row, QgsFeatureId id ) const
{
  const QVariant &value = attributes.at( field );
  if ( !isExact( value ) )
    throw QgsProcessingException( QObject::tr( "%1: the field '%2' holds a value of type %3, which cannot be compared exactly." )
                                    .arg( VbasRecordReader::rowName( row, id ), mSource.fields().at( field ).name(), QString::fromLatin1( value.typeName() ) ) );
  bytes.restart() << ( value.isNull() ? QVariant() : value ); // NULL of any type is one category
  return bytes.view();
}

std::string_view VbasTableRecount::classKey( KeyBytes &bytes, const QgsAttributes &attributes, std::int64_t row, QgsFeatureId id )
{
  mClassKey.clear();
  for ( int q = 0; q < mQis.size(); ++q )
  {
    const std::size_t field = static_cast<std::size_t>( q );
    const QVariant &value = attributes.at( mQis[q] );
    // A text's bytes are a function of its characters: a text seen before takes its number without them.
    const bool text = !value.isNull() && value.userType() == QMetaType::QString;
    const auto seen = text ? mTextIds[field].constFind( value.toString() ) : mTextIds[field].constEnd();
    std::uint32_t number = 0;
    if ( seen != mTextIds[field].constEnd() )
      number = seen.value();
    else
    {
      number = mValues[field].insert( valueBytes( bytes, attributes, mQis[q], row, id ) );
      if ( text && mTextIds[field].size() < kRememberedTexts )
        mTextIds[field].insert( value.toString(), number );
    }
    mClassKey.append( reinterpret_cast<const char *>( &number ), sizeof number );
  }
  return mClassKey;
}

QgsAttributes VbasTableRecount::decodeKey( std::string_view key ) const
{
  QgsAttributes attributes;
  for ( std::size_t q = 0; q < mValues.size(); ++q )
  {
    std::uint32_t value = 0;
    std::memcpy( &value, key.data() + q * sizeof value, sizeof value );
    const std::string bytes = mValues[q].text( value );
    QDataStream stream( QByteArray::fromRawData( bytes.data(), static_cast<int>( bytes.size() ) ) );
    QVariant decoded;
    stream >> decoded;
    attributes << decoded;
  }
  return attributes;
}
