#include "plugin/inputs/vbasstoredrows.h"

#include <qgsexception.h>

#include <QRegularExpression>

#include <QMap>

#include <cpl_csv.h>
#include <cpl_string.h>

QList<VbasStoredColumn> vbasStoredColumns( const QgsFields &fields, const QgsAttributeList &compared, int count )
{
  QList<VbasStoredColumn> columns;
  for ( const int field : compared )
    columns << VbasStoredColumn { field, fields.at( field ).name(), true };
  if ( count >= 0 )
    columns << VbasStoredColumn { count, fields.at( count ).name(), false };
  return columns;
}

std::optional<QString> vbasPlainText( const QByteArray &bytes )
{
  // QString::fromUtf8 drops a leading U+FEFF: it is kept, for the check to see it.
  const bool bom = bytes.startsWith( "\xEF\xBB\xBF" );
  const QString text = ( bom ? QString( QChar( 0xFEFF ) ) : QString() ) + QString::fromUtf8( bom ? bytes.mid( 3 ) : bytes );
  if ( text.toUtf8() != bytes || bytes.contains( '\0' ) )
    return std::nullopt;
  return text;
}

VbasCsvRows::VbasCsvRows( const QString &path, const VbasCsvLayout &layout, const QList<VbasStoredColumn> &columns, int fieldCount )
  : VbasFileRows( columns, fieldCount )
  , mPath( path )
  , mLineIds( layout.lineIds )
{
  mFile = VSIFOpenL( path.toUtf8().constData(), "rb" );
  if ( !mFile )
    throw QgsProcessingException( QObject::tr( "Could not open the CSV file %1 to read its text." ).arg( path ) );
  for ( ; mLine < layout.skipLines && CPLReadLineL( mFile ); ++mLine )
    ;
  const vsi_l_offset start = VSIFTellL( mFile );
  const char *first = layout.delimiter ? nullptr : CPLReadLineL( mFile );
  mDelimiter = std::string( 1, layout.delimiter ? *layout.delimiter : first ? CSVDetectSeperator( first ) : ',' );
  VSIFSeekL( mFile, start, SEEK_SET );
  const QStringList header = layout.header ? line().value_or( QStringList() ) : QStringList();
  for ( const VbasStoredColumn &column : columns )
  {
    const int at = layout.header ? header.indexOf( column.name ) : unnamed( column.name );
    if ( at < 0 )
    {
      VSIFCloseL( mFile );
      throw QgsProcessingException( QObject::tr( "The field '%1' is not a column named in the first line of the CSV file %2, so its text cannot be read: "
                                                 "give the file a header line, or compare its typed values (TYPED_CSV)." )
                                      .arg( column.name, path ) );
    }
    mAt << at;
  }
}

VbasCsvRows::~VbasCsvRows()
{
  VSIFCloseL( mFile );
}

bool VbasCsvRows::next( QgsFeatureId &id, QgsAttributes &values )
{
  std::optional<QStringList> fields;
  do
    fields = line();
  while ( fields && fields->isEmpty() );
  if ( !fields )
    return false;
  ++mRow;
  id = mLineIds ? mStart : mRow;
  values = QgsAttributes( mFieldCount );
  for ( int i = 0; i < mColumns.size(); ++i )
    values[mColumns[i].field] = mAt[i] < fields->size() ? QVariant( fields->at( mAt[i] ) ) : QVariant( QVariant::String );
  return true;
}

int VbasCsvRows::unnamed( const QString &name )
{
  const QRegularExpressionMatch match = QRegularExpression( QStringLiteral( "^field_([1-9][0-9]*)$" ) ).match( name );
  return match.hasMatch() ? match.captured( 1 ).toInt() - 1 : -1;
}

std::optional<QStringList> VbasCsvRows::line()
{
  char **tokens = CSVReadParseLine3L( mFile, 0, mDelimiter.c_str(), true, false, false, true );
  if ( !tokens )
    return std::nullopt;
  mStart = ++mLine;
  QStringList fields;
  for ( int i = 0; tokens[i]; ++i )
  {
    const QByteArray bytes( tokens[i] );
    mLine += bytes.count( '\n' ); // a quoted field across lines
    const std::optional<QString> text = vbasPlainText( bytes );
    if ( !text )
    {
      CSLDestroy( tokens );
      throw QgsProcessingException( QObject::tr( "Data line %1 of the CSV file %2 holds bytes that are not UTF-8 text." ).arg( mRow + 1 ).arg( mPath ) );
    }
    fields << *text;
  }
  CSLDestroy( tokens );
  return fields;
}

std::optional<VbasCsvLayout> vbasDelimitedTextLayout( const QStringList &openOptions, QString &because )
{
  QMap<QString, QString> options;
  for ( const QString &option : openOptions )
    options.insert( option.section( '=', 0, 0 ), option.section( '=', 1 ) );
  QString delimiter = options.value( QStringLiteral( "delimiter" ), QStringLiteral( "," ) );
  delimiter.replace( QLatin1String( "\\t" ), QLatin1String( "\t" ) );
  const QString quote = options.value( QStringLiteral( "quote" ), QStringLiteral( "\"" ) ), escape = options.value( QStringLiteral( "escape" ), QStringLiteral( "\"" ) );
  if ( options.value( QStringLiteral( "type" ), QStringLiteral( "csv" ) ) != QLatin1String( "csv" ) || delimiter.size() != 1 || quote != QLatin1String( "\"" ) || escape != QLatin1String( "\"" )
       || options.value( QStringLiteral( "skipEmptyFields" ) ) == QLatin1String( "yes" ) )
  {
    because = QObject::tr( "only a delimited text file of one delimiter character, double quotes and every field kept is read as text, and its options are %1 "
                           "(open the file as a CSV layer through GDAL instead)" )
                .arg( openOptions.join( '&' ) );
    return std::nullopt;
  }
  return VbasCsvLayout { delimiter.at( 0 ).toLatin1(), options.value( QStringLiteral( "useHeader" ) ) != QLatin1String( "no" ), options.value( QStringLiteral( "skipLines" ) ).toInt(), true };
}
