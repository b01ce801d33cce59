// The algorithms' destination parameters: a file destination whose folder does not exist is refused when
// QGIS checks the parameter values, before the run starts. A model copies (clones) the definitions of its
// steps' outputs into its own parameters, so a model refuses it before its first step writes (docs/scripting.md,
// "When a model fails").
#pragma once

#include "plugin/outputs/vbasoutputset.h"

#include <qgsexception.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingparameters.h>

template<class Destination>
class VbasDestination : public Destination
{
  public:
    using Destination::Destination;

    QgsProcessingParameterDefinition *clone() const override { return new VbasDestination( *this ); }

    bool checkValueIsAcceptable( const QVariant &input, QgsProcessingContext *context = nullptr ) const override
    {
      if ( !Destination::checkValueIsAcceptable( input, context ) )
        return false;
      QgsProcessingContext own;
      try
      {
        vbasCheckDestinationFolder( this, input, context ? *context : own );
      }
      catch ( const QgsProcessingException & )
      {
        return false; // QGIS names the parameter; VbasAlgorithm::checkParameterValues says why
      }
      return true;
    }
};

using VbasSinkParameter = VbasDestination<QgsProcessingParameterFeatureSink>;
using VbasFileDestinationParameter = VbasDestination<QgsProcessingParameterFileDestination>;
