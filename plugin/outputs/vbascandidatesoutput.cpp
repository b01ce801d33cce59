#include "plugin/outputs/vbascandidatesoutput.h"

#include "plugin/support/vbasqgiscompat.h"

#include <qgsfeature.h>
#include <qgsfields.h>

#include <algorithm>

namespace
{

//! The fields before the measures: what the candidate is.
const QList<QPair<QString, vbasqgis::FieldType>> kCandidateFields { { QStringLiteral( "candidate" ), vbasqgis::Field::String },
                                                                    { QStringLiteral( "kind" ), vbasqgis::Field::String },
                                                                    { QStringLiteral( "levels" ), vbasqgis::Field::String },
                                                                    { QStringLiteral( "units_asked" ), vbasqgis::Field::LongLong },
                                                                    { QStringLiteral( "units_in_pieces" ), vbasqgis::Field::LongLong },
                                                                    { QStringLiteral( "units_releasing_nothing" ), vbasqgis::Field::LongLong },
                                                                    { QStringLiteral( "on_front" ), vbasqgis::Field::LongLong },
                                                                    { QStringLiteral( "recommended" ), vbasqgis::Field::LongLong },
                                                                    { QStringLiteral( "command" ), vbasqgis::Field::String } };

//! The loss outputs of Anonymize (vbasLossOutputs), as columns after the measures: each output's name in lower case.
const QStringList kLossOutputs { QStringLiteral( "LOSS_GENERIC_NUE" ), QStringLiteral( "LOSS_GENERIC_NUE_NORM" ), QStringLiteral( "LOSS_PREC" ),
                                 QStringLiteral( "LOSS_LM" ),          QStringLiteral( "LOSS_DM_STAR" ),          QStringLiteral( "LOSS_GC" ),
                                 QStringLiteral( "LOSS_ARE" ),         QStringLiteral( "RECORDS_GENERALIZED" ) };

} // namespace

VbasOutputSchema VbasCandidatesOutput::schema()
{
  QgsFields fields;
  for ( const auto &[name, type] : kCandidateFields )
    fields.append( QgsField( name, type ) );
  for ( const vbas::Metric &metric : vbas::metrics() )
    fields.append( QgsField( QString::fromLatin1( metric.field ), metric.whole ? vbasqgis::Field::LongLong : vbasqgis::Field::Double ) );
  for ( const QString &output : kLossOutputs )
    fields.append( QgsField( output.toLower(), output == QLatin1String( "RECORDS_GENERALIZED" ) ? vbasqgis::Field::LongLong : vbasqgis::Field::Double ) );
  return { QStringLiteral( "CANDIDATES" ), fields, vbasqgis::WkbType::NoGeometry, QgsCoordinateReferenceSystem() };
}

void VbasCandidatesOutput::write( VbasOutput &output, const QList<VbasCandidate> &candidates, const std::vector<char> &front, std::optional<std::size_t> recommended, const QStringList &commands )
{
  for ( int i = 0; i < candidates.size(); ++i )
  {
    const VbasCandidate &c = candidates.at( i );
    QVector<QVariant> row { c.name,
                            c.kind,
                            c.levels.isEmpty() ? QVariant() : QVariant( c.levels ),
                            static_cast<qlonglong>( c.unitsAsked ),
                            c.unitsInPieces ? QVariant( static_cast<qlonglong>( *c.unitsInPieces ) ) : QVariant(),
                            static_cast<qlonglong>( c.unitsReleasingNothing ),
                            static_cast<qlonglong>( front[static_cast<std::size_t>( i )] ),
                            static_cast<qlonglong>( recommended == static_cast<std::size_t>( i ) ),
                            commands.at( i ).isEmpty() ? QVariant() : QVariant( commands.at( i ) ) };
    for ( std::size_t m = 0; m < c.values.size(); ++m )
      row << ( !c.values[m] ? QVariant() : vbas::metrics()[m].whole ? QVariant( static_cast<qlonglong>( *c.values[m] ) ) : QVariant( static_cast<double>( *c.values[m] ) ) );
    for ( const QString &output : kLossOutputs )
      row << c.loss.value( output );
    QgsFeature feature( output.fields() );
    feature.setAttributes( QgsAttributes( row ) );
    output.add( feature );
  }
  output.finish();
}

namespace
{

double measure( const VbasCandidate &c, const char *field )
{
  return c.measure( QString::fromLatin1( field ) );
}

double kept( const VbasCandidate &c )
{
  return measure( c, "released" );
}

//! The frontier chart: x the information lost, y the records kept, in an SVG of its own.
QString frontierChart( const VbasComparisonReportInputs &in )
{
  const QByteArray field = in.lossField.toLatin1();
  double xMin = 0, xMax = 1, yMin = 0, yMax = 1;
  for ( int i = 0; i < in.candidates.size(); ++i )
  {
    const double x = measure( in.candidates.at( i ), field.constData() ), y = kept( in.candidates.at( i ) );
    xMin = i == 0 ? x : std::min( xMin, x );
    xMax = i == 0 ? x : std::max( xMax, x );
    yMin = i == 0 ? y : std::min( yMin, y );
    yMax = i == 0 ? y : std::max( yMax, y );
  }
  const double left = 70, top = 16, width = 560, height = 300;
  const auto px = [&]( double x ) { return left + ( xMax > xMin ? ( x - xMin ) / ( xMax - xMin ) : 0.5 ) * width; };
  const auto py = [&]( double y ) { return top + height - ( yMax > yMin ? ( y - yMin ) / ( yMax - yMin ) : 0.5 ) * height; };
  QString svg = QStringLiteral( "<line x1=\"%1\" y1=\"%2\" x2=\"%3\" y2=\"%2\" stroke=\"#000\"/><line x1=\"%1\" y1=\"%4\" x2=\"%1\" y2=\"%2\" stroke=\"#000\"/>\n" )
                  .arg( left )
                  .arg( top + height )
                  .arg( left + width )
                  .arg( top );
  svg += QStringLiteral( "<text x=\"%1\" y=\"%2\" font-size=\"12\" text-anchor=\"middle\">%3</text>\n" )
           .arg( left + width / 2 )
           .arg( top + height + 34 )
           .arg( QObject::tr( "Information lost (%1)" ).arg( in.lossField ) );
  svg += QStringLiteral( "<text x=\"14\" y=\"%1\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 %1)\">%2</text>\n" ).arg( top + height / 2 ).arg( QObject::tr( "Records kept" ) );
  svg += QStringLiteral( "<text x=\"%1\" y=\"%2\" font-size=\"10\">%3</text><text x=\"%4\" y=\"%2\" font-size=\"10\" text-anchor=\"end\">%5</text>\n" )
           .arg( left )
           .arg( top + height + 14 )
           .arg( xMin, 0, 'f', 0 )
           .arg( left + width )
           .arg( xMax, 0, 'f', 0 );
  svg += QStringLiteral( "<text x=\"%1\" y=\"%2\" font-size=\"10\" text-anchor=\"end\">%3</text><text x=\"%1\" y=\"%4\" font-size=\"10\" text-anchor=\"end\">%5</text>\n" )
           .arg( left - 4 )
           .arg( top + height )
           .arg( yMin, 0, 'f', 0 )
           .arg( top + 8 )
           .arg( yMax, 0, 'f', 0 );
  std::vector<std::pair<double, double>> front; // the frontier's points, by information lost
  for ( int i = 0; i < in.candidates.size(); ++i )
    if ( in.front[static_cast<std::size_t>( i )] )
      front.emplace_back( px( measure( in.candidates.at( i ), field.constData() ) ), py( kept( in.candidates.at( i ) ) ) );
  std::sort( front.begin(), front.end() );
  QStringList points;
  for ( const auto &[x, y] : front )
    points << QStringLiteral( "%1,%2" ).arg( x, 0, 'f', 1 ).arg( y, 0, 'f', 1 );
  svg += QStringLiteral( "<polyline id=\"front\" points=\"%1\" fill=\"none\" stroke=\"#3c9a5f\" stroke-width=\"2\"/>\n" ).arg( points.join( ' ' ) );
  for ( int i = 0; i < in.candidates.size(); ++i )
  {
    const VbasCandidate &c = in.candidates.at( i );
    const double x = px( measure( c, field.constData() ) ), y = py( kept( c ) );
    const QString title
      = QStringLiteral( "<title>%1: %2 records kept, %3 %4</title>" ).arg( c.name.toHtmlEscaped() ).arg( kept( c ), 0, 'f', 0 ).arg( measure( c, field.constData() ), 0, 'f', 1 ).arg( in.lossField );
    const QString colour = in.front[static_cast<std::size_t>( i )] ? QStringLiteral( "#3c9a5f" ) : QStringLiteral( "#2b6f8e" );
    svg += c.anonymize.isEmpty()
             ? QStringLiteral( "<rect class=\"candidate baseline\" x=\"%1\" y=\"%2\" width=\"9\" height=\"9\" fill=\"#bbb\" stroke=\"%3\">%4</rect>\n" )
                 .arg( x - 4.5, 0, 'f', 1 )
                 .arg( y - 4.5, 0, 'f', 1 )
                 .arg( colour, title )
             : QStringLiteral( "<circle class=\"candidate aggregation\" cx=\"%1\" cy=\"%2\" r=\"5\" fill=\"%3\">%4</circle>\n" ).arg( x, 0, 'f', 1 ).arg( y, 0, 'f', 1 ).arg( colour, title );
    if ( in.recommended == static_cast<std::size_t>( i ) )
      svg += QStringLiteral( "<circle id=\"recommended\" cx=\"%1\" cy=\"%2\" r=\"10\" fill=\"none\" stroke=\"#c00\" stroke-width=\"2\"/>\n" ).arg( x, 0, 'f', 1 ).arg( y, 0, 'f', 1 );
  }
  return QStringLiteral( "<svg id=\"frontier\" role=\"img\" aria-label=\"%1\" width=\"660\" height=\"370\" viewBox=\"0 0 660 370\" xmlns=\"http://www.w3.org/2000/svg\">\n%2</svg>\n" )
    .arg( QObject::tr( "Records kept against information lost, one point per candidate" ), svg );
}

QString candidatesTable( const VbasComparisonReportInputs &in )
{
  const QByteArray field = in.lossField.toLatin1();
  QString rows;
  for ( int i = 0; i < in.candidates.size(); ++i )
  {
    const VbasCandidate &c = in.candidates.at( i );
    rows += QStringLiteral( "<tr><td>%1</td><td class=\"num\">%2</td><td class=\"num\">%3</td><td class=\"num\">%4</td><td class=\"num\">%5</td><td class=\"num\">%6</td><td>%7</td></tr>\n" )
              .arg( c.name.toHtmlEscaped() )
              .arg( static_cast<qlonglong>( measure( c, "aggregates" ) ) )
              .arg( static_cast<qlonglong>( kept( c ) ) )
              .arg( static_cast<qlonglong>( measure( c, "suppressed" ) ) )
              .arg( measure( c, field.constData() ), 0, 'f', 1 )
              .arg( measure( c, "max_risk" ), 0, 'g', 3 )
              .arg( in.recommended == static_cast<std::size_t>( i ) ? QObject::tr( "recommended" )
                    : in.front[static_cast<std::size_t>( i )]       ? QObject::tr( "on the frontier" )
                                                                    : QString() );
  }
  return QStringLiteral( "<table id=\"candidates\"><tr><th>%1</th><th>%2</th><th>%3</th><th>%4</th><th>%5</th><th>%6</th><th></th></tr>\n%7</table>\n" )
    .arg( QObject::tr( "candidate" ), QObject::tr( "units" ), QObject::tr( "records kept" ), QObject::tr( "suppressed" ), in.lossField, QObject::tr( "largest risk" ), rows );
}

} // namespace

QString vbasRecommendation( const QList<VbasCandidate> &candidates, std::optional<std::size_t> recommended, const QString &lossField, std::int64_t statedK, std::optional<double> statedThreshold )
{
  const QString stated = statedThreshold ? QObject::tr( "k = %1 or above with an average risk at most %2" ).arg( statedK ).arg( *statedThreshold ) : QObject::tr( "k = %1 or above" ).arg( statedK );
  return recommended ? QObject::tr( "Recommended: %1, the least %2 among the candidates at %3." ).arg( candidates.at( static_cast<int>( *recommended ) ).name, lossField, stated )
                     : QObject::tr( "No candidate is at %1: nothing is recommended." ).arg( stated );
}

QByteArray vbasComparisonReport( const VbasComparisonReportInputs &in )
{
  const QString &verdict = in.verdict;
  QString commands;
  for ( int i = 0; i < in.candidates.size(); ++i )
    if ( !in.commands.at( i ).isEmpty() )
      commands += QStringLiteral( "<h3>%1</h3><pre class=\"candidate-command\">%2</pre>\n" ).arg( in.candidates.at( i ).name.toHtmlEscaped(), in.commands.at( i ).toHtmlEscaped() );
  const QString body = QStringLiteral( "<p class=\"verdict %1\">%2</p>\n" ).arg( in.recommended ? QStringLiteral( "ok" ) : QStringLiteral( "bad" ), verdict.toHtmlEscaped() )
                       + QStringLiteral( "<h2>%1</h2><p>%2</p>\n" )
                           .arg( QObject::tr( "The frontier" ),
                                 QObject::tr( "Each candidate by the records it keeps and the information it loses; circles the releases of the methods chosen, grey squares the baselines. The green "
                                              "line joins the frontier: the candidates no other beats on both. The red ring marks the recommendation." )
                                   .toHtmlEscaped() )
                       + frontierChart( in ) + QStringLiteral( "<h2>%1</h2>" ).arg( QObject::tr( "Candidates" ) ) + candidatesTable( in )
                       + QStringLiteral( "<h2>%1</h2><p>%2</p>\n" )
                           .arg( QObject::tr( "Make a candidate" ), QObject::tr( "Each aggregation is made by Anonymize with these parameters; a baseline is not a VBAS release." ).toHtmlEscaped() )
                       + commands + vbasReportParameters( in.parameters, in.command );
  return vbasReportPage( QObject::tr( "VBAS: candidate releases compared" ),
                         QObject::tr( "For the data custodian only: not for publication. This page gives what each candidate release would suppress." ), body );
}
