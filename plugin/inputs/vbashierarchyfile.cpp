#include "inputs/vbashierarchyfile.h"
#include "inputs/vbasstoredrows.h"

#include <qgsexception.h>

#include <cpl_csv.h>
#include <cpl_string.h>
#include <cpl_vsi.h>

#include <memory>

namespace
{
struct FileCloser
{
    void operator()( VSILFILE *file ) const { VSIFCloseL( file ); }
};
} // namespace

vbas::Hierarchy vbasReadHierarchyFile( const QString &path )
{
  const std::unique_ptr<VSILFILE, FileCloser> file( VSIFOpenL( path.toUtf8().constData(), "rb" ) );
  if ( !file )
    throw QgsProcessingException( QObject::tr( "HIERARCHIES: could not open the hierarchy file %1." ).arg( path ) );
  std::vector<vbas::HierarchyRow> rows;
  std::size_t line = 0;
  while ( char **tokens = CSVReadParseLine3L( file.get(), 0, ";", true, false, false, true ) )
  {
    vbas::HierarchyRow row { ++line, {} };
    bool blank = true;
    for ( int i = 0; tokens[i]; ++i )
    {
      const QByteArray bytes( tokens[i] );
      line += static_cast<std::size_t>( bytes.count( '\n' ) ); // a quoted value across lines
      const std::optional<QString> text = vbasPlainText( bytes );
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
  try
  {
    return vbas::Hierarchy::fromRows( rows );
  }
  catch ( const vbas::HierarchyError &e )
  {
    throw QgsProcessingException( QObject::tr( "HIERARCHIES: the hierarchy file %1 is refused: %2." ).arg( path, QString::fromStdString( e.what() ) ) );
  }
}
