#include "plugin/support/vbasdatabase.h"

#include <qgsprovidermetadata.h>
#include <qgsproviderregistry.h>

std::unique_ptr<QgsAbstractDatabaseProviderConnection> VbasDatabase::connection( const QString &provider, const QString &uri )
{
  QgsProviderMetadata *metadata = QgsProviderRegistry::instance()->providerMetadata( provider );
  return std::unique_ptr<QgsAbstractDatabaseProviderConnection>( metadata ? static_cast<QgsAbstractDatabaseProviderConnection *>( metadata->createConnection( uri, QVariantMap() ) ) : nullptr );
}
