#include "plugin/outputs/vbasoutputset.h"

#include "plugin/outputs/vbasstyles.h"
#include "plugin/outputs/vbastemporaries.h"

#include <qgsexception.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <optional>
#include <set>

namespace
{

struct Requested
{
    QString destination;
    QgsProject *project = nullptr;
    QString layerName;
    QVariantMap createOptions;
};

/**
 * The destination of a sink parameter, as QgsProcessingParameters::parameterAsSink reads it; none for an
 * optional output left empty (not asked for: "Skip output", or not named in qgis_process or a model).
 */
std::optional<Requested> requested( const QgsProcessingParameterDefinition *definition, QVariant value, QgsProcessingContext &context )
{
  Requested result;
  if ( value.canConvert<QgsProcessingOutputLayerDefinition>() )
  {
    const QgsProcessingOutputLayerDefinition output = value.value<QgsProcessingOutputLayerDefinition>();
    result.project = output.destinationProject;
    result.layerName = output.destinationName;
    result.createOptions = output.createOptions;
    value = QVariant::fromValue( output.sink );
  }
  result.destination = value.canConvert<QgsProperty>() ? value.value<QgsProperty>().valueAsString( context.expressionContext(), definition->defaultValue().toString() ) : value.toString();
  if ( result.destination.isEmpty() && definition->flags() & vbasqgis::ParameterOptional )
    return std::nullopt;
  if ( result.destination.isEmpty() || result.destination == QgsProcessing::TEMPORARY_OUTPUT )
    result.destination = static_cast<const QgsProcessingDestinationParameter *>( definition )->generateTemporaryDestination();
  if ( result.layerName.isEmpty() )
    result.layerName = definition->description();
  return result;
}

bool overlap( const VbasLocation &a, const VbasLocation &b )
{
  return a.overwrites( b ) || b.overwrites( a );
}

//! Every file of the inputs and outputs: never a leftover, whatever its name.
QSet<QString> filesOf( const QList<VbasLocation> &locations )
{
  QSet<QString> files;
  for ( const VbasLocation &location : locations )
    for ( const QString &file : location.files )
      files.insert( file );
  return files;
}

} // namespace

void vbasCheckDestinationFolder( const QgsProcessingParameterDefinition *definition, const QVariant &value, QgsProcessingContext &context )
{
  const std::optional<Requested> r = requested( definition, value, context );
  if ( !r )
    return;
  VbasOutputSchema schema;
  schema.name = definition->name();
  schema.document = definition->type() == QgsProcessingParameterFileDestination::typeName();
  VbasOutput( schema, r->destination, nullptr, r->layerName, r->createOptions ).checkFolderExists();
}

VbasOutputSet::~VbasOutputSet()
{
  discard();
}

void VbasOutputSet::prepare( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QList<VbasOutputSchema> &schemas,
                             const QList<VbasLocation> &inputs, QgsProcessingFeedback *feedback )
{
  mOutputs.clear();
  for ( const VbasOutputSchema &schema : schemas )
  {
    const std::optional<Requested> r = requested( algorithm.parameterDefinition( schema.name ), parameters.value( schema.name ), context );
    if ( r ) // an output not asked for is neither checked nor written, and has no temporaries
      mOutputs.push_back( std::make_unique<VbasOutput>( schema, r->destination, r->project, r->layerName, r->createOptions ) );
  }
  QList<VbasLocation> written;
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
  {
    const VbasLocation location = output->check();
    if ( !output->mWarning.isEmpty() )
      feedback->pushWarning( output->mWarning );
    for ( const VbasLocation &input : inputs )
      if ( location.overwrites( input ) )
        throw QgsProcessingException( QObject::tr( "%1 would overwrite the input %2: choose another destination. Nothing was written." ).arg( location.describe(), input.describe() ) );
    for ( const VbasLocation &other : written )
      if ( overlap( location, other ) )
        throw QgsProcessingException( QObject::tr( "%1 and %2 have the same destination: each output needs its own. Nothing was written." ).arg( other.describe(), location.describe() ) );
    if ( !location.dependents.isEmpty() )
      throw QgsProcessingException( QObject::tr( "%1 would replace a table that %2 refer(s) to, and replacing it would break or remove them: choose another table, or remove them "
                                                 "first. Nothing was written." )
                                      .arg( location.describe(), location.dependents.join( QStringLiteral( ", " ) ) ) );
    written << location;
  }
  removeLeftovers( filesOf( inputs + written ), feedback );
}

void VbasOutputSet::removeLeftovers( const QSet<QString> &keep, QgsProcessingFeedback *feedback ) const
{
  std::set<QString> folders { QDir::tempPath() };
  VbasTemporaries::Cleanup cleanup;
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
  {
    const bool table = output->mKind == VbasOutput::Kind::Table;
    if ( output->mKind != VbasOutput::Kind::Memory && !( table && output->mProvider == QLatin1String( "postgres" ) ) )
      folders.insert( QFileInfo( output->mPath ).absolutePath() );
    if ( table && ( output->mProvider != QLatin1String( "ogr" ) || QFileInfo::exists( output->mPath ) ) )
      VbasTemporaries::removeStaleTables( output->mProvider, output->mPath, output->mSchemaName, cleanup );
  }
  for ( const QString &folder : folders )
    VbasTemporaries::removeStaleFiles( folder, keep, cleanup );
  if ( cleanup.removed > 0 )
    feedback->pushInfo( QObject::tr( "Removed %n temporary file(s) or table(s) left by interrupted VBAS runs.", nullptr, cleanup.removed ) );
  if ( !cleanup.previous.isEmpty() )
    feedback->pushWarning( QObject::tr( "Interrupted VBAS runs had moved previous outputs aside and left them: %1. They are kept; rename one back if its run's new output is not "
                                        "wanted, or delete it." )
                             .arg( cleanup.previous.join( QStringLiteral( ", " ) ) ) );
}

VbasOutput &VbasOutputSet::output( const QString &name )
{
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
    if ( output->mSchema.name == name )
      return *output;
  throw QgsProcessingException( QObject::tr( "No output %1 was prepared." ).arg( name ) );
}

VbasOutput &VbasOutputSet::create( const QString &name, QgsProcessingContext &context )
{
  VbasOutput &result = output( name );
  result.create( context );
  return result;
}

bool VbasOutputSet::wanted( const QStringList &names ) const
{
  return std::any_of( mOutputs.begin(), mOutputs.end(), [&names]( const std::unique_ptr<VbasOutput> &output ) { return names.contains( output->mSchema.name ); } );
}

QString VbasOutputSet::scratchPrefix( const QString &name )
{
  return output( name ).scratchPrefix();
}

VbasOutput *VbasOutputSet::createIfWanted( const QString &name, QgsProcessingContext &context )
{
  return wanted( { name } ) ? &create( name, context ) : nullptr;
}

void VbasOutputSet::commit( QgsProcessingContext &context, QVariantMap &outputs )
{
  // Each output replaces its destination with the previous one moved aside; if any fails, every one
  // already in place is withdrawn by putting its previous output back, so the previous set stays whole.
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
    outputs.insert( output->mSchema.name, output->commit( context ) ); // on failure VbasRun discards: restored
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
  {
    output->finalize();
    if ( output->mProject && output->mKind != VbasOutput::Kind::Document )
    {
      const QString id = outputs.value( output->mSchema.name ).toString();
      QgsProcessingContext::LayerDetails details( output->mLayerName, output->mProject, output->mSchema.name, QgsProcessingUtils::LayerHint::Vector );
      details.setPostProcessor( VbasStyles::postProcessor( output->mSchema ).release() ); // the context owns it
      context.addLayerToLoadOnCompletion( id, details );
    }
  }
  mOutputs.clear(); // committed: nothing left to discard
}

void VbasOutputSet::discard()
{
  // The last committed first: each puts back what was there before it.
  for ( auto output = mOutputs.rbegin(); output != mOutputs.rend(); ++output )
    ( *output )->discard();
  mOutputs.clear();
}

// ---------------------------------------------------------------------------------------------
// VbasRun

VbasRun::VbasRun( VbasOutputSet &outputs )
  : mOutputs( outputs )
{
}

VbasRun::~VbasRun()
{
  mOutputs.discard();
}
