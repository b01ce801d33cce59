// A PostgreSQL table without geometry filled with COPY, in one transaction (docs/outputs.md, "How
// outputs are written"): QGIS's postgres provider sends one INSERT per row, most of a release's
// writing time. QGIS's exporter still makes the table (its key, columns and types); this adds the rows.
//
// Through libpq, which the plugin links already (the staging tables' locks), not GDAL's PostgreSQL
// driver with PG_USE_COPY: GDAL would hand the server values it converted to OGR fields first, by its
// own rules (the text "1.5" in a whole-number field becomes 1, where the server refuses QGIS's "1.5"),
// and it would need a "PG:" connection string holding the password. Here each value goes as the text
// QGIS's provider binds for it in its INSERT, which the server reads with the column type's input
// function, as it reads QGIS's.
#pragma once

#include "plugin/outputs/vbasrowsink.h"

#include "plugin/support/vbasqgiscompat.h"

#include <qgsfields.h>

#include <QByteArray>

#include <memory>

struct pg_conn; // libpq's PGconn

class VbasPgCopySink : public VbasRowSink
{
  public:
    //! Whether a PostgreSQL table of fields and wkbType is written by it: no geometry, and fields of text, whole numbers or reals.
    static bool writes( const QgsFields &fields, vbasqgis::WkbType wkbType );

    //! The table of the postgres data source uri, which holds fields: connected, a transaction begun and COPY started; throws naming what failed.
    VbasPgCopySink( const QString &uri, const QgsFields &fields );
    VbasPgCopySink( const VbasPgCopySink & ) = delete;
    VbasPgCopySink &operator=( const VbasPgCopySink & ) = delete;

    bool addFeature( QgsFeature &feature, QgsFeatureSink::Flags flags = QgsFeatureSink::Flags() ) override;
    //! Ends COPY and commits the rows. Destroyed before, the sink closes its connection and the server keeps none of them.
    bool flushBuffer() override;
    QString lastError() const override { return mError; }

  private:
    //! Runs sql, which must end with status; false with mError otherwise.
    bool execute( const QString &sql, int status );
    //! Sends the rows buffered in mRows.
    bool send();
    bool fail( const QString &error );

    struct Finish
    {
        void operator()( pg_conn *connection ) const;
    };
    std::unique_ptr<pg_conn, Finish> mConnection;
    int mFields = 0;
    QByteArray mRows; //!< rows not sent yet, in COPY's text format
    bool mCopying = false;
    QString mError;
};
