// Folder support/: what every other folder uses at run time (this QGIS API header, signals, the worker thread, exact value keys, where a layer lives).
// The QGIS API as this plugin uses it, one spelling for QGIS 3.22, 3.40 LTR and 3.44.
// QGIS moved most enums into the Qgis namespace between 3.24 and 3.38 (the version of each move is in
// the comments); everything else in plugin/ and tests/ names these aliases and helpers instead, so this
// is the only file that asks which QGIS it is built against. Tested on 3.22, 3.40 and 3.44 only.
#pragma once

#include <qgis.h>
#include <qgsfeaturerequest.h>
#include <qgsfield.h>
#include <qgsfields.h>
#include <qgsgraduatedsymbolrenderer.h>
#include <qgsmarkersymbollayer.h>
#include <qgsprocessingparameters.h>
#include <qgsprocessingutils.h>
#include <qgsunittypes.h>
#if _QGIS_VERSION_INT >= 33800
#include <qgsvariantutils.h>
#endif
#include <qgsvectorfilewriter.h>
#include <qgswkbtypes.h>

#include <initializer_list>
#include <utility>

namespace vbasqgis
{
#if _QGIS_VERSION_INT >= 33000 // Qgis::WkbType, Qgis::GeometryType
using WkbType = Qgis::WkbType;
using GeometryType = Qgis::GeometryType;
inline constexpr GeometryType PointGeometry = Qgis::GeometryType::Point;
inline constexpr GeometryType PolygonGeometry = Qgis::GeometryType::Polygon;
#else
using WkbType = QgsWkbTypes::Type;
using GeometryType = QgsWkbTypes::GeometryType;
inline constexpr GeometryType PointGeometry = QgsWkbTypes::PointGeometry;
inline constexpr GeometryType PolygonGeometry = QgsWkbTypes::PolygonGeometry;
#endif

#if _QGIS_VERSION_INT >= 33000 // Qgis::DistanceUnit
inline constexpr auto DistanceDegrees = Qgis::DistanceUnit::Degrees;
inline constexpr auto DistanceMeters = Qgis::DistanceUnit::Meters;
#else
inline constexpr auto DistanceDegrees = QgsUnitTypes::DistanceDegrees;
inline constexpr auto DistanceMeters = QgsUnitTypes::DistanceMeters;
#endif

#if _QGIS_VERSION_INT >= 33600 // Processing and feature request enums in Qgis
using SourceType = Qgis::ProcessingSourceType;
inline constexpr SourceType Vector = SourceType::Vector;
inline constexpr SourceType VectorAnyGeometry = SourceType::VectorAnyGeometry;
inline constexpr SourceType VectorPoint = SourceType::VectorPoint;
inline constexpr SourceType VectorPolygon = SourceType::VectorPolygon;
inline constexpr SourceType File = SourceType::File;
using NumberType = Qgis::ProcessingNumberParameterType;
using FieldDataType = Qgis::ProcessingFieldParameterDataType;
using RequestFlags = Qgis::FeatureRequestFlags;
inline constexpr RequestFlags NoGeometry = RequestFlags( Qgis::FeatureRequestFlag::NoGeometry );
using SourceFlags = Qgis::ProcessingFeatureSourceFlags;
inline constexpr SourceFlags SkipGeometryValidityChecks = SourceFlags( Qgis::ProcessingFeatureSourceFlag::SkipGeometryValidityChecks );
inline constexpr auto ParameterAdvanced = Qgis::ProcessingParameterFlag::Advanced;
inline constexpr auto ParameterOptional = Qgis::ProcessingParameterFlag::Optional;
#else
using SourceType = QgsProcessing::SourceType;
inline constexpr SourceType Vector = QgsProcessing::TypeVector;
inline constexpr SourceType VectorAnyGeometry = QgsProcessing::TypeVectorAnyGeometry;
inline constexpr SourceType VectorPoint = QgsProcessing::TypeVectorPoint;
inline constexpr SourceType VectorPolygon = QgsProcessing::TypeVectorPolygon;
inline constexpr SourceType File = QgsProcessing::TypeFile;
using NumberType = QgsProcessingParameterNumber::Type;
using FieldDataType = QgsProcessingParameterField::DataType;
using RequestFlags = QgsFeatureRequest::Flags;
inline constexpr RequestFlags NoGeometry = RequestFlags( QgsFeatureRequest::NoGeometry );
using SourceFlags = QgsProcessingFeatureSource::Flags;
inline constexpr SourceFlags SkipGeometryValidityChecks = SourceFlags( QgsProcessingFeatureSource::FlagSkipGeometryValidityChecks );
inline constexpr auto ParameterAdvanced = QgsProcessingParameterDefinition::FlagAdvanced;
inline constexpr auto ParameterOptional = QgsProcessingParameterDefinition::FlagOptional;
#endif
//! Feature requests that read geometry too.
inline constexpr RequestFlags WithGeometry = RequestFlags();

#if _QGIS_VERSION_INT >= 33800 // QgsField speaks QMetaType::Type; QgsFields::FieldOrigin is Qgis::FieldOrigin
using FieldType = QMetaType::Type;
namespace Field
{
inline constexpr FieldType String = QMetaType::QString, Int = QMetaType::Int, UInt = QMetaType::UInt, LongLong = QMetaType::LongLong, ULongLong = QMetaType::ULongLong, Double = QMetaType::Double,
                           Bool = QMetaType::Bool, Date = QMetaType::QDate, Time = QMetaType::QTime, DateTime = QMetaType::QDateTime, ByteArray = QMetaType::QByteArray,
                           StringList = QMetaType::QStringList, List = QMetaType::QVariantList, Map = QMetaType::QVariantMap;
}
inline constexpr auto OriginExpression = Qgis::FieldOrigin::Expression;
inline constexpr auto OriginProvider = Qgis::FieldOrigin::Provider;
#else
using FieldType = QVariant::Type;
namespace Field
{
inline constexpr FieldType String = QVariant::String, Int = QVariant::Int, UInt = QVariant::UInt, LongLong = QVariant::LongLong, ULongLong = QVariant::ULongLong, Double = QVariant::Double,
                           Bool = QVariant::Bool, Date = QVariant::Date, Time = QVariant::Time, DateTime = QVariant::DateTime, ByteArray = QVariant::ByteArray, StringList = QVariant::StringList,
                           List = QVariant::List, Map = QVariant::Map;
}
inline constexpr auto OriginExpression = QgsFields::OriginExpression;
inline constexpr auto OriginProvider = QgsFields::OriginProvider;
#endif

#if _QGIS_VERSION_INT >= 33200 // Qgis::FeatureSymbologyExport
inline constexpr auto NoSymbology = Qgis::FeatureSymbologyExport::NoSymbology;
#else
inline constexpr auto NoSymbology = QgsVectorFileWriter::NoSymbology;
#endif

#if _QGIS_VERSION_INT >= 32400 // Qgis::MarkerShape
inline constexpr auto CircleMarker = Qgis::MarkerShape::Circle;
#else
inline constexpr auto CircleMarker = QgsSimpleMarkerSymbolLayerBase::Circle;
#endif

//! The layer types a feature source parameter accepts, as the int list its constructor takes.
inline QList<int> sourceTypes( std::initializer_list<SourceType> types )
{
  QList<int> list;
  for ( SourceType type : types )
    list << static_cast<int>( type );
  return list;
}

//! The field names a field parameter holds (QGIS 3.32 renamed parameterAsFields to parameterAsStrings).
inline QStringList parameterAsFields( const QgsProcessingParameterDefinition *definition, const QVariantMap &parameters, QgsProcessingContext &context )
{
#if _QGIS_VERSION_INT >= 33200
  return QgsProcessingParameters::parameterAsStrings( definition, parameters, context );
#else
  return QgsProcessingParameters::parameterAsFields( definition, parameters, context );
#endif
}

//! Classifies layer's values into classes (3.40 and 3.44 take an error argument, 3.22 does not; the classes show any error).
template<typename Renderer>
auto updateClasses( Renderer &renderer, const QgsVectorLayer &layer, int classes ) -> decltype( renderer.updateClasses( &layer, classes ), void() )
{
  renderer.updateClasses( &layer, classes );
}
template<typename Renderer>
auto updateClasses( Renderer &renderer, const QgsVectorLayer &layer, int classes ) -> decltype( renderer.updateClasses( &layer, classes, std::declval<QString &>() ), void() )
{
  QString error;
  renderer.updateClasses( &layer, classes, error );
}

//! The name of a field's type, as Qt spells it ("QString", "qlonglong").
inline QString typeName( const QgsField &field )
{
  return QString::fromLatin1( QMetaType::typeName( static_cast<int>( field.type() ) ) );
}

//! A NULL of a field's type, as QGIS's providers give it.
inline QVariant nullOf( FieldType type )
{
#if _QGIS_VERSION_INT >= 33800
  return QgsVariantUtils::createNullVariant( type );
#else
  return QVariant( type );
#endif
}
} // namespace vbasqgis
