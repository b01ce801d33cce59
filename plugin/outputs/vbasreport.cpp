#include "plugin/outputs/vbasreport.h"
#include "plugin/outputs/vbaswriters.h"
#include "plugin/support/vbasqgiscompat.h"
#include "plugin/support/vbassecrets.h"

#include <qgsapplication.h>
#include <qgsprocessingalgorithm.h>
#include <qgsprocessingcontext.h>
#include <qgsprocessingparameters.h>
#include <qgsprocessingutils.h>
#include <qgsuserprofilemanager.h>
#include <qgsvectorlayer.h>

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QLocale>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace
{

const QString kOutline = QStringLiteral( "#4d4d4d" );
//! Released records: a sequential blue ramp (ColorBrewer Blues), quantile classes.
const QStringList kReleasedRamp { QStringLiteral( "#eff3ff" ), QStringLiteral( "#bdd7e7" ), QStringLiteral( "#6baed6" ), QStringLiteral( "#3182bd" ), QStringLiteral( "#08519c" ) };
//! Risk before release: white to red (ColorBrewer Reds) at fixed shares, as the REGION_RISK style.
const QStringList kRiskRamp { QStringLiteral( "#fff5f0" ), QStringLiteral( "#fcbba1" ), QStringLiteral( "#fb6a4a" ), QStringLiteral( "#cb181d" ), QStringLiteral( "#67000d" ) };
const double kRiskBreaks[] = { 0.0, 0.05, 0.2, 0.5 }; // class i holds shares above kRiskBreaks[i - 1] up to kRiskBreaks[i]; 0 alone is class 0
const QString kNoRecords = QStringLiteral( "#d9d9d9" );
const QString kSuppressedMark = QStringLiteral( "#ff7f00" );
const QString kReleasedBar = QStringLiteral( "#756bb1" );
const QString kSuppressedBar = QStringLiteral( "#de2d26" );
//! Aggregates labelled with their ids on the map; more would not be read.
constexpr std::size_t kMostLabels = 300;

QString esc( const QString &text )
{
  return text.toHtmlEscaped();
}

QString number( vbas::MetricNumber value, bool whole )
{
  if ( whole )
    return QString::number( static_cast<qlonglong>( std::llround( value ) ) );
  const double real = static_cast<double>( value );
  return std::fabs( real ) >= 1e4 ? QString::number( real, 'f', 1 ) : QString::number( real, 'g', 6 );
}

/**
 * Metres in one map unit of crs across the middle of extent: the unit's length, or for degrees the
 * length of a degree of longitude at the middle latitude (the maps draw degrees as they are).
 */
double metresPerUnit( const QgsCoordinateReferenceSystem &crs, const QgsRectangle &extent )
{
  if ( crs.mapUnits() == vbasqgis::DistanceDegrees )
    return 111320.0 * std::cos( extent.center().y() * M_PI / 180.0 );
  return QgsUnitTypes::fromUnitToUnitFactor( crs.mapUnits(), vbasqgis::DistanceMeters );
}

//! The largest length of 1, 2 or 5 times a power of ten metres up to most.
double roundLength( double most )
{
  const double power = std::pow( 10.0, std::floor( std::log10( most ) ) );
  for ( const double step : { 5.0, 2.0 } )
    if ( step * power <= most )
      return step * power;
  return power;
}

//! A map of the layer's extent on an SVG canvas: world coordinates to pixels, y up; a scale bar below.
class SvgMap
{
  public:
    SvgMap( const QgsRectangle &extent, const QgsCoordinateReferenceSystem &crs, double width )
      : mExtent( extent )
      , mMetresPerUnit( metresPerUnit( crs, extent ) )
    {
      const double w = std::max( extent.width(), 1e-9 ), h = std::max( extent.height(), 1e-9 );
      mScale = std::min( width / w, width * 0.8 / h );
      mWidth = w * mScale + 2 * kPad;
      mHeight = h * mScale + 2 * kPad;
    }

    //! A polygon (or point) geometry filled with fill, its title shown on hover.
    void add( const QgsGeometry &geometry, const QString &fill, const QString &title )
    {
      if ( geometry.type() == vbasqgis::PointGeometry )
      {
        for ( const QgsGeometry &part : geometry.asGeometryCollection() )
          mark( part.asPoint(), 4, fill, title );
        return;
      }
      QgsGeometry simplified = geometry.simplify( 0.4 / mScale ); // below half a pixel nothing shows
      if ( simplified.isNull() || simplified.isEmpty() )
        simplified = QgsGeometry::fromRect( geometry.boundingBox() ); // a region smaller than a pixel: its box, never its every vertex
      QString d;
      for ( const QgsRingSequence &part : simplified.constGet()->coordinateSequence() )
        for ( const QgsPointSequence &ring : part )
        {
          for ( int i = 0; i < ring.size(); ++i )
            d += QStringLiteral( "%1%2 %3" ).arg( i == 0 ? QStringLiteral( "M" ) : QStringLiteral( "L" ), px( ring[i].x() ), py( ring[i].y() ) );
          d += QLatin1Char( 'Z' );
        }
      mBody += QStringLiteral( "<path d=\"%1\" fill=\"%2\" stroke=\"%3\" stroke-width=\"0.6\" fill-rule=\"evenodd\"><title>%4</title></path>\n" ).arg( d, fill, kOutline, esc( title ) );
    }

    void mark( const QgsPointXY &point, double radius, const QString &fill, const QString &title )
    {
      mBody += QStringLiteral( "<circle cx=\"%1\" cy=\"%2\" r=\"%3\" fill=\"%4\" stroke=\"#000\" stroke-width=\"0.8\"><title>%5</title></circle>\n" )
                 .arg( px( point.x() ), py( point.y() ), QString::number( radius, 'f', 1 ), fill, esc( title ) );
    }

    //! text at point, on top of the shapes, with a white halo.
    void label( const QgsPointXY &point, const QString &text )
    {
      mLabels += QStringLiteral( "<text class=\"id\" x=\"%1\" y=\"%2\" font-size=\"10\" text-anchor=\"middle\" dominant-baseline=\"middle\" stroke=\"#fff\" "
                                 "stroke-width=\"2.5\" paint-order=\"stroke\">%3</text>\n" )
                   .arg( px( point.x() ), py( point.y() ), esc( text ) );
    }

    QString svg( const QString &id, const QString &label ) const
    {
      const double height = mHeight + ( std::isfinite( mMetresPerUnit ) && mMetresPerUnit > 0 ? kScaleBarHeight : 0 );
      return QStringLiteral( "<svg id=\"%1\" role=\"img\" aria-label=\"%2\" width=\"%3\" height=\"%4\" viewBox=\"0 0 %3 %4\" xmlns=\"http://www.w3.org/2000/svg\">\n%5%6%7</svg>\n" )
        .arg( id, esc( label ), QString::number( std::ceil( mWidth ) ), QString::number( std::ceil( height ) ), mBody, mLabels, scaleBar() );
    }

  private:
    static constexpr double kPad = 8;
    static constexpr double kScaleBarHeight = 22;
    QString px( double x ) const { return QString::number( ( x - mExtent.xMinimum() ) * mScale + kPad, 'f', 1 ); }
    QString py( double y ) const { return QString::number( ( mExtent.yMaximum() - y ) * mScale + kPad, 'f', 1 ); }

    //! A bar of a round length, about a fifth of the map wide, below its bottom left corner; nothing in a CRS without a known unit.
    QString scaleBar() const
    {
      if ( !std::isfinite( mMetresPerUnit ) || mMetresPerUnit <= 0 )
        return QString();
      const double metres = roundLength( ( mWidth - 2 * kPad ) / 5 / mScale * mMetresPerUnit );
      const double length = metres / mMetresPerUnit * mScale;
      const double y = mHeight + 6;
      const QString text = metres >= 1000 ? QObject::tr( "%1 km" ).arg( metres / 1000 ) : QObject::tr( "%1 m" ).arg( metres );
      return QStringLiteral( "<g class=\"scale-bar\"><path d=\"M%1 %2V%3H%4V%2\" fill=\"none\" stroke=\"#000\" stroke-width=\"1.2\"/>"
                             "<text x=\"%5\" y=\"%3\" font-size=\"11\" dominant-baseline=\"middle\">%6</text></g>\n" )
        .arg( kPad )
        .arg( y, 0, 'f', 1 )
        .arg( y + 5, 0, 'f', 1 )
        .arg( kPad + length, 0, 'f', 1 )
        .arg( kPad + length + 6, 0, 'f', 1 )
        .arg( esc( text ) );
    }

    QgsRectangle mExtent;
    double mMetresPerUnit;
    double mScale = 1;
    double mWidth = 0;
    double mHeight = 0;
    QString mBody;
    QString mLabels;
};

QString legend( const QStringList &colours, const QStringList &labels, const QString &extra = QString() )
{
  QString items;
  for ( int i = 0; i < colours.size(); ++i )
    items += QStringLiteral( "<span class=\"key\"><i style=\"background:%1\"></i>%2</span>" ).arg( colours[i], esc( labels[i] ) );
  return QStringLiteral( "<div class=\"legend\">%1%2</div>" ).arg( items, extra );
}

QgsRectangle extentOf( const QVector<QgsGeometry> &geometries )
{
  QgsRectangle extent;
  for ( const QgsGeometry &g : geometries )
    extent.combineExtentWith( g.boundingBox() );
  return extent;
}

//! Up to five quantile classes of values: the upper bound of each class.
std::vector<std::int64_t> quantileBreaks( std::vector<std::int64_t> values )
{
  std::sort( values.begin(), values.end() );
  std::vector<std::int64_t> breaks;
  for ( int q = 1; q <= 5 && !values.empty(); ++q )
  {
    const std::int64_t b = values[std::min( values.size() - 1, values.size() * static_cast<std::size_t>( q ) / 5 )];
    if ( breaks.empty() || b > breaks.back() )
      breaks.push_back( b );
  }
  if ( !values.empty() )
    breaks.back() = values.back();
  return breaks;
}

QString releasedMap( const VbasReportInputs &in )
{
  const std::vector<vbas::AggregateSummary> summaries = vbas::summarize( in.release.aggregation.ecs, in.release.suppression );
  std::vector<std::int64_t> released;
  for ( const vbas::AggregateSummary &s : summaries )
    released.push_back( s.released );
  const std::vector<std::int64_t> breaks = quantileBreaks( released );
  const int offset = 5 - static_cast<int>( breaks.size() ); // fewer classes take the darker colours
  SvgMap map( extentOf( in.dissolved ), in.regions.crs, 620 );
  std::int64_t largestSuppressed = 1;
  for ( const vbas::AggregateSummary &s : summaries )
    largestSuppressed = std::max( largestSuppressed, s.suppressed );
  for ( std::size_t a = 0; a < summaries.size(); ++a )
  {
    const int cls = static_cast<int>( std::lower_bound( breaks.begin(), breaks.end(), summaries[a].released ) - breaks.begin() );
    map.add(
      in.dissolved[static_cast<int>( a )], kReleasedRamp[offset + cls],
      QObject::tr( "Aggregate %1: %2 records, %3 released, %4 suppressed" ).arg( vbasAggregateId( a ) ).arg( summaries[a].records ).arg( summaries[a].released ).arg( summaries[a].suppressed ) );
  }
  // Each aggregate's id (aggregate_id of the outputs) where they can be read; on hover past that.
  const bool labelled = summaries.size() <= kMostLabels;
  for ( std::size_t a = 0; labelled && a < summaries.size(); ++a )
    map.label( in.dissolved[static_cast<int>( a )].pointOnSurface().asPoint(), QString::number( vbasAggregateId( a ) ) );
  for ( std::size_t a = 0; a < summaries.size(); ++a )
    if ( summaries[a].suppressed > 0 )
      map.mark( in.dissolved[static_cast<int>( a )].pointOnSurface().asPoint(), 3 + 9 * std::sqrt( static_cast<double>( summaries[a].suppressed ) / static_cast<double>( largestSuppressed ) ),
                kSuppressedMark, QObject::tr( "Aggregate %1: %2 records suppressed" ).arg( vbasAggregateId( a ) ).arg( summaries[a].suppressed ) );
  QStringList labels;
  for ( std::size_t i = 0; i < breaks.size(); ++i )
    labels << QStringLiteral( "%1 - %2" ).arg( i == 0 ? 0 : breaks[i - 1] + 1 ).arg( breaks[i] );
  return map.svg( QStringLiteral( "released-map" ), QObject::tr( "Aggregated regions shaded by released records" ) )
         + legend(
           kReleasedRamp.mid( offset ), labels,
           QStringLiteral( "<span class=\"key\"><i class=\"dot\" style=\"background:%1\"></i>%2</span><span class=\"key\">%3</span>" )
             .arg( kSuppressedMark, QObject::tr( "suppressed records (area by count)" ), labelled ? QObject::tr( "numbers: aggregate_id" ) : QObject::tr( "aggregate_id: point at an aggregate" ) ) );
}

QString riskMap( const VbasReportInputs &in )
{
  const std::vector<std::int64_t> atRisk = vbas::recordsInSmallClasses( in.regionHistograms, in.model.k );
  SvgMap map( extentOf( in.regions.geometries ), in.regions.crs, 620 );
  for ( int r = 0; r < in.regions.geometries.size(); ++r )
  {
    const std::int64_t records = in.regionHistograms.rowTotal( static_cast<std::size_t>( r ) );
    const double share = records > 0 ? static_cast<double>( atRisk[static_cast<std::size_t>( r )] ) / static_cast<double>( records ) : 0;
    const int cls = static_cast<int>( std::lower_bound( std::begin( kRiskBreaks ), std::end( kRiskBreaks ), share ) - std::begin( kRiskBreaks ) );
    map.add( in.regions.geometries[r], records > 0 ? kRiskRamp[cls] : kNoRecords,
             QObject::tr( "Region %1: %2 of %3 records in classes below k" ).arg( in.regions.ids[r].toString() ).arg( atRisk[static_cast<std::size_t>( r )] ).arg( records ) );
  }
  return map.svg( QStringLiteral( "risk-map" ), QObject::tr( "Initial regions shaded by the share of records in classes below k" ) )
         + legend( kRiskRamp + QStringList { kNoRecords },
                   { QStringLiteral( "0" ), QStringLiteral( "up to 5%" ), QStringLiteral( "5 - 20%" ), QStringLiteral( "20 - 50%" ), QStringLiteral( "over 50%" ), QObject::tr( "no records" ) } );
}

//! The journalist risk classes of journalistMap, at the stated risks of guidance: up to 0.01, 0.05, 0.09, 0.2, above.
const double kJournalistBreaks[] = { 0.01, 0.05, 0.09, 0.2 };

//! Each aggregated region shaded by the largest journalist risk 1/F of its released classes (docs/method.md, Risk against the population).
QString journalistMap( const VbasReportInputs &in )
{
  const std::size_t aggregates = in.release.aggregation.aggregateId.size();
  const std::vector<double> risk = vbas::aggregateJournalistRisk( in.measured->released, aggregates );
  SvgMap map( extentOf( in.dissolved ), in.regions.crs, 620 );
  for ( std::size_t a = 0; a < aggregates; ++a )
  {
    const int cls = static_cast<int>( std::lower_bound( std::begin( kJournalistBreaks ), std::end( kJournalistBreaks ), risk[a] ) - std::begin( kJournalistBreaks ) );
    map.add( in.dissolved[static_cast<int>( a )], risk[a] > 0 ? kRiskRamp[cls] : kNoRecords,
             QObject::tr( "Aggregate %1: largest journalist risk %2" ).arg( vbasAggregateId( a ) ).arg( risk[a], 0, 'g', 3 ) );
  }
  return map.svg( QStringLiteral( "journalist-map" ), QObject::tr( "Aggregated regions shaded by the largest journalist risk of their released records" ) )
         + legend( kRiskRamp + QStringList { kNoRecords }, { QObject::tr( "up to 0.01" ), QStringLiteral( "0.01 - 0.05" ), QStringLiteral( "0.05 - 0.09" ), QStringLiteral( "0.09 - 0.2" ),
                                                             QObject::tr( "above 0.2" ), QObject::tr( "releases nothing" ) } );
}

//! The map of journalist risk under its heading, when the risk against the population was measured.
QString journalistSection( const VbasReportInputs &in )
{
  if ( !in.measured || in.measured->released.shortAggregate >= 0 || in.dissolved.isEmpty() )
    return QString();
  return QStringLiteral( "<h2>%1</h2><p>%2</p>\n" )
           .arg( esc( QObject::tr( "Journalist risk by aggregated region" ) ),
                 esc( QObject::tr( "Each aggregated region shaded by the largest journalist risk 1/F of its released records, F the residents of the record's class: what an attacker who "
                                   "starts from the population can hope for there. The breaks are the stated risks of guidance." ) ) )
         + journalistMap( in );
}

//! The EC sizes of the release before suppression, one bar per size up to 2k, then bins doubling in width.
QString ecHistogram( const VbasReportInputs &in )
{
  const std::vector<std::int64_t> &sizes = in.release.aggregation.ecs.counts;
  const std::int64_t largest = sizes.empty() ? 1 : std::max<std::int64_t>( 1, *std::max_element( sizes.begin(), sizes.end() ) );
  std::vector<std::pair<std::int64_t, std::int64_t>> bins; // [lo, hi]
  for ( std::int64_t s = 1; s <= std::min( 2 * in.model.k, largest ); ++s )
    bins.emplace_back( s, s );
  for ( std::int64_t lo = 2 * in.model.k + 1; lo <= largest; lo = 2 * lo - 1 )
    bins.emplace_back( lo, 2 * lo - 2 );
  std::vector<std::int64_t> counts( bins.size(), 0 );
  for ( const std::int64_t size : sizes )
    for ( std::size_t b = 0; b < bins.size(); ++b )
      if ( size >= bins[b].first && size <= bins[b].second )
        ++counts[b];
  const std::int64_t most = std::max<std::int64_t>( 1, *std::max_element( counts.begin(), counts.end() ) );
  const double left = 50, top = 14, plotW = 580, plotH = 180, barW = plotW / static_cast<double>( bins.size() );
  QString body = QStringLiteral( "<text x=\"20\" y=\"%1\" font-size=\"11\">%2</text><text x=\"20\" y=\"%3\" font-size=\"11\">0</text>\n" ).arg( top + 4 ).arg( most ).arg( top + plotH );
  body += QStringLiteral( "<text class=\"axis\" x=\"%1\" y=\"254\" font-size=\"12\" text-anchor=\"middle\">%2</text>\n" )
            .arg( left + plotW / 2, 0, 'f', 1 )
            .arg( QObject::tr( "Equivalence class size (records)" ) );
  body += QStringLiteral( "<text class=\"axis\" x=\"12\" y=\"%1\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 12 %1)\">%2</text>\n" )
            .arg( top + plotH / 2, 0, 'f', 1 )
            .arg( QObject::tr( "Equivalence classes" ) );
  for ( std::size_t b = 0; b < bins.size(); ++b )
  {
    const double h = plotH * static_cast<double>( counts[b] ) / static_cast<double>( most );
    const double x = left + barW * static_cast<double>( b );
    const QString label = bins[b].first == bins[b].second ? QString::number( bins[b].first ) : QStringLiteral( "%1-%2" ).arg( bins[b].first ).arg( bins[b].second );
    body += QStringLiteral( "<rect x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\" fill=\"%5\"><title>EC size %6: %7 ECs</title></rect>\n" )
              .arg( x + 1, 0, 'f', 1 )
              .arg( top + plotH - h, 0, 'f', 1 )
              .arg( std::max( 1.0, barW - 2 ), 0, 'f', 1 )
              .arg( h, 0, 'f', 1 )
              .arg( bins[b].second < in.model.k ? kSuppressedBar : kReleasedBar, label )
              .arg( counts[b] );
    body += QStringLiteral( "<text x=\"%1\" y=\"%2\" font-size=\"9\" transform=\"rotate(45 %1 %2)\">%3</text>\n" ).arg( x + barW / 2, 0, 'f', 1 ).arg( top + plotH + 10 ).arg( label );
  }
  const auto kBin = std::find_if( bins.begin(), bins.end(), [&]( const auto &bin ) { return bin.first == in.model.k; } );
  const double kx = left + barW * static_cast<double>( kBin - bins.begin() );
  body += QStringLiteral(
            "<line x1=\"%1\" y1=\"%2\" x2=\"%1\" y2=\"%3\" stroke=\"#000\" stroke-width=\"2\" stroke-dasharray=\"5 3\"/><text x=\"%4\" y=\"%5\" font-size=\"12\" font-weight=\"bold\">k = %6</text>\n" )
            .arg( kx, 0, 'f', 1 )
            .arg( top - 4 )
            .arg( top + plotH )
            .arg( kx + 4, 0, 'f', 1 )
            .arg( top + 8 )
            .arg( in.model.k );
  body += QStringLiteral( "<line x1=\"%1\" y1=\"%2\" x2=\"%3\" y2=\"%2\" stroke=\"#000\"/>\n" ).arg( left ).arg( top + plotH ).arg( left + plotW );
  return QStringLiteral( "<svg id=\"ec-histogram\" role=\"img\" aria-label=\"%1\" width=\"640\" height=\"262\" viewBox=\"0 0 640 262\" xmlns=\"http://www.w3.org/2000/svg\">\n%2</svg>\n" )
           .arg( QObject::tr( "Histogram of EC sizes" ), body )
         + legend( { kSuppressedBar, kReleasedBar }, { QObject::tr( "ECs below k (suppressed)" ), QObject::tr( "ECs of k or more (released)" ) } );
}

QString metricsTable( const VbasReportInputs &in )
{
  QString rows;
  for ( std::size_t i = 0; i < vbas::metrics().size(); ++i )
  {
    const vbas::Metric &m = vbas::metrics()[i];
    const std::optional<double> &v = in.values[i];
    rows += QStringLiteral( "<tr><td>%1</td><td class=\"num\">%2</td><td>%3</td><td><code>%4</code></td></tr>\n" )
              .arg( esc( QObject::tr( m.label ) ), v ? number( *v, m.whole ) : QObject::tr( "n/a" ), esc( QObject::tr( m.meaning ) ), esc( QString::fromLatin1( m.formula ) ) );
  }
  return QStringLiteral( "<table id=\"metrics\"><tr><th>Metric</th><th>Value</th><th>What it says</th><th>Formula</th></tr>\n%1</table>\n" ).arg( rows );
}

//! The metric of field as the report writes it; "n/a" when it does not apply.
QString metricText( const VbasReportInputs &in, const char *field )
{
  for ( std::size_t i = 0; i < vbas::metrics().size(); ++i )
    if ( std::strcmp( vbas::metrics()[i].field, field ) == 0 )
      return in.values[i] ? number( *in.values[i], vbas::metrics()[i].whole ) : QObject::tr( "n/a" );
  return QObject::tr( "n/a" );
}

//! What the verdict says of the criteria the metrics list besides k: the release promises k-anonymity only.
QString otherCriteria( const VbasReportInputs &in )
{
  if ( !vbas::metricValue( in.values, "l_diversity" ) )
    return QObject::tr( "No sensitive field was given, so l-diversity and t-closeness were not measured." );
  return QObject::tr( "l-diversity and t-closeness were measured (l = %1, t = %2), not required: this release promises k-anonymity only." )
    .arg( metricText( in, "l_diversity" ), metricText( in, "t_closeness" ) );
}

//! The risk against each attacker (docs/method.md, Risk against the population), with where the residents come from.
//! The release's model and the stated risk it meets, beside the thresholds of guidance (docs/method.md, "A release at a stated risk").
QList<QPair<QString, QString>> modelRows( const VbasReportInputs &in )
{
  using Model = VbasReleaseSettings::Model;
  const QString bound = QString::number( 1.0 / static_cast<double>( in.model.k ), 'g', 3 );
  QString model;
  switch ( in.model.model )
  {
    case Model::KAnonymity:
      model = QObject::tr( "k-anonymity at k = %1: every released class holds %1 records or more, so no released record's prosecutor risk exceeds 1/%1 = %2." ).arg( in.model.k ).arg( bound );
      break;
    case Model::KMap:
      model = QObject::tr( "k-map at k = %1: every released class has %1 residents or more in the population table, so no released record's journalist risk exceeds 1/%1 = %2." )
                .arg( in.model.k )
                .arg( bound );
      break;
    case Model::AverageRisk:
      model = QObject::tr( "Average risk: the released records' average %1 risk at most %2, and no released class below k = %3 records." )
                .arg( in.model.residents ? QObject::tr( "journalist" ) : QObject::tr( "prosecutor" ) )
                .arg( in.model.averageThreshold )
                .arg( in.model.k );
      break;
  }
  return { { QObject::tr( "Release model (RISK_MODEL)" ), model },
           { QObject::tr( "Stated risks of guidance" ), QObject::tr( "Ontario IPC de-identification guidelines, by the invasion of privacy of the release: 0.09 low (k = 12), 0.075 medium "
                                                                     "(k = 14), 0.05 high (k = 20), k the smallest with 1/k at most the risk." ) } };
}

QString populationSection( const VbasReportInputs &in )
{
  QList<QPair<QString, QString>> rows { { QObject::tr( "Prosecutor (knows that the person is in the release)" ),
                                          QObject::tr( "largest chance of re-identification %1, average %2; %3 % of the released records above the threshold %4" )
                                            .arg( metricText( in, "max_risk" ), metricText( in, "avg_risk" ), metricText( in, "risk_above_pct" ), metricText( in, "risk_threshold" ) ) } };
  if ( vbas::metricValue( in.values, "journalist_max_risk" ) )
    rows << QPair<QString, QString> { QObject::tr( "Journalist (starts from the population, a list of its residents)" ),
                                      QObject::tr( "largest chance %1, average %2; %3 % of the released records above the threshold %4" )
                                        .arg( metricText( in, "journalist_max_risk" ), metricText( in, "journalist_avg_risk" ), metricText( in, "journalist_above_pct" ),
                                              metricText( in, "risk_threshold" ) ) }
         << QPair<QString, QString> { QObject::tr( "Marketer (matches every resident with a released record)" ),
                                      QObject::tr( "expected share of the released records re-identified %1" ).arg( metricText( in, "marketer_risk" ) ) };
  QString table;
  for ( const auto &[name, value] : modelRows( in ) + in.population + rows )
    table += QStringLiteral( "<tr><td>%1</td><td>%2</td></tr>\n" ).arg( esc( name ), esc( value ) );
  return QStringLiteral( "<h2>%1</h2><p>%2</p><table id=\"population\">%3</table>\n" )
    .arg( esc( QObject::tr( "Risk against the population" ) ),
          esc( QObject::tr( "Each attacker's chance of re-identifying a released record, and the residents it is counted against (docs: Risk against the population)." ) ), table );
}

//! The model's average risk of the released records: the journalist's with a population table, else the prosecutor's.
std::optional<double> averageRisk( const VbasReportInputs &in )
{
  return vbas::metricValue( in.values, in.model.residents ? "journalist_avg_risk" : "avg_risk" );
}

//! Whether the release meets its model: k records in every released class, under k-map a journalist risk of at most 1/k (k residents) in every one, under the average risk model its average too.
bool meetsModel( const VbasReportInputs &in )
{
  const std::optional<double> released = vbas::metricValue( in.values, "released" );
  if ( released && *released == 0 )
    return true;
  if ( in.model.model == VbasReleaseSettings::Model::KMap )
  {
    const std::optional<double> risk = vbas::metricValue( in.values, "journalist_max_risk" );
    return risk && *risk * static_cast<double>( in.model.k ) <= 1 + 1e-12;
  }
  const std::optional<double> smallest = vbas::metricValue( in.values, "smallest_ec" );
  const bool anonymous = smallest && *smallest >= static_cast<double>( in.model.k );
  if ( in.model.model == VbasReleaseSettings::Model::KAnonymity )
    return anonymous;
  const std::optional<double> average = averageRisk( in );
  return anonymous && average && *average <= in.model.averageThreshold * ( 1 + vbas::kAverageRiskTolerance );
}

//! The verdict's first sentence: the model, whether the release meets it, and what it does not protect against.
QString modelVerdict( const VbasReportInputs &in, bool met )
{
  using Model = VbasReleaseSettings::Model;
  const QString prosecutor = QObject::tr( "Classes may hold fewer than k records (the smallest holds %1): against an attacker who knows a person is in the records (prosecutor risk), a "
                                          "released record's risk reaches %2." )
                               .arg( metricText( in, "smallest_ec" ), metricText( in, "max_risk" ) );
  switch ( in.model.model )
  {
    case Model::KAnonymity:
      return met ? QObject::tr( "k-anonymous: every released equivalence class holds at least k = %1 records." ).arg( in.model.k )
                 : QObject::tr( "NOT k-anonymous: a released equivalence class holds fewer than k = %1 records." ).arg( in.model.k );
    case Model::KMap:
      return ( met ? QObject::tr( "k-map: every released equivalence class has at least k = %1 residents in the population table, so no released record's journalist risk "
                                  "exceeds 1/%1 = %2." )
                       .arg( in.model.k )
                       .arg( 1.0 / static_cast<double>( in.model.k ), 0, 'g', 3 )
                   : QObject::tr( "NOT k-map: a released equivalence class has fewer than k = %1 residents in the population table, or they could not be counted." ).arg( in.model.k ) )
             + ' ' + prosecutor;
    case Model::AverageRisk:
      break;
  }
  const std::optional<double> average = averageRisk( in );
  const QString attacker = in.model.residents ? QObject::tr( "journalist" ) : QObject::tr( "prosecutor" );
  return met ? QObject::tr( "Average risk: every released equivalence class holds at least k = %1 records, and the released records' average %2 risk is %3, at most "
                            "the stated %4. A record of the smallest class has a risk of up to %5: the average bounds the share of records an attacker can expect "
                            "to re-identify, not any one record's risk." )
                 .arg( in.model.k )
                 .arg( attacker, average ? QString::number( *average, 'g', 3 ) : QObject::tr( "not known" ) )
                 .arg( in.model.averageThreshold )
                 .arg( metricText( in, in.model.residents ? "journalist_max_risk" : "max_risk" ) )
             : QObject::tr( "NOT within the average risk: a released class holds fewer than k = %1 records, or the released records' average %2 risk, %3, is above the stated %4." )
                 .arg( in.model.k )
                 .arg( attacker, average ? QString::number( *average, 'g', 3 ) : QObject::tr( "not known" ) )
                 .arg( in.model.averageThreshold );
}

//! Five lines a privacy officer reads first: what was read, released and suppressed, the aggregates, the smallest class and the risk.
QString summary( const VbasReportInputs &in )
{
  const QStringList lines { QObject::tr( "Records read: %1." ).arg( metricText( in, "records" ) ),
                            QObject::tr( "Released: %1; suppressed: %2 (%3 %)." ).arg( metricText( in, "released" ), metricText( in, "suppressed" ), metricText( in, "suppressed_pct" ) ),
                            QObject::tr( "Aggregated regions: %1." ).arg( metricText( in, "aggregates" ) ),
                            QObject::tr( "Smallest released class: %1 records (k = %2)." ).arg( metricText( in, "smallest_ec" ) ).arg( in.model.k ),
                            QObject::tr( "Largest chance of re-identifying a released record: %1." ).arg( metricText( in, "max_risk" ) ) };
  QString items;
  for ( const QString &line : lines )
    items += QStringLiteral( "<li>%1</li>" ).arg( esc( line ) );
  return QStringLiteral( "<ul id=\"summary\">%1</ul>\n" ).arg( items );
}

const char *kStyle = R"(body{font-family:"DejaVu Sans",sans-serif;margin:24px;max-width:1000px;color:#222}
#audience{font-weight:bold;border:2px solid #222;padding:6px}h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}
td.num{text-align:right;white-space:nowrap}code,pre{font-size:12px}pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:8px}
.legend{font-size:12px;margin:4px 0 12px}.key{margin-right:14px;white-space:nowrap}.key i{display:inline-block;width:14px;height:14px;border:1px solid #4d4d4d;vertical-align:middle;margin-right:4px}
.key i.dot{border-radius:7px;border-color:#000}.verdict{font-weight:bold}.ok{color:#1a7f37}.bad{color:#c00})";

} // namespace

QByteArray vbasReport( const VbasReportInputs &in )
{
  const bool anonymous = meetsModel( in );
  const auto section = []( const QString &title, const QString &text ) { return QStringLiteral( "<h2>%1</h2><p>%2</p>\n" ).arg( esc( title ), esc( text ) ); };
  QString generalization;
  for ( const auto &[name, value] : in.generalization )
    generalization += QStringLiteral( "<tr><td>%1</td><td>%2</td></tr>\n" ).arg( esc( name ), esc( value ) );
  if ( !generalization.isEmpty() )
    generalization = section( QObject::tr( "Generalization" ), QObject::tr( "The levels chosen for the QIs with the geography, and the values written as * (docs: Generalization)." ) )
                     + QStringLiteral( "<table id=\"generalization\">" ) + generalization + QStringLiteral( "</table>\n" );
  const QString verdict = modelVerdict( in, anonymous ) + ' ' + otherCriteria( in );
  const QString body
    = QStringLiteral( "<p class=\"verdict %1\">" ).arg( anonymous ? QStringLiteral( "ok" ) : QStringLiteral( "bad" ) ) + esc( verdict ) + QStringLiteral( "</p>\n" ) + summary( in )
      + QStringLiteral( "<h2>Metrics</h2>" ) + metricsTable( in ) + populationSection( in ) + generalization
      + section(
        QObject::tr( "Released records by aggregated region" ),
        QObject::tr( "Each aggregated region shaded by its released records (quantile classes); orange circles mark aggregated regions with suppressed records, their area growing with the count." ) )
      + releasedMap( in )
      + section(
        QObject::tr( "Risk before release" ),
        QObject::tr(
          "Each initial region shaded by the share of its records that sit in (region, QI) classes smaller than k: where a release at the initial regions would have exposed patients, and what aggregation had to protect." ) )
      + riskMap( in ) + journalistSection( in )
      + section( QObject::tr( "Equivalence class sizes" ),
                 in.model.model == VbasReleaseSettings::Model::KMap
                   ? QObject::tr( "Equivalence classes (aggregated region, QI values) by their records before suppression. Under k-map a class is suppressed by its residents, "
                                  "not its records: classes left of k were released when they have k residents, and the colours show records only." )
                   : QObject::tr( "Equivalence classes (aggregated region, QI values) by size before suppression: the classes left of k were suppressed." ) )
      + ecHistogram( in ) + vbasReportParameters( in.parameters, in.command );
  return vbasReportPage( in.title,
                         QObject::tr( "For the data custodian only: not for publication. This page gives counts that the release does not tell, such as the records of each initial "
                                      "region in classes below k." ),
                         body );
}

QByteArray vbasReportPage( const QString &title, const QString &audience, const QString &body )
{
  const QString html = QStringLiteral( "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" ) + esc( title ) + QStringLiteral( "</title><style>" ) + QString::fromLatin1( kStyle )
                       + QStringLiteral( "</style></head><body>\n<p id=\"audience\">" ) + esc( audience ) + QStringLiteral( "</p>\n<h1>" ) + esc( title ) + QStringLiteral( "</h1><p>" )
                       + esc( QObject::tr( "Made on %1 by VBAS for QGIS." ).arg( QDateTime::currentDateTime().toString( Qt::ISODate ) ) ) + QStringLiteral( "</p>" ) + body
                       + QStringLiteral( "</body></html>\n" );
  return html.toUtf8();
}

QString vbasReportParameters( const VbasRunParameters &run, const QString &command )
{
  QString parameters;
  // Each parameter by its label and id, a choice by its option's label too (the ids and values are the command's below).
  for ( const auto &[name, value] : run.values )
  {
    const QString choice = run.choices.value( name );
    parameters += QStringLiteral( "<tr><td>%1</td><td><code>%2</code></td><td>%3</td></tr>\n" )
                    .arg( esc( run.labels.value( name ) ), esc( name ), esc( value ) + ( choice.isEmpty() ? QString() : QStringLiteral( " (%1)" ).arg( esc( choice ) ) ) );
  }
  return QStringLiteral( "<h2>Parameters</h2><table id=\"parameters\">" ) + parameters + QStringLiteral( "</table><h2>Repeat this run</h2><pre id=\"command\">" ) + esc( command )
         + QStringLiteral( "</pre>" );
}

VbasOutputSchema vbasReportSchema()
{
  VbasOutputSchema schema;
  schema.name = QStringLiteral( "REPORT" );
  schema.document = true;
  return schema;
}

namespace
{

//! The qgis_process of this QGIS: Debian's qgis_process wrapper is broken, its qgis_process.bin is the program itself.
QString qgisProcessProgram()
{
  const QString bin = QgsApplication::prefixPath() + QStringLiteral( "/bin/qgis_process" );
  return QFileInfo::exists( bin + QStringLiteral( ".bin" ) ) ? bin + QStringLiteral( ".bin" ) : bin;
}

/**
 * A source as qgis_process reads it: a file's path, another provider's <provider>://<source> (as QGIS's
 * processing widgets write it). A temporary layer's bare source: no command reads it back, and
 * memory://<source> would read an empty layer where the bare one fails to load.
 */
QString sourceText( const QgsVectorLayer &layer )
{
  const QString provider = layer.providerType();
  return provider == QLatin1String( "ogr" ) || provider == QLatin1String( "memory" ) ? layer.source() : QgsProcessingUtils::encodeProviderKeyAndUri( provider, layer.source() );
}

//! One parameter's values as qgis_process takes them: none when it is empty.
QStringList parameterTexts( const QgsProcessingParameterDefinition *def, const QVariantMap &parameters, QgsProcessingContext &context )
{
  const QVariant value = parameters.value( def->name(), def->defaultValue() );
  if ( !value.isValid() || value.isNull() || ( value.userType() == QMetaType::QString && value.toString().isEmpty() ) )
    return {};
  const QString type = def->type();
  if ( type == QgsProcessingParameterFeatureSource::typeName() )
  {
    const QgsVectorLayer *layer = QgsProcessingParameters::parameterAsVectorLayer( def, parameters, context );
    return { layer ? sourceText( *layer ) : value.toString() };
  }
  if ( type == QgsProcessingParameterField::typeName() )
    return vbasqgis::parameterAsFields( def, parameters, context );
  if ( def->isDestination() )
  {
    const QString destination = value.canConvert<QgsProcessingOutputLayerDefinition>() ? value.value<QgsProcessingOutputLayerDefinition>().sink.staticValue().toString() : value.toString();
    return { destination.isEmpty() ? QgsProcessing::TEMPORARY_OUTPUT : destination };
  }
  if ( type == QgsProcessingParameterEnum::typeName() )
    return { QString::number( QgsProcessingParameters::parameterAsEnum( def, parameters, context ) ) };
  if ( type == QgsProcessingParameterBoolean::typeName() )
    return { QgsProcessingParameters::parameterAsBoolean( def, parameters, context ) ? QStringLiteral( "true" ) : QStringLiteral( "false" ) };
  if ( type == QgsProcessingParameterNumber::typeName() )
    return { QString::number( QgsProcessingParameters::parameterAsDouble( def, parameters, context ), 'g', QLocale::FloatingPointShortest ) };
  return { QgsProcessingParameters::parameterAsString( def, parameters, context ) };
}

} // namespace

VbasRunParameters vbasRunParameters( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QVariantMap &resolved )
{
  VbasRunParameters result;
  for ( const QgsProcessingParameterDefinition *def : algorithm.parameterDefinitions() )
  {
    const QString name = def->name();
    result.labels.insert( name, def->description() );
    if ( const auto *choice = dynamic_cast<const QgsProcessingParameterEnum *>( def ) )
      result.choices.insert( name, choice->options().value( QgsProcessingParameters::parameterAsEnum( def, parameters, context ) ) );
    for ( const QString &value : resolved.contains( name ) ? QStringList { resolved.value( name ).toString() } : parameterTexts( def, parameters, context ) )
    {
      bool removed = false;
      result.values.append( { name, VbasSecrets::withoutPasswords( value, &removed ) } );
      result.passwordsLeftOut = result.passwordsLeftOut || removed;
    }
  }
  return result;
}

QString vbasProcessCommand( const QgsProcessingAlgorithm &algorithm, const VbasRunParameters &parameters )
{
  const auto quote = []( const QString &text ) { return QStringLiteral( "'%1'" ).arg( QString( text ).replace( QLatin1Char( '\'' ), QStringLiteral( "'\\''" ) ) ); };
  // The profile the run's plugin was enabled in (<root>/profiles/<name>): qgis_process reads the default profile of <root>/profiles.
  QDir profiles( QgsApplication::qgisSettingsDirPath() );
  const QString profileName = profiles.dirName();
  profiles.cdUp();
  QStringList lines;
  if ( profileName != QgsUserProfileManager( profiles.absolutePath() ).defaultProfileName() )
    lines << QObject::tr( "# This run used the QGIS profile '%1', qgis_process uses the default profile: enable the plugin vbas there first." ).arg( profileName );
  if ( parameters.passwordsLeftOut )
    lines << QObject::tr( "# The password of a connection was left out (passwords are never written): give it through ~/.pgpass or PGPASSWORD, or connect with authcfg=." );
  QStringList words { QStringLiteral( "cd" ),
                      quote( QDir::currentPath() ),
                      QStringLiteral( "&&" ),
                      QStringLiteral( "QT_QPA_PLATFORM=offscreen" ),
                      QStringLiteral( "QGIS_CUSTOM_CONFIG_PATH=" ) + quote( QFileInfo( profiles.absolutePath() ).path() ),
                      quote( qgisProcessProgram() ),
                      QStringLiteral( "run" ),
                      algorithm.id(),
                      QStringLiteral( "--" ) };
  for ( const auto &[name, value] : parameters.values )
    words << quote( name + '=' + value );
  lines << words.join( QLatin1Char( ' ' ) );
  return lines.join( QLatin1Char( '\n' ) );
}
