#include "steps/vbasgeneralization.h"
#include "steps/vbasadjacency.h"
#include "inputs/vbashierarchyfile.h"
#include "support/vbasinterrupt.h"
#include "support/vbasvaluecodec.h"

#include "site_count.h"

#include <qgsprocessingalgorithm.h>
#include <qgsexception.h>

#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>

namespace
{

//! The text of each code of QI q (NULL as "NULL", as ARX writes a missing value), the key of its hierarchy row.
std::vector<QString> codeTexts( const vbas::QiEncoder &encoder, std::size_t q )
{
  std::vector<QString> texts;
  for ( std::uint32_t code = 0; code < encoder.categoryCount( q ); ++code )
  {
    const std::optional<std::string> &bytes = encoder.value( q, code );
    std::size_t position = 0;
    texts.push_back( bytes ? VbasValueCodec::decode( *bytes, position ).toString() : QStringLiteral( "NULL" ) );
  }
  return texts;
}

//! The distinct texts, in order of first appearance.
std::vector<std::string> distinct( const std::vector<QString> &texts )
{
  std::vector<std::string> values;
  for ( const QString &text : texts )
    if ( std::find( values.begin(), values.end(), text.toStdString() ) == values.end() )
      values.push_back( text.toStdString() );
  return values;
}

//! QI q's hierarchy over its observed values: its file, its intervals, or value -> "*".
vbas::QiHierarchy qiHierarchy( const VbasHierarchySettings &settings, const vbas::QiEncoder &encoder, std::size_t q, const QString &name )
{
  const std::vector<QString> texts = codeTexts( encoder, q );
  vbas::QiHierarchy qi;
  try
  {
    if ( settings.files.contains( name ) )
      qi.hierarchy = settings.files.value( name );
    else if ( settings.intervals.contains( name ) )
      qi.hierarchy = vbas::Hierarchy::intervals( distinct( texts ), settings.intervals.value( name ) );
    else
      qi.hierarchy = vbas::Hierarchy::suppressionOnly( distinct( texts ) );
  }
  catch ( const vbas::HierarchyError &e )
  {
    throw QgsProcessingException( QObject::tr( "INTERVALS: the QI field %1 has no intervals: %2." ).arg( name, QString::fromStdString( e.what() ) ) );
  }
  for ( const QString &text : texts )
  {
    const std::optional<std::size_t> index = qi.hierarchy.find( text.toStdString() );
    if ( !index )
      throw QgsProcessingException( QObject::tr( "HIERARCHIES: the QI field %1 holds the value '%2', which its hierarchy file has no row for: add one (NULL stands for a missing value)." ).arg( name, text ) );
    qi.valueOfCode.push_back( static_cast<std::uint32_t>( *index ) );
  }
  return qi;
}

vbas::Objective objectiveOf( int index )
{
  const vbas::Objective objectives[] = { vbas::Objective::GenericNue, vbas::Objective::Prec, vbas::Objective::Lm, vbas::Objective::DmStar };
  return objectives[std::clamp( index, 0, 3 )];
}

//! INTERVALS: "field=width" pairs separated by commas.
QMap<QString, double> readIntervals( const QString &text, const QStringList &qiNames, const QMap<QString, vbas::Hierarchy> &files )
{
  QMap<QString, double> intervals;
  for ( const QString &pair : text.split( ',', Qt::SkipEmptyParts ) )
  {
    const QString field = pair.section( '=', 0, 0 ).trimmed();
    bool ok = false;
    const double width = pair.section( '=', 1 ).trimmed().toDouble( &ok );
    if ( !pair.contains( '=' ) || !ok || !( width > 0 ) || !std::isfinite( width ) )
      throw QgsProcessingException( QObject::tr( "INTERVALS: '%1' is not field=width with a positive width (age=5, income=10000)." ).arg( pair.trimmed() ) );
    if ( !qiNames.contains( field ) )
      throw QgsProcessingException( QObject::tr( "INTERVALS: %1 is not a QI field (QI_FIELDS: %2)." ).arg( field, qiNames.join( QStringLiteral( ", " ) ) ) );
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

//! The chosen node's release as written, its histograms over the written classes and its metrics.
void writeOut( VbasGeneralized &g, const VbasRecords &records, std::int64_t k )
{
  g.written = vbas::writtenClasses( records.histograms, g.node() );
  g.release = vbas::writtenRelease( g.written, g.node(), k );
  g.writtenRecords.histograms = g.written.regions;
  if ( records.sensitive )
    g.writtenRecords.sensitive = vbas::writtenSensitive( *records.sensitive, records.histograms, g.written );
  g.metrics = vbas::generalizationMetrics( g.qis, g.node().node, records.encoder.classCodes(), records.histograms, g.written, g.node().aggregation->regionAggregate );
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
                                      .arg( qiNames[q] ).arg( level ).arg( top ).arg( qis[static_cast<std::size_t>( q )].hierarchy.levels() - 1 ) );
    node.push_back( level );
    rest = rest.mid( prefix.size() + m.capturedLength() );
  }
  if ( !rest.isEmpty() )
    throw QgsProcessingException( QObject::tr( "The region lookup's qi_levels '%1' name more QIs than QI_FIELDS (%2)." ).arg( levels, qiNames.join( QStringLiteral( ", " ) ) ) );
  return node;
}

} // namespace

VbasHierarchySettings VbasHierarchySettings::read( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QStringList &qiNames,
                                                   QList<VbasLocation> &locations )
{
  VbasHierarchySettings s;
  QMap<QString, QString> paths;
  for ( const QString &path : QgsProcessingParameters::parameterAsFileList( algorithm.parameterDefinition( QStringLiteral( "HIERARCHIES" ) ), parameters, context ) )
  {
    if ( path.isEmpty() )
      continue;
    const QString field = QFileInfo( path ).completeBaseName();
    if ( !qiNames.contains( field ) )
      throw QgsProcessingException( QObject::tr( "HIERARCHIES: the file %1 is named after no QI field: name each hierarchy file after its QI field (%2.csv) among %3." )
                                      .arg( path, qiNames.value( 0 ), qiNames.join( QStringLiteral( ", " ) ) ) );
    if ( paths.contains( field ) )
      throw QgsProcessingException( QObject::tr( "HIERARCHIES: two files for the QI field %1: %2 and %3." ).arg( field, paths.value( field ), path ) );
    paths.insert( field, path );
    s.files.insert( field, vbasReadHierarchyFile( path ) );
    locations << VbasLocation::ofFiles( QStringLiteral( "HIERARCHIES" ), { path } );
  }
  s.intervals = readIntervals( QgsProcessingParameters::parameterAsString( algorithm.parameterDefinition( QStringLiteral( "INTERVALS" ) ), parameters, context ), qiNames, s.files );
  return s;
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

void vbasRefuseLocalSuppression( std::size_t qiCount )
{
  if ( qiCount > vbas::kMaxLocallySuppressedQis )
    throw QgsProcessingException( QObject::tr( "LOCAL_SUPPRESSION takes at most %1 QIs; QI_FIELDS names %2: turn it off or name fewer QIs." ).arg( vbas::kMaxLocallySuppressedQis ).arg( qiCount ) );
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

VbasGeneralized vbasGeneralize( const VbasGeneralizationSettings &settings, const VbasSiteCountSettings &siteCount, const VbasPlacementSettings &placement,
                                const VbasConstraintSettings &constraints, const VbasRegions &regions, const VbasRecords &records, std::int64_t k, const QStringList &qiNames,
                                QgsProcessingFeedback *feedback )
{
  VbasGeneralized g;
  g.qiNames = qiNames;
  g.qis = hierarchiesOf( settings.hierarchies, records, qiNames );
  if ( vbas::latticeSize( g.qis ) > 1e6 )
    throw QgsProcessingException( QObject::tr( "The hierarchies give a lattice of %1 nodes; at most 1,000,000 are searched: give some QIs fewer levels." ).arg( vbas::latticeSize( g.qis ), 0, 'f', 0 ) );
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
      auto aggregation = std::make_shared<const vbas::Aggregation>( vbas::aggregate( p.regionSite, records.histograms ) );
      it = placed.emplace( count.sites, Placed { count, std::move( p ), std::move( aggregation ) } ).first;
    }
    return it->second.aggregation;
  };
  vbas::LatticeSettings lattice;
  lattice.k = k;
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
    throw QgsProcessingException( QObject::tr( "No generalization keeps the suppression limit: at best %1 of the %2 records are in classes below k = %3, and SUPPRESSION_LIMIT allows %4 %. "
                                               "Raise SUPPRESSION_LIMIT, lower k, or give coarser hierarchies." )
                                    .arg( g.search.leastSuppressed )
                                    .arg( n, 0, 'f', 0 )
                                    .arg( k )
                                    .arg( settings.suppressionLimit * 100 ) );
  for ( auto &[sites, p] : placed )
    if ( p.aggregation == g.node().aggregation )
    {
      g.siteCount = p.siteCount;
      g.placement = std::move( p.placement );
    }
  const std::vector<double> population = vbasRegionPopulation( regions, records );
  g.siteCount.population = std::accumulate( population.begin(), population.end(), 0.0 );
  writeOut( g, records, k );
  const vbas::ValueSuppression &s = g.node().suppression;
  feedback->pushInfo( QObject::tr( "Chosen levels: %1; %2 sites. %3 records in classes below k: %4 released with %5 values as *, %6 dropped." )
                        .arg( g.levels() )
                        .arg( g.siteCount.sites )
                        .arg( s.smallClassRecords )
                        .arg( s.starredRecords )
                        .arg( s.starredValues )
                        .arg( s.droppedRecords ) );
  return g;
}

VbasGeneralized vbasGeneralizedAt( const VbasHierarchySettings &hierarchies, bool localSuppression, const QString &levels, const VbasRecords &records,
                                   const std::vector<std::size_t> &regionGroup, std::int64_t k, const QStringList &qiNames )
{
  VbasGeneralized g;
  g.qiNames = qiNames;
  g.qis = hierarchiesOf( hierarchies, records, qiNames );
  const vbas::LatticeNode node = nodeOf( levels, g.qis, qiNames );
  const std::vector<std::uint32_t> &codes = records.encoder.classCodes();
  const std::vector<std::int64_t> classRecords = records.histograms.classTotals( records.encoder.classCount() );
  const std::vector<std::int64_t> regionRecords = records.histograms.rowTotals();
  const vbas::LossModel model( g.qis, codes, classRecords, regionRecords );
  const auto aggregation = std::make_shared<const vbas::Aggregation>( vbas::aggregate( regionGroup, records.histograms ) );
  vbas::LatticeSettings settings;
  settings.k = k;
  settings.localSuppression = localSuppression;
  g.search.latticeSize = static_cast<std::size_t>( vbas::latticeSize( g.qis ) );
  g.search.evaluated = 1;
  g.search.best = vbas::evaluateNode( node, g.qis, codes, classRecords, model, [&aggregation]( const vbas::LatticeNode &, const vbas::NodeClasses & ) { return aggregation; }, settings );
  writeOut( g, records, k );
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

VbasReleaseLoss vbasReleaseLoss( const VbasRecords &records, const vbas::Release &release, std::int64_t k )
{
  std::vector<vbas::QiHierarchy> qis;
  for ( std::size_t q = 0; q < records.encoder.qiCount(); ++q )
  {
    vbas::QiHierarchy qi;
    std::vector<std::string> values;
    for ( std::uint32_t code = 0; code < records.encoder.categoryCount( q ); ++code )
    {
      values.push_back( std::to_string( code ) ); // distinct labels are all the loss needs
      qi.valueOfCode.push_back( code );
    }
    qi.hierarchy = vbas::Hierarchy::suppressionOnly( values );
    qis.push_back( std::move( qi ) );
  }
  const std::vector<std::uint32_t> &codes = records.encoder.classCodes();
  vbas::NodeRelease paper;
  paper.node.assign( qis.size(), 0 );
  paper.generalization = vbas::generalize( codes, qis, paper.node );
  paper.aggregation = std::make_shared<const vbas::Aggregation>( release.aggregation );
  paper.ecs = vbas::remap( release.aggregation.ecs, paper.generalization.classOf );
  paper.suppression = vbas::suppressValues( paper.ecs, paper.generalization.labels, qis.size(), {}, k );
  const std::vector<std::int64_t> regionRecords = records.histograms.rowTotals();
  const vbas::LossModel model( qis, codes, records.histograms.classTotals( records.encoder.classCount() ), regionRecords );
  const vbas::NodeLoss loss = model.loss( paper.node, paper.ecs, paper.generalization.labels, paper.suppression, release.aggregation.regionAggregate );
  const vbas::WrittenClasses written = vbas::writtenClasses( records.histograms, paper );
  return { loss, vbas::generalizationMetrics( qis, paper.node, codes, records.histograms, written, release.aggregation.regionAggregate ) };
}

QVariantMap vbasGeneralizedUnitOutputs( const VbasGeneralized &g, const VbasRegions &regions, std::int64_t k, QgsProcessingFeedback *feedback )
{
  const VbasBorderResult units = vbasBorderRelease( regions, g.writtenRecords, g.release, g.placement.sites, k, VbasBorderSteps(), feedback );
  QVariantMap outputs = vbasUnitOutputs( units, regions, g.writtenRecords, vbasCompactnessOf( regions, g.writtenRecords, units.release, units.sites ) );
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
