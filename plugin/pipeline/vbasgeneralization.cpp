#include "plugin/pipeline/vbasgeneralization.h"
#include "plugin/pipeline/vbaspartitionsearch.h"
#include "plugin/inputs/vbashierarchyfile.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/support/vbasvaluecodec.h"

#include "algorithms/aggregation/site_count.h"

#include <qgsprocessingalgorithm.h>
#include <qgsexception.h>
#include <qgsfields.h>

#include <QFileInfo>
#include <QLocale>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

namespace
{

//! The stored value of each code of QI q (NULL for NULL): what the release writes at level 0.
std::vector<QVariant> codeValues( const vbas::QiEncoder &encoder, std::size_t q )
{
  std::vector<QVariant> values;
  for ( std::uint32_t code = 0; code < encoder.categoryCount( q ); ++code )
  {
    const std::optional<std::string> &bytes = encoder.value( q, code );
    std::size_t position = 0;
    values.push_back( bytes ? VbasValueCodec::decode( *bytes, position ) : QVariant() );
  }
  return values;
}

//! Binary values, lists and maps: no text names them (every invalid UTF-8 BLOB reads as U+FFFD, every list as "").
bool hasNoText( const QVariant &value )
{
  switch ( value.userType() )
  {
    case QMetaType::QByteArray:
    case QMetaType::QVariantList:
    case QMetaType::QStringList:
    case QMetaType::QVariantMap:
      return !value.isNull();
    default:
      return false;
  }
}

//! The text of a value that a hierarchy row matches (docs/generalization.md, "Which row a value matches"): NULL matches the row NULL.
QString rowText( const QVariant &value )
{
  return value.isNull() ? QStringLiteral( "NULL" ) : value.toString();
}

//! A stored value as a message names it: NULL, the text 'NULL', the value 7 (a number, a date, ...).
QString described( const QVariant &value )
{
  if ( value.isNull() )
    return QObject::tr( "NULL (no value)" );
  switch ( value.userType() )
  {
    case QMetaType::QString:
      return QObject::tr( "the text '%1'" ).arg( value.toString() );
    case QMetaType::QDate:
    case QMetaType::QTime:
    case QMetaType::QDateTime:
      return QObject::tr( "the date or time %1" ).arg( value.toString() );
    default:
      return VbasValueCodec::wholeNumber( value ) != VbasValueCodec::WholeNumber::None || value.userType() == QMetaType::Double || value.userType() == QMetaType::Float
               ? QObject::tr( "the number %1" ).arg( value.toString() )
               : QObject::tr( "the value %1" ).arg( value.toString() );
  }
}

//! Value -> "*" over the codes themselves: every stored value a value of its own, whatever its text.
vbas::QiHierarchy valueOrStar( std::size_t codes )
{
  vbas::QiHierarchy qi;
  std::vector<std::string> values;
  for ( std::uint32_t code = 0; code < codes; ++code )
  {
    values.push_back( std::to_string( code ) ); // distinct values are all the hierarchy needs
    qi.valueOfCode.push_back( code );
  }
  qi.hierarchy = vbas::Hierarchy::suppressionOnly( values );
  return qi;
}

/**
 * Intervals over the values' texts (each value once), NULL a band of its own: labelled NULL at every
 * level but the top, "*" (docs/generalization.md, Hierarchies).
 */
vbas::Hierarchy intervalsOf( const std::vector<QVariant> &values, double width )
{
  std::vector<std::string> texts;
  bool null = false;
  for ( const QVariant &value : values )
  {
    null = null || value.isNull();
    const std::string text = rowText( value ).toStdString();
    if ( !value.isNull() && std::find( texts.begin(), texts.end(), text ) == texts.end() )
      texts.push_back( text );
  }
  const vbas::Hierarchy bands = vbas::Hierarchy::intervals( texts, width );
  if ( !null )
    return bands;
  std::vector<vbas::HierarchyRow> rows;
  for ( std::size_t v = 0; v < bands.valueCount(); ++v )
  {
    vbas::HierarchyRow &row = rows.emplace_back( vbas::HierarchyRow { v + 1, { bands.value( v ) } } );
    for ( std::size_t level = 1; level < bands.levels(); ++level )
      row.fields.push_back( bands.label( level, bands.labelId( level, v ) ) );
  }
  vbas::HierarchyRow &nullRow = rows.emplace_back( vbas::HierarchyRow { rows.size() + 1, std::vector<std::string>( bands.levels(), "NULL" ) } );
  nullRow.fields.back() = "*";
  return vbas::Hierarchy::fromRows( rows );
}

//! The refusal of a value its hierarchy file has no row for, naming a row that differs only in letter case or spaces.
QgsProcessingException noRow( const QString &name, const QString &text, const vbas::Hierarchy &hierarchy )
{
  for ( std::size_t v = 0; v < hierarchy.valueCount(); ++v )
  {
    const QString row = QString::fromStdString( hierarchy.value( v ) );
    if ( row.trimmed().compare( text.trimmed(), Qt::CaseInsensitive ) == 0 )
      return QgsProcessingException( QObject::tr( "HIERARCHIES: the QI field %1 holds the value '%2', which its hierarchy file has no row for; its row '%3' differs only in letter case "
                                                  "or spaces, and rows match values exactly: correct the row." )
                                       .arg( name, text, row ) );
  }
  return QgsProcessingException(
    QObject::tr( "HIERARCHIES: the QI field %1 holds the value '%2', which its hierarchy file has no row for: add one (NULL stands for a missing value)." ).arg( name, text ) );
}

/**
 * QI q's hierarchy over its stored values (docs/generalization.md, "Which row a value matches"): its file
 * or its intervals, each stored value matched to one row by its text, and two stored values that one row
 * matches refused (the release would write them apart while counting them as one class); without
 * either, value -> "*" over the stored values themselves.
 */
vbas::QiHierarchy qiHierarchy( const VbasHierarchySettings &settings, const vbas::QiEncoder &encoder, std::size_t q, const QString &name )
{
  const std::vector<QVariant> values = codeValues( encoder, q );
  if ( !settings.files.contains( name ) && !settings.intervals.contains( name ) )
    return valueOrStar( values.size() );
  const QString parameter = settings.files.contains( name ) ? QStringLiteral( "HIERARCHIES" ) : QStringLiteral( "INTERVALS" );
  for ( const QVariant &value : values )
    if ( hasNoText( value ) )
      throw QgsProcessingException( QObject::tr( "%1: the QI field %2 holds %3 values, which no hierarchy row can name: convert the field to text, or generalize it without %1 "
                                                 "(GENERALIZE writes each value as it is or as *)." )
                                      .arg( parameter, name, QString::fromLatin1( value.typeName() ) ) );
  vbas::QiHierarchy qi;
  try
  {
    qi.hierarchy = settings.files.contains( name ) ? settings.files.value( name ) : intervalsOf( values, settings.intervals.value( name ) );
  }
  catch ( const vbas::HierarchyError &e )
  {
    throw QgsProcessingException( QObject::tr( "INTERVALS: the QI field %1 has no intervals: %2." ).arg( name, QString::fromStdString( e.what() ) ) );
  }
  std::map<std::size_t, std::uint32_t> codeOfRow;
  for ( std::uint32_t code = 0; code < values.size(); ++code )
  {
    const QString text = rowText( values[code] );
    const std::optional<std::size_t> row = qi.hierarchy.find( text.toStdString() );
    if ( !row )
      throw noRow( name, text, qi.hierarchy );
    const auto [first, added] = codeOfRow.emplace( *row, code );
    if ( !added )
      throw QgsProcessingException( QObject::tr( "%1: the QI field %2 holds %3 and %4, which both match the hierarchy row '%5': the release would write them apart "
                                                 "while counting them as one value. Make them one value in the records (or recode one of them), then run again." )
                                      .arg( parameter, name, described( values[first->second] ), described( values[code] ), text ) );
    qi.valueOfCode.push_back( static_cast<std::uint32_t>( *row ) );
  }
  return qi;
}

vbas::Objective objectiveOf( int index )
{
  const vbas::Objective objectives[] = { vbas::Objective::GenericNue, vbas::Objective::Prec, vbas::Objective::Lm, vbas::Objective::DmStar };
  return objectives[std::clamp( index, 0, 3 )];
}

/**
 * The QI of qiNames that name stands for, by the rule QI_FIELDS names a record field by
 * (QgsFields::lookupField: the name itself, else in any letter case); empty when none.
 */
QString qiNamed( const QString &name, const QStringList &qiNames )
{
  QgsFields fields;
  for ( const QString &qi : qiNames )
    fields.append( QgsField( qi ) );
  const int index = fields.lookupField( name );
  return index < 0 ? QString() : qiNames.value( index );
}

//! INTERVALS: "field=width" pairs separated by commas, each keyed by its QI's name.
QMap<QString, double> readIntervals( const QString &text, const QStringList &qiNames, const QMap<QString, vbas::Hierarchy> &files )
{
  QMap<QString, double> intervals;
  for ( const QString &pair : text.split( ',', Qt::SkipEmptyParts ) )
  {
    const QString given = pair.section( '=', 0, 0 ).trimmed();
    bool ok = false;
    const double width = pair.section( '=', 1 ).trimmed().toDouble( &ok );
    if ( !pair.contains( '=' ) || !ok || !( width > 0 ) || !std::isfinite( width ) )
      throw QgsProcessingException( QObject::tr( "INTERVALS: '%1' is not field=width with a positive width (age=5, income=10000)." ).arg( pair.trimmed() ) );
    const QString field = qiNamed( given, qiNames );
    if ( field.isEmpty() )
      throw QgsProcessingException( QObject::tr( "INTERVALS: %1 is not a QI field (QI_FIELDS: %2)." ).arg( given, qiNames.join( QStringLiteral( ", " ) ) ) );
    if ( files.contains( field ) || intervals.contains( field ) )
      throw QgsProcessingException( QObject::tr( "INTERVALS: the QI field %1 has a hierarchy already: give it one hierarchy file or one interval width." ).arg( field ) );
    intervals.insert( field, width );
  }
  return intervals;
}

//! Each QI's hierarchy over its observed values.
std::vector<vbas::QiHierarchy> hierarchiesOf( const VbasHierarchySettings &settings, const VbasRecords &records, const QStringList &qiNames )
{
  std::vector<vbas::QiHierarchy> qis;
  for ( int q = 0; q < qiNames.size(); ++q )
    qis.push_back( qiHierarchy( settings, records.encoder, static_cast<std::size_t>( q ), qiNames[q] ) );
  return qis;
}

/**
 * The hierarchy value of a population table's value of QI q that no record has: its row of the QI's file
 * (matched by text, as the records' values are); none for intervals and value -> "*", whose values are
 * the records'.
 */
std::uint32_t unmatchedValue( const VbasHierarchySettings &settings, const vbas::QiHierarchy &qi, const QString &name, const QVariant &value )
{
  const std::optional<std::size_t> row = settings.files.contains( name ) ? qi.hierarchy.find( rowText( value ).toStdString() ) : std::nullopt;
  return row ? static_cast<std::uint32_t>( *row ) : vbas::kValueOutsideHierarchy;
}

/**
 * The population table's cells over the QIs' hierarchies (docs/method.md, "A release at a stated risk"):
 * the cells of the records' classes, each value its class's, and the rows no class has, each value
 * found in the records' values or else in its hierarchy file. Logs the residents of values outside
 * every label but "*": they count only where their QI is written as "*".
 */
vbas::PopulationCells populationCells( const VbasPopulation &population, const VbasHierarchySettings &settings, const std::vector<vbas::QiHierarchy> &qis, const vbas::QiEncoder &encoder,
                                       const QStringList &qiNames, QgsProcessingFeedback *feedback )
{
  const std::size_t qiCount = qis.size();
  vbas::PopulationCells cells;
  cells.qiCount = qiCount;
  const std::vector<std::uint32_t> &codes = encoder.classCodes();
  std::vector<std::uint32_t> values( qiCount );
  for ( std::uint32_t region = 0; region < population.cells.rows(); ++region )
    for ( std::size_t e = population.cells.offsets[region]; e < population.cells.offsets[region + 1]; ++e )
    {
      for ( std::size_t q = 0; q < qiCount; ++q )
        values[q] = qis[q].valueOfCode[codes[population.cells.classes[e] * qiCount + q]];
      cells.add( region, values, population.cells.counts[e] );
    }
  std::vector<std::vector<std::uint32_t>> valueOf( qiCount ); // [qi][unmatched value id] -> hierarchy value
  for ( std::size_t q = 0; q < qiCount; ++q )
    for ( const QVariant &value : population.unmatchedValues[q] )
    {
      std::string key;
      const QString reason = value.isNull() ? QString() : VbasValueCodec::encodeKey( value, key );
      const std::optional<std::uint32_t> code = reason.isEmpty() ? encoder.findValueCode( q, value.isNull() ? std::nullopt : std::optional<std::string_view>( key ) ) : std::nullopt;
      valueOf[q].push_back( code ? qis[q].valueOfCode[*code] : unmatchedValue( settings, qis[q], qiNames[static_cast<int>( q )], value ) );
    }
  std::int64_t outside = 0;
  const vbas::PopulationCells &unmatched = population.unmatched;
  for ( std::size_t cell = 0; cell < unmatched.region.size(); ++cell )
  {
    for ( std::size_t q = 0; q < qiCount; ++q )
      values[q] = valueOf[q][unmatched.values[cell * qiCount + q]];
    outside += std::count( values.begin(), values.end(), vbas::kValueOutsideHierarchy ) > 0 ? unmatched.residents[cell] : 0;
    cells.add( unmatched.region[cell], values, unmatched.residents[cell] );
  }
  if ( outside > 0 )
    feedback->pushInfo( QObject::tr( "%1 residents of the population table have a QI value that no record has and no hierarchy file names: they count only in classes written "
                                     "with that QI as *, never under a label (which can only lower a class's residents)." )
                          .arg( outside ) );
  return cells;
}

/**
 * What each label of each QI is written as at g's node, as the release writer writes it
 * (VbasReleaseWriter): the stored value at level 0, the label above, "*" or NULL when starred; text in
 * a field released as text. Labels written alike share a token, so their records are one written class.
 */
vbas::WrittenTokens writtenTokens( const VbasGeneralized &g, const vbas::QiEncoder &encoder, const std::vector<bool> &releasedAsText )
{
  vbas::WrittenTokens tokens;
  for ( std::size_t q = 0; q < g.qis.size(); ++q )
  {
    const bool text = releasedAsText[q];
    std::map<std::string, std::uint32_t> ids;
    const auto token = [&ids, text]( const QVariant &written ) {
      std::string bytes;
      VbasValueCodec::encode( text && !written.isNull() ? QVariant( written.toString() ) : written, bytes );
      return ids.emplace( bytes, static_cast<std::uint32_t>( ids.size() ) ).first->second;
    };
    const vbas::Hierarchy &h = g.qis[q].hierarchy;
    const std::size_t level = g.node().node[q];
    std::vector<std::uint32_t> &ofLabel = tokens.ofLabel.emplace_back( h.labelCount( level ) );
    if ( level == 0 )
    {
      const std::vector<QVariant> values = codeValues( encoder, q );
      for ( std::uint32_t code = 0; code < values.size(); ++code )
        ofLabel[h.labelId( 0, g.qis[q].valueOfCode[code] )] = token( values[code] );
    }
    else
      for ( std::uint32_t label = 0; label < ofLabel.size(); ++label )
        ofLabel[label] = token( vbasWrittenLabel( h.label( level, label ), text ) );
    tokens.star.push_back( token( vbasWrittenStar( text ) ) );
  }
  return tokens;
}

//! What the written classes must hold under release's model, residents the written classes' residents (nullptr without a table).
vbas::Criterion writtenCriterion( const VbasReleaseSettings &release, const vbas::SparseHistograms *residents )
{
  switch ( release.model )
  {
    case VbasReleaseSettings::Model::KMap:
      return vbas::Criterion( release.k, *residents ); // kMapCells refused k-map without a table
    case VbasReleaseSettings::Model::AverageRisk:
      return vbas::Criterion::averageRisk( release.k, release.averageThreshold, residents );
    case VbasReleaseSettings::Model::KAnonymity:
      break;
  }
  return vbas::Criterion( release.k );
}

/**
 * The chosen node's release as written, its histograms over the written classes and its metrics; with
 * population, the written classes' residents, which under k-map every released class needs k of.
 */
void writeOut( VbasGeneralized &g, const VbasRecords &records, const std::vector<bool> &releasedAsText, const VbasReleaseSettings &release, const vbas::PopulationCells *population )
{
  const vbas::WrittenTokens tokens = writtenTokens( g, records.encoder, releasedAsText );
  g.written = vbas::writtenClasses( records.histograms, g.node(), &tokens );
  if ( population )
    g.writtenResidents = vbas::writtenResidents( *population, g.qis, g.node(), g.written, &tokens, records.histograms.rows() );
  g.release = vbas::writtenRelease( g.written, g.node(), writtenCriterion( release, population ? &g.writtenResidents : nullptr ) );
  g.writtenRecords.histograms = g.written.regions;
  if ( records.sensitive )
    g.writtenRecords.sensitive = vbas::writtenSensitive( *records.sensitive, records.histograms, g.written );
  g.metrics = vbas::generalizationMetrics( g.qis, g.node().node, records.encoder.classCodes(), records.histograms, g.written, g.node().aggregation->regionAggregateIndex );
}

//! The population table's cells over g's hierarchies, when a table with a field for every QI was read.
std::optional<vbas::PopulationCells> cellsOf( const VbasPopulation *population, const VbasHierarchySettings &settings, const VbasGeneralized &g, const vbas::QiEncoder &encoder,
                                              QgsProcessingFeedback *feedback )
{
  if ( !population || !population->missingQis.isEmpty() )
    return std::nullopt;
  return populationCells( *population, settings, g.qis, encoder, g.qiNames, feedback );
}

//! The cells every class is counted by: k-map's; nullptr under k-anonymity.
const vbas::PopulationCells *kMapCells( const VbasReleaseSettings &release, const std::optional<vbas::PopulationCells> &cells )
{
  if ( release.model != VbasReleaseSettings::Model::KMap )
    return nullptr;
  if ( !cells ) // refuseUnmetModel comes first
    throw QgsProcessingException( QObject::tr( "k-map without the residents of a population table: this is a fault of VBAS, please report it with the run's log." ) );
  return &*cells;
}

//! "classes below k = 5"; under k-map "classes with fewer than k = 5 residents"; under the average risk model, "... or cut for the average risk".
QString classesBelowK( const VbasReleaseSettings &release )
{
  switch ( release.model )
  {
    case VbasReleaseSettings::Model::KMap:
      return QObject::tr( "classes with fewer than k = %1 residents" ).arg( release.k );
    case VbasReleaseSettings::Model::AverageRisk:
      return QObject::tr( "classes below k = %1 or cut to bring the average risk to %2" ).arg( release.k ).arg( release.averageThreshold );
    case VbasReleaseSettings::Model::KAnonymity:
      break;
  }
  return QObject::tr( "classes below k = %1" ).arg( release.k );
}

//! Sets the lattice's criterion: k, and k-map's or the average risk model's cells (cells: the population table's, when read).
void useModel( vbas::LatticeSettings &lattice, const VbasReleaseSettings &release, const std::optional<vbas::PopulationCells> &cells )
{
  lattice.k = release.k;
  lattice.population = kMapCells( release, cells );
  if ( release.model != VbasReleaseSettings::Model::AverageRisk )
    return;
  lattice.averageThreshold = release.averageThreshold;
  lattice.averagePopulation = cells ? &*cells : nullptr;
}

//! The node of qi_levels ("age_group = 2 of 4, sex = 0 of 1"), each level and top checked against qis.
vbas::LatticeNode nodeOf( const QString &levels, const std::vector<vbas::QiHierarchy> &qis, const QStringList &qiNames )
{
  vbas::LatticeNode node;
  QString rest = levels.trimmed();
  for ( int q = 0; q < qiNames.size(); ++q )
  {
    const QString prefix = ( q > 0 ? QStringLiteral( ", " ) : QString() ) + qiNames[q] + QStringLiteral( " = " );
    const QRegularExpressionMatch m = QRegularExpression( QStringLiteral( "^(\\d+) of (\\d+)" ) ).match( rest.mid( prefix.size() ) );
    if ( !rest.startsWith( prefix ) || !m.hasMatch() )
      throw QgsProcessingException( QObject::tr( "The region lookup's qi_levels '%1' do not give the level of the QI field %2: QI_FIELDS must be the release's (%3)." )
                                      .arg( levels, qiNames[q], qiNames.join( QStringLiteral( ", " ) ) ) );
    const std::size_t level = m.captured( 1 ).toULongLong(), top = m.captured( 2 ).toULongLong();
    if ( top + 1 != qis[static_cast<std::size_t>( q )].hierarchy.levels() || level > top )
      throw QgsProcessingException( QObject::tr( "The region lookup's qi_levels give %1 level %2 of %3, but its hierarchy here has %4 levels above its values: "
                                                 "give the hierarchy files and intervals of the release (HIERARCHIES, INTERVALS)." )
                                      .arg( qiNames[q] )
                                      .arg( level )
                                      .arg( top )
                                      .arg( qis[static_cast<std::size_t>( q )].hierarchy.levels() - 1 ) );
    node.push_back( level );
    rest = rest.mid( prefix.size() + m.capturedLength() );
  }
  if ( !rest.isEmpty() )
    throw QgsProcessingException( QObject::tr( "The region lookup's qi_levels '%1' name more QIs than QI_FIELDS (%2)." ).arg( levels, qiNames.join( QStringLiteral( ", " ) ) ) );
  return node;
}

//! A QI's hierarchy as the region lookup records it: "age_group.csv sha256:<hex>", a width ("5") or "*".
QString recordedHierarchy( const VbasHierarchySettings &settings, const QString &qi )
{
  if ( settings.files.contains( qi ) )
    return QStringLiteral( "%1 sha256:%2" ).arg( QFileInfo( settings.paths.value( qi ) ).fileName(), settings.digests.value( qi ) );
  if ( settings.intervals.contains( qi ) )
    return QString::number( settings.intervals.value( qi ), 'g', QLocale::FloatingPointShortest );
  return QStringLiteral( "*" );
}

//! The digest in a recorded hierarchy file: "age_group.csv sha256:<hex>".
const QRegularExpression &recordedDigest()
{
  static const QRegularExpression digest( QStringLiteral( " sha256:([0-9a-f]{64})$" ) );
  return digest;
}

//! Whether two recorded hierarchies of a QI are the same: the same file bytes (whatever its name), the same width, or both value -> *.
bool sameHierarchy( const QString &recorded, const QString &given )
{
  const QRegularExpressionMatch a = recordedDigest().match( recorded ), b = recordedDigest().match( given );
  if ( a.hasMatch() || b.hasMatch() )
    return a.hasMatch() && b.hasMatch() && a.captured( 1 ) == b.captured( 1 );
  bool okA = false, okB = false;
  const double widthA = recorded.toDouble( &okA ), widthB = given.toDouble( &okB );
  return okA && okB ? widthA == widthB : recorded == given;
}

//! A recorded hierarchy of a QI for a message; file: the file to name instead of the recorded name.
QString describeHierarchy( const QString &recorded, const QString &file = QString() )
{
  const QRegularExpressionMatch digest = recordedDigest().match( recorded );
  bool isWidth = false;
  recorded.toDouble( &isWidth );
  if ( digest.hasMatch() )
    return QObject::tr( "the hierarchy file %1 (sha256 %2...)" ).arg( file.isEmpty() ? recorded.left( digest.capturedStart() ) : file, digest.captured( 1 ).left( 12 ) );
  if ( isWidth )
    return QObject::tr( "intervals of width %1" ).arg( recorded );
  if ( recorded == QLatin1String( "*" ) )
    return QObject::tr( "no hierarchy file or intervals (value -> *)" );
  return QStringLiteral( "'%1'" ).arg( recorded );
}

} // namespace

VbasHierarchySettings VbasHierarchySettings::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QStringList &qiNames,
                                                   QList<VbasLocation> &locations )
{
  VbasHierarchySettings s;
  for ( const QString &path : QgsProcessingParameters::parameterAsFileList( algorithm.parameterDefinition( QStringLiteral( "HIERARCHIES" ) ), parameters, context ) )
  {
    if ( path.isEmpty() )
      continue;
    VbasHierarchyFile file = vbasReadHierarchyFile( path ); // a folder or a FIFO refused as such, before its name is matched
    const QString field = qiNamed( QFileInfo( path ).completeBaseName(), qiNames );
    if ( field.isEmpty() )
      throw QgsProcessingException( QObject::tr( "HIERARCHIES: the file %1 is named after no QI field: name each hierarchy file after its QI field (%2.csv) among %3." )
                                      .arg( path, qiNames.value( 0 ), qiNames.join( QStringLiteral( ", " ) ) ) );
    if ( s.paths.contains( field ) )
      throw QgsProcessingException( QObject::tr( "HIERARCHIES: two files for the QI field %1: %2 and %3." ).arg( field, s.paths.value( field ), path ) );
    s.paths.insert( field, path );
    s.digests.insert( field, file.sha256 );
    s.files.insert( field, std::move( file.hierarchy ) );
    locations << VbasLocation::ofFiles( QStringLiteral( "HIERARCHIES" ), { path } );
  }
  s.intervals = readIntervals( QgsProcessingParameters::parameterAsString( algorithm.parameterDefinition( QStringLiteral( "INTERVALS" ) ), parameters, context ), qiNames, s.files );
  return s;
}

QString VbasHierarchySettings::recorded( const QStringList &qiNames ) const
{
  QStringList entries;
  for ( const QString &qi : qiNames )
    entries << qi + '=' + recordedHierarchy( *this, qi );
  return entries.join( QStringLiteral( "; " ) );
}

void VbasHierarchySettings::checkRecorded( const QString &recorded, const QStringList &qiNames ) const
{
  QStringList patterns;
  for ( const QString &qi : qiNames )
    patterns << QRegularExpression::escape( qi + '=' ) + QStringLiteral( "(.*?)" );
  const QRegularExpressionMatch byQi = QRegularExpression( QStringLiteral( "^" ) + patterns.join( QStringLiteral( "; " ) ) + QStringLiteral( "$" ) ).match( recorded );
  if ( !byQi.hasMatch() )
    throw QgsProcessingException( QObject::tr( "The region lookup's hierarchies '%1' do not give the hierarchy of each QI field of QI_FIELDS in turn (%2): QI_FIELDS must be the release's." )
                                    .arg( recorded, qiNames.join( QStringLiteral( ", " ) ) ) );
  for ( int q = 0; q < qiNames.size(); ++q )
  {
    const QString &qi = qiNames[q];
    const QString released = byQi.captured( q + 1 ), here = recordedHierarchy( *this, qi );
    if ( sameHierarchy( released, here ) )
      continue;
    const bool file = files.contains( qi ) || ( !intervals.contains( qi ) && recordedDigest().match( released ).hasMatch() );
    throw QgsProcessingException( QObject::tr( "%1: the QI field %2 has %3 here, but the region lookup records that the release used %4: give the hierarchy files and intervals of the release "
                                               "(HIERARCHIES, INTERVALS)." )
                                    .arg( file ? QStringLiteral( "HIERARCHIES" ) : QStringLiteral( "INTERVALS" ), qi, describeHierarchy( here, paths.value( qi ) ), describeHierarchy( released ) ) );
  }
}

QSet<QString> VbasHierarchySettings::textFields() const
{
  QSet<QString> fields;
  for ( auto it = files.constBegin(); it != files.constEnd(); ++it )
    fields.insert( it.key() );
  for ( auto it = intervals.constBegin(); it != intervals.constEnd(); ++it )
    fields.insert( it.key() );
  return fields;
}

void VbasHierarchySettings::readFieldTypes( const QgsFields &recordFields, const QList<int> &qis )
{
  releasedAsText.clear();
  for ( const int field : qis )
    releasedAsText.push_back( textFields().contains( recordFields.at( field ).name() ) || recordFields.at( field ).type() == vbasqgis::Field::String );
}

QVariant vbasWrittenLabel( const std::string &label, bool text )
{
  return text || label != "*" ? QVariant( QString::fromStdString( label ) ) : QVariant();
}

QVariant vbasWrittenStar( bool text )
{
  return text ? QVariant( QStringLiteral( "*" ) ) : QVariant();
}

void vbasRefuseLocalSuppression( std::size_t qiCount )
{
  if ( qiCount > vbas::kMaxLocallySuppressedQis )
    throw QgsProcessingException( QObject::tr( "LOCAL_SUPPRESSION takes at most %1 QIs; QI_FIELDS names %2: turn it off or name fewer QIs (it tries every subset of the QIs at every "
                                               "combination of levels, a work that doubles with each QI twice over)." )
                                    .arg( vbas::kMaxLocallySuppressedQis )
                                    .arg( qiCount ) );
}

VbasGeneralizationSettings VbasGeneralizationSettings::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QStringList &qiNames,
                                                             QList<VbasLocation> &locations )
{
  VbasGeneralizationSettings s;
  s.hierarchies = VbasHierarchySettings::read( algorithm, parameters, context, qiNames, locations );
  s.active = QgsProcessingParameters::parameterAsBoolean( algorithm.parameterDefinition( QStringLiteral( "GENERALIZE" ) ), parameters, context ) || s.hierarchies.any();
  s.suppressionLimit = QgsProcessingParameters::parameterAsDouble( algorithm.parameterDefinition( QStringLiteral( "SUPPRESSION_LIMIT" ) ), parameters, context ) / 100.0;
  s.localSuppression = QgsProcessingParameters::parameterAsBoolean( algorithm.parameterDefinition( QStringLiteral( "LOCAL_SUPPRESSION" ) ), parameters, context );
  s.objective = objectiveOf( QgsProcessingParameters::parameterAsEnum( algorithm.parameterDefinition( QStringLiteral( "LOSS_METRIC" ) ), parameters, context ) );
  if ( s.active && s.localSuppression )
    vbasRefuseLocalSuppression( static_cast<std::size_t>( qiNames.size() ) );
  if ( s.active && qiNames.isEmpty() )
    throw QgsProcessingException( QObject::tr( "Generalization needs QIs (QI_FIELDS)." ) );
  return s;
}

void VbasGeneralizationSettings::refuseOtherSteps( const VbasPlacementSettings &placement, const VbasBorderSteps &borderSteps ) const
{
  if ( !active )
    return;
  QStringList steps;
  if ( placement.method == VbasPlacementSettings::Method::Adc )
    steps << QStringLiteral( "METHOD = ADC" );
  if ( borderSteps.contiguous )
    steps << QStringLiteral( "CONTIGUOUS" );
  if ( borderSteps.refineBoundaries )
    steps << QStringLiteral( "REFINE_BOUNDARIES" );
  if ( borderSteps.search )
    steps << QStringLiteral( "SEARCH" );
  if ( !steps.isEmpty() )
    throw QgsProcessingException( QObject::tr( "Generalization (HIERARCHIES, INTERVALS, GENERALIZE) places the sites of each lattice node by balanced density and aggregates by Voronoi cell; "
                                               "it does not combine with %1: turn them off, or generalize without them." )
                                    .arg( steps.join( QStringLiteral( ", " ) ) ) );
}

QString VbasGeneralized::levels() const
{
  QStringList parts;
  for ( int q = 0; q < qiNames.size(); ++q )
    parts << QStringLiteral( "%1 = %2 of %3" ).arg( qiNames[q] ).arg( node().node[static_cast<std::size_t>( q )] ).arg( qis[static_cast<std::size_t>( q )].hierarchy.levels() - 1 );
  return parts.join( QStringLiteral( ", " ) );
}

VbasGeneralized vbasGeneralize( const VbasGeneralizationSettings &settings, const VbasSiteCountSettings &siteCount, const VbasPlacementSettings &placement, const VbasConstraintSettings &constraints,
                                const VbasRegions &regions, const VbasRecords &records, const VbasReleaseSettings &release, const VbasPopulation *population, const QStringList &qiNames,
                                QgsProcessingFeedback *feedback )
{
  VbasGeneralized g;
  g.qiNames = qiNames;
  g.hierarchies = settings.hierarchies.recorded( qiNames );
  g.qis = hierarchiesOf( settings.hierarchies, records, qiNames );
  if ( vbas::latticeSize( g.qis ) > 1e6 )
    throw QgsProcessingException(
      QObject::tr( "The hierarchies give a lattice of %1 nodes; at most 1,000,000 are searched: give some QIs fewer levels." ).arg( vbas::latticeSize( g.qis ), 0, 'f', 0 ) );
  const std::optional<vbas::PopulationCells> cells = cellsOf( population, settings.hierarchies, g, records.encoder, feedback );
  const double n = static_cast<double>( records.histograms.total() );
  const std::size_t regionCount = static_cast<std::size_t>( regions.ids.size() );

  // Each node's site count from its classes (eq. 1-6); each count placed once by balanced density.
  struct Placed
  {
      VbasSiteCount siteCount;
      VbasPlacement placement;
      std::shared_ptr<const vbas::Aggregation> aggregation;
  };
  std::map<std::size_t, Placed> placed;
  QgsProcessingFeedback quiet;
  const vbas::Geography geography = [&]( const vbas::LatticeNode &, const vbas::NodeClasses &classes ) {
    const VbasSiteCount count = vbasSiteCountOf( siteCount, vbas::entropy( classes.classRecords, siteCount.entropyBase ), vbas::maxCombs( classes.categoryCounts ), n, regionCount );
    auto it = placed.find( count.sites );
    if ( it == placed.end() )
    {
      VbasPlacement p = vbasPlaceSites( placement, constraints, regions, records, count.sites, &quiet );
      auto aggregation = std::make_shared<const vbas::Aggregation>( vbas::aggregate( p.regionAggregate, records.histograms ) );
      it = placed.emplace( count.sites, Placed { count, std::move( p ), std::move( aggregation ) } ).first;
    }
    return it->second.aggregation;
  };
  vbas::LatticeSettings lattice;
  useModel( lattice, release, cells );
  lattice.suppressionLimit = settings.suppressionLimit;
  lattice.localSuppression = settings.localSuppression;
  lattice.objective = settings.objective;
  lattice.fixedGeography = siteCount.model == VbasSiteCountSettings::Model::FixedSites || siteCount.model == VbasSiteCountSettings::Model::FixedCutoff;
  VbasCoreProgress progress( feedback );
  g.search = vbas::searchLattice( g.qis, records.encoder.classCodes(), records.histograms, geography, lattice, progress );
  VbasInterrupt::throwIfCanceled( feedback );
  feedback->pushInfo( QObject::tr( "Generalization lattice: %1 nodes; %2 evaluated, %3 skipped below nodes over the suppression limit, %4 left as unable to lose less; %5 site counts placed." )
                        .arg( g.search.latticeSize )
                        .arg( g.search.evaluated )
                        .arg( g.search.prunedBelow )
                        .arg( g.search.prunedByBound )
                        .arg( placed.size() ) );
  if ( !g.search.best )
    throw QgsProcessingException( QObject::tr( "No generalization keeps the suppression limit: at best %1 of the %2 records are in %3, and SUPPRESSION_LIMIT allows %4 %. "
                                               "Raise SUPPRESSION_LIMIT, lower k, or give coarser hierarchies." )
                                    .arg( g.search.leastSuppressed )
                                    .arg( n, 0, 'f', 0 )
                                    .arg( classesBelowK( release ) )
                                    .arg( settings.suppressionLimit * 100 ) );
  for ( auto &[sites, p] : placed )
    if ( p.aggregation == g.node().aggregation )
    {
      g.siteCount = p.siteCount;
      g.placement = std::move( p.placement );
    }
  const std::vector<double> regionPopulation = vbasRegionPopulation( regions, records );
  g.siteCount.population = std::accumulate( regionPopulation.begin(), regionPopulation.end(), 0.0 );
  writeOut( g, records, settings.hierarchies.releasedAsText, release, cells ? &*cells : nullptr );
  const vbas::ValueSuppression &s = g.node().suppression;
  feedback->pushInfo( QObject::tr( "Chosen levels: %1; %2 sites. %3 records in %4: %5 released with %6 values as *, %7 dropped." )
                        .arg( g.levels() )
                        .arg( g.siteCount.sites )
                        .arg( s.smallClassRecords )
                        .arg( classesBelowK( release ) )
                        .arg( s.starredRecords )
                        .arg( s.starredValues )
                        .arg( s.droppedRecords ) );
  return g;
}

VbasGeneralized vbasGeneralizedAt( const VbasHierarchySettings &hierarchies, bool localSuppression, const QString &levels, const VbasRecords &records, const std::vector<std::size_t> &regionAggregate,
                                   const VbasReleaseSettings &release, const VbasPopulation *population, const QStringList &qiNames, QgsProcessingFeedback *feedback )
{
  VbasGeneralized g;
  g.qiNames = qiNames;
  g.hierarchies = hierarchies.recorded( qiNames );
  g.qis = hierarchiesOf( hierarchies, records, qiNames );
  const std::optional<vbas::PopulationCells> cells = cellsOf( population, hierarchies, g, records.encoder, feedback );
  const vbas::LatticeNode node = nodeOf( levels, g.qis, qiNames );
  const std::vector<std::uint32_t> &codes = records.encoder.classCodes();
  const std::vector<std::int64_t> classRecords = records.histograms.classTotals( records.encoder.classCount() );
  const std::vector<std::int64_t> regionRecords = records.histograms.rowTotals();
  const vbas::LossModel model( g.qis, codes, classRecords, regionRecords );
  const auto aggregation = std::make_shared<const vbas::Aggregation>( vbas::aggregate( regionAggregate, records.histograms ) );
  vbas::LatticeSettings settings;
  useModel( settings, release, cells );
  settings.localSuppression = localSuppression;
  g.search.latticeSize = static_cast<std::size_t>( vbas::latticeSize( g.qis ) );
  g.search.evaluated = 1;
  g.search.best = vbas::evaluateNode(
    node, g.qis, codes, classRecords, model, [&aggregation]( const vbas::LatticeNode &, const vbas::NodeClasses & ) { return aggregation; }, settings );
  writeOut( g, records, hierarchies.releasedAsText, release, cells ? &*cells : nullptr );
  return g;
}

QVariantMap vbasLossOutputs( const VbasReleaseLoss &release )
{
  const vbas::NodeLoss &loss = release.loss;
  return { { QStringLiteral( "LOSS_GENERIC_NUE" ), loss.genericNue },
           { QStringLiteral( "LOSS_GENERIC_NUE_NORM" ), loss.genericNueMax > 0 ? loss.genericNue / loss.genericNueMax : 0.0 },
           { QStringLiteral( "LOSS_PREC" ), loss.prec },
           { QStringLiteral( "LOSS_LM" ), loss.lm },
           { QStringLiteral( "LOSS_DM_STAR" ), loss.dmStar },
           { QStringLiteral( "LOSS_GC" ), release.metrics.gc },
           { QStringLiteral( "LOSS_ARE" ), release.metrics.are },
           { QStringLiteral( "RECORDS_GENERALIZED" ), static_cast<qlonglong>( release.metrics.recordsGeneralized ) } };
}

QVariantMap vbasGeneralizationOutputs( const VbasGeneralized &g )
{
  QVariantMap outputs = vbasLossOutputs( { g.node().loss, g.metrics } );
  outputs.insert( { { QStringLiteral( "LEVELS" ), g.levels() },
                    { QStringLiteral( "LATTICE_SIZE" ), static_cast<qlonglong>( g.search.latticeSize ) },
                    { QStringLiteral( "NODES_EVALUATED" ), static_cast<qlonglong>( g.search.evaluated ) },
                    { QStringLiteral( "RECORDS_STARRED" ), static_cast<qlonglong>( g.node().suppression.starredRecords ) },
                    { QStringLiteral( "VALUES_STARRED" ), static_cast<qlonglong>( g.node().suppression.starredValues ) } } );
  return outputs;
}

VbasReleaseLoss vbasReleaseLoss( const VbasRecords &records, const vbas::Release &release )
{
  std::vector<vbas::QiHierarchy> qis;
  for ( std::size_t q = 0; q < records.encoder.qiCount(); ++q )
    qis.push_back( valueOrStar( records.encoder.categoryCount( q ) ) );
  const std::vector<std::uint32_t> &codes = records.encoder.classCodes();
  vbas::NodeRelease paper;
  paper.node.assign( qis.size(), 0 );
  paper.generalization = vbas::generalize( codes, qis, paper.node );
  paper.aggregation = std::make_shared<const vbas::Aggregation>( release.aggregation );
  paper.ecs = vbas::remap( release.aggregation.ecs, paper.generalization.classOf );
  // The release's own suppression, whichever criterion made it (k records, or k-map's residents).
  std::vector<char> dropped( paper.ecs.classes.size(), 0 );
  const vbas::SparseHistograms &ecs = release.aggregation.ecs;
  for ( std::size_t a = 0; a < ecs.rows(); ++a )
    for ( std::size_t e = ecs.offsets[a]; e < ecs.offsets[a + 1]; ++e )
      dropped[paper.ecs.find( a, paper.generalization.classOf[ecs.classes[e]] )] |= release.suppression.suppressed[e];
  paper.suppression = vbas::dropClasses( paper.ecs, dropped, qis.size() );
  const std::vector<std::int64_t> regionRecords = records.histograms.rowTotals();
  const vbas::LossModel model( qis, codes, records.histograms.classTotals( records.encoder.classCount() ), regionRecords );
  const vbas::NodeLoss loss = model.loss( paper.node, paper.ecs, paper.generalization.labels, paper.suppression, release.aggregation.regionAggregateIndex );
  const vbas::WrittenClasses written = vbas::writtenClasses( records.histograms, paper );
  return { loss, vbas::generalizationMetrics( qis, paper.node, codes, records.histograms, written, release.aggregation.regionAggregateIndex ) };
}

QVariantMap vbasGeneralizedAggregateOutputs( const VbasGeneralized &g, const VbasRegions &regions, const vbas::Criterion &criterion, QgsProcessingFeedback *feedback )
{
  const VbasBorderResult bordered = vbasBorderRelease( regions, g.writtenRecords, g.release, g.placement.sites, criterion, VbasBorderSteps(), feedback );
  QVariantMap outputs = vbasAggregateOutputs( bordered, regions, g.writtenRecords, vbasCompactnessOf( regions, g.writtenRecords, bordered.release, bordered.sites ) );
  outputs.remove( QStringLiteral( "SEARCH_MOVES_MADE" ) ); // no search
  return outputs;
}

QList<QPair<QString, QString>> vbasGeneralizationFacts( const VbasGeneralized &g )
{
  const vbas::ValueSuppression &s = g.node().suppression;
  const vbas::NodeLoss &loss = g.node().loss;
  return { { QObject::tr( "Levels (each QI's level of its hierarchy's top)" ), g.levels() },
           { QObject::tr( "Lattice: nodes, evaluated" ), QStringLiteral( "%1, %2" ).arg( g.search.latticeSize ).arg( g.search.evaluated ) },
           { QObject::tr( "Sites for the chosen levels" ), QString::number( g.siteCount.sites ) },
           { QObject::tr( "Records in classes below k" ), QString::number( s.smallClassRecords ) },
           { QObject::tr( "Records released with values as *, values as *" ), QStringLiteral( "%1, %2" ).arg( s.starredRecords ).arg( s.starredValues ) },
           { QObject::tr( "Records dropped" ), QString::number( s.droppedRecords ) },
           { QObject::tr( "Generic non-uniform entropy (bits; normalised)" ),
             QStringLiteral( "%1; %2" ).arg( loss.genericNue, 0, 'f', 1 ).arg( loss.genericNueMax > 0 ? loss.genericNue / loss.genericNueMax : 0.0, 0, 'f', 4 ) },
           { QObject::tr( "Records generalized (a value coarser than its own, or *)" ), QString::number( g.metrics.recordsGeneralized ) },
           { QObject::tr( "Prec, LM, DM*" ), QStringLiteral( "%1, %2, %3" ).arg( loss.prec, 0, 'f', 4 ).arg( loss.lm, 0, 'f', 4 ).arg( loss.dmStar, 0, 'f', 0 ) },
           { QObject::tr( "GC, ARE of count queries (region x value)" ), QStringLiteral( "%1, %2" ).arg( g.metrics.gc, 0, 'f', 4 ).arg( g.metrics.are, 0, 'f', 4 ) } };
}
