#include "outputs/vbasoutputset.h"

#include "outputs/vbasstyles.h"
#include "outputs/vbastemporaries.h"

#include <qgsexception.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingfeedback.h>
#include <qgsprocessingparameters.h>

#include <QDir>
#include <QFileInfo>

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

//! The destination of a sink parameter, as QgsProcessingParameters::parameterAsSink reads it.
Requested requested( const QgsProcessingParameterDefinition *definition, const QVariantMap &parameters, QgsProcessingContext &context )
{
  Requested result;
  QVariant value = parameters.value( definition->name() );
  if ( value.canConvert<QgsProcessingOutputLayerDefinition>() )
  {
    const QgsProcessingOutputLayerDefinition output = value.value<QgsProcessingOutputLayerDefinition>();
    result.project = output.destinationProject;
    result.layerName = output.destinationName;
    result.createOptions = output.createOptions;
    value = QVariant::fromValue( output.sink );
  }
  result.destination = value.canConvert<QgsProperty>() ? value.value<QgsProperty>().valueAsString( context.expressionContext(), definition->defaultValue().toString() ) : value.toString();
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

} // namespace

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
    const Requested r = requested( algorithm.parameterDefinition( schema.name ), parameters, context );
    mOutputs.push_back( std::make_unique<VbasOutput>( schema, r.destination, r.project, r.layerName, r.createOptions ) );
  }
  QList<VbasLocation> written;
  std::set<QString> folders { QDir::tempPath() };
  int stale = 0;
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
  {
    const QList<VbasLocation> locations = output->check();
    for ( const VbasLocation &location : locations )
    {
      for ( const VbasLocation &input : inputs )
        if ( overlap( location, input ) )
          throw QgsProcessingException( QObject::tr( "%1 would overwrite the input %2: choose another destination. Nothing was written." ).arg( output->describe(), input.describe() ) );
      for ( const VbasLocation &other : written )
        if ( overlap( location, other ) )
          throw QgsProcessingException( QObject::tr( "%1 and %2 have the same destination: each output needs its own. Nothing was written." ).arg( other.what, output->describe() ) );
      if ( !location.path.isEmpty() )
        folders.insert( QFileInfo( location.path ).absolutePath() );
    }
    written += locations;
    if ( output->mKind == VbasOutput::Kind::Table && ( output->mProvider != QLatin1String( "ogr" ) || QFileInfo::exists( output->mPath ) ) )
      stale += VbasTemporaries::removeStaleTables( output->mProvider, output->mPath, output->mSchemaName );
  }
  for ( const QString &folder : folders )
    stale += VbasTemporaries::removeStaleFiles( folder );
  if ( stale > 0 )
    feedback->pushInfo( QObject::tr( "Removed %n temporary file(s) or table(s) left by interrupted VBAS runs.", nullptr, stale ) );
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

void VbasOutputSet::commit( QgsProcessingContext &context, QVariantMap &outputs )
{
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
  {
    const QString id = output->commit( context ); // on failure VbasRun discards: the outputs already in place are withdrawn
    outputs.insert( output->mSchema.name, id );
    if ( output->mProject && output->mKind != VbasOutput::Kind::Document )
    {
      QgsProcessingContext::LayerDetails details( output->mLayerName, output->mProject, output->mSchema.name, QgsProcessingUtils::LayerHint::Vector );
      details.setPostProcessor( VbasStyles::postProcessor( output->mSchema ).release() ); // the context owns it
      context.addLayerToLoadOnCompletion( id, details );
    }
  }
  mOutputs.clear(); // committed: nothing left to discard
}

void VbasOutputSet::discard()
{
  for ( const std::unique_ptr<VbasOutput> &output : mOutputs )
    output->discard();
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
