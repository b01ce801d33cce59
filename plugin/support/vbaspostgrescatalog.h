// What a PostgreSQL table is, asked of the server (so that no run touches an input): the server and database a
// connection reaches, a table's oid, the relations reading it reads (through views and inheritance),
// and the views, foreign keys and child tables that depend on it. Connection strings are never compared.
#pragma once

#include <QSet>
#include <QStringList>

namespace VbasPostgresCatalog
{
struct Table
{
    QString database;       //!< the server (its start time) and the database (its oid); empty if the server cannot be asked
    QString key;            //!< "oid:<oid>" of an existing table, "name:<schema>.<table>" of a new one
    QSet<QString> reads;    //!< the keys of every relation reading the table reads, itself included
    QStringList dependents; //!< "the view public.v_release", ...
};

//! The table (or view) named schema.table (schema empty: the connection's search path) on the database of uri.
Table table( const QString &uri, const QString &schema, const QString &table );
} // namespace VbasPostgresCatalog
