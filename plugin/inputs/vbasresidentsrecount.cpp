#include "plugin/inputs/vbasresidentsrecount.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/inputs/vbashierarchyfile.h"
#include "plugin/inputs/vbasrecordreader.h"
#include "plugin/inputs/vbasstoredvalues.h"
#include "plugin/support/vbasinterrupt.h"

#include <qgsexception.h>
#include <qgsprocessingparameters.h>

#include <QFileInfo>

#include <algorithm>

namespace
{

QString text( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, const QString &name, QgsProcessingContext &context )
{
  return QgsProcessingParameters::parameterAsString( algorithm.parameterDefinition( name ), parameters, context );
}

//! The index of the field parameter names in fields, refused when empty or missing.
int requiredField( const QgsFields &fields, const QString &name, const QString &parameter, const QString &table )
{
  const int index = name.isEmpty() ? -1 : fields.lookupField( name );
  if ( index < 0 )
    throw QgsProcessingException(
      QObject::tr( "k-map needs %1 (%2): %3." ).arg( table, parameter, name.isEmpty() ? QObject::tr( "it is empty" ) : QObject::tr( "there is no field '%1'" ).arg( name ) ) );
  return index;
}

//! A value's text in a cell: NULL apart from any text.
QString valueText( const QVariant &value )
{
  return value.isNull() ? QStringLiteral( "\u0001NULL" ) : value.toString();
}

} // namespace

VbasResidentsRecount::VbasResidentsRecount( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QgsFields &releaseFields,
                                            const QgsAttributeList &qis, const VbasStoredValues &stored, QList<VbasLocation> &locations )
  : mStored( stored )
{
  for ( const QString &name : { QStringLiteral( "LOOKUP" ), QStringLiteral( "POPULATION_TABLE" ) } )
  {
    const QVariant given = parameters.value( name );
    if ( !given.isValid() || given.isNull() || ( given.userType() == QMetaType::QString && given.toString().isEmpty() ) )
      throw QgsProcessingException(
        QObject::tr( "RISK_MODEL k-map counts each class's residents in a population table (POPULATION_TABLE) over the regions of its unit (LOOKUP): give both. %1 is empty." ).arg( name ) );
  }
  mLookup = vbasSource( algorithm, parameters, QStringLiteral( "LOOKUP" ), context, locations );
  mTable = vbasSource( algorithm, parameters, QStringLiteral( "POPULATION_TABLE" ), context, locations );
  const QString lookup = QObject::tr( "the lookup's region and unit fields" ), table = QObject::tr( "the population table's region and count fields" );
  mLookupRegion = requiredField( mLookup->fields(), text( algorithm, parameters, QStringLiteral( "LOOKUP_REGION" ), context ), QStringLiteral( "LOOKUP_REGION" ), lookup );
  mLookupUnit = requiredField( mLookup->fields(), text( algorithm, parameters, QStringLiteral( "LOOKUP_UNIT" ), context ), QStringLiteral( "LOOKUP_UNIT" ), lookup );
  mTableRegion = requiredField( mTable->fields(), text( algorithm, parameters, QStringLiteral( "POPULATION_REGION" ), context ), QStringLiteral( "POPULATION_REGION" ), table );
  mTableCount = requiredField( mTable->fields(), text( algorithm, parameters, QStringLiteral( "POPULATION_COUNT" ), context ), QStringLiteral( "POPULATION_COUNT" ), table );
  mUnit = requiredField( releaseFields, text( algorithm, parameters, QStringLiteral( "UNIT_FIELD" ), context ), QStringLiteral( "UNIT_FIELD" ), QObject::tr( "the release's unit field" ) );
  if ( !qis.contains( mUnit ) )
    throw QgsProcessingException( QObject::tr( "The unit field '%1' (UNIT_FIELD) must be one of QI_FIELDS: it is the released geography." ).arg( releaseFields.at( mUnit ).name() ) );
  for ( const int qi : qis )
  {
    if ( qi == mUnit )
      continue;
    const int inTable = mTable->fields().lookupField( releaseFields.at( qi ).name() );
    if ( inTable < 0 )
      throw QgsProcessingException( QObject::tr( "The population table has no field '%1', a QI of the release: k-map needs the residents of every QI's values (a count over fewer QIs "
                                                 "would overstate them)." )
                                      .arg( releaseFields.at( qi ).name() ) );
    mReleaseQis << qi;
    mTableQis << inTable;
    mQiNames << releaseFields.at( qi ).name();
    mQiText.push_back( releaseFields.at( qi ).type() == vbasqgis::Field::String );
  }
  readHierarchyFiles( algorithm, parameters, context, locations );
}

void VbasResidentsRecount::readHierarchyFiles( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, QList<VbasLocation> &locations )
{
  const QgsProcessingParameterDefinition *definition = algorithm.parameterDefinition( QStringLiteral( "HIERARCHIES" ) );
  if ( !definition )
    return;
  for ( const QString &path : QgsProcessingParameters::parameterAsFileList( definition, parameters, context ) )
  {
    if ( path.isEmpty() )
      continue;
    VbasHierarchyFile file = vbasReadHierarchyFile( path );
    const QString named = QFileInfo( path ).completeBaseName();
    const auto qi = std::find_if( mQiNames.begin(), mQiNames.end(), [&named]( const QString &name ) { return name.compare( named, Qt::CaseInsensitive ) == 0; } );
    if ( qi == mQiNames.end() )
      throw QgsProcessingException(
        QObject::tr( "HIERARCHIES: the file %1 is named after none of the release's QI fields (%2): name each file after its QI field." ).arg( path, mQiNames.join( QStringLiteral( ", " ) ) ) );
    if ( mFiles.contains( *qi ) )
      throw QgsProcessingException( QObject::tr( "HIERARCHIES: two files for the QI field %1." ).arg( *qi ) );
    mFiles.insert( *qi, std::move( file ) );
    locations << VbasLocation::ofFiles( QStringLiteral( "HIERARCHIES" ), { path } );
  }
}

VbasResidentsRecount::~VbasResidentsRecount() = default;

template<typename Text>
QString VbasResidentsRecount::cellText( const QString &unit, const QgsAttributes &attributes, const QgsAttributeList &fields, const Text &text )
{
  QString cell = unit;
  for ( const int field : fields )
    cell += QChar( 0x1f ) + text( attributes.at( field ) );
  return cell;
}

QHash<QString, QString> VbasResidentsRecount::readLookup( QString &qiLevels, QString &hierarchies ) const
{
  QHash<QString, QString> unitOf; // region -> unit
  const int levelsField = mLookup->fields().lookupField( QStringLiteral( "qi_levels" ) ), hierarchiesField = mLookup->fields().lookupField( QStringLiteral( "hierarchies" ) );
  QgsAttributeList read { mLookupRegion, mLookupUnit };
  for ( const int field : { levelsField, hierarchiesField } )
    if ( field >= 0 )
      read << field;
  QgsFeature f;
  std::int64_t row = 0;
  QgsFeatureIterator regions = mLookup->getFeatures( QgsFeatureRequest().setFlags( vbasqgis::NoGeometry ).setSubsetOfAttributes( read ) );
  while ( regions.nextFeature( f ) )
  {
    if ( ++row == 1 )
    {
      qiLevels = levelsField < 0 ? QString() : f.attribute( levelsField ).toString();
      hierarchies = hierarchiesField < 0 ? QString() : f.attribute( hierarchiesField ).toString();
    }
    const QString region = valueText( f.attribute( mLookupRegion ) );
    if ( unitOf.contains( region ) )
      throw QgsProcessingException( QObject::tr( "LOOKUP row %1 (feature id %2): its region is given a unit twice." ).arg( row ).arg( f.id() ) );
    unitOf.insert( region, valueText( f.attribute( mLookupUnit ) ) );
  }
  return unitOf;
}

void VbasResidentsRecount::readPopulation( QgsProcessingFeedback *feedback )
{
  QString qiLevels, hierarchies;
  const QHash<QString, QString> unitOf = readLookup( qiLevels, hierarchies );
  if ( !qiLevels.isEmpty() )
    mLabels.emplace( qiLevels, hierarchies, mQiNames, mQiText, mFiles );
  else if ( !mFiles.isEmpty() )
    throw QgsProcessingException( QObject::tr( "HIERARCHIES place the population table's values under the labels of a generalized release, but the lookup has no qi_levels: "
                                               "the release is not generalized. Leave HIERARCHIES empty." ) );
  std::int64_t row = 0;
  QgsFeature f;
  QgsFeatureIterator cells = mTable->getFeatures( QgsFeatureRequest().setFlags( vbasqgis::NoGeometry ) );
  QSet<QString> seen;
  while ( cells.nextFeature( f ) )
  {
    if ( ( ++row & 0xfff ) == 0 )
      VbasInterrupt::throwIfCanceled( feedback );
    const QString name = QObject::tr( "Population table row %1 (feature id %2)" ).arg( row ).arg( f.id() );
    const std::int64_t residents = VbasRecordReader::countValue( f.attribute( mTableCount ), mTable->fields().at( mTableCount ).name(), name );
    const auto unit = unitOf.constFind( valueText( f.attribute( mTableRegion ) ) );
    if ( unit == unitOf.constEnd() )
      throw QgsProcessingException( QObject::tr( "%1: its region is not in LOOKUP, so the unit its residents belong to is not known." ).arg( name ) );
    const QString cell = cellText( *unit, f.attributes(), mTableQis, valueText );
    const QString placed = valueText( f.attribute( mTableRegion ) ) + QChar( 0x1e ) + cell;
    if ( seen.contains( placed ) )
      throw QgsProcessingException( QObject::tr( "%1: the same region and QI values as an earlier row; a cell is given once." ).arg( name ) );
    seen.insert( placed );
    if ( mLabels )
    {
      Cell &kept = mCellsOfUnit[*unit].emplace_back();
      for ( const int field : mTableQis )
        kept.values << f.attribute( field );
      kept.residents = residents;
    }
    else
      mResidents[cell] += residents;
  }
  feedback->pushInfo( QObject::tr( "k-map: %1 population table row(s) read over %2 region(s) of LOOKUP%3." )
                        .arg( row )
                        .arg( unitOf.size() )
                        .arg( mLabels ? QObject::tr( ", placed under the labels of a generalized release (%1)" ).arg( qiLevels ) : QString() ) );
}

std::int64_t VbasResidentsRecount::residentsUnder( const QString &unit, const QgsAttributes &attributes ) const
{
  const auto cells = mCellsOfUnit.constFind( unit );
  if ( cells == mCellsOfUnit.constEnd() )
    return 0;
  QStringList written;
  for ( const int field : mReleaseQis )
    written << ( attributes.at( field ).isNull() ? QString() : mStored.plainText( attributes.at( field ) ) );
  std::int64_t residents = 0;
  for ( const Cell &cell : *cells )
  {
    bool under = true;
    for ( int q = 0; q < written.size() && under; ++q )
      under = mLabels->under( q, cell.values.at( q ), written[q] );
    residents += under ? cell.residents : 0;
  }
  return residents;
}

void VbasResidentsRecount::addRow( const QByteArray &key, const QgsAttributes &attributes, std::int64_t records )
{
  auto index = mClassIndex.constFind( key );
  if ( index == mClassIndex.constEnd() )
  {
    const auto text = [this]( const QVariant &stored ) { return stored.isNull() ? valueText( stored ) : mStored.plainText( stored ); };
    index = mClassIndex.insert( key, mClasses.size() );
    const QString unit = text( attributes.at( mUnit ) );
    mClasses.push_back( { key, 0, mLabels ? residentsUnder( unit, attributes ) : mResidents.value( cellText( unit, attributes, mReleaseQis, text ), 0 ) } );
  }
  mClasses[*index].records += records;
}

std::int64_t VbasResidentsRecount::residents( const QByteArray &key ) const
{
  const auto index = mClassIndex.constFind( key );
  return index == mClassIndex.constEnd() ? 0 : mClasses[*index].residents;
}

std::optional<std::int64_t> VbasResidentsRecount::smallest() const
{
  std::optional<std::int64_t> fewest;
  for ( const Class &c : mClasses )
    if ( c.records > 0 )
      fewest = std::min( fewest.value_or( c.residents ), c.residents );
  return fewest;
}
