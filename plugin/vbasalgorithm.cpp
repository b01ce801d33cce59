#include "vbasalgorithm.h"
#include "vbasprovider.h"

#include "voronoi.h"

#include <qgsfeaturerequest.h>
#include <qgsgeometry.h>
#include <qgspolygon.h>
#include <qgslinestring.h>
#include <qgsprocessingparameters.h>
#include <qgsprocessingoutputs.h>
#include <qgsprocessingfeedback.h>
#include <qgsvectorlayer.h>

#include <QFile>
#include <QFileInfo>
#include <QIcon>
#include <cmath>
#include <stdexcept>

namespace
{
const QString kAggregateIdField = QStringLiteral( "aggregate_id" );
const QString kSiteIdField = QStringLiteral( "site_id" );
const QString kRegionIdField = QStringLiteral( "region_id" );
constexpr int kMaxShown = 5; // unknown region ids shown in an error

//! The text of a value, for matching region ids and telling QI values apart. Qt 5.15's toString()
//! is exact: times keep their milliseconds, doubles the shortest text that reads back the same.
QString key( const QVariant &value )
{
  return value.toString();
}

//! The bytes of a QString's UTF-16 text, valid while the string lives.
std::string_view utf16( const QString &text )
{
  return std::string_view( reinterpret_cast<const char *>( text.utf16() ), static_cast<std::size_t>( text.size() ) * sizeof( QChar ) );
}

//! Deletes a partly written anonymized-records file, or says where the partial release is.
QString discardPartialRelease( const QString &destination )
{
  const QFileInfo file( destination );
  if ( !destination.contains( '|' ) && file.isFile() && QFile::remove( destination ) )
    return QObject::tr( "The partly written anonymized records (%1) were deleted." ).arg( destination );
  return QObject::tr( "Delete the partly written anonymized records at %1: they are not a k-anonymous release." ).arg( destination );
}

QgsPoint toQgs( const vbas::Point &p )
{
  return QgsPoint( p.x, p.y );
}

void addFeature( QgsFeatureSink *sink, QgsFeature &feature, const QString &name )
{
  if ( !sink->addFeature( feature, QgsFeatureSink::FastInsert ) )
    throw QgsProcessingException( QObject::tr( "Could not write a feature to %1: %2" ).arg( name, sink->lastError() ) );
}

//! A projected CRS for distances: the layer's own, or the WGS 84 UTM zone of its centre.
QgsCoordinateReferenceSystem workingCrs( const QgsCoordinateReferenceSystem &crs, const QgsRectangle &extent, QgsProcessingContext &context, QgsProcessingFeedback *feedback )
{
  if ( !crs.isValid() )
  {
    feedback->pushWarning( QObject::tr( "The regions layer has no CRS: its coordinates are taken as planar." ) );
    return crs;
  }
  if ( !crs.isGeographic() )
    return crs;
  const QgsCoordinateReferenceSystem wgs84( QStringLiteral( "EPSG:4326" ) );
  const QgsPointXY centre = QgsCoordinateTransform( crs, wgs84, context.transformContext() ).transform( extent.center() );
  const int zone = std::clamp( static_cast<int>( std::floor( ( centre.x() + 180.0 ) / 6.0 ) ) + 1, 1, 60 );
  const QgsCoordinateReferenceSystem utm( QStringLiteral( "EPSG:%1" ).arg( ( centre.y() >= 0 ? 32600 : 32700 ) + zone ) );
  feedback->pushInfo( QObject::tr( "The regions layer has a geographic CRS (%1): distances are computed in %2 (%3)." )
                        .arg( crs.authid(), utm.authid(), utm.description() ) );
  return utm;
}

/**
 * Reads one record: its region index, QI class and weight. Shared by the encoding pass and the
 * pass that writes the anonymized records, so both see the same classes.
 */
class RecordReader
{
  public:
    RecordReader( const QgsFields &fields, const QString &regionField, const QStringList &qiFields, const QString &countField )
    {
      mRegion = fields.lookupField( regionField );
      if ( mRegion < 0 )
        throw QgsProcessingException( QObject::tr( "The records table has no field '%1' (record region field)." ).arg( regionField ) );
      for ( const QString &qi : qiFields )
      {
        const int index = fields.lookupField( qi );
        if ( index < 0 )
          throw QgsProcessingException( QObject::tr( "The records table has no QI field '%1'." ).arg( qi ) );
        if ( index == mRegion )
          throw QgsProcessingException( QObject::tr( "The QI field '%1' is the region field: the region is the geographic QI that VBAS aggregates." ).arg( qi ) );
        mQis.append( index );
      }
      if ( !countField.isEmpty() )
      {
        mCount = fields.lookupField( countField );
        if ( mCount < 0 )
          throw QgsProcessingException( QObject::tr( "The records table has no count field '%1'." ).arg( countField ) );
      }
      mCountName = countField;
      mCodes.resize( static_cast<std::size_t>( mQis.size() ) );
      mNulls.resize( mQis.size() );
    }

    QgsAttributeList attributes() const
    {
      QgsAttributeList list { mRegion };
      list += mQis;
      if ( mCount >= 0 )
        list.append( mCount );
      return list;
    }

    int regionAttribute() const { return mRegion; }

    const QVariant &regionId( const QgsAttributes &a ) const { return a.at( mRegion ); }

    std::uint32_t classId( const QgsAttributes &a, vbas::QiEncoder &encoder )
    {
      for ( int q = 0; q < mQis.size(); ++q )
      {
        const QVariant &value = a.at( mQis[q] );
        if ( value.isNull() )
        {
          ++mNulls[q];
          mCodes[q] = encoder.valueCode( q, std::nullopt );
          continue;
        }
        const QString text = key( value );
        mCodes[q] = encoder.valueCode( q, utf16( text ) );
      }
      return encoder.classId( mCodes.data() );
    }

    std::int64_t count( const QgsFeature &feature ) const
    {
      if ( mCount < 0 )
        return 1;
      const QVariant value = feature.attribute( mCount );
      bool ok = false;
      const double number = value.toDouble( &ok );
      if ( value.isNull() || !ok || number < 0 || number != std::floor( number ) )
        throw QgsProcessingException( QObject::tr( "Record with feature id %1: the count field '%2' holds '%3', not a whole number >= 0." )
                                        .arg( feature.id() ).arg( mCountName, value.toString() ) );
      return static_cast<std::int64_t>( number );
    }

    const QVector<std::int64_t> &nulls() const { return mNulls; }

  private:
    int mRegion = -1;
    QgsAttributeList mQis;
    int mCount = -1;
    QString mCountName;
    std::vector<std::uint32_t> mCodes;
    QVector<std::int64_t> mNulls;
};

} // namespace

QString VbasAlgorithm::group() const
{
  return QObject::tr( "Voronoi-based aggregation" );
}

QString VbasAlgorithm::groupId() const
{
  return QStringLiteral( "vbas" );
}

QIcon VbasAlgorithm::icon() const
{
  return QIcon( svgIconPath() );
}

QString VbasAlgorithm::svgIconPath() const
{
  return iconFile( name() );
}

QString VbasAlgorithm::iconFile( const QString &name )
{
  return VbasProvider::iconDirectory() + QStringLiteral( "/%1.svg" ).arg( name );
}

void VbasAlgorithm::checkSink( const QgsFeatureSink *sink, const QVariantMap &parameters, const QString &name )
{
  if ( !sink )
    throw QgsProcessingException( invalidSinkError( parameters, name ) );
}

void VbasAlgorithm::throwIfCanceled( QgsProcessingFeedback *feedback )
{
  if ( feedback && feedback->isCanceled() )
    throw QgsProcessingException( QObject::tr( "Canceled: no output was produced." ) );
}

// ---------------------------------------------------------------------------------------------
// Parameters

void VbasAlgorithm::addRegionsParameters( bool withPoint, bool withPopulation )
{
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "REGIONS" ), QObject::tr( "Regions layer" ), QList<int>() << QgsProcessing::TypeVectorPolygon << QgsProcessing::TypeVectorPoint ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "REGION_ID" ), QObject::tr( "Region id field" ), QVariant(), QStringLiteral( "REGIONS" ) ) );
  if ( withPoint )
    addParameter( new QgsProcessingParameterEnum( QStringLiteral( "REGION_POINT" ), QObject::tr( "Region point" ), QStringList() << QObject::tr( "Centroid" ) << QObject::tr( "Point on surface" ), false, 0 ) );
  if ( withPopulation )
    addParameter( new QgsProcessingParameterField( QStringLiteral( "POPULATION_FIELD" ), QObject::tr( "Population field (empty: the number of records in each region)" ), QVariant(), QStringLiteral( "REGIONS" ), QgsProcessingParameterField::Numeric, false, true ) );
}

void VbasAlgorithm::addRecordsParameters( bool withQis )
{
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "RECORDS" ), QObject::tr( "Records table" ), QList<int>() << QgsProcessing::TypeVector ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "RECORD_REGION" ), QObject::tr( "Region id field of the records" ), QVariant(), QStringLiteral( "RECORDS" ) ) );
  if ( withQis )
    addParameter( new QgsProcessingParameterField( QStringLiteral( "QI_FIELDS" ), QObject::tr( "Quasi-identifier fields" ), QVariant(), QStringLiteral( "RECORDS" ), QgsProcessingParameterField::Any, true ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "COUNT_FIELD" ), QObject::tr( "Count field (records per row; empty: one)" ), QVariant(), QStringLiteral( "RECORDS" ), QgsProcessingParameterField::Numeric, false, true ) );
}

void VbasAlgorithm::addSiteCountParameters()
{
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "MODEL" ), QObject::tr( "Site count model" ), QStringList() << QObject::tr( "Entropy" ) << QObject::tr( "Max combinations" ) << QObject::tr( "Fixed cutoff" ) << QObject::tr( "Fixed number of sites" ), false, 0 ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "COEFFICIENTS" ), QObject::tr( "Cutoff coefficients" ), QStringList() << QObject::tr( "Western Canada (1588, 0.42)" ) << QObject::tr( "Central Canada (1436, 0.43)" ) << QObject::tr( "Eastern Canada (1978, 0.304)" ) << QObject::tr( "Custom" ), false, 1 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "EXP_B0" ), QObject::tr( "Custom e^B0" ), QgsProcessingParameterNumber::Double, 1436, false, 0 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "B1" ), QObject::tr( "Custom B1" ), QgsProcessingParameterNumber::Double, 0.43 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "FIXED_CUTOFF" ), QObject::tr( "Fixed cutoff (population per site)" ), QgsProcessingParameterNumber::Double, 1000, false, 0 ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "FIXED_SITES" ), QObject::tr( "Fixed number of sites" ), QgsProcessingParameterNumber::Integer, 10, false, 1 ) );
  addNumberOutput( QStringLiteral( "SITES" ), QObject::tr( "Number of sites" ) );
  addNumberOutput( QStringLiteral( "CUTOFF" ), QObject::tr( "Cutoff (population per site)" ) );
  addNumberOutput( QStringLiteral( "ENTROPY" ), QObject::tr( "Entropy (eq. 1)" ) );
  addNumberOutput( QStringLiteral( "MAXCOMBS" ), QObject::tr( "Max combinations (eq. 4)" ) );
  addNumberOutput( QStringLiteral( "RECORDS" ), QObject::tr( "Records" ) );
  addNumberOutput( QStringLiteral( "POPULATION" ), QObject::tr( "Total population on the chosen basis" ) );
  auto base = std::make_unique<QgsProcessingParameterNumber>( QStringLiteral( "ENTROPY_BASE" ), QObject::tr( "Logarithm base of the entropy" ), QgsProcessingParameterNumber::Double, M_E, false, 1.000001 );
  base->setFlags( base->flags() | QgsProcessingParameterDefinition::FlagAdvanced );
  addParameter( base.release() );
}

void VbasAlgorithm::addPlacementParameters()
{
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "METHOD" ), QObject::tr( "Site location method" ), QStringList() << QObject::tr( "Balanced density" ), false, 0 ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "SITE_POSITION" ), QObject::tr( "Site position in its cell" ), QStringList() << QObject::tr( "Mean (eq. 12-13)" ) << QObject::tr( "Median" ), false, 0 ) );
}

void VbasAlgorithm::addKParameter()
{
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "K" ), QObject::tr( "k (smallest released equivalence class)" ), QgsProcessingParameterNumber::Integer, 5, false, 2 ) );
}

void VbasAlgorithm::addAggregationOutputs()
{
  addParameter( new QgsProcessingParameterFeatureSink( QStringLiteral( "AGGREGATED" ), QObject::tr( "Aggregated regions" ), QgsProcessing::TypeVectorPolygon ) );
  addParameter( new QgsProcessingParameterFeatureSink( QStringLiteral( "LOOKUP" ), QObject::tr( "Region lookup" ), QgsProcessing::TypeVector ) );
  addParameter( new QgsProcessingParameterFeatureSink( QStringLiteral( "ANONYMIZED" ), QObject::tr( "Anonymized records" ), QgsProcessing::TypeVector ) );
  addParameter( new QgsProcessingParameterFeatureSink( QStringLiteral( "VORONOI" ), QObject::tr( "Voronoi cells" ), QgsProcessing::TypeVectorPolygon ) );
  addNumberOutput( QStringLiteral( "AGGREGATES" ), QObject::tr( "Aggregated regions" ) );
  addNumberOutput( QStringLiteral( "RELEASED" ), QObject::tr( "Released records" ) );
  addNumberOutput( QStringLiteral( "SUPPRESSED" ), QObject::tr( "Suppressed records" ) );
}

void VbasAlgorithm::addEvaluationOutputs()
{
  addParameter( new QgsProcessingParameterFeatureSink( QStringLiteral( "EVALUATION" ), QObject::tr( "Evaluation" ), QgsProcessing::TypeVector ) );
  addNumberOutput( QStringLiteral( "RECORDS" ), QObject::tr( "Records" ) );
  addNumberOutput( QStringLiteral( "RELEASED" ), QObject::tr( "Released records" ) );
  addNumberOutput( QStringLiteral( "SUPPRESSED" ), QObject::tr( "Suppressed records" ) );
  addNumberOutput( QStringLiteral( "SUPPRESSED_PERCENT" ), QObject::tr( "Suppressed records (%)" ) );
  addNumberOutput( QStringLiteral( "COMPACTNESS" ), QObject::tr( "Compactness (eq. 20)" ) );
  addNumberOutput( QStringLiteral( "DISCERNIBILITY" ), QObject::tr( "Discernibility (eq. 21)" ) );
  addNumberOutput( QStringLiteral( "NUE" ), QObject::tr( "Non-uniform entropy of the released records (eq. 22-23)" ) );
  addNumberOutput( QStringLiteral( "NUE_ALL" ), QObject::tr( "Non-uniform entropy of all records before suppression" ) );
  addNumberOutput( QStringLiteral( "AGGREGATES" ), QObject::tr( "Aggregated regions" ) );
}

void VbasAlgorithm::addNumberOutput( const QString &name, const QString &description )
{
  if ( !outputDefinition( name ) )
    addOutput( new QgsProcessingOutputNumber( name, description ) );
}

QString VbasAlgorithm::regionsHelp( bool withPoint, bool withPopulation )
{
  QString help = QObject::tr( "<b>Regions layer</b>: polygons (or points) of the initial regions: census tracts, dissemination areas, postal codes. "
                              "A geographic CRS is fine: distances are then computed in the WGS 84 UTM zone of the layer's centre.<br>"
                              "<b>Region id field</b>: unique id of each region; the records refer to it.<br>" );
  if ( withPoint )
    help += QObject::tr( "<b>Region point</b>: the point that stands for a polygon: its centroid (the paper's choice) or a point on its surface (always inside). A point layer uses its points.<br>" );
  if ( withPopulation )
    help += QObject::tr( "<b>Population field</b>: optional population of each region (residents, when the records are a sample of them). Empty: the number of records in each region. Used by the site count and balanced density alike.<br>" );
  return help;
}

QString VbasAlgorithm::recordsHelp( bool withQis )
{
  QString help = QObject::tr( "<b>Records table</b>: one row per patient (any table: CSV, GeoPackage, PostGIS). Its geometry, if any, is never read.<br>"
                              "<b>Region id field of the records</b>: the region of each record; every value must be an id of the regions layer.<br>" );
  if ( withQis )
    help += QObject::tr( "<b>Quasi-identifier fields</b>: the fields an attacker may know (age group, sex, ...). Records with equal values on all of them form an equivalence class (EC). NULL is a category of its own.<br>" );
  help += QObject::tr( "<b>Count field</b>: optional whole number of identical records a row stands for (pre-tabulated data).<br>" );
  return help;
}

QString VbasAlgorithm::siteCountHelp()
{
  return QObject::tr( "<b>Site count model</b>: Entropy (eq. 1-3) or Max combinations (eq. 4-6) set the cutoff e^B0 * X^B1, the population per site; or give a fixed cutoff, or a fixed number of sites. Sites = R(population / cutoff), between 1 and the number of regions.<br>"
                      "<b>Cutoff coefficients</b>: e^B0 and B1 of the paper's Table 1 for Western, Central or Eastern Canada, or Custom.<br>"
                      "<b>Custom e^B0</b>, <b>Custom B1</b>: the coefficients used with Custom.<br>"
                      "<b>Fixed cutoff</b>: population per site, used by the Fixed cutoff model.<br>"
                      "<b>Fixed number of sites</b>: used by the Fixed number of sites model.<br>"
                      "<b>Logarithm base of the entropy</b> (advanced): e by default.<br>" );
}

QString VbasAlgorithm::placementHelp()
{
  return QObject::tr( "<b>Site location method</b>: Balanced density (paper sec. 3.2.1): rows of equal population from bottom to top (eq. 7-9), cells of equal population from left to right (eq. 10-11), one site per cell.<br>"
                      "<b>Site position in its cell</b>: the mean of the cell's region points, as eq. 12-13 are written, or their median.<br>" );
}

QString VbasAlgorithm::aggregationOutputsHelp()
{
  return QObject::tr( "<b>k</b>: every released equivalence class (aggregated region + QI values) has at least k records; smaller ones are suppressed whole. At least 2.<br>"
                      "<h3>Outputs</h3>"
                      "<b>Aggregated regions</b>: the member regions of each Voronoi cell dissolved: aggregate_id, site_id, regions (how many), members (their ids), records, released, suppressed, smallest_ec (smallest released EC).<br>"
                      "<b>Region lookup</b>: region_id, aggregate_id and site_id of every initial region.<br>"
                      "<b>Anonymized records</b>: every released record with all its fields except the region id and the geometry, plus aggregate_id. Suppressed records are left out.<br>"
                      "<b>Voronoi cells</b>: the cells of the sites clipped to the regions' extent, for display (site_id, aggregate_id).<br>"
                      "<b>AGGREGATES</b>, <b>RELEASED</b>, <b>SUPPRESSED</b>: counts.<br>" );
}

QString VbasAlgorithm::evaluationOutputsHelp()
{
  return QObject::tr( "<b>Evaluation</b>: a one-row table of the paper's measurements (sec. 3.4): records, released, suppressed, suppressed_pct, "
                      "compactness (eq. 20: sum of the distances from each region point to the site of its aggregate, in working CRS units), "
                      "discernibility (eq. 21: sum of |E|^2 over released ECs), nue (eq. 22-23: non-uniform entropy of the geographic identifier over the released records, bits), "
                      "nue_all (the same over all records before suppression), aggregates, released_ecs, smallest_ec, k and runtime_s (seconds). The same values are number outputs.<br>" );
}

std::unique_ptr<QgsProcessingFeatureSource> VbasAlgorithm::resolveSource( const QVariantMap &parameters, const QString &name, QgsProcessingContext &context ) const
{
  std::unique_ptr<QgsProcessingFeatureSource> source( parameterAsSource( parameters, name, context ) );
  if ( !source )
    throw QgsProcessingException( invalidSourceError( parameters, name ) );
  return source;
}

void VbasAlgorithm::prepareInputs( const QVariantMap &parameters, QgsProcessingContext &context, bool withQis )
{
  mTimer.start();
  mRegionsSource = resolveSource( parameters, QStringLiteral( "REGIONS" ), context );
  mRecordsSource = resolveSource( parameters, QStringLiteral( "RECORDS" ), context );
  mRegionIdField = parameterAsString( parameters, QStringLiteral( "REGION_ID" ), context );
  if ( parameterDefinition( QStringLiteral( "POPULATION_FIELD" ) ) )
    mPopulationField = parameterAsString( parameters, QStringLiteral( "POPULATION_FIELD" ), context );
  if ( parameterDefinition( QStringLiteral( "REGION_POINT" ) ) )
    mRegionPoint = parameterAsEnum( parameters, QStringLiteral( "REGION_POINT" ), context );
  mRecordRegionField = parameterAsString( parameters, QStringLiteral( "RECORD_REGION" ), context );
  if ( withQis )
  {
    mQiFields = parameterAsFields( parameters, QStringLiteral( "QI_FIELDS" ), context );
    if ( mQiFields.isEmpty() )
      throw QgsProcessingException( QObject::tr( "Choose at least one quasi-identifier field (QI_FIELDS)." ) );
  }
  mCountField = parameterAsString( parameters, QStringLiteral( "COUNT_FIELD" ), context );
  if ( parameterDefinition( QStringLiteral( "K" ) ) )
  {
    mK = parameterAsInt( parameters, QStringLiteral( "K" ), context );
    if ( mK < 2 )
      throw QgsProcessingException( QObject::tr( "k must be at least 2 (K = %1)." ).arg( mK ) );
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

VbasRegions VbasAlgorithm::readRegions( QgsProcessingContext &context, QgsProcessingFeedback *feedback ) const
{
  VbasRegions regions;
  const QgsFields fields = mRegionsSource->fields();
  const int idIndex = fields.lookupField( mRegionIdField );
  if ( idIndex < 0 )
    throw QgsProcessingException( QObject::tr( "The regions layer has no field '%1' (region id field)." ).arg( mRegionIdField ) );
  const int populationIndex = mPopulationField.isEmpty() ? -1 : fields.lookupField( mPopulationField );
  if ( !mPopulationField.isEmpty() && populationIndex < 0 )
    throw QgsProcessingException( QObject::tr( "The regions layer has no population field '%1'." ).arg( mPopulationField ) );
  regions.idField = fields.at( idIndex );
  regions.crs = mRegionsSource->sourceCrs();
  regions.wkbType = mRegionsSource->wkbType();
  regions.workingCrs = workingCrs( regions.crs, mRegionsSource->sourceExtent(), context, feedback );
  regions.toWorking = QgsCoordinateTransform( regions.crs, regions.workingCrs, context.transformContext() );

  const long long count = mRegionsSource->featureCount();
  QgsFeatureIterator it = mRegionsSource->getFeatures( QgsFeatureRequest(), QgsProcessingFeatureSource::FlagSkipGeometryValidityChecks );
  QgsFeature f;
  int repaired = 0;
  QgsRectangle extent;
  while ( it.nextFeature( f ) )
  {
    throwIfCanceled( feedback );
    const QVariant id = f.attribute( idIndex );
    const QString idKey = key( id );
    if ( id.isNull() )
      throw QgsProcessingException( QObject::tr( "Region with feature id %1 has a NULL id in '%2'." ).arg( f.id() ).arg( mRegionIdField ) );
    if ( regions.index.find( utf16( idKey ) ) )
      throw QgsProcessingException( QObject::tr( "The region id '%1' appears more than once in '%2': region ids must be unique." ).arg( idKey, mRegionIdField ) );
    QgsGeometry geometry = f.geometry();
    if ( geometry.isNull() || geometry.isEmpty() )
      throw QgsProcessingException( QObject::tr( "Region '%1' has no geometry." ).arg( idKey ) );
    if ( geometry.type() == QgsWkbTypes::PolygonGeometry && !geometry.isGeosValid() )
    {
      geometry = geometry.makeValid();
      ++repaired;
    }
    const QgsGeometry point = mRegionPoint == 1 ? geometry.pointOnSurface() : geometry.centroid();
    if ( point.isNull() )
      throw QgsProcessingException( QObject::tr( "Region '%1': its region point could not be computed." ).arg( idKey ) );
    QgsPointXY p = point.asPoint();
    QgsGeometry working = geometry;
    try
    {
      p = regions.toWorking.transform( p );
      working.transform( regions.toWorking );
    }
    catch ( QgsCsException & )
    {
      throw QgsProcessingException( QObject::tr( "Region '%1' could not be transformed to %2." ).arg( idKey, regions.workingCrs.authid() ) );
    }
    extent.combineExtentWith( working.boundingBox() );
    if ( populationIndex >= 0 )
    {
      bool ok = false;
      const double population = f.attribute( populationIndex ).toDouble( &ok );
      if ( !ok || population < 0 || !std::isfinite( population ) )
        throw QgsProcessingException( QObject::tr( "Region '%1': the population field '%2' holds '%3', not a number >= 0." ).arg( idKey, mPopulationField, f.attribute( populationIndex ).toString() ) );
      regions.population.push_back( population );
    }
    regions.index.insert( utf16( idKey ) );
    regions.ids.append( id );
    regions.geometries.append( geometry );
    regions.points.push_back( { p.x(), p.y() } );
    if ( count > 0 )
      feedback->setProgress( 100.0 * static_cast<double>( regions.ids.size() ) / static_cast<double>( count ) );
  }
  if ( regions.ids.isEmpty() )
    throw QgsProcessingException( QObject::tr( "The regions layer is empty." ) );
  if ( repaired > 0 )
    feedback->pushWarning( QObject::tr( "%n invalid region polygon(s) repaired with make valid.", nullptr, repaired ) );
  regions.extent = { extent.xMinimum(), extent.yMinimum(), extent.xMaximum(), extent.yMaximum() };
  return regions;
}

VbasRecords VbasAlgorithm::readRecords( const VbasRegions &regions, QgsProcessingFeedback *feedback ) const
{
  RecordReader reader( mRecordsSource->fields(), mRecordRegionField, mQiFields, mCountField );
  VbasRecords records( static_cast<std::size_t>( mQiFields.size() ), static_cast<std::size_t>( regions.ids.size() ) );

  QgsFeatureRequest request;
  request.setFlags( QgsFeatureRequest::NoGeometry ).setSubsetOfAttributes( reader.attributes() );
  QgsFeatureIterator it = mRecordsSource->getFeatures( request, QgsProcessingFeatureSource::FlagSkipGeometryValidityChecks );
  const double step = mRecordsSource->featureCount() > 0 ? 100.0 / static_cast<double>( mRecordsSource->featureCount() ) : 0;
  std::int64_t row = 0;
  std::int64_t unknown = 0;
  QStringList unknownShown;
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    if ( ( row & 0xfff ) == 0 )
    {
      throwIfCanceled( feedback );
      feedback->setProgress( static_cast<double>( row ) * step );
    }
    ++row;
    const QgsAttributes attributes = f.attributes();
    const std::optional<std::uint32_t> region = regions.find( reader.regionId( attributes ) );
    if ( !region )
    {
      ++unknown;
      const QVariant &value = reader.regionId( attributes );
      const QString shown = value.isNull() ? QStringLiteral( "NULL" ) : QStringLiteral( "'%1'" ).arg( value.toString() );
      if ( unknownShown.size() < kMaxShown && !unknownShown.contains( shown ) )
        unknownShown.append( shown );
      continue;
    }
    const std::int64_t count = reader.count( f );
    records.builder.add( *region, reader.classId( attributes, records.encoder ), count );
    records.featureIds.push_back( f.id() );
  }
  throwIfCanceled( feedback );
  if ( unknown > 0 )
    throw QgsProcessingException( QObject::tr( "%1 record(s) have a region id (field '%2') that is not in the regions layer's '%3', for example %4." )
                                    .arg( unknown ).arg( mRecordRegionField, mRegionIdField, unknownShown.join( QStringLiteral( ", " ) ) ) );
  if ( row == 0 )
    throw QgsProcessingException( QObject::tr( "The records table is empty." ) );
  for ( int q = 0; q < mQiFields.size(); ++q )
    if ( reader.nulls()[q] > 0 )
      feedback->pushInfo( QObject::tr( "QI field '%1' is NULL in %2 record(s): NULL is treated as a category of its own." ).arg( mQiFields[q] ).arg( reader.nulls()[q] ) );
  records.histograms = records.builder.build();
  if ( records.histograms.total() == 0 )
    throw QgsProcessingException( QObject::tr( "The records table holds no records: every count is 0." ) );
  feedback->pushInfo( QObject::tr( "Read %1 record rows (%2 records) in %3 regions, %4 equivalence classes." )
                        .arg( row ).arg( records.histograms.total() ).arg( regions.ids.size() ).arg( records.encoder.classCount() ) );
  return records;
}

std::vector<double> VbasAlgorithm::regionPopulation( const VbasRegions &regions, const VbasRecords &records )
{
  if ( !regions.population.empty() )
    return regions.population;
  std::vector<double> population;
  for ( std::size_t r = 0; r < records.histograms.rows(); ++r )
    population.push_back( static_cast<double>( records.histograms.rowTotal( r ) ) );
  return population;
}

// ---------------------------------------------------------------------------------------------
// Steps

VbasSiteCount VbasAlgorithm::estimateSiteCount( const QVariantMap &parameters, QgsProcessingContext &context, const VbasRegions &regions, const VbasRecords &records, QgsProcessingFeedback *feedback ) const
{
  VbasSiteCount result;
  const std::vector<double> population = regionPopulation( regions, records );
  result.population = std::accumulate( population.begin(), population.end(), 0.0 );
  const double base = parameterAsDouble( parameters, QStringLiteral( "ENTROPY_BASE" ), context );
  result.entropy = vbas::entropy( records.histograms.classTotals( records.encoder.classCount() ), base );
  result.maxCombs = vbas::maxCombs( records.encoder.categoryCounts() );

  const vbas::CutoffCoefficients presets[] = { vbas::kWesternCanada, vbas::kCentralCanada, vbas::kEasternCanada };
  const int preset = parameterAsEnum( parameters, QStringLiteral( "COEFFICIENTS" ), context );
  const vbas::CutoffCoefficients coefficients = preset < 3 ? presets[preset]
                                                           : vbas::CutoffCoefficients { parameterAsDouble( parameters, QStringLiteral( "EXP_B0" ), context ), parameterAsDouble( parameters, QStringLiteral( "B1" ), context ) };
  const std::size_t regionCount = static_cast<std::size_t>( regions.ids.size() );
  switch ( parameterAsEnum( parameters, QStringLiteral( "MODEL" ), context ) )
  {
    case 0:
      result.cutoff = vbas::cutoff( coefficients, result.entropy );
      break;
    case 1:
      result.cutoff = vbas::cutoff( coefficients, result.maxCombs );
      break;
    case 2:
      result.cutoff = parameterAsDouble( parameters, QStringLiteral( "FIXED_CUTOFF" ), context );
      if ( result.cutoff <= 0 )
        throw QgsProcessingException( QObject::tr( "The fixed cutoff must be positive (FIXED_CUTOFF = %1)." ).arg( result.cutoff ) );
      break;
    default:
    {
      const int fixed = parameterAsInt( parameters, QStringLiteral( "FIXED_SITES" ), context );
      if ( fixed < 1 || static_cast<std::size_t>( fixed ) > regionCount )
        throw QgsProcessingException( QObject::tr( "The fixed number of sites (FIXED_SITES = %1) must be between 1 and the number of regions, %2." ).arg( fixed ).arg( regionCount ) );
      result.sites = static_cast<std::size_t>( fixed );
      result.cutoff = result.population / static_cast<double>( fixed );
      return result;
    }
  }
  result.sites = vbas::siteCount( result.population, result.cutoff, regionCount );
  feedback->pushInfo( QObject::tr( "Entropy %1, max combinations %2, cutoff %3: %4 sites for a population of %5." )
                        .arg( result.entropy ).arg( result.maxCombs ).arg( result.cutoff ).arg( result.sites ).arg( result.population ) );
  return result;
}

std::optional<std::uint32_t> VbasRegions::find( const QVariant &id ) const
{
  return id.isNull() ? std::nullopt : index.find( utf16( key( id ) ) );
}

VbasSites VbasAlgorithm::readSites( QgsFeatureSource *source, const VbasRegions &regions, QgsProcessingContext &context )
{
  const int idIndex = source->fields().lookupField( kSiteIdField );
  const QgsCoordinateTransform toWorking( source->sourceCrs(), regions.workingCrs, context.transformContext() );
  std::vector<std::pair<qlonglong, vbas::Point>> sites;
  QgsFeatureIterator it = source->getFeatures( QgsFeatureRequest().setSubsetOfAttributes( idIndex >= 0 ? QgsAttributeList { idIndex } : QgsAttributeList() ) );
  QgsFeature f;
  while ( it.nextFeature( f ) )
  {
    qlonglong id = static_cast<qlonglong>( sites.size() + 1 );
    if ( idIndex >= 0 )
    {
      bool ok = false;
      id = f.attribute( idIndex ).toLongLong( &ok );
      if ( !ok )
        throw QgsProcessingException( QObject::tr( "Site with feature id %1: '%2' holds '%3', not a whole number." ).arg( f.id() ).arg( kSiteIdField, f.attribute( idIndex ).toString() ) );
    }
    const QgsGeometry geometry = f.geometry();
    if ( geometry.isNull() || geometry.isEmpty() )
      throw QgsProcessingException( QObject::tr( "Site %1 has no geometry." ).arg( id ) );
    QgsPointXY p = geometry.centroid().asPoint();
    try
    {
      p = toWorking.transform( p );
    }
    catch ( QgsCsException & )
    {
      throw QgsProcessingException( QObject::tr( "Site %1 could not be transformed to %2." ).arg( id ).arg( regions.workingCrs.authid() ) );
    }
    sites.push_back( { id, { p.x(), p.y() } } );
  }
  if ( sites.empty() )
    throw QgsProcessingException( QObject::tr( "The sites layer is empty." ) );
  std::stable_sort( sites.begin(), sites.end(), []( const auto &a, const auto &b ) { return a.first < b.first; } );
  VbasSites result;
  for ( const auto &[id, point] : sites )
  {
    if ( !result.ids.empty() && result.ids.back() == id )
      throw QgsProcessingException( QObject::tr( "The site id %1 appears more than once in the sites layer's '%2'." ).arg( id ).arg( kSiteIdField ) );
    result.ids.push_back( id );
    result.points.push_back( point );
  }
  return result;
}

void VbasAlgorithm::setSiteCountOutputs( const VbasSiteCount &siteCount, const VbasRecords &records, QVariantMap &outputs )
{
  outputs.insert( QStringLiteral( "SITES" ), static_cast<qlonglong>( siteCount.sites ) );
  outputs.insert( QStringLiteral( "CUTOFF" ), siteCount.cutoff );
  outputs.insert( QStringLiteral( "ENTROPY" ), siteCount.entropy );
  outputs.insert( QStringLiteral( "MAXCOMBS" ), siteCount.maxCombs );
  outputs.insert( QStringLiteral( "RECORDS" ), static_cast<qlonglong>( records.histograms.total() ) );
  outputs.insert( QStringLiteral( "POPULATION" ), siteCount.population );
}

vbas::Placement VbasAlgorithm::placeSites( const QVariantMap &parameters, QgsProcessingContext &context, const VbasRegions &regions, const VbasRecords &records, std::size_t sites ) const
{
  if ( sites < 1 || sites > static_cast<std::size_t>( regions.ids.size() ) )
    throw QgsProcessingException( QObject::tr( "The number of sites (%1) must be between 1 and the number of regions, %2." ).arg( sites ).arg( regions.ids.size() ) );
  const vbas::SitePosition position = parameterAsEnum( parameters, QStringLiteral( "SITE_POSITION" ), context ) == 1 ? vbas::SitePosition::Median : vbas::SitePosition::Mean;
  try
  {
    return vbas::balancedDensity( regions.points, regionPopulation( regions, records ), sites, position );
  }
  catch ( const std::invalid_argument &e )
  {
    throw QgsProcessingException( QObject::tr( "Balanced density: %1." ).arg( e.what() ) );
  }
}

QString VbasAlgorithm::writeSites( const QVariantMap &parameters, const QString &name, QgsProcessingContext &context, const VbasRegions &regions, const vbas::Placement &placement ) const
{
  QgsFields fields;
  fields.append( QgsField( kSiteIdField, QVariant::LongLong ) );
  fields.append( QgsField( QStringLiteral( "population" ), QVariant::Double ) );
  fields.append( QgsField( QStringLiteral( "regions" ), QVariant::LongLong ) );
  fields.append( QgsField( QStringLiteral( "row" ), QVariant::LongLong ) );
  QString id;
  std::unique_ptr<QgsFeatureSink> sink( parameterAsSink( parameters, name, context, id, fields, QgsWkbTypes::Point, regions.crs ) );
  checkSink( sink.get(), parameters, name );
  for ( std::size_t s = 0; s < placement.sites.size(); ++s )
  {
    QgsGeometry point( new QgsPoint( toQgs( placement.sites[s] ) ) );
    point.transform( regions.toWorking, Qgis::TransformDirection::Reverse );
    QgsFeature f( fields );
    f.setGeometry( point );
    f.setAttributes( QgsAttributes() << static_cast<qlonglong>( s + 1 ) << placement.cellPopulation[s] << static_cast<qlonglong>( placement.cells[s].size() ) << static_cast<qlonglong>( placement.cellRow[s] + 1 ) );
    addFeature( sink.get(), f, name );
  }
  return id;
}

VbasRelease VbasAlgorithm::aggregateAndRelease( const QVariantMap &parameters, QgsProcessingContext &context, const VbasRegions &regions, VbasRecords &records,
                                                const std::vector<vbas::Point> &sites, const std::vector<qlonglong> &siteIds, QVariantMap &outputs, QgsProcessingFeedback *feedback ) const
{
  VbasRelease release;
  const vbas::VoronoiDiagram diagram( sites );
  const std::vector<std::size_t> regionSite = vbas::locateRegions( regions.points, diagram );
  release.aggregation = vbas::aggregate( regionSite, records.histograms );
  release.suppression = vbas::suppress( release.aggregation.ecs, mK );
  for ( const std::size_t s : regionSite )
    release.regionSites.push_back( sites[s] );
  for ( const std::size_t s : release.aggregation.aggregateGroup )
    release.aggregateSiteIds.push_back( siteIds[s] );
  const vbas::Aggregation &aggregation = release.aggregation;
  const std::size_t aggregates = aggregation.aggregateGroup.size();
  feedback->pushInfo( QObject::tr( "%1 sites, %2 aggregated regions; %3 records released, %4 suppressed (k = %5)." )
                        .arg( sites.size() ).arg( aggregates ).arg( release.suppression.releasedRecords ).arg( release.suppression.suppressedRecords ).arg( mK ) );
  throwIfCanceled( feedback );

  // LOOKUP
  QgsFields lookupFields;
  QgsField regionField = regions.idField;
  regionField.setName( kRegionIdField );
  lookupFields.append( regionField );
  lookupFields.append( QgsField( kAggregateIdField, QVariant::LongLong ) );
  lookupFields.append( QgsField( kSiteIdField, QVariant::LongLong ) );
  QString lookupId;
  std::unique_ptr<QgsFeatureSink> lookup( parameterAsSink( parameters, QStringLiteral( "LOOKUP" ), context, lookupId, lookupFields, QgsWkbTypes::NoGeometry ) );
  checkSink( lookup.get(), parameters, QStringLiteral( "LOOKUP" ) );
  std::vector<QVector<QgsGeometry>> memberGeometries( aggregates );
  std::vector<QStringList> memberIds( aggregates );
  for ( int r = 0; r < regions.ids.size(); ++r )
  {
    const std::size_t a = aggregation.regionAggregate[static_cast<std::size_t>( r )];
    memberGeometries[a].append( regions.geometries[r] );
    memberIds[a].append( key( regions.ids[r] ) );
    QgsFeature f( lookupFields );
    f.setAttributes( QgsAttributes() << regions.ids[r] << static_cast<qlonglong>( a + 1 ) << release.aggregateSiteIds[a] );
    addFeature( lookup.get(), f, QStringLiteral( "LOOKUP" ) );
  }
  outputs.insert( QStringLiteral( "LOOKUP" ), lookupId );

  // AGGREGATED: the member regions dissolved with GEOS
  QgsFields aggregateFields;
  aggregateFields.append( QgsField( kAggregateIdField, QVariant::LongLong ) );
  aggregateFields.append( QgsField( kSiteIdField, QVariant::LongLong ) );
  aggregateFields.append( QgsField( QStringLiteral( "regions" ), QVariant::LongLong ) );
  aggregateFields.append( QgsField( QStringLiteral( "members" ), QVariant::String ) );
  aggregateFields.append( QgsField( QStringLiteral( "records" ), QVariant::LongLong ) );
  aggregateFields.append( QgsField( QStringLiteral( "released" ), QVariant::LongLong ) );
  aggregateFields.append( QgsField( QStringLiteral( "suppressed" ), QVariant::LongLong ) );
  aggregateFields.append( QgsField( QStringLiteral( "smallest_ec" ), QVariant::LongLong ) );
  QString aggregatedId;
  std::unique_ptr<QgsFeatureSink> aggregated( parameterAsSink( parameters, QStringLiteral( "AGGREGATED" ), context, aggregatedId, aggregateFields, QgsWkbTypes::multiType( regions.wkbType ), regions.crs ) );
  checkSink( aggregated.get(), parameters, QStringLiteral( "AGGREGATED" ) );
  const std::vector<vbas::AggregateSummary> summaries = vbas::summarize( aggregation.ecs, release.suppression );
  for ( std::size_t a = 0; a < aggregates; ++a )
  {
    throwIfCanceled( feedback );
    QgsGeometry dissolved = QgsGeometry::unaryUnion( memberGeometries[a] );
    dissolved.convertToMultiType();
    QgsFeature f( aggregateFields );
    f.setGeometry( dissolved );
    const vbas::AggregateSummary &s = summaries[a];
    f.setAttributes( QgsAttributes() << static_cast<qlonglong>( a + 1 ) << release.aggregateSiteIds[a] << static_cast<qlonglong>( memberIds[a].size() )
                                     << memberIds[a].join( QLatin1Char( ',' ) ) << static_cast<qlonglong>( s.records ) << static_cast<qlonglong>( s.released )
                                     << static_cast<qlonglong>( s.suppressed ) << static_cast<qlonglong>( s.smallestReleasedEc ) );
    addFeature( aggregated.get(), f, QStringLiteral( "AGGREGATED" ) );
    feedback->setProgress( 20.0 * static_cast<double>( a + 1 ) / static_cast<double>( aggregates ) );
  }
  outputs.insert( QStringLiteral( "AGGREGATED" ), aggregatedId );

  // VORONOI: cells clipped to the regions' extent
  QgsFields voronoiFields;
  voronoiFields.append( QgsField( kSiteIdField, QVariant::LongLong ) );
  voronoiFields.append( QgsField( kAggregateIdField, QVariant::LongLong ) );
  QString voronoiId;
  std::unique_ptr<QgsFeatureSink> voronoi( parameterAsSink( parameters, QStringLiteral( "VORONOI" ), context, voronoiId, voronoiFields, QgsWkbTypes::Polygon, regions.crs ) );
  checkSink( voronoi.get(), parameters, QStringLiteral( "VORONOI" ) );
  for ( std::size_t s = 0; s < sites.size(); ++s )
  {
    const std::vector<vbas::Point> ring = diagram.cell( s, regions.extent );
    if ( ring.size() < 3 )
      continue;
    QgsPointSequence points;
    for ( const vbas::Point &p : ring )
      points.append( toQgs( p ) );
    points.append( points.front() );
    auto polygon = std::make_unique<QgsPolygon>();
    polygon->setExteriorRing( new QgsLineString( points ) );
    QgsGeometry cell( polygon.release() );
    cell.transform( regions.toWorking, Qgis::TransformDirection::Reverse );
    const auto it = std::lower_bound( aggregation.aggregateGroup.begin(), aggregation.aggregateGroup.end(), s );
    const QVariant aggregateId = it != aggregation.aggregateGroup.end() && *it == s ? QVariant( static_cast<qlonglong>( it - aggregation.aggregateGroup.begin() + 1 ) ) : QVariant();
    QgsFeature f( voronoiFields );
    f.setGeometry( cell );
    f.setAttributes( QgsAttributes() << siteIds[s] << aggregateId );
    addFeature( voronoi.get(), f, QStringLiteral( "VORONOI" ) );
  }
  outputs.insert( QStringLiteral( "VORONOI" ), voronoiId );

  // ANONYMIZED: a second streaming pass over the records, writing the released ones
  const QgsFields recordFields = mRecordsSource->fields();
  RecordReader reader( recordFields, mRecordRegionField, mQiFields, mCountField );
  if ( recordFields.lookupField( kAggregateIdField ) >= 0 )
    throw QgsProcessingException( QObject::tr( "The records table already has a field '%1': rename it, the anonymized records get that field." ).arg( kAggregateIdField ) );
  QgsFields anonymizedFields;
  for ( int i = 0; i < recordFields.count(); ++i )
    if ( i != reader.regionAttribute() )
      anonymizedFields.append( recordFields.at( i ) );
  anonymizedFields.append( QgsField( kAggregateIdField, QVariant::LongLong ) );
  QString anonymizedId;
  std::unique_ptr<QgsFeatureSink> anonymized( parameterAsSink( parameters, QStringLiteral( "ANONYMIZED" ), context, anonymizedId, anonymizedFields, QgsWkbTypes::NoGeometry ) );
  checkSink( anonymized.get(), parameters, QStringLiteral( "ANONYMIZED" ) );
  // A partly written release may hold ECs below k: on any error it is deleted, or flagged.
  const QString destination = parameterAsOutputLayer( parameters, QStringLiteral( "ANONYMIZED" ), context );
  const auto writeReleased = [&] {
    QgsFeatureRequest request;
    request.setFlags( QgsFeatureRequest::NoGeometry );
    QgsFeatureIterator it = mRecordsSource->getFeatures( request, QgsProcessingFeatureSource::FlagSkipGeometryValidityChecks );
    const double step = records.builder.size() > 0 ? 80.0 / static_cast<double>( records.builder.size() ) : 0;
    std::int64_t row = 0;
    std::int64_t written = 0;
    QgsFeature f;
    QgsFeature out( anonymizedFields );
    QgsAttributes outAttributes( anonymizedFields.count() );
    while ( it.nextFeature( f ) )
    {
      if ( ( row & 0xfff ) == 0 )
      {
        throwIfCanceled( feedback );
        feedback->setProgress( 20.0 + static_cast<double>( row ) * step );
      }
      ++row;
      const QgsAttributes attributes = f.attributes();
      // The first pass's region and class of this row, when the provider returns the rows in the
      // same order; otherwise the row is encoded again.
      const std::size_t i = static_cast<std::size_t>( row - 1 );
      const bool same = i < records.featureIds.size() && records.featureIds[i] == f.id();
      const std::optional<std::uint32_t> region = same ? records.builder.row( i ) : regions.find( reader.regionId( attributes ) );
      const std::int64_t count = same ? records.builder.count( i ) : reader.count( f );
      if ( count == 0 )
        continue; // a row standing for no record
      const std::size_t entry = !region ? vbas::SparseHistograms::npos
                                        : aggregation.ecs.find( aggregation.regionAggregate[*region], same ? records.builder.cls( i ) : reader.classId( attributes, records.encoder ) );
      if ( entry == vbas::SparseHistograms::npos )
        throw QgsProcessingException( QObject::tr( "The records table changed while it was being read (record with feature id %1): run the algorithm again." ).arg( f.id() ) );
      if ( release.suppression.suppressed[entry] )
        continue;
      int o = 0;
      for ( int i = 0; i < attributes.size(); ++i )
        if ( i != reader.regionAttribute() )
          outAttributes[o++] = attributes.at( i );
      outAttributes[o] = static_cast<qlonglong>( aggregation.regionAggregate[*region] + 1 );
      out.setAttributes( outAttributes );
      addFeature( anonymized.get(), out, QStringLiteral( "ANONYMIZED" ) );
      written += count;
    }
    throwIfCanceled( feedback );
    if ( written != release.suppression.releasedRecords )
      throw QgsProcessingException( QObject::tr( "The records table changed while it was being read (%1 records released, %2 expected): run the algorithm again." ).arg( written ).arg( release.suppression.releasedRecords ) );
  };
  try
  {
    writeReleased();
  }
  catch ( const QgsProcessingException &e )
  {
    anonymized.reset();
    throw QgsProcessingException( e.what() + ' ' + discardPartialRelease( destination ) );
  }
  outputs.insert( QStringLiteral( "ANONYMIZED" ), anonymizedId );
  outputs.insert( QStringLiteral( "AGGREGATES" ), static_cast<qlonglong>( aggregates ) );
  outputs.insert( QStringLiteral( "RELEASED" ), static_cast<qlonglong>( release.suppression.releasedRecords ) );
  outputs.insert( QStringLiteral( "SUPPRESSED" ), static_cast<qlonglong>( release.suppression.suppressedRecords ) );
  return release;
}

void VbasAlgorithm::writeEvaluation( const QVariantMap &parameters, QgsProcessingContext &context, const VbasRegions &regions, const VbasRecords &records,
                                     const VbasRelease &release, double runtime, QVariantMap &outputs ) const
{
  const vbas::Evaluation ev = vbas::evaluate( regions.points, release.regionSites, records.histograms, release.aggregation, release.suppression );
  QgsFields fields;
  QgsAttributes values;
  const auto add = [&]( const QString &field, const QString &output, const QVariant &value ) {
    fields.append( QgsField( field, value.type() == QVariant::Double ? QVariant::Double : QVariant::LongLong ) );
    values.append( value );
    if ( !output.isEmpty() )
      outputs.insert( output, value );
  };
  add( QStringLiteral( "records" ), QStringLiteral( "RECORDS" ), static_cast<qlonglong>( ev.records ) );
  add( QStringLiteral( "released" ), QStringLiteral( "RELEASED" ), static_cast<qlonglong>( ev.releasedRecords ) );
  add( QStringLiteral( "suppressed" ), QStringLiteral( "SUPPRESSED" ), static_cast<qlonglong>( ev.suppressedRecords ) );
  add( QStringLiteral( "suppressed_pct" ), QStringLiteral( "SUPPRESSED_PERCENT" ), ev.suppressedPercent );
  add( QStringLiteral( "compactness" ), QStringLiteral( "COMPACTNESS" ), ev.compactness );
  add( QStringLiteral( "discernibility" ), QStringLiteral( "DISCERNIBILITY" ), ev.discernibility );
  add( QStringLiteral( "nue" ), QStringLiteral( "NUE" ), ev.nonUniformEntropy );
  add( QStringLiteral( "nue_all" ), QStringLiteral( "NUE_ALL" ), ev.nonUniformEntropyAll );
  add( QStringLiteral( "aggregates" ), QStringLiteral( "AGGREGATES" ), static_cast<qlonglong>( ev.aggregates ) );
  add( QStringLiteral( "released_ecs" ), QString(), static_cast<qlonglong>( ev.releasedEcs ) );
  add( QStringLiteral( "smallest_ec" ), QString(), static_cast<qlonglong>( ev.smallestReleasedEc ) );
  add( QStringLiteral( "k" ), QString(), static_cast<qlonglong>( mK ) );
  add( QStringLiteral( "runtime_s" ), QStringLiteral( "RUNTIME" ), runtime );
  QString id;
  std::unique_ptr<QgsFeatureSink> sink( parameterAsSink( parameters, QStringLiteral( "EVALUATION" ), context, id, fields, QgsWkbTypes::NoGeometry ) );
  checkSink( sink.get(), parameters, QStringLiteral( "EVALUATION" ) );
  QgsFeature f( fields );
  f.setAttributes( values );
  addFeature( sink.get(), f, QStringLiteral( "EVALUATION" ) );
  outputs.insert( QStringLiteral( "EVALUATION" ), id );
}
