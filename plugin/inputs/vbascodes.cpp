#include "plugin/inputs/vbascodes.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/support/vbasinterrupt.h"
#include "plugin/inputs/vbasrecordreader.h"
#include "plugin/support/vbasvaluecodec.h"

#include <qgscoordinatetransform.h>
#include <qgsexception.h>
#include <qgsfeaturesource.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingfeedback.h>
#include <qgsunittypes.h>

#include <cmath>

namespace
{

//! The key a code matches by: text and numbers as region ids are (VbasValueCodec::regionKey); empty for NULL or a value that is no code.
QString codeKey( const QVariant &value )
{
  QString key;
  if ( value.isNull() || !VbasValueCodec::regionKey( value, key ).isEmpty() )
    return QString();
  return key;
}

QString shown( const QVariant &value )
{
  return value.isNull() ? QStringLiteral( "NULL" ) : QStringLiteral( "'%1'" ).arg( value.toString() );
}

int field( const QgsFields &fields, const QString &name, const QString &what )
{
  const int index = fields.lookupField( name );
  if ( index < 0 )
    throw QgsProcessingException( QObject::tr( "The %1 has no field '%2'." ).arg( what, name ) );
  return index;
}

} // namespace

std::optional<std::uint32_t> VbasCodes::find( const QVariant &value ) const
{
  const QString key = codeKey( value );
  const auto it = key.isEmpty() ? index.constEnd() : index.constFind( key );
  return it == index.constEnd() ? std::nullopt : std::optional<std::uint32_t>( it.value() );
}

VbasCodes vbasReadCodes( QgsFeatureSource &source, const VbasCodeFields &names, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  const QgsFields fields = source.fields();
  const int codeIndex = field( fields, names.code, QObject::tr( "codes layer (CODE_FIELD)" ) );
  const int populationIndex = field( fields, names.population, QObject::tr( "codes layer (POPULATION_FIELD)" ) );
  const int countIndex = names.patientCount.isEmpty() ? -1 : field( fields, names.patientCount, QObject::tr( "codes layer (PATIENT_COUNT_FIELD)" ) );
  VbasCodes codes;
  const QgsCoordinateReferenceSystem crs = source.sourceCrs();
  const bool geographic = crs.isValid() && crs.isGeographic();
  codes.distance = geographic ? vbas::lp::Distance::Haversine : vbas::lp::Distance::Euclidean;
  codes.distanceUnit = geographic ? QStringLiteral( "m" ) : QgsUnitTypes::toAbbreviatedString( crs.mapUnits() );
  const QgsCoordinateTransform toLonLat( crs, QgsCoordinateReferenceSystem( QStringLiteral( "EPSG:4326" ) ), context.transformContext() );
  QgsFeatureIterator it = source.getFeatures();
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    const QVariant id = f.attribute( codeIndex );
    const QString key = codeKey( id );
    if ( key.isEmpty() )
      throw QgsProcessingException( QObject::tr( "Code with feature id %1: the code field '%2' holds %3, not a code (text or a number)." ).arg( f.id() ).arg( names.code, shown( id ) ) );
    if ( codes.index.contains( key ) )
      throw QgsProcessingException( QObject::tr( "The code '%1' appears more than once in '%2': codes must be unique." ).arg( key, names.code ) );
    bool ok = false;
    const double population = f.attribute( populationIndex ).toDouble( &ok );
    if ( !ok || !std::isfinite( population ) || population <= 0 )
      throw QgsProcessingException( QObject::tr( "Code '%1': the population field '%2' holds %3, not a number above 0." ).arg( key, names.population, shown( f.attribute( populationIndex ) ) ) );
    const QgsGeometry geometry = f.geometry();
    if ( geometry.isNull() || geometry.isEmpty() )
      throw QgsProcessingException( QObject::tr( "Code '%1' has no geometry." ).arg( key ) );
    QgsPointXY point = ( geometry.type() == vbasqgis::PointGeometry ? geometry.centroid() : names.codePoint == 1 ? geometry.pointOnSurface() : geometry.centroid() ).asPoint();
    if ( geographic )
      point = toLonLat.transform( point );
    if ( countIndex >= 0 )
      codes.patientCounts.push_back( VbasRecordReader::countValue( f.attribute( countIndex ), names.patientCount, codes.ids.size() + 1, f.id() ) );
    codes.index.insert( key, static_cast<std::uint32_t>( codes.ids.size() ) );
    codes.ids.append( id );
    codes.locations.push_back( { point.x(), point.y() } );
    codes.population.push_back( population );
  }
  if ( codes.ids.isEmpty() )
    throw QgsProcessingException( QObject::tr( "The codes layer is empty." ) );
  return codes;
}

VbasPatients vbasReadPatients( QgsFeatureSource &source, const QString &codeField, const VbasCodes &codes, QgsProcessingFeedback *feedback )
{
  VbasPatients patients;
  patients.fields = source.fields();
  const int codeIndex = field( patients.fields, codeField, QObject::tr( "patients table (PATIENT_CODE_FIELD)" ) );
  QgsFeatureRequest request;
  request.setFlags( vbasqgis::NoGeometry );
  QgsFeatureIterator it = source.getFeatures( request );
  QgsFeature f;
  std::int64_t row = 0;
  while ( it.nextFeature( f ) )
  {
    VbasInterrupt::throwIfCanceled( feedback );
    ++row;
    const std::optional<std::uint32_t> code = codes.find( f.attribute( codeIndex ) );
    if ( !code )
      throw QgsProcessingException( QObject::tr( "Patient row %1 (feature id %2): the code field '%3' holds %4, which is not a code of the codes layer." )
                                      .arg( row )
                                      .arg( f.id() )
                                      .arg( codeField, shown( f.attribute( codeIndex ) ) ) );
    patients.rows.append( f.attributes() );
    patients.origins.push_back( *code );
  }
  return patients;
}

VbasPatients vbasPatientsFromCounts( const VbasCodes &codes )
{
  VbasPatients patients;
  for ( std::size_t i = 0; i < codes.patientCounts.size(); ++i )
    patients.origins.insert( patients.origins.end(), static_cast<std::size_t>( codes.patientCounts[i] ), static_cast<std::uint32_t>( i ) );
  return patients;
}
