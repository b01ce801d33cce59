#include "plugin/outputs/vbascandidatesoutput.h"

#include "plugin/support/vbasqgiscompat.h"

#include <qgsfeature.h>
#include <qgsfields.h>

namespace
{

//! The fields before the measures: what the candidate is.
const QList<QPair<QString, vbasqgis::FieldType>> kCandidateFields { { QStringLiteral( "candidate" ), vbasqgis::Field::String },
                                                                    { QStringLiteral( "kind" ), vbasqgis::Field::String },
                                                                    { QStringLiteral( "units_asked" ), vbasqgis::Field::LongLong },
                                                                    { QStringLiteral( "units_in_pieces" ), vbasqgis::Field::LongLong },
                                                                    { QStringLiteral( "units_releasing_nothing" ), vbasqgis::Field::LongLong },
                                                                    { QStringLiteral( "on_front" ), vbasqgis::Field::LongLong },
                                                                    { QStringLiteral( "recommended" ), vbasqgis::Field::LongLong },
                                                                    { QStringLiteral( "command" ), vbasqgis::Field::String } };

} // namespace

VbasOutputSchema VbasCandidatesOutput::schema()
{
  QgsFields fields;
  for ( const auto &[name, type] : kCandidateFields )
    fields.append( QgsField( name, type ) );
  for ( const vbas::Metric &metric : vbas::metrics() )
    fields.append( QgsField( QString::fromLatin1( metric.field ), metric.whole ? vbasqgis::Field::LongLong : vbasqgis::Field::Double ) );
  return { QStringLiteral( "CANDIDATES" ), fields, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem() };
}

void VbasCandidatesOutput::write( VbasOutput &output, const QList<VbasCandidate> &candidates, const std::vector<char> &front, std::optional<std::size_t> recommended, const QStringList &commands )
{
  for ( int i = 0; i < candidates.size(); ++i )
  {
    const VbasCandidate &c = candidates.at( i );
    QVector<QVariant> row { c.name,
                            c.kind,
                            static_cast<qlonglong>( c.unitsAsked ),
                            c.unitsInPieces ? QVariant( static_cast<qlonglong>( *c.unitsInPieces ) ) : QVariant(),
                            static_cast<qlonglong>( c.unitsReleasingNothing ),
                            static_cast<qlonglong>( front[static_cast<std::size_t>( i )] ),
                            static_cast<qlonglong>( recommended == static_cast<std::size_t>( i ) ),
                            commands.at( i ).isEmpty() ? QVariant() : QVariant( commands.at( i ) ) };
    for ( std::size_t m = 0; m < c.values.size(); ++m )
      row << ( !c.values[m] ? QVariant() : vbas::metrics()[m].whole ? QVariant( static_cast<qlonglong>( *c.values[m] ) ) : QVariant( static_cast<double>( *c.values[m] ) ) );
    QgsFeature feature( output.fields() );
    feature.setAttributes( QgsAttributes( row ) );
    output.add( feature );
  }
  output.finish();
}
