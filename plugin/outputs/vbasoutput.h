// One output of a run (the schema it holds, where it goes), written under a temporary name and moved
// into place by its VbasOutputSet.
#pragma once

#include "plugin/outputs/vbastemporaries.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/support/vbaslocation.h"
#include "plugin/support/vbasqgiscompat.h"

#include <qgscoordinatereferencesystem.h>
#include <qgsfeature.h>
#include <qgsfeaturesink.h>
#include <qgsfields.h>

#include <QHash>
#include <QVariantMap>

#include <functional>
#include <memory>

class QgsProcessingContext;
class QgsProject;
class QgsVectorLayer;

//! What an output holds, known before anything is read.
struct VbasOutputSchema
{
    QString name; //!< the sink parameter: ANONYMIZED, LOOKUP, ...
    QgsFields fields;
    vbasqgis::WkbType wkbType = vbasqgis::WkbType::NoGeometry;
    QgsCoordinateReferenceSystem crs;
    bool document = false; //!< a file written whole (the HTML report), not a layer
    //! Who may see the output (docs/outputs.md): its help, its layer's metadata and the report say it.
    enum class Audience
    {
      Custodian, //!< counts before suppression, lookups, risks, sites: never published
      Published, //!< the release, and what is computed only from it
    } audience = Audience::Custodian;
    //! The parameter that named each field copied from an input (RELEASE_FIELDS, ...), for the messages.
    QHash<QString, QString> namedBy;
};

//! One output of the run, written under its temporary name.
class VbasOutput
{
  public:
    enum class Kind
    {
      Memory,   //!< a temporary layer of the QGIS session
      File,     //!< a file written by a GDAL driver
      Table,    //!< a table in a GeoPackage file (ogr:) or a PostgreSQL database (postgres:)
      Document, //!< a file written whole by the plugin (the HTML report)
    };

    VbasOutput( const VbasOutputSchema &schema, const QString &destination, QgsProject *project, const QString &layerName, const QVariantMap &createOptions );
    ~VbasOutput();

    const QgsFields &fields() const { return mSchema.fields; }
    //! Adds feature (its id is not kept: an output numbers its features itself); throws naming the output and the error.
    void add( QgsFeature &feature );
    //! A document's whole content, written and synced under its temporary name (it is then finished).
    void write( const QByteArray &content );
    //! Flushes and closes the output, then counts the features that reached it: any difference is an error.
    void finish();
    /**
     * Calls read with a layer on the finished output as written (its temporaries, or the memory layer),
     * closed again before it returns: what a recount of the written rows reads (VbasReleaseRecount).
     */
    void readWritten( const std::function<void( QgsVectorLayer &layer )> &read ) const;
    //! A path prefix beside the destination for this output's own scratch files; the next run removes them if this one is killed.
    QString scratchPrefix() const;
    //! A file destination's folder exists; throws otherwise, as check() does (read-only: nothing is locked or created).
    void checkFolderExists() const;

  private:
    friend class VbasOutputSet;

    //! Checks the destination (see VbasOutputSet::prepare) and locks this output's temporaries; what it replaces.
    VbasLocation check();
    void create( QgsProcessingContext &context );
    //! Swaps QGIS's writer, once it has made the GeoPackage layer layerName at path, for VbasOgrSink when it writes the output.
    void fillStraight( const QString &path, const QString &layerName );
    //! Moves the finished output into place, the previous one moved aside; returns its id for the results.
    QString commit( QgsProcessingContext &context );
    //! Deletes the previous output moved aside: the whole set is in place.
    void finalize();
    void discard();

    QString describe() const;
    /**
     * Refuses a format that cannot hold this output as it is, naming the reason: a field named like the
     * format's feature id column, a field the format would rename or drop, rows it would not keep. Learnt
     * from the format's rules and from a test row written with driver to file (layerName) and read back;
     * sets the files the driver writes (mFiles, mWrittenAs).
     */
    void checkFormat( const QString &driver, const QString &file, const QString &layerName );
    void refuseFidField( const QString &driver, const QString &fidColumn ) const;
    //! The files driver writes for file (written: the main one, entries: all of them) placed under the destination's name, or a refusal.
    void placeFiles( const QString &driver, const QString &file, const QString &written, const QStringList &entries );
    //! A field's name, with the parameter that named it.
    QString named( const QString &field ) const;
    VbasLocation checkTable();
    //! A PostgreSQL destination: the user may create tables in its schema, and replace the table if it exists (it owns it); throws otherwise.
    void checkPostgresRights() const;
    //! The destination's folder exists and is writable; locks this output's temporaries there.
    void checkFolder();
    //! Locks this output's temporaries in folder (VbasTemporaries::Lock), or throws.
    void lockTemporaries( const QString &folder );
    //! A folder, FIFO, device, socket or link at path is refused (vbasSpecialFileKind): an output replaces only regular files.
    void refuseSpecialFile( const QString &path ) const;
    void createFile( QgsProcessingContext &context );
    void createTable( QgsProcessingContext &context );
    long long countWritten() const;
    QString commitFile();
    QString commitTable();
    void renameFile( const QString &from, const QString &to ) const;
    //! Puts the previous output back where a committed one now is (a later output failed).
    void restore();
    //! Drops the staging table of a table output, and the database file if the run made it.
    void dropStaging();
    void restoreFiles();
    void restoreTable();
    //! Runs statements on the PostgreSQL database of a table output, as one transaction.
    void executePostgres( const QString &sql ) const;
    QString quotedPostgres( const QString &table ) const;
    void removeScratch() const;
    //! File or Document: files beside the destination.
    bool isFile() const { return mKind == Kind::File || mKind == Kind::Document; }
    QString temporaryPath( const QString &path ) const;

    VbasOutputSchema mSchema;
    QgsProject *mProject = nullptr;
    QString mLayerName; //!< for QGIS: the name of the layer loaded on completion
    QVariantMap mCreateOptions;
    Kind mKind = Kind::File;
    QString mPath;     //!< Memory: the layer name; File: the final file; Table: the database file (ogr) or the URI (postgres)
    QString mProvider; //!< Table: ogr or postgres
    QString mTable;    //!< Table: the final table
    QString mSchemaName;
    QString mDriver;                                            //!< File and ogr Table: the GDAL driver
    QStringList mFiles;                                         //!< File: the files the driver writes (a shapefile has several), final names
    QHash<QString, QString> mWrittenAs;                         //!< File: the name the driver writes for a final file, where it differs (out.json as out.json.geojson)
    QString mToken;                                             //!< the unique part of this output's temporary names
    QString mWarning;                                           //!< what check() found the user should know (a format without geometry)
    std::vector<std::unique_ptr<VbasTemporaries::Lock>> mLocks; //!< held while the output lives (lock files, a staging table's advisory lock): its temporaries are not stale
    QStringList mLockedFolders;                                 //!< the folders of mLocks' lock files, canonical: each locked once (the destination may be the temporary folder)
    bool mDatabaseExisted = true;
    QStringList mPlaced;       //!< File: the files moved into place
    QStringList mPrevious;     //!< File: the final names whose previous files were moved aside
    bool mHadPrevious = false; //!< Table: the previous table was moved aside
    std::unique_ptr<QgsFeatureSink> mSink;
    std::unique_ptr<QgsVectorLayer> mMemoryLayer;
    QgsAttributeList mAsJson; //!< Memory: fields whose values the layer can only hold as JSON text
    long long mWritten = 0;
    enum class State
    {
      Prepared,
      Created,
      Finished,
      Committed,
      Final,
      Discarded,
    } mState = State::Prepared;
};
