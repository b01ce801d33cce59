// PostgreSQL records tables as users keep them: QIs of types whose equality is looser than what QGIS
// reads (citext, numeric, timestamptz, timestamps to the microsecond, json, char(n)), holding NULLs and
// values that one comparison joins and another keeps apart. randomPgRecords() draws one from a seed as SQL
// that copies the region ids of an existing table; the QIs are q1 to q3.
#pragma once

#include <QRandomGenerator>
#include <QStringList>

namespace e2e
{

/**
 * SQL that creates the table table (fid, tract_id, q1, q2, q3) from the rows of from (fid, tract_id):
 * each QI of a random type, holding three random values of that type's family and NULL. Needs citext.
 */
inline QString randomPgRecords( quint32 seed, const QString &table, const QString &from, QStringList *declared = nullptr )
{
  struct Family
  {
      const char *type;
      QStringList values;
  };
  const QList<Family> families {
    { "citext", { "f", "F", "F ", "Zo\u00eb", "zo\u00cb" } },
    { "text", { "f", "F", "F ", "Zo\u00eb", "Zoe\u0308" } },
    { "char(3)", { "f", "f  ", "F" } },
    { "numeric", { "1", "1.0", "1.00", "-0", "0" } },
    { "float8", { "0", "-0", "0.30000000000000004", "0.3", "NaN" } },
    { "timestamptz", { "2020-01-01 00:00:00+00", "2020-01-01 01:00:00+01", "2020-01-01 00:00:00.0007+00", "2020-01-01 00:00:00.0014+00" } },
    { "timestamp", { "2020-01-01 10:00:00", "2020-01-01 10:00:00.0007", "2020-01-01 10:00:00.0014", "2020-01-01 10:00:00.000001" } },
    { "date", { "2020-01-01", "2020-01-02" } },
    { "boolean", { "true", "false" } },
    { "integer", { "1", "01", "2" } },
    { "jsonb", { "{\"a\":1}", "{\"a\": 1}", "{\"a\":1.0}" } },
  };
  QRandomGenerator random( seed );
  QStringList qis;
  for ( int q = 0; q < 3; ++q )
  {
    const Family &family = families.at( static_cast<int>( random.bounded( static_cast<quint32>( families.size() ) ) ) );
    QStringList values;
    for ( int v = 0; v < 3; ++v )
      values << QStringLiteral( "'%1'::%2" ).arg( family.values.at( static_cast<int>( random.bounded( static_cast<quint32>( family.values.size() ) ) ) ), family.type );
    values << QStringLiteral( "NULL::%1" ).arg( family.type );
    if ( declared )
      *declared << QStringLiteral( "q%1 %2" ).arg( q + 1 ).arg( family.type );
    qis << QStringLiteral( "(ARRAY[%1])[1 + (fid * %2 + %3) % 4] AS q%4" ).arg( values.join( ", " ) ).arg( 2 * q + 3 ).arg( random.bounded( 4 ) ).arg( q + 1 );
  }
  return QStringLiteral( "CREATE TABLE %1 AS SELECT fid, tract_id, %2 FROM %3; ALTER TABLE %1 ADD PRIMARY KEY (fid);" ).arg( table, qis.join( ", " ), from );
}

} // namespace e2e
