#include "plugin/provider/vbasalgorithm.h"
#include "plugin/support/vbasqgiscompat.h"

#include "algorithms/generalization/local_suppression.h"
#include "algorithms/metrics/metrics.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/inputs/vbasrecordreader.h"
#include "plugin/provider/vbasdestination.h"
#include "plugin/pipeline/vbassteps.h"

#include <qgsprocessingoutputs.h>
#include <qgsprocessingparameters.h>

#include <QFileInfo>
#include <QIcon>
#include <QUrl>

#include <cmath>
#include <limits>

namespace
{
QString sPluginDirectory;
constexpr double kMaxInt = std::numeric_limits<int>::max();
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
  return sPluginDirectory + QStringLiteral( "/icons/%1.svg" ).arg( name() );
}

QString VbasAlgorithm::helpUrl() const
{
  // Without the page (a plugin folder assembled without its help), QGIS then shows no Help button
  // rather than one that opens a missing file.
  const QString page = sPluginDirectory + QStringLiteral( "/help/algorithms/%1.html" ).arg( name() );
  return QFileInfo::exists( page ) ? QUrl::fromLocalFile( page ).toString() : QString();
}

void VbasAlgorithm::setPluginDirectory( const QString &directory )
{
  sPluginDirectory = directory;
}

QString VbasAlgorithm::pluginDirectory()
{
  return sPluginDirectory;
}

bool VbasAlgorithm::checkParameterValues( const QVariantMap &parameters, QgsProcessingContext &context, QString *message ) const
{
  try
  {
    vbasCheckFiniteNumbers( *this, parameters, context );
    for ( const QgsProcessingParameterDefinition *destination : destinationParameterDefinitions() )
      vbasCheckDestinationFolder( destination, parameters.value( destination->name() ), context ); // the reason VbasDestination refuses a value
    for ( const QgsProcessingParameterDefinition *definition : parameterDefinitions() )
    {
      const auto *number = dynamic_cast<const QgsProcessingParameterNumber *>( definition );
      const QVariant value = parameters.value( definition->name() );
      const bool whole = number && ( number->dataType() == vbasqgis::NumberType::Integer || number->name() == QLatin1String( "SEED" ) );
      if ( whole && value.isValid() && !value.isNull() && !value.toString().isEmpty() )
        vbasWholeNumber( *this, parameters, definition->name(), context );
    }
  }
  catch ( const QgsProcessingException &e )
  {
    if ( message )
      *message = e.what();
    return false;
  }
  return QgsProcessingAlgorithm::checkParameterValues( parameters, context, message );
}

// ---------------------------------------------------------------------------------------------
// Parameters

void VbasAlgorithm::addRegionsParameters( bool withPoint, Population population )
{
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "REGIONS" ), QObject::tr( "Regions layer" ), vbasqgis::sourceTypes( { vbasqgis::VectorPolygon, vbasqgis::VectorPoint } ) ),
                QObject::tr( "The regions to aggregate, such as census tracts: polygons, or points" ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "REGION_ID" ), QObject::tr( "Region id field" ), QVariant(), QStringLiteral( "REGIONS" ) ),
                QObject::tr( "The field that names each region; the records refer to their region by it" ) );
  if ( withPoint )
    addParameter(
      new QgsProcessingParameterEnum( QStringLiteral( "REGION_POINT" ), QObject::tr( "Region point" ), QStringList() << QObject::tr( "Centroid" ) << QObject::tr( "Point on surface" ), false, 0 ),
      QObject::tr( "The point that stands for a region when sites are placed: its centroid or a point inside it" ), Shown::Advanced );
  if ( population == Population::Weights )
    addParameter( new QgsProcessingParameterField( QStringLiteral( "POPULATION_FIELD" ), QObject::tr( "Population field (empty: the number of records in each region)" ), QVariant(),
                                                   QStringLiteral( "REGIONS" ), vbasqgis::FieldDataType::Numeric, false, true ),
                  QObject::tr( "The regions' population, for balanced density; empty: the records in each region" ) );
  if ( population == Population::Residents )
    addParameter( new QgsProcessingParameterField( QStringLiteral( "POPULATION_FIELD" ), QObject::tr( "Population field (residents of each region; empty: no risk against the population)" ),
                                                   QVariant(), QStringLiteral( "REGIONS" ), vbasqgis::FieldDataType::Numeric, false, true ),
                  QObject::tr( "The residents of each region, for the journalist and marketer risks and the population uniques" ) );
}

void VbasAlgorithm::addRecordsParameters( Qis qis )
{
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "RECORDS" ), QObject::tr( "Records table" ), vbasqgis::sourceTypes( { vbasqgis::Vector } ) ),
                QObject::tr( "The patient records to release: one row a record, or a group of records with a count field" ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "RECORD_REGION" ), QObject::tr( "Region id field of the records (empty: locate the records' points)" ), QVariant(),
                                                 QStringLiteral( "RECORDS" ), vbasqgis::FieldDataType::Any, false, true ),
                QObject::tr( "The records' field holding their region's id; empty: each record's point is located in a region" ) );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "COUNT_FIELD" ), QObject::tr( "Count field (records per row; empty: one)" ), QVariant(), QStringLiteral( "RECORDS" ),
                                                 vbasqgis::FieldDataType::Numeric, false, true ),
                QObject::tr( "How many records each row stands for; empty: a row is one record" ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "OUTSIDE_POINTS" ), QObject::tr( "Located records outside every region" ),
                                                QStringList() << QObject::tr( "Refuse the run" ) << QObject::tr( "Drop them, with a warning" ), false, 0 ),
                QObject::tr( "What to do with located records that fall in no region: refuse the run, or drop them" ), Shown::Advanced );
  auto grouped
    = std::make_unique<QgsProcessingParameterBoolean>( QStringLiteral( "GROUP_IN_SOURCE" ), QObject::tr( "Count the records in their data source (GeoPackage, SQLite, PostgreSQL)" ), false );
  addParameter( grouped.release(), QObject::tr( "Let the database count the records (faster on large tables); the counts are the same" ), Shown::Advanced );
  if ( qis != Qis::None )
    addParameter( new QgsProcessingParameterField( QStringLiteral( "QI_FIELDS" ),
                                                   qis == Qis::Required ? QObject::tr( "Quasi-identifier fields" ) : QObject::tr( "Quasi-identifier fields (for anonymity-driven clustering)" ),
                                                   QVariant(), QStringLiteral( "RECORDS" ), vbasqgis::FieldDataType::Any, true, qis == Qis::Optional ),
                  QObject::tr( "The fields an attacker may know of a patient, such as age group and sex: the quasi-identifiers (QIs)" ) );
}

void VbasAlgorithm::addReleaseParameters()
{
  addParameter( new QgsProcessingParameterField( QStringLiteral( "RELEASE_FIELDS" ), QObject::tr( "Other fields to release (empty: none)" ), QVariant(), QStringLiteral( "RECORDS" ),
                                                 vbasqgis::FieldDataType::Any, true, true ),
                QObject::tr( "Other fields of the records to release, besides the QIs; empty: none" ) );
  auto memory = std::make_unique<QgsProcessingParameterNumber>( QStringLiteral( "SHUFFLE_MEMORY_MB" ), QObject::tr( "Memory for shuffling the release (MB)" ), vbasqgis::NumberType::Integer, 64, false,
                                                                1, 1048576 );
  addParameter( memory.release(), QObject::tr( "Memory for the rows read, kept in a random order until the release is written; beyond it they wait in temporary files beside the release" ),
                Shown::Advanced );
}

void VbasAlgorithm::addSeedParameter( const QString &description, const QString &tooltip )
{
  auto seed = std::make_unique<QgsProcessingParameterNumber>( QStringLiteral( "SEED" ), description, vbasqgis::NumberType::Double, QVariant(), true, 0, 9007199254740991.0 );
  seed->setMetadata( { { QStringLiteral( "widget_wrapper" ), QVariantMap { { QStringLiteral( "decimals" ), 0 } } } } );
  addParameter( seed.release(), tooltip, Shown::Advanced );
  addNumberOutput( QStringLiteral( "SEED" ), QObject::tr( "Seed" ) );
}

void VbasAlgorithm::addSiteCountParameters()
{
  addParameter( new QgsProcessingParameterEnum(
                  QStringLiteral( "MODEL" ), QObject::tr( "Site count model" ),
                  QStringList() << QObject::tr( "Entropy" ) << QObject::tr( "Max combinations" ) << QObject::tr( "Fixed cutoff" ) << QObject::tr( "Fixed number of sites" ), false, 0 ),
                QObject::tr( "How the number of sites is found: from the QIs' entropy (the paper's default), max combinations, a fixed cutoff or a fixed number" ) );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "COEFFICIENTS" ), QObject::tr( "Cutoff coefficients" ),
                                                QStringList() << QObject::tr( "Western Canada (1588, 0.42)" ) << QObject::tr( "Central Canada (1436, 0.43)" )
                                                              << QObject::tr( "Eastern Canada (1978, 0.304)" ) << QObject::tr( "Custom" ),
                                                false, 1 ),
                QObject::tr( "The coefficients of the cutoff model: those the paper fitted for a region of Canada, or your own" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "EXP_B0" ), QObject::tr( "Custom e^B0" ), vbasqgis::NumberType::Double, 1436, false, 0 ),
                QObject::tr( "Your own e^B0 of the cutoff model (used with Custom coefficients)" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "B1" ), QObject::tr( "Custom B1" ), vbasqgis::NumberType::Double, 0.43 ),
                QObject::tr( "Your own B1 of the cutoff model (used with Custom coefficients)" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "FIXED_CUTOFF" ), QObject::tr( "Fixed cutoff (records per site)" ), vbasqgis::NumberType::Double, 1000, false, 0 ),
                QObject::tr( "Records per site (used with the Fixed cutoff model)" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "FIXED_SITES" ), QObject::tr( "Fixed number of sites" ), vbasqgis::NumberType::Integer, 10, false, 1, kMaxInt ),
                QObject::tr( "The number of sites (used with the Fixed number of sites model)" ), Shown::Advanced );
  addNumberOutput( QStringLiteral( "SITES" ), QObject::tr( "Number of sites" ) );
  addNumberOutput( QStringLiteral( "CUTOFF" ), QObject::tr( "Cutoff (records per site)" ) );
  addNumberOutput( QStringLiteral( "ENTROPY" ), QObject::tr( "Entropy (eq. 1)" ) );
  addNumberOutput( QStringLiteral( "MAXCOMBS" ), QObject::tr( "Max combinations (eq. 4)" ) );
  addNumberOutput( QStringLiteral( "RECORDS" ), QObject::tr( "Records" ) );
  addNumberOutput( QStringLiteral( "POPULATION" ), QObject::tr( "Total population on the basis of balanced density" ) );
  auto base = std::make_unique<QgsProcessingParameterNumber>( QStringLiteral( "ENTROPY_BASE" ), QObject::tr( "Logarithm base of the entropy" ), vbasqgis::NumberType::Double, M_E, false, 1.000001 );
  addParameter( base.release(), QObject::tr( "The base of the logarithm in the entropy (e, as in the paper)" ), Shown::Advanced );
}

void VbasAlgorithm::addSitePositionParameter()
{
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "SITE_POSITION" ), QObject::tr( "Site position in its cell" ),
                                                QStringList() << QObject::tr( "Mean (eq. 12-13)" ) << QObject::tr( "Median" ), false, 0 ),
                QObject::tr( "Where a site sits in its cell: the mean of its region points (the paper) or their median" ), Shown::Advanced );
}

void VbasAlgorithm::addPlacementParameters()
{
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "METHOD" ), QObject::tr( "Site location method" ),
                                                QStringList() << QObject::tr( "Balanced density" ) << QObject::tr( "Anonymity-driven clustering (ADC)" ), false, 0 ),
                QObject::tr( "How the sites are placed: balanced density (the paper) or anonymity-driven clustering (ADC)" ) );
  addSitePositionParameter();
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "OBJECTIVE" ), QObject::tr( "ADC objective" ),
                                                QStringList() << QObject::tr( "Largest smallest EC (paper, eq. 14)" ) << QObject::tr( "Fewest suppressed records" ), false, 0 ),
                QObject::tr( "What ADC aims for: the largest smallest class (the paper) or the fewest suppressed records" ), Shown::Advanced );
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "SEEDING" ), QObject::tr( "ADC seeding" ),
                                                QStringList() << QObject::tr( "Balanced density" ) << QObject::tr( "Random region points (SEED)" ), false, 0 ),
                QObject::tr( "Where ADC starts: at the balanced-density sites, or at random region points" ), Shown::Advanced );
  addAdcMovesParameter();
  addNumberOutput( QStringLiteral( "ADC_MOVES_TRIED" ), QObject::tr( "ADC: trial moves" ) );
  addNumberOutput( QStringLiteral( "ADC_MOVES_COMMITTED" ), QObject::tr( "ADC: committed moves" ) );
  addNumberOutput( QStringLiteral( "ADC_ALPHA" ), QObject::tr( "ADC: smallest EC of any cluster at the end (k or more: k)" ) );
  addNumberOutput( QStringLiteral( "ADC_SUPPRESSED" ), QObject::tr( "ADC: records its clusters suppress at k" ) );
  if ( !outputDefinition( QStringLiteral( "ADC_STOP" ) ) )
    addOutput( new QgsProcessingOutputString( QStringLiteral( "ADC_STOP" ), QObject::tr( "ADC: why it stopped" ) ) );
}

void VbasAlgorithm::addAdcMovesParameter()
{
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "MAX_ITERATIONS" ), QObject::tr( "ADC: most trial moves" ), vbasqgis::NumberType::Integer, 10000000, false, 1, kMaxInt ),
                QObject::tr( "The most trial moves ADC makes before it stops" ), Shown::Advanced );
}

void VbasAlgorithm::addKParameter( const QString &tooltip )
{
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "K" ), QObject::tr( "k (smallest released equivalence class)" ), vbasqgis::NumberType::Integer, 5, false, 2, kMaxInt ),
                tooltip.isEmpty() ? QObject::tr( "The fewest records a released group of alike records may hold; smaller groups are suppressed" ) : tooltip );
}

void VbasAlgorithm::addRiskModelParameter()
{
  addParameter( new QgsProcessingParameterEnum( QStringLiteral( "RISK_MODEL" ), QObject::tr( "Risk model" ),
                                                QStringList() << QObject::tr( "k-anonymity: at least k records in every released class" )
                                                              << QObject::tr( "k-map: at least k residents in every released class (needs a population table)" )
                                                              << QObject::tr( "Average risk: at least k records in every released class, and an average risk at most the threshold" ),
                                                false, 0 ),
                QObject::tr( "What every released class must hold: k records, k residents of the population table (k-map), or k records and an average risk within RISK_THRESHOLD" ) );
}

QString VbasAlgorithm::riskModelHelp()
{
  return QObject::tr( "<b>Risk model</b> (RISK_MODEL): what every released class must hold. <i>k-anonymity</i> (the default, as in the paper): at least k records, so that no released "
                      "record's prosecutor risk (an attacker who knows the person is in the records, such as a neighbour who knows of a visit) exceeds 1/k. <i>k-map</i>: at least k "
                      "residents in the population table (POPULATION_TABLE, with a field for every QI), so that no released record's journalist risk (an attacker who starts from the "
                      "population, such as a voters' list) exceeds 1/k; a class may then hold fewer than k records, and far fewer records are suppressed. k-map protects only "
                      "against the second attacker: choose it when the records are a sample of the population whose membership is not known to others. A risk stated by guidance "
                      "becomes k as the smallest k with 1/k at most the risk: 0.09 (low invasion of privacy, Ontario IPC de-identification guidelines) k = 12; 0.075 (medium) "
                      "k = 14; 0.05 (high) k = 20. <i>Average risk</i>: at least k records in every released class (a floor), and the released records' average risk at most the "
                      "Re-identification risk threshold (RISK_THRESHOLD): the journalist's average (1/n times the sum of f/F over the classes) with a population table, the "
                      "prosecutor's (classes/n) without; the riskiest classes are suppressed until it holds. It bounds the share of records an attacker can expect to "
                      "re-identify, not any one record's risk. The release is recounted under the model before it is kept. With generalization, k-map counts each class's "
                      "residents under its labels, a value written * covering every value, and the average risk model cuts every node the search weighs.<br>" );
}

void VbasAlgorithm::addConstraintParameters()
{
  addParameter(
    new QgsProcessingParameterNumber( QStringLiteral( "COMPACTNESS_BUDGET" ), QObject::tr( "Compactness budget (times the start's compactness)" ), vbasqgis::NumberType::Double, 1.0, false, 0 ),
    QObject::tr( "How much less compact the aggregates may become than at the start (1: no less)" ), Shown::Advanced );
  addParameter(
    new QgsProcessingParameterNumber( QStringLiteral( "RECORD_FLOOR" ), QObject::tr( "Record floor (share of the mean aggregate's records)" ), vbasqgis::NumberType::Double, 0.25, false, 0, 1 ),
    QObject::tr( "The fewest records an aggregate may hold, as a share of the mean aggregate's" ), Shown::Advanced );
  addParameter(
    new QgsProcessingParameterNumber( QStringLiteral( "RECORD_CEILING" ), QObject::tr( "Record ceiling (times the mean aggregate's records; 0: none)" ), vbasqgis::NumberType::Double, 0, false, 0 ),
    QObject::tr( "The most records an aggregate may hold, as a multiple of the mean aggregate's; 0: no limit" ), Shown::Advanced );
}

QString VbasAlgorithm::constraintHelp()
{
  return QObject::tr(
    "<b>Compactness budget</b> (COMPACTNESS_BUDGET, default 1): the compactness of the result at most this many times that of the start: the Voronoi cells "
    "of the balanced-density sites for the same number of sites (computed also for ADC's random seeding); in Voronoi aggregation, the Voronoi cells of the given "
    "sites. ADC, REFINE_BOUNDARIES and SEARCH hold it on the mean-point compactness (the population-weighted distances from the region points to their aggregate's "
    "population-weighted mean point), which does not depend on where the sites are. A "
    "positive number; with SEARCH, a budget below what the Voronoi aggregation already uses is refused, with the smallest that can be met "
    "(1 after balanced density).<br>"
    "<b>Record floor</b> (RECORD_FLOOR, default 0.25): every aggregate holds at least this share of the mean aggregate's records, ceil(RECORD_FLOOR x records / aggregates). "
    "From 0 to 1.<br>"
    "<b>Record ceiling</b> (RECORD_CEILING, default 0: none): every aggregate holds at most this many times the mean aggregate's records, floor(RECORD_CEILING x records / aggregates). "
    "Without it, fewer records are suppressed partly by gathering the records of dense areas into a few large aggregates, which generalises their geography "
    "more (NUE rises); a ceiling of 3 to 4 keeps the aggregates near the sizes balanced density gives. 0, or at least 1.<br>"
    "Every step that optimises the aggregates keeps both (ADC, REFINE_BOUNDARIES and SEARCH; CONTIGUOUS does not, it is made whatever it costs), and keeps every "
    "aggregate: a move is refused when it empties an aggregate, cuts one in two, raises the number of aggregates releasing nothing, takes the compactness above the cap or an "
    "aggregate below the floor. A constraint the start already breaks is never made worse; for REFINE_BOUNDARIES and SEARCH, the floor and ceiling are first "
    "lowered and raised to the smallest and largest aggregate of the Voronoi aggregation where it breaks them. SEARCH releases the best partition that keeps every "
    "bound and suppresses no more than the Voronoi aggregation, or else the Voronoi aggregation itself (a warning says so).<br>" );
}

void VbasAlgorithm::addContiguityParameter()
{
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "CONTIGUOUS" ), QObject::tr( "Contiguous aggregates (reassign detached parts)" ), false ),
                QObject::tr( "Join each detached part of an aggregate to a neighbouring aggregate" ) );
}

QString VbasAlgorithm::contiguityHelp()
{
  return QObject::tr( "<b>Contiguous aggregates</b> (CONTIGUOUS): a region joins the Voronoi cell of its region point, so an aggregate may come in detached parts, or enclose a region of "
                      "another aggregate. When checked, every aggregate keeps its main part (the most records; ties: the most regions, then the part holding the first region in "
                      "layer order), and each other part joins the neighbouring aggregate it shares the longest border with (ties: the lower site), unless that would suppress more "
                      "records; parts are taken in layer order of their first region, again until none moves. A border is a stretch of shared boundary of positive length (regions "
                      "touching at a corner are not neighbours), measured in the working CRS; a part with no neighbouring aggregate stays. The log gives the parts and the suppressed "
                      "records before and after. No effect on a point regions layer. Default: off, the paper's aggregation.<br>" );
}

void VbasAlgorithm::addRefinementParameter()
{
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "REFINE_BOUNDARIES" ), QObject::tr( "Refine boundaries (move single regions to lower suppression)" ), false ),
                QObject::tr( "Move single border regions to a neighbouring aggregate where fewer records are then suppressed" ) );
}

QString VbasAlgorithm::refinementHelp()
{
  return QObject::tr( "<b>Refine boundaries</b> (REFINE_BOUNDARIES): after the aggregation (and CONTIGUOUS, when checked), single regions on the border of two aggregates move "
                      "to the neighbouring aggregate when that strictly lowers the records suppressed in the two aggregates together. Regions are taken in layer order, in passes "
                      "until one moves nothing; a region goes to the neighbouring aggregate with the largest drop (ties: the longest shared border, then the lower site), as long "
                      "as its own aggregate keeps another region and does not fall into more connected parts. An aggregate is then no longer exactly the Voronoi cell of its "
                      "site: LOOKUP's site_id is the site of the region's new aggregate, and VORONOI still shows the cells. The log gives the moves and the suppressed records "
                      "before and after. No effect on a point regions layer. Default: off, the paper's aggregation.<br>" );
}

void VbasAlgorithm::addHierarchyParameters()
{
  auto hierarchies = std::make_unique<QgsProcessingParameterMultipleLayers>( QStringLiteral( "HIERARCHIES" ), QObject::tr( "Generalization hierarchies (ARX CSV files, one per QI, named after it)" ),
                                                                             vbasqgis::File, QVariant(), true );
  addParameter( hierarchies.release(), QObject::tr( "Hierarchy files in ARX's format, one for each QI, named after its field, to generalize the QIs" ) );
  addParameter( new QgsProcessingParameterString( QStringLiteral( "INTERVALS" ), QObject::tr( "Interval hierarchies (field=width, comma separated)" ), QVariant(), false, true ),
                QObject::tr( "Built-in hierarchies for numbers, as field=width pairs such as age=5" ) );
}

void VbasAlgorithm::addLocalSuppressionParameter()
{
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "LOCAL_SUPPRESSION" ), QObject::tr( "Local suppression: write single values as * instead of dropping records" ), true ),
                QObject::tr( "Write single QI values as * instead of dropping whole records" ) );
}

void VbasAlgorithm::addGeneralizationParameters( bool withSwitch )
{
  addHierarchyParameters();
  if ( withSwitch )
    addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "GENERALIZE" ), QObject::tr( "Generalize the QIs (every QI without a hierarchy: value -> *)" ), false ),
                  QObject::tr( "Release the QIs at coarser levels where that suppresses fewer records" ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "SUPPRESSION_LIMIT" ), QObject::tr( "Suppression limit (% of the records)" ), vbasqgis::NumberType::Double, 5, false, 0, 100 ),
                QObject::tr( "The most records, in %, that generalization may leave in groups smaller than k" ), Shown::Advanced );
  addLocalSuppressionParameter();
  addParameter( new QgsProcessingParameterEnum(
                  QStringLiteral( "LOSS_METRIC" ), QObject::tr( "Information loss to minimise" ),
                  QStringList() << QObject::tr( "Generic non-uniform entropy" ) << QObject::tr( "Precision (Prec)" ) << QObject::tr( "Loss metric (LM / NCP)" ) << QObject::tr( "DM*" ), false, 0 ),
                QObject::tr( "The information loss that generalization keeps smallest" ), Shown::Advanced );
  addGeneralizationOutputs();
}

void VbasAlgorithm::addGeneralizationOutputs()
{
  addOutput( new QgsProcessingOutputString( QStringLiteral( "LEVELS" ), QObject::tr( "Generalization: the level of each QI" ) ) );
  addNumberOutput( QStringLiteral( "LATTICE_SIZE" ), QObject::tr( "Generalization: lattice nodes" ) );
  addNumberOutput( QStringLiteral( "NODES_EVALUATED" ), QObject::tr( "Generalization: nodes evaluated" ) );
  addNumberOutput( QStringLiteral( "RECORDS_STARRED" ), QObject::tr( "Generalization: records released with a value as *" ) );
  addNumberOutput( QStringLiteral( "VALUES_STARRED" ), QObject::tr( "Generalization: values written as *" ) );
  addLossOutputs();
}

void VbasAlgorithm::addLossOutputs()
{
  addNumberOutput( QStringLiteral( "LOSS_GENERIC_NUE" ), QObject::tr( "Generalization: generic non-uniform entropy (bits)" ) );
  addNumberOutput( QStringLiteral( "LOSS_GENERIC_NUE_NORM" ), QObject::tr( "Generalization: generic non-uniform entropy, normalised" ) );
  addNumberOutput( QStringLiteral( "LOSS_PREC" ), QObject::tr( "Generalization: precision (Prec)" ) );
  addNumberOutput( QStringLiteral( "LOSS_LM" ), QObject::tr( "Generalization: loss metric (LM / NCP)" ) );
  addNumberOutput( QStringLiteral( "LOSS_DM_STAR" ), QObject::tr( "Generalization: DM*" ) );
  addNumberOutput( QStringLiteral( "LOSS_GC" ), QObject::tr( "Generalization: generalization cost (GC)" ) );
  addNumberOutput( QStringLiteral( "LOSS_ARE" ), QObject::tr( "Generalization: average relative error of count queries (ARE)" ) );
  addNumberOutput( QStringLiteral( "RECORDS_GENERALIZED" ), QObject::tr( "Generalization: records released with a value coarser than their own" ) );
}

QString VbasAlgorithm::hierarchyHelp()
{
  return QObject::tr( "<b>Generalization hierarchies</b> (HIERARCHIES): hierarchy files in ARX's format, one per QI, named after its field (age_group.csv for the QI field age_group): "
                      "one row per value, the value then its label at level 1, 2, ..., the last level usually *, separated by ';' (double quotes and UTF-8 as ARX writes them; "
                      "NULL stands for a missing value). Every value of the QI needs a row; a file with ragged rows, an empty label, a value twice, or a level that is not a coarsening "
                      "of the one below is refused, naming the line and the value. Files made in ARX load unchanged.<br>"
                      "<b>Interval hierarchies</b> (INTERVALS): built-in hierarchies for numbers and bands, as field=width pairs (age=5, income=10000): level 1 groups the values "
                      "(23, 23.5, bands such as 20-24, open bands such as 85+) into intervals of that width, labelled [20, 25), each level doubles the width, the last is *.<br>" );
}

QString VbasAlgorithm::generalizationHelp( bool withSwitch )
{
  return hierarchyHelp()
         + ( withSwitch ? QObject::tr( "<b>Generalize the QIs</b> (GENERALIZE): with a hierarchy or intervals given, or this on, the run generalizes (default: off, the paper's method). " )
                        : QString() )
         + QObject::tr( "<b>The search</b>: the run searches the lattice of levels (one level per QI; "
                        "every QI without a hierarchy can be written as its value or as *) for the node that loses the least information and keeps the suppression limit, and "
                        "releases the generalized values. For each node the site count follows from its generalized classes (the site count model: their entropy or MaxCombs) and "
                        "balanced density places the sites; with a fixed cutoff or a fixed number of sites the geography is the same at every node and nodes below one over the "
                        "limit are skipped. The log gives the lattice size, the nodes evaluated and skipped, the levels chosen and the values starred. Generalization does not "
                        "combine with ADC, CONTIGUOUS, REFINE_BOUNDARIES or SEARCH.<br>"
                        "<b>Suppression limit</b> (SUPPRESSION_LIMIT): the most records, in % (default 5), that may be in equivalence classes below k at the chosen node (ARX's "
                        "suppression limit); they are written with values as * or dropped.<br>" )
         + localSuppressionHelp()
         + QObject::tr( "<b>Information loss to minimise</b> (LOSS_METRIC): generic non-uniform entropy (Prasser et al.: generalization and suppression on one scale; default), "
                        "precision (Prec), the loss metric (LM, also NCP) or DM*; each over the QIs and the geography (region, aggregate, suppressed).<br>" )
         + generalizationOutputsHelp()
         + QObject::tr( "Without generalization, the loss outputs measure the paper's release (every QI at its values, the classes below k dropped), so that both compare on one scale.<br>" );
}

QString VbasAlgorithm::localSuppressionHelp()
{
  return QObject::tr( "<b>Local suppression</b> (LOCAL_SUPPRESSION): instead of dropping a record whose class is below k, write the fewest, least informative of its QI values as * "
                      "(it keeps its aggregate and its other values); records whose values agree once starred form a class of their own, released when it holds k records; only "
                      "records that reach no such class are dropped (default on). A QI with a hierarchy file or intervals is released as text and writes *; a QI without one keeps "
                      "its field type and writes * as text in a text field and as NULL in any other (a NULL there is then a class of at least k records as written). It takes at most "
                      "%1 QIs: its work doubles with each QI twice over (8 QIs on 100,000 records take minutes).<br>" )
    .arg( vbas::kMaxLocallySuppressedQis );
}

QString VbasAlgorithm::generalizationOutputsHelp()
{
  return QObject::tr( "<b>LEVELS</b>: the level of each QI and its hierarchy's top. <b>LATTICE_SIZE</b>, <b>NODES_EVALUATED</b>: the lattice's nodes and those evaluated. "
                      "<b>RECORDS_STARRED</b>, <b>VALUES_STARRED</b>: records released with a value as *, and the values written as *. <b>LOSS_GENERIC_NUE</b> (bits), "
                      "<b>LOSS_GENERIC_NUE_NORM</b> (0 the input, 1 everything suppressed), <b>LOSS_PREC</b>, <b>LOSS_LM</b>, <b>LOSS_DM_STAR</b>: the information "
                      "loss of the levels by every measure, over the QIs and the geography. <b>LOSS_GC</b>: the generalization cost, the share of the records' QI values not written as they were "
                      "(coarser, *, or in a dropped record). <b>LOSS_ARE</b>: the average relative error of the count queries 'records of region r with value v of QI q' "
                      "(every pair with records), each estimated from the release by spreading the released records evenly over their aggregate's regions and the values under "
                      "their label. <b>RECORDS_GENERALIZED</b>: records released with a QI value coarser than their own (a label over several values, or *).<br>" );
}

void VbasAlgorithm::addSearchParameters()
{
  addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "SEARCH" ), QObject::tr( "Search for fewer suppressed records at the same number of aggregates" ), false ),
                QObject::tr( "Search for aggregates that suppress fewer records, with as many aggregates" ) );
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "TIME_LIMIT" ), QObject::tr( "Search time limit (s)" ), vbasqgis::NumberType::Double, 30, false, 0.1, 86400 ),
                QObject::tr( "How many seconds the search runs" ), Shown::Advanced );
  auto moves
    = std::make_unique<QgsProcessingParameterNumber>( QStringLiteral( "SEARCH_MOVES" ), QObject::tr( "Search: most trial moves (0: no limit)" ), vbasqgis::NumberType::Integer, 0, false, 0, kMaxInt );
  addParameter( moves.release(), QObject::tr( "Stop the search after this many trials (0: only the time limit stops it)" ), Shown::Advanced );
  addNumberOutput( QStringLiteral( "SEARCH_MOVES_MADE" ), QObject::tr( "Search: trial moves made" ) );
}

QString VbasAlgorithm::searchHelp()
{
  return QObject::tr(
    "<b>Search</b> (SEARCH): after the aggregation, looks for a partition of the regions into the same number of aggregates that suppresses fewer records. "
    "It makes the aggregates contiguous first (as CONTIGUOUS), then tries, again and again, moving a region to a neighbouring aggregate, redrawing the border "
    "between two neighbouring aggregates, merging two neighbouring aggregates while splitting another in two, and moving a site to the mean of its "
    "aggregate's region points; a trial is kept when it suppresses no more records than the partition held a while ago (late acceptance), and the best "
    "partition seen is the result. It counts what RISK_MODEL suppresses: under the average risk model, the riskiest classes cut as well as those below k. "
    "Every trial keeps the constraints: no aggregate emptied or cut in two, the compactness budget, the record floor, and no "
    "more aggregates releasing nothing than the plain aggregation (under the average risk model, counted below its floor of k). The log gives the suppressed records at the start and at the end, the trials of each kind "
    "and their cost. Default: off, the paper's aggregation.<br>"
    "<b>Search time limit</b> (TIME_LIMIT): seconds the search runs (default 30); it returns the best partition found by then. The progress bar shows the "
    "suppressed records and the compactness as it goes; Cancel stops the whole run, writing nothing.<br>"
    "<b>Search: most trial moves</b> (SEARCH_MOVES, advanced): stops the search after this many trials (0: only TIME_LIMIT stops it). Where a time limit "
    "stops depends on the machine; the same SEED with SEARCH_MOVES set to a run's SEARCH_MOVES_MADE repeats that run's partition exactly.<br>"
    "<b>SEARCH_MOVES_MADE</b>: the search's trial moves (0 without SEARCH).<br>" );
}

void VbasAlgorithm::addAggregationOutputs()
{
  // Created in the dialog, so that a first Run puts the aggregates, styled, on the map.
  addOptionalSink( QStringLiteral( "AGGREGATED" ), QObject::tr( "Aggregated regions" ), vbasqgis::VectorPolygon, QObject::tr( "The aggregated regions, as polygons with their counts" ),
                   InDialog::Created );
  addOptionalSink( QStringLiteral( "LOOKUP" ), QObject::tr( "Region lookup" ), vbasqgis::Vector, QObject::tr( "Which aggregate each region belongs to" ) );
  addParameter( new VbasSinkParameter( QStringLiteral( "ANONYMIZED" ), QObject::tr( "Anonymized records" ), vbasqgis::Vector ),
                QObject::tr( "The release: a row for each released record, with its aggregate in place of its region" ) );
  addOptionalSink( QStringLiteral( "VORONOI" ), QObject::tr( "Voronoi cells" ), vbasqgis::VectorPolygon, QObject::tr( "The Voronoi cells of the sites" ) );
  addNumberOutput( QStringLiteral( "AGGREGATES" ), QObject::tr( "Aggregated regions" ) );
  addNumberOutput( QStringLiteral( "RELEASED" ), QObject::tr( "Released records" ) );
  addNumberOutput( QStringLiteral( "SUPPRESSED" ), QObject::tr( "Suppressed records" ) );
  addNumberOutput( QStringLiteral( "UNITS_IN_PIECES" ), QObject::tr( "Aggregates in more than one piece" ) );
  addNumberOutput( QStringLiteral( "UNITS_RELEASING_NOTHING" ), QObject::tr( "Aggregates releasing no record" ) );
  addNumberOutput( QStringLiteral( "COMPACTNESS_USED" ), QObject::tr( "Compactness (eq. 20) as a share of the start's" ) );
  addNumberOutput( QStringLiteral( "MEAN_POINT_COMPACTNESS" ), QObject::tr( "Mean-point compactness" ) );
  addNumberOutput( QStringLiteral( "MEAN_POINT_COMPACTNESS_USED" ), QObject::tr( "Mean-point compactness as a share of the start's" ) );
}

void VbasAlgorithm::addEvaluationOutputs()
{
  addOptionalSink( QStringLiteral( "EVALUATION" ), QObject::tr( "Evaluation" ), vbasqgis::Vector, QObject::tr( "The release's privacy and information-loss measures, as one row" ) );
  for ( const vbas::Metric &metric : vbas::metrics() )
    if ( metric.output )
      addNumberOutput( QString::fromLatin1( metric.output ), QObject::tr( metric.label ) );
}

void VbasAlgorithm::addEvaluationParameters()
{
  addParameter( new QgsProcessingParameterField( QStringLiteral( "SENSITIVE_FIELD" ), QObject::tr( "Sensitive field (for CM, l-diversity and t-closeness)" ), QVariant(), QStringLiteral( "RECORDS" ),
                                                 vbasqgis::FieldDataType::Any, false, true ),
                QObject::tr( "The field to keep from being disclosed, such as a diagnosis, for CM, l-diversity and t-closeness; empty: none" ) );
  addRiskThresholdParameter();
}

void VbasAlgorithm::addRiskThresholdParameter()
{
  addParameter( new QgsProcessingParameterNumber( QStringLiteral( "RISK_THRESHOLD" ), QObject::tr( "Re-identification risk threshold" ), vbasqgis::NumberType::Double, 0.2, false, 0, 1 ),
                QObject::tr( "A record whose risk is above this counts as at risk (0.2: one in five); the average risk model's bound" ) );
}

void VbasAlgorithm::addPopulationTableParameters( Shown shown, bool withRaise )
{
  addParameter( new QgsProcessingParameterFeatureSource( QStringLiteral( "POPULATION_TABLE" ), QObject::tr( "Population table (residents per region and QI values)" ),
                                                         vbasqgis::sourceTypes( { vbasqgis::Vector } ), QVariant(), true ),
                QObject::tr( "A census table: the residents of each region and QI values, for the risk against the population; empty: none" ), shown );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "POPULATION_REGION" ), QObject::tr( "Region id field of the population table" ), QVariant(), QStringLiteral( "POPULATION_TABLE" ),
                                                 vbasqgis::FieldDataType::Any, false, true ),
                QObject::tr( "The population table's field holding each row's region id" ), shown );
  addParameter( new QgsProcessingParameterField( QStringLiteral( "POPULATION_COUNT" ), QObject::tr( "Count field of the population table" ), QVariant(), QStringLiteral( "POPULATION_TABLE" ),
                                                 vbasqgis::FieldDataType::Any, false, true ),
                QObject::tr( "The population table's field holding each row's residents" ), shown );
  if ( withRaise )
    addParameter( new QgsProcessingParameterBoolean( QStringLiteral( "POPULATION_RAISE" ), QObject::tr( "Raise population cells to their records" ), false ),
                  QObject::tr( "A cell with fewer residents than records is raised to the records (and counted in the log) instead of refused" ), Shown::Advanced );
}

void VbasAlgorithm::addReportOutput()
{
  // Created in the dialog, so that a first Run shows the report (docs/quickstart.md, In QGIS desktop).
  addParameter( new VbasFileDestinationParameter( QStringLiteral( "REPORT" ), QObject::tr( "Report" ), QObject::tr( "HTML files (*.html *.HTML)" ), QVariant(), true, true ),
                QObject::tr( "An HTML report of the release: its maps, its measures and whether it meets k" ) );
}

void VbasAlgorithm::addOptionalSink( const QString &name, const QString &description, vbasqgis::SourceType type, const QString &tooltip, InDialog inDialog )
{
  addParameter( new VbasSinkParameter( name, description, type, QVariant(), true, inDialog == InDialog::Created ), tooltip );
}

void VbasAlgorithm::addParameter( QgsProcessingParameterDefinition *definition, const QString &tooltip, Shown shown )
{
  definition->setHelp( tooltip );
  if ( shown == Shown::Advanced )
    definition->setFlags( definition->flags() | vbasqgis::ParameterAdvanced );
  QgsProcessingAlgorithm::addParameter( definition );
}

void VbasAlgorithm::addNumberOutput( const QString &name, const QString &description )
{
  if ( !outputDefinition( name ) )
    addOutput( new QgsProcessingOutputNumber( name, description ) );
}

// ---------------------------------------------------------------------------------------------
// Help

QString VbasAlgorithm::regionsHelp( bool withPoint, Population population )
{
  QString help = QObject::tr(
    "<b>Regions layer</b>: polygons (or points) of the initial regions: census tracts, dissemination areas, postal codes. Polygons must not overlap (more than 1% of the smaller one's area is refused, naming both). "
    "A geographic CRS is fine: distances are then computed in the WGS 84 UTM zone of the layer's centre.<br>"
    "<b>Region id field</b>: unique id of each region, text or a number; the records refer to it.<br>" );
  if ( withPoint )
    help += QObject::tr( "<b>Region point</b>: the point that stands for a polygon: its centroid (the paper's choice) or a point on its surface (always inside). A point layer uses its points.<br>" );
  if ( population == Population::Weights )
    help += QObject::tr(
      "<b>Population field</b>: optional population of each region (residents, when the records are a sample of them), for balanced density. Empty: the number of records in each region. A NULL population is refused (give 0). "
      "The site count always divides the number of records. Where the release is evaluated (Anonymize), the same field is read as the residents of each region for the risk "
      "against the population, as in Evaluate release, unless a population table (POPULATION_TABLE) gives them.<br>" );
  if ( population == Population::Residents )
    help += QObject::tr( "<b>Population field</b>: optional residents of each region (the population the records were drawn from), for the risk against the population: the journalist "
                         "and marketer risks and the population uniques. Empty: those are not measured. A NULL is refused (give 0); an aggregated region with fewer residents "
                         "than records leaves them out with a warning.<br>" );
  return help;
}

QString VbasAlgorithm::recordsHelp( Qis qis )
{
  QString help = QObject::tr( "<b>Records table</b>: one row per patient (any table: CSV, GeoPackage, PostGIS). Its geometry is read only to locate records that have no region "
                              "id field, and is never released.<br>"
                              "<b>Region id field of the records</b> (RECORD_REGION): the region of each record; every value must be an id of the regions layer, matched as text. "
                              "Empty: the records are geocoded points (home addresses, say), and each gets the region its point lies in, by point in polygon against the regions "
                              "layer (polygons; points in any CRS). A point on the boundary of several regions goes to the one with the lowest id (numbers compared as numbers, "
                              "text by its characters).<br>"
                              "<b>Located records outside every region</b> (OUTSIDE_POINTS): records whose point lies outside every region, or that have no point, refuse the run "
                              "(default; the message gives how many and names a few rows, never their coordinates), or are dropped with a warning that counts them: they are "
                              "neither released nor counted as suppressed.<br>"
                              "<b>Count the records in their data source</b> (GROUP_IN_SOURCE, advanced, default off): when the records are a whole GeoPackage or SQLite "
                              "table, or a PostgreSQL table, with one whole-number feature id column, the first pass is one GROUP BY region and QIs that the source runs "
                              "(summing the count field). It groups by the values exactly as stored (SQLite: storage class and bytes under the binary collation; PostgreSQL: "
                              "the text QGIS reads under the \"C\" collation, reals by their binary form), never by a column's collation or type (NOCASE, RTRIM, BLOB, citext, "
                              "timestamps), and reads each distinct value back through the layer's own QGIS provider, so every column type counts as row by row. Any "
                              "other table, a selection, a filter, a layer being edited, a count the source finds invalid, or any failure of the query: the records are "
                              "counted row by row, as when it is off, with the reason in the log. Off by default: grouping by the exact values makes it slower than "
                              "reading row by row on a GeoPackage or a PostgreSQL server on the same machine (about 2 and 3 times the counting pass); turn it on for a "
                              "database at the other end of a slow network, where sending groups instead of rows may pay. An "
                              "algorithm that writes a release (ANONYMIZED) always counts row by row: it writes the release from the rows read, which a count by the source does not give.<br>" );
  if ( qis == Qis::Optional )
    help += QObject::tr( "<b>Quasi-identifier fields</b>: needed by anonymity-driven clustering only (see below).<br>" );
  if ( qis != Qis::None )
    help += QObject::tr(
      "<b>Quasi-identifier fields</b>: the fields an attacker may know (age group, sex, ...), each listed once. Records with equal values on all of them form an equivalence class (EC); "
      "values are compared exactly, whatever their type (text, numbers, dates and times, booleans, binary, lists, maps). NULL is a category of its own. "
      "Text holding U+FFFD (the mark of bytes that were not valid UTF-8) is refused.<br>" );
  help += QObject::tr(
            "<b>Count field</b>: optional number of identical records a row stands for (pre-tabulated data): a whole number from 0 to %1 (as text: plain digits). NULL, negative, fractional or "
            "larger counts are refused with the row and the value.<br>" )
            .arg( kVbasMaxCount );
  return help;
}

QString VbasAlgorithm::releaseHelp()
{
  return QObject::tr( "<b>Other fields to release</b> (RELEASE_FIELDS): the release always holds the QIs, the sensitive field (SENSITIVE_FIELD, when given) and the count field (when "
                      "the rows carry counts), and aggregate_id; any other field leaves only when named here. Empty: none. Neither the region id nor the table's feature id "
                      "column can be named. A named field is refused, and nothing is written, when it carries finer geography than the release (each original region's "
                      "released records hold one value of it and some aggregate joins regions with different values: a copy of the region id, a tract, a ZIP code, a county "
                      "across aggregates) or when it is (nearly) unique per record (about 90% or more different values, judged from 20 released rows: a patient id). Declare "
                      "such a field a QI instead (QI_FIELDS), so that k-anonymity covers it. The log names the released fields (never their values).<br>"
                      "<b>Release order</b>: the released rows are written in a uniformly random order drawn from the operating system's random source, fresh at every run, "
                      "recorded nowhere and never drawn from SEED, so the order of the input (a table sorted by area, say) says nothing, whoever holds the seed; it cannot be "
                      "repeated.<br>"
                      "<b>Memory for shuffling the release</b> (SHUFFLE_MEMORY_MB): the records are read once, and the rows read are kept for the release in a random "
                      "order, in this much memory; beyond it, in temporary files beside the release that only you can read, removed when the run ends. An edit made to "
                      "the records once they are read reaches no output.<br>" );
}

QString VbasAlgorithm::siteCountHelp()
{
  return QObject::tr( "<b>Site count model</b>: Entropy (eq. 1-3) or Max combinations (eq. 4-6) set the cutoff e^B0 * X^B1, the records per site; or give a fixed cutoff, or a fixed number of sites. "
                      "Sites = R(records / cutoff), between 1 and the number of regions; the log warns when the number of regions caps it.<br>"
                      "<b>Cutoff coefficients</b>: e^B0 and B1 of the paper's Table 1 for Western, Central or Eastern Canada, or Custom.<br>"
                      "<b>Custom e^B0</b>, <b>Custom B1</b>: the coefficients used with Custom.<br>"
                      "<b>Fixed cutoff</b>: records per site, used by the Fixed cutoff model.<br>"
                      "<b>Fixed number of sites</b>: used by the Fixed number of sites model.<br>"
                      "<b>Logarithm base of the entropy</b> (advanced): e by default.<br>" );
}

QString VbasAlgorithm::placementHelp()
{
  return QObject::tr(
    "<b>Site location method</b>: Balanced density (paper sec. 3.2.1): rows of equal population from bottom to top (eq. 7-9), cells of equal population from left to right (eq. 10-11), one site per cell. "
    "Anonymity-driven clustering (ADC, paper sec. 3.2.2): starts from the seeding's sites and moves them, one trial at a time, toward the region points that hold members of "
    "the clusters' smallest equivalence classes (eq. 18-19: the mean of those points in the cluster's neighbourhood, weighted by their members); a move is kept only when "
    "the objective improves and the constraints hold (see Compactness budget): it never empties a cluster, so every site keeps an aggregate. It needs the QIs and k, and costs more time; it lowers suppression where the sites of balanced density leave small classes behind.<br>"
    "<b>Site position in its cell</b>: the mean of the cell's region points, as eq. 12-13 are written, or their median (balanced density, and ADC's balanced-density seeding).<br>"
    "<b>ADC objective</b>: Largest smallest EC (the paper's eq. 14: f = alpha |R| - |R_alpha|, alpha the smallest EC of any cluster; it stops at alpha >= k, or when it "
    "cannot raise the clusters at alpha: always when one QI combination has fewer than k records in the whole table, and often sooner, as one move rarely clears every class of alpha records from a cluster), or Fewest suppressed records (beyond the "
    "paper: a move is kept when fewer records are suppressed, or as many and the region points are nearer their sites (compactness, eq. 20); it tries every class "
    "below k of every cluster with suppressed records; under the average risk model it counts the riskiest classes cut too, and tries them as well).<br>"
    "<b>ADC seeding</b>: the sites ADC starts from: balanced density (the paper's advice), or distinct region points drawn at random from SEED.<br>"
    "<b>ADC: most trial moves</b> (MAX_ITERATIONS, advanced): ADC stops after this many trial moves with the best sites so far, and the log says so.<br>" );
}

QString VbasAlgorithm::adcOutputsHelp()
{
  return QObject::tr(
    "<b>ADC_MOVES_TRIED</b>, <b>ADC_MOVES_COMMITTED</b>: ADC's trial and kept moves (0 with balanced density). <b>ADC_ALPHA</b>: the smallest EC of any of its clusters at "
    "the end, k or more given as k. <b>ADC_SUPPRESSED</b>: the records its clusters leave suppressed, as the release does: in classes below k (under RISK_MODEL k-map, below k residents), and under the average risk model also in the riskiest classes cut. <b>ADC_STOP</b>: reached k, no improvement (a local optimum), "
    "max iterations, or not run.<br>" );
}

QString VbasAlgorithm::aggregationOutputsHelp() const
{
  return QObject::tr( "<b>k</b>: every released equivalence class (aggregated region + QI values) has at least k records; smaller ones are suppressed whole. A whole number from 2.<br>" )
         + releaseHelp()
         + QObject::tr( "<h3>Outputs</h3>"
                        "<b>Aggregated regions</b>: " )
         + custodianOnly()
         + QObject::tr(
           "it holds the records before suppression and the member regions of each aggregate. The member regions of each Voronoi cell dissolved: aggregate_id, site_id, regions (how many), members (their ids), records, released, suppressed, smallest_ec (smallest released EC), "
           "parts (the polygons of the dissolved aggregate: more than 1 when its regions are not all connected through shared borders; for a point layer, its distinct points).<br>"
           "<b>Region lookup</b>: " )
         + custodianOnly()
         + QObject::tr( "region_id, aggregate_id and site_id of every initial region.<br>"
                        "<b>Anonymized records</b>: " )
         + forPublication()
         + QObject::tr(
           "every released row with the QIs, the count field and the other released fields, plus aggregate_id; no geometry, no region id, no input feature id. "
           "The rows are in a fresh random order (never repeated, whatever the SEED) with fresh feature ids. Suppressed records are left out. Before it is written, every row is checked against the first pass: "
           "a table that changed meanwhile stops the run. Once written, it is read back and its classes recounted from the stored values before it is kept: a class below k, or a "
           "destination that would store different QI values alike (joining classes, so that the numbers would not describe the file), stops the run with nothing written.<br>"
           "<b>Voronoi cells</b>: " )
         + custodianOnly()
         + QObject::tr( "they show where the sites are. The cells of the sites clipped to the regions' extent, for display (site_id, aggregate_id).<br>"
                        "<b>AGGREGATES</b>: the aggregates of the release that hold regions, after every step that moves regions; fewer than the sites (or the regions, if fewer) "
                        "only when some site has no nearest region, which the log warns about. <b>RELEASED</b>, <b>SUPPRESSED</b>: counts.<br>"
                        "<b>UNITS_IN_PIECES</b>: aggregates whose regions are not all connected through shared borders (an island counts as connected to the region "
                        "nearest to it); 0 for a point layer. <b>UNITS_RELEASING_NOTHING</b>: aggregates all of whose records are suppressed. <b>COMPACTNESS_USED</b>: the "
                        "compactness of the result (eq. 20, to the sites written) divided by the compactness of the start (the Voronoi cells of the balanced-density sites, or of the given sites). "
                        "<b>MEAN_POINT_COMPACTNESS</b>: the sum over the regions of population x the distance from the region point to its aggregate's population-weighted mean "
                        "point, in working-CRS units (the same rule for every method, whatever its sites). <b>MEAN_POINT_COMPACTNESS_USED</b>: that over the start's: what "
                        "ADC, REFINE_BOUNDARIES and SEARCH keep at most COMPACTNESS_BUDGET.<br>" )
         + outputsHelp();
}

QString VbasAlgorithm::evaluationParametersHelp()
{
  return QObject::tr( "<b>Sensitive field</b> (SENSITIVE_FIELD): optional, a field of the records such as a diagnosis. With it the evaluation also gives the classification metric (CM), "
                      "distinct l-diversity and t-closeness; its values are compared exactly, NULL being a value of its own, and never written anywhere.<br>"
                      "<b>Re-identification risk threshold</b> (RISK_THRESHOLD): a released record is at risk when its prosecutor risk 1/|E| is above it (0.05-0.3 in use; default 0.2).<br>" );
}

QString VbasAlgorithm::populationTableHelp()
{
  return QObject::tr(
    "<b>Population table</b> (POPULATION_TABLE): optional, any table (CSV, GeoPackage, PostgreSQL) of the residents of each region and QI values, such as a census "
    "tabulation: a region id field (POPULATION_REGION), a count field (POPULATION_COUNT), and a field named as each QI of the records, of the same type. With it the "
    "residents of each released class are counted, not estimated: the journalist and marketer risks and the population uniques are exact. A table without a "
    "field for some QI cannot count a class's residents: then only its regions' residents are used, and the classes' are estimated as with a population field "
    "(the log names the QIs). Refused, naming the row: a count that is not a whole number from 0, a region not in the regions layer, a cell given twice, and a "
    "class of records with more records in a region than the table gives residents (the table cannot be their population), naming the region. A generalized release counts each class's "
    "residents under its labels and its *. In Evaluate release not with POPULATION_FIELD (in Anonymize that field weighs balanced density, and the table gives the residents).<br>"
    "<b>Raise population cells to their records</b> (POPULATION_RAISE): instead of refusing a cell with fewer residents than records, raise it to the records; the "
    "log says how many cells were raised.<br>" );
}

QString VbasAlgorithm::evaluationOutputsHelp()
{
  QString metrics;
  for ( const vbas::Metric &metric : vbas::metrics() )
    metrics += QStringLiteral( "<li><b>%1</b>%2 (%3): %4 <i>%5</i></li>" )
                 .arg( QString::fromLatin1( metric.field ), metric.output ? QStringLiteral( ", %1" ).arg( QString::fromLatin1( metric.output ) ) : QString(), QObject::tr( metric.label ),
                       QObject::tr( metric.meaning ), QString::fromLatin1( metric.formula ).toHtmlEscaped() );
  return QObject::tr( "<b>Evaluation</b>: " ) + custodianOnly()
         + QObject::tr( "it counts the suppressed records. A one-row table with every metric below (field, number output, what it says and its formula); the number outputs carry the same values, "
                        "NULL where a metric does not apply (CM, l and t without a sensitive field). ECs are the released table's classes (aggregated region, QI values).<ul>%1</ul>" )
             .arg( metrics );
}

QString VbasAlgorithm::reportHelp()
{
  return QObject::tr( "<b>Report</b> (REPORT): a self-contained HTML page (no network needed) shown in the results viewer: the metrics and what each means, a map of the aggregated regions "
                      "shaded by released records with the suppressed records marked, a map of the risk before release (the share of each initial region's records in (region, QI) classes "
                      "smaller than k), with residents a map of the largest journalist risk of each aggregated region, the release model and the stated risks of guidance, "
                      "a histogram of the EC sizes with k marked, the parameters, and the qgis_process command that repeats the run, with every password left out "
                      "(the command says so; connect with authcfg= to keep it runnable as printed). " )
         + custodianOnly() + QObject::tr( "it gives the records of each initial region before release (no record values), and its first line says so.<br>" );
}

QString VbasAlgorithm::custodianOnly()
{
  return QObject::tr( "<i>For the custodian only, not for publication</i>: " );
}

QString VbasAlgorithm::forPublication()
{
  return QObject::tr( "<i>For publication</i> (once you have checked it): " );
}

QString VbasAlgorithm::optionalOutputsHelp() const
{
  QStringList optional, created;
  for ( const QgsProcessingParameterDefinition *definition : parameterDefinitions() )
    if ( definition->isDestination() && definition->flags() & vbasqgis::ParameterOptional )
    {
      optional << definition->name();
      if ( static_cast<const QgsProcessingDestinationParameter *>( definition )->createByDefault() )
        created << definition->name();
    }
  if ( optional.isEmpty() )
    return QString();
  const QString inDialog = created.isEmpty() ? QString()
                                             : QObject::tr( " The dialog starts %1 as a temporary layer or file, so that a first Run shows them; choose [Skip output] "
                                                            "there not to write them." )
                                                 .arg( created.join( QLatin1String( " and " ) ) );
  return QObject::tr( "<i>Optional outputs</i>: %1 are written only when given a destination; left empty ([Skip output] in the dialog, not named in qgis_process, "
                      "PyQGIS or a model) they are not written at all, not even as temporary files.%2 The number outputs are always given.<br>" )
    .arg( optional.join( QLatin1String( ", " ) ), inDialog );
}

QString VbasAlgorithm::outputsHelp() const
{
  return optionalOutputsHelp()
         + QObject::tr( "<i>All outputs or none, and nothing of yours lost</i>: every destination is checked before the records are read: writable; a regular file, a table of a "
                        "GeoPackage file, or a PostgreSQL table (a FIFO, device, socket or symbolic link is refused); not an input and not another output, judged by what it "
                        "is, not how it is spelled (a file by its device and inode, a table by its file or its server and database, and the tables that reading each input reads, "
                        "through views); not a table that a view, a trigger or a foreign key refers to; every field name kept (a shapefile's 10-character names are refused, not "
                        "truncated). A new table beside an input in its own GeoPackage is allowed, and leaves that file's settings (its journal mode) as they were. Outputs are "
                        "written under temporary names beside their destinations and moved into place only when the whole run has succeeded, each previous output moved aside and "
                        "put back if any later one fails: a failed or canceled run leaves none of its outputs and every previous one as it was.<br>" );
}
