#include "plugin/inputs/vbaswrittenlabels.h"

#include <qgsexception.h>

#include <QRegularExpression>

#include <cmath>
#include <limits>

namespace
{

//! A census value as interval labels hold it: a number, a whole-number band "20-24" ([20, 25)) or an open band "85+" ([85, inf)).
struct Span
{
    double lo = 0;
    double hi = 0;
    bool point = true;
};

std::optional<Span> spanOf( const QString &text )
{
  bool ok = false;
  const double x = text.trimmed().toDouble( &ok );
  if ( ok && std::isfinite( x ) )
    return Span { x, x, true };
  static const QRegularExpression band( QStringLiteral( "^\\s*(-?\\d+)\\s*-\\s*(-?\\d+)\\s*$" ) ), open( QStringLiteral( "^\\s*(-?[0-9.]+)\\s*\\+\\s*$" ) );
  if ( const QRegularExpressionMatch m = band.match( text ); m.hasMatch() )
    return Span { m.captured( 1 ).toDouble(), m.captured( 2 ).toDouble() + 1, false };
  if ( const QRegularExpressionMatch m = open.match( text ); m.hasMatch() )
    return Span { m.captured( 1 ).toDouble(), std::numeric_limits<double>::infinity(), false };
  return std::nullopt;
}

//! Whether the interval label written ("[20, 30)", "[80, inf)") holds the census value text whole.
bool intervalHolds( const QString &written, const QString &text )
{
  static const QRegularExpression interval( QStringLiteral( "^\\[([^,]+), ([^)]+)\\)$" ) );
  const QRegularExpressionMatch m = interval.match( written );
  const std::optional<Span> span = spanOf( text );
  if ( !m.hasMatch() || !span )
    return false;
  const double from = m.captured( 1 ).toDouble(), to = m.captured( 2 ) == QLatin1String( "inf" ) ? std::numeric_limits<double>::infinity() : m.captured( 2 ).toDouble();
  return from <= span->lo && ( span->point ? span->lo < to : span->hi <= to );
}

//! "name = level of top" pairs of qi_levels, by name.
QHash<QString, std::size_t> levelsOf( const QString &qiLevels )
{
  QHash<QString, std::size_t> levels;
  static const QRegularExpression pair( QStringLiteral( "(?:^|, )(.+?) = (\\d+) of \\d+" ) );
  for ( QRegularExpressionMatchIterator it = pair.globalMatch( qiLevels ); it.hasNext(); )
  {
    const QRegularExpressionMatch m = it.next();
    levels.insert( m.captured( 1 ), m.captured( 2 ).toULongLong() );
  }
  return levels;
}

//! "name=what" entries of hierarchies ("age=age.csv sha256:<hex>", "age=5", "sex=*"), by name.
QHash<QString, QString> kindsOf( const QString &hierarchies )
{
  QHash<QString, QString> kinds;
  for ( const QString &entry : hierarchies.split( QStringLiteral( "; " ), Qt::SkipEmptyParts ) )
    kinds.insert( entry.section( '=', 0, 0 ), entry.section( '=', 1 ) );
  return kinds;
}

} // namespace

VbasWrittenLabels::VbasWrittenLabels( const QString &qiLevels, const QString &hierarchies, const QStringList &names, const std::vector<bool> &text, const QMap<QString, VbasHierarchyFile> &files )
  : mMemo( static_cast<std::size_t>( names.size() ) )
{
  const QHash<QString, std::size_t> levels = levelsOf( qiLevels );
  const QHash<QString, QString> kinds = kindsOf( hierarchies );
  static const QRegularExpression digest( QStringLiteral( " sha256:([0-9a-f]{64})$" ) );
  for ( int q = 0; q < names.size(); ++q )
  {
    const QString &name = names[q];
    if ( !levels.contains( name ) )
      throw QgsProcessingException( QObject::tr( "The lookup's qi_levels '%1' do not name the QI field %2: give the lookup of the release, and its QI fields." ).arg( qiLevels, name ) );
    Qi qi;
    qi.level = levels.value( name );
    qi.text = text[static_cast<std::size_t>( q )];
    const QString kind = kinds.value( name );
    if ( qi.level > 0 && kind.isEmpty() )
      throw QgsProcessingException( QObject::tr( "The lookup generalizes %1 (qi_levels '%2') but does not record its hierarchy (no hierarchies field, or none for %1): it was written "
                                                 "before VBAS recorded them, and its labels cannot be placed. Make the release again." )
                                      .arg( name, qiLevels ) );
    const QRegularExpressionMatch file = digest.match( kind );
    qi.intervals = qi.level > 0 && !file.hasMatch() && kind != QLatin1String( "*" );
    if ( qi.level > 0 && file.hasMatch() )
    {
      if ( !files.contains( name ) )
        throw QgsProcessingException( QObject::tr( "The release generalizes %1 with the hierarchy file %2: give that file in HIERARCHIES, so that the population table's values "
                                                   "can be placed under its labels." )
                                        .arg( name, kind.left( file.capturedStart() ) ) );
      if ( files.value( name ).sha256 != file.captured( 1 ) )
        throw QgsProcessingException(
          QObject::tr( "HIERARCHIES: the file given for %1 is not the one the release was generalized with (%2): its bytes differ." ).arg( name, kind.left( file.capturedStart() ) ) );
      qi.file = files.value( name ).hierarchy;
    }
    mQis.push_back( std::move( qi ) );
  }
}

bool VbasWrittenLabels::labelHolds( const Qi &qi, const QVariant &census, const QString &written ) const
{
  const QString text = census.isNull() ? QStringLiteral( "NULL" ) : census.toString(); // a hierarchy's row NULL, an interval hierarchy's label NULL: a missing value
  if ( qi.file )
  {
    const std::optional<std::size_t> row = qi.file->find( text.toStdString() );
    return row && qi.level < qi.file->levels() && QString::fromStdString( qi.file->label( qi.level, qi.file->labelId( qi.level, *row ) ) ) == written;
  }
  return census.isNull() ? written == text : intervalHolds( written, text );
}

bool VbasWrittenLabels::under( int q, const QVariant &census, const QString &written ) const
{
  const Qi &qi = mQis[static_cast<std::size_t>( q )];
  if ( written == QLatin1String( "*" ) || ( written.isNull() && !qi.text ) ) // a starred value: "*", or NULL where "*" cannot be written
    return true;
  if ( qi.level == 0 || ( !qi.file && !qi.intervals ) || written.isNull() ) // the value itself
    return census.isNull() ? written.isNull() : !written.isNull() && census.toString() == written;
  QHash<QString, bool> &memo = mMemo[static_cast<std::size_t>( q )];
  const QString key = ( census.isNull() ? QString( QChar( 1 ) ) : census.toString() ) + QChar( 0x1f ) + written;
  const auto known = memo.constFind( key );
  if ( known != memo.constEnd() )
    return *known;
  const bool holds = labelHolds( qi, census, written );
  memo.insert( key, holds );
  return holds;
}
