#include "plugin/inputs/vbaspopulationtable.h"
#include "plugin/support/vbasqgiscompat.h"

#include "plugin/inputs/vbasrecordreader.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/support/vbasvaluecodec.h"

#include <qgsexception.h>
#include <qgsprocessingparameters.h>

#include <cstring>
#include <unordered_map>

namespace
{

int field( const QgsFields &fields, const QString &name, const QString &parameter )
{
  const int index = name.isEmpty() ? -1 : fields.lookupField( name );
  if ( name.isEmpty() )
    throw QgsProcessingException( QObject::tr( "A population table needs its region id field (POPULATION_REGION) and its count field (POPULATION_COUNT): %1 is empty." ).arg( parameter ) );
  if ( index < 0 )
    throw QgsProcessingException( QObject::tr( "The population table has no field '%1' (%2)." ).arg( name, parameter ) );
  return index;
}

//! A value as a message shows it: NULL, or its text.
QString shown( const QVariant &value )
{
  return value.isNull() ? QStringLiteral( "NULL" ) : QStringLiteral( "'%1'" ).arg( value.toString() );
}

//! One cell's place: its region and the records' class.
std::uint64_t cellIndex( std::uint32_t region, std::uint32_t cls )
{
  return static_cast<std::uint64_t>( region ) << 32 | cls;
}

} // namespace

std::unique_ptr<VbasPopulationTable> VbasPopulationTable::prepare( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QgsFields &recordFields,
                                                                   const QgsAttributeList &recordQis, QList<VbasLocation> &locations )
{
  const QVariant given = parameters.value( QStringLiteral( "POPULATION_TABLE" ) );
  if ( !algorithm.parameterDefinition( QStringLiteral( "POPULATION_TABLE" ) ) || !given.isValid() || given.isNull() || ( given.userType() == QMetaType::QString && given.toString().isEmpty() ) )
    return nullptr;
  auto table = std::make_unique<VbasPopulationTable>();
  table->mTable = vbasSource( algorithm, parameters, QStringLiteral( "POPULATION_TABLE" ), context, locations );
  const auto text = [&]( const QString &name ) { return QgsProcessingParameters::parameterAsString( algorithm.parameterDefinition( name ), parameters, context ); };
  const QgsFields fields = table->mTable->fields();
  table->mRegion = field( fields, text( QStringLiteral( "POPULATION_REGION" ) ), QStringLiteral( "POPULATION_REGION" ) );
  table->mCount = field( fields, text( QStringLiteral( "POPULATION_COUNT" ) ), QStringLiteral( "POPULATION_COUNT" ) );
  table->mRaise = QgsProcessingParameters::parameterAsBoolean( algorithm.parameterDefinition( QStringLiteral( "POPULATION_RAISE" ) ), parameters, context );
  const vbasqgis::FieldType regionType = fields.at( table->mRegion ).type();
  if ( regionType != vbasqgis::Field::String && regionType != vbasqgis::Field::Int && regionType != vbasqgis::Field::LongLong && regionType != vbasqgis::Field::Double )
    throw QgsProcessingException( QObject::tr( "The population table's region id field '%1' is of type %2: region ids must be text or numbers." )
                                    .arg( fields.at( table->mRegion ).name(), vbasqgis::typeName( fields.at( table->mRegion ) ) ) );
  if ( table->mCount == table->mRegion )
    throw QgsProcessingException( QObject::tr( "The population table's count field '%1' is also its region id field: a field has one role." ).arg( fields.at( table->mCount ).name() ) );
  for ( const int qi : recordQis )
  {
    const QgsField &records = recordFields.at( qi );
    const int index = fields.lookupField( records.name() );
    if ( index >= 0 && fields.at( index ).type() != records.type() )
      throw QgsProcessingException( QObject::tr( "The population table's field '%1' is of type %2, the records' QI '%1' of type %3: their values can never match. Convert one of them." )
                                      .arg( records.name(), vbasqgis::typeName( fields.at( index ) ), vbasqgis::typeName( records ) ) );
    table->mQis.append( index );
    table->mQiNames.append( records.name() );
  }
  return table;
}

QString VbasPopulationTable::rowName( std::int64_t row, QgsFeatureId id )
{
  return QObject::tr( "Population table row %1 (feature id %2)" ).arg( row ).arg( id );
}

std::optional<VbasPopulation> VbasPopulationTable::readFor( const VbasPopulationTable *table, const VbasRegions &regions, const VbasRecords &records, bool generalized,
                                                            QgsProcessingFeedback *feedback )
{
  if ( !table )
    return std::nullopt;
  VbasPopulation population = table->read( regions, records, generalized, feedback );
  if ( population.raised > 0 )
    feedback->pushWarning(
      QObject::tr( "%n cell(s) of the population table held fewer residents than records and were raised to them (POPULATION_RAISE).", nullptr, static_cast<int>( population.raised ) ) );
  if ( !population.missingQis.isEmpty() )
    feedback->pushInfo( QObject::tr( "The population table has no field for the QIs %1: it cannot count the residents of a released class, so they are estimated from the "
                                     "residents of its aggregated region, as with a population field." )
                          .arg( population.missingQis.join( QStringLiteral( ", " ) ) ) );
  return population;
}

std::optional<std::uint32_t> VbasPopulationTable::cellOf( const QgsAttributes &attributes, std::uint32_t region, const VbasRecords &records, bool matched, const QString &rowName,
                                                          std::string &cell ) const
{
  cell.assign( reinterpret_cast<const char *>( &region ), sizeof region );
  std::vector<std::uint32_t> codes( static_cast<std::size_t>( mQis.size() ) );
  std::string key;
  bool known = matched;
  for ( int q = 0; q < mQis.size(); ++q )
  {
    const QVariant value = mQis[q] < 0 ? QVariant() : attributes.at( mQis[q] );
    key.clear();
    const QString reason = value.isNull() ? QString() : VbasValueCodec::encodeKey( value, key );
    if ( !reason.isEmpty() )
      throw QgsProcessingException( QObject::tr( "%1: the QI field '%2' holds %3." ).arg( rowName, mQiNames[q], reason ) );
    const std::uint64_t length = value.isNull() ? ~std::uint64_t( 0 ) : key.size(); // NULL apart from every value
    cell.append( reinterpret_cast<const char *>( &length ), sizeof length ).append( key );
    const std::optional<std::uint32_t> code
      = known ? records.encoder.findValueCode( static_cast<std::size_t>( q ), value.isNull() ? std::nullopt : std::optional<std::string_view>( key ) ) : std::nullopt;
    known = code.has_value();
    codes[static_cast<std::size_t>( q )] = code.value_or( 0 );
  }
  return known ? records.encoder.findClass( codes.data() ) : std::nullopt;
}

QStringList VbasPopulationTable::missingQis() const
{
  QStringList missing;
  for ( int q = 0; q < mQis.size(); ++q )
    if ( mQis[q] < 0 )
      missing << mQiNames[q];
  return missing;
}

void VbasPopulationTable::keepUnmatched( const QgsAttributes &attributes, std::uint32_t region, std::int64_t residents, VbasPopulation &population,
                                         std::vector<std::unordered_map<std::string, std::uint32_t>> &valueIds ) const
{
  std::vector<std::uint32_t> values;
  std::string key;
  for ( int q = 0; q < mQis.size(); ++q )
  {
    const QVariant value = attributes.at( mQis[q] );
    key.assign( 1, value.isNull() ? '\0' : '\1' ); // NULL apart from every value
    if ( !value.isNull() )
      VbasValueCodec::encodeKey( value, key ); // cellOf refused a value without a key
    std::vector<QVariant> &known = population.unmatchedValues[static_cast<std::size_t>( q )];
    const auto [id, added] = valueIds[static_cast<std::size_t>( q )].emplace( key, static_cast<std::uint32_t>( known.size() ) );
    if ( added )
      known.push_back( value );
    values.push_back( id->second );
  }
  population.unmatched.add( region, values, residents );
}

VbasPopulation VbasPopulationTable::read( const VbasRegions &regions, const VbasRecords &records, bool keepUnmatchedRows, QgsProcessingFeedback *feedback ) const
{
  VbasPopulation population;
  population.missingQis = missingQis();
  population.unmatched.qiCount = static_cast<std::size_t>( mQis.size() );
  population.unmatchedValues.resize( population.unmatched.qiCount );
  std::vector<std::unordered_map<std::string, std::uint32_t>> valueIds( population.unmatched.qiCount );
  keepUnmatchedRows = keepUnmatchedRows && population.missingQis.isEmpty();
  population.regionResidents.assign( static_cast<std::size_t>( regions.ids.size() ), 0 );
  vbas::HistogramBuilder cells( static_cast<std::size_t>( regions.ids.size() ) );
  std::unordered_map<std::string, std::int64_t> rowOfCell; // region and the keys of the QI values -> the row that gave it
  std::unordered_map<std::uint64_t, std::int64_t> rowOfClass;
  std::string cell;
  QgsFeatureIterator it = mTable->getFeatures( QgsFeatureRequest().setFlags( vbasqgis::NoGeometry ) );
  QgsFeature f;
  std::int64_t row = 0;
  while ( it.nextFeature( f ) )
  {
    if ( ( ++row & 0xfff ) == 0 )
      VbasInterrupt::throwIfCanceled( feedback );
    const QgsAttributes attributes = f.attributes();
    const std::optional<std::uint32_t> region = regions.find( attributes.at( mRegion ) );
    if ( !region )
      throw QgsProcessingException( QObject::tr( "%1: the region %2 is not in the regions layer." ).arg( rowName( row, f.id() ), shown( attributes.at( mRegion ) ) ) );
    const std::int64_t residents = VbasRecordReader::countValue( attributes.at( mCount ), mTable->fields().at( mCount ).name(), rowName( row, f.id() ) );
    population.regionResidents[*region] += static_cast<double>( residents );
    const std::optional<std::uint32_t> cls = cellOf( attributes, *region, records, population.missingQis.isEmpty(), rowName( row, f.id() ), cell );
    const auto [first, fresh] = rowOfCell.emplace( cell, row );
    if ( !fresh )
      throw QgsProcessingException(
        QObject::tr( "%1: region %2 with these QI values was given before, in row %3: each cell once." ).arg( rowName( row, f.id() ), shown( attributes.at( mRegion ) ) ).arg( first->second ) );
    if ( !cls && keepUnmatchedRows )
      keepUnmatched( attributes, *region, residents, population, valueIds );
    if ( !cls )
      continue;
    cells.add( *region, *cls, residents );
    rowOfClass.emplace( cellIndex( *region, *cls ), row );
  }
  population.cells = cells.build();
  if ( population.missingQis.isEmpty() )
    meetRecords( population, regions, records, mRaise, rowOfClass );
  return population;
}

void VbasPopulationTable::meetRecords( VbasPopulation &population, const VbasRegions &regions, const VbasRecords &records, bool raise,
                                       const std::unordered_map<std::uint64_t, std::int64_t> &rowOfClass ) const
{
  const vbas::SparseHistograms &h = records.histograms;
  vbas::HistogramBuilder raised( h.rows() );
  for ( std::size_t r = 0; r < h.rows(); ++r )
    for ( std::size_t e = h.offsets[r]; e < h.offsets[r + 1]; ++e )
    {
      const std::size_t at = population.cells.find( r, h.classes[e] );
      const std::int64_t residents = at == vbas::SparseHistograms::npos ? 0 : population.cells.counts[at];
      if ( residents >= h.counts[e] )
        continue;
      if ( !raise )
      {
        const auto given = rowOfClass.find( cellIndex( static_cast<std::uint32_t>( r ), h.classes[e] ) );
        const QString where
          = given == rowOfClass.end() ? QObject::tr( "no row of the population table gives their QI values there" ) : QObject::tr( "row %1 gives %2" ).arg( given->second ).arg( residents );
        throw QgsProcessingException( QObject::tr( "Region %1: %2 records share QI values for which %3: the table cannot count the population these records were drawn from. "
                                                   "Check the table, or let POPULATION_RAISE raise such cells to their records." )
                                        .arg( shown( regions.ids[static_cast<int>( r )] ) )
                                        .arg( h.counts[e] )
                                        .arg( where ) );
      }
      raised.add( static_cast<std::uint32_t>( r ), h.classes[e], h.counts[e] - residents );
      population.regionResidents[r] += static_cast<double>( h.counts[e] - residents );
      ++population.raised;
    }
  if ( population.raised == 0 )
    return;
  for ( std::size_t r = 0; r < population.cells.rows(); ++r )
    for ( std::size_t e = population.cells.offsets[r]; e < population.cells.offsets[r + 1]; ++e )
      raised.add( static_cast<std::uint32_t>( r ), population.cells.classes[e], population.cells.counts[e] );
  population.cells = raised.build();
}
