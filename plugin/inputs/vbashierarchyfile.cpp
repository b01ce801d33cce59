#include "plugin/inputs/vbashierarchyfile.h"
#include "plugin/inputs/vbasstoredrows.h"
#include "plugin/support/vbasfilekind.h"

#include <qgsexception.h>

#include <QCryptographicHash>
#include <QFile>
#include <QUuid>

#include <cpl_csv.h>
#include <cpl_string.h>
#include <cpl_vsi.h>

#include <memory>

namespace
{

//! The bytes of the file at path, refusing what is not a regular file before opening it.
QByteArray fileBytes( const QString &path )
{
  const QString kind = vbasSpecialFileKind( path, VbasLinks::Follow );
  if ( !kind.isEmpty() )
    throw QgsProcessingException( QObject::tr( "HIERARCHIES: %1 is %2, not a hierarchy file: give one CSV file per QI (age_group.csv)." ).arg( path, kind ) );
  QFile file( path );
  if ( !file.open( QIODevice::ReadOnly ) )
    throw QgsProcessingException( QObject::tr( "HIERARCHIES: could not open the hierarchy file %1." ).arg( path ) );
  QByteArray bytes = file.readAll();
  if ( file.error() != QFileDevice::NoError )
    throw QgsProcessingException( QObject::tr( "HIERARCHIES: could not read the hierarchy file %1: %2" ).arg( path, file.errorString() ) );
  return bytes;
}

//! Bytes in memory as a GDAL file, for its CSV tokenizer; removed when closed.
struct MemoryFile
{
    explicit MemoryFile( QByteArray &bytes )
      : name( QStringLiteral( "/vsimem/vbas-hierarchy-%1.csv" ).arg( QUuid::createUuid().toString( QUuid::WithoutBraces ) ).toUtf8() )
      , file( VSIFileFromMemBuffer( name.constData(), reinterpret_cast<GByte *>( bytes.data() ), static_cast<vsi_l_offset>( bytes.size() ), FALSE ) )
    {
    }
    ~MemoryFile()
    {
      if ( file )
        VSIFCloseL( file );
      VSIUnlink( name.constData() );
    }
    MemoryFile( const MemoryFile & ) = delete;
    MemoryFile &operator=( const MemoryFile & ) = delete;

    QByteArray name;
    VSILFILE *file;
};

//! The rows of a hierarchy file's bytes, blank lines skipped.
std::vector<vbas::HierarchyRow> rowsOf( QByteArray &bytes, const QString &path )
{
  const MemoryFile memory( bytes );
  if ( !memory.file )
    throw QgsProcessingException( QObject::tr( "HIERARCHIES: could not open the hierarchy file %1." ).arg( path ) );
  std::vector<vbas::HierarchyRow> rows;
  std::size_t line = 0;
  while ( char **tokens = CSVReadParseLine3L( memory.file, 0, ";", true, false, false, true ) )
  {
    vbas::HierarchyRow row { ++line, {} };
    bool blank = true;
    for ( int i = 0; tokens[i]; ++i )
    {
      const QByteArray field( tokens[i] );
      line += static_cast<std::size_t>( field.count( '\n' ) ); // a quoted value across lines
      const std::optional<QString> text = vbasPlainText( field );
      if ( !text )
      {
        CSLDestroy( tokens );
        throw QgsProcessingException( QObject::tr( "HIERARCHIES: line %1 of the hierarchy file %2 holds bytes that are not UTF-8 text." ).arg( row.line ).arg( path ) );
      }
      blank = blank && text->isEmpty();
      row.fields.push_back( text->toStdString() );
    }
    CSLDestroy( tokens );
    if ( !blank )
      rows.push_back( std::move( row ) );
  }
  return rows;
}

} // namespace

VbasHierarchyFile vbasReadHierarchyFile( const QString &path )
{
  QByteArray bytes = fileBytes( path );
  const QString sha256 = QString::fromLatin1( QCryptographicHash::hash( bytes, QCryptographicHash::Sha256 ).toHex() );
  try
  {
    return { vbas::Hierarchy::fromRows( rowsOf( bytes, path ) ), sha256 };
  }
  catch ( const vbas::HierarchyError &e )
  {
    throw QgsProcessingException( QObject::tr( "HIERARCHIES: the hierarchy file %1 is refused: %2." ).arg( path, QString::fromStdString( e.what() ) ) );
  }
}
