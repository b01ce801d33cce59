// Folder outputs/: writing the outputs.
// A feature sink that writes one row at a time: a list of features is each feature in turn
// (VbasOgrSink, VbasPgCopySink).
#pragma once

#include "plugin/support/vbasqgiscompat.h"

#include <qgsfeaturesink.h>
#include <qgsfields.h>

class VbasRowSink : public QgsFeatureSink
{
  public:
    //! Whether a table of fields and wkbType is one these sinks write: no geometry, and fields of text, whole numbers or reals (a release, as a rule).
    static bool textAndNumbers( const QgsFields &fields, vbasqgis::WkbType wkbType )
    {
      if ( wkbType != vbasqgis::WkbType::NoGeometry )
        return false;
      for ( const QgsField &field : fields )
      {
        const vbasqgis::FieldType type = field.type();
        if ( type != vbasqgis::Field::String && type != vbasqgis::Field::Int && type != vbasqgis::Field::LongLong && type != vbasqgis::Field::Double )
          return false;
      }
      return true;
    }

    bool addFeatures( QgsFeatureList &features, QgsFeatureSink::Flags flags = QgsFeatureSink::Flags() ) override
    {
      for ( QgsFeature &feature : features )
        if ( !addFeature( feature, flags ) )
          return false;
      return true;
    }
};
