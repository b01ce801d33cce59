// Folder outputs/: the run's outputs and what writes them (one writer per output, the report, the styles).
// The output set: all or nothing (issue 5 items 3, 4, 6, 9, 10). Every destination is checked
// before the records are read: writable, not one of the inputs nor another output, and able to keep
// every field name exactly. Every output is written under a temporary name beside its destination
// (a staging table for database tables), every write is checked, the written features are counted
// again once the output is closed, and only when the whole run has succeeded are the outputs renamed
// into place, the release last. A failed, canceled or interrupted run removes every temporary and
// whatever it created; temporaries left by a killed run are recognisable and the next run removes them.
#pragma once

#include "support/vbasqgiscompat.h"
#include "support/vbasinterrupt.h"
#include "support/vbaslocation.h"

#include <qgscoordinatereferencesystem.h>
#include <qgsfeature.h>
#include <qgsfeaturesink.h>
#include <qgsfields.h>
#include <qgswkbtypes.h>

#include <QVariantMap>

#include <memory>
#include <vector>

class QgsFeature;
class QgsProcessingAlgorithm;
class QgsProcessingContext;
class QgsProcessingFeedback;
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
};

//! One output of the run, written under its temporary name.
class VbasOutput
{
  public:
    enum class Kind
    {
      Memory, //!< a temporary layer of the QGIS session
      File,   //!< a file written by a GDAL driver
      Table,  //!< a table in a GeoPackage/SQLite file (ogr:) or a PostgreSQL database (postgres:)
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
    //! A path prefix beside the destination for this output's own scratch files; the next run removes them if this one is killed.
    QString scratchPrefix() const;

  private:
    friend class VbasOutputSet;

    //! Checks the destination (see VbasOutputSet::prepare); the locations it would overwrite.
    QList<VbasLocation> check();
    void create( QgsProcessingContext &context );
    //! Moves the finished output into place; returns its id for the results.
    QString commit( QgsProcessingContext &context );
    void discard();

    QString describe() const;
    void checkFieldNames( const QString &driver, const QString &file, const QString &layerName );
    void createFile( QgsProcessingContext &context );
    void createTable();
    long long countWritten() const;
    QString commitFile();
    QString commitTable();
    void removeScratch() const;
    //! File or Document: files beside the destination.
    bool isFile() const { return mKind == Kind::File || mKind == Kind::Document; }
    QString temporaryPath( const QString &path ) const;

    VbasOutputSchema mSchema;
    QgsProject *mProject = nullptr;
    QString mLayerName; //!< for QGIS: the name of the layer loaded on completion
    QVariantMap mCreateOptions;
    Kind mKind = Kind::File;
    QString mPath;      //!< Memory: the layer name; File: the final file; Table: the database file (ogr) or the URI (postgres)
    QString mProvider;  //!< Table: ogr or postgres
    QString mTable;     //!< Table: the final table
    QString mSchemaName;
    QString mDriver;    //!< File and ogr Table: the GDAL driver
    QStringList mFiles; //!< File: the files the driver writes (a shapefile has several), final names
    QString mToken;     //!< the unique part of this output's temporary names
    bool mDatabaseExisted = true;
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
      Discarded,
    } mState = State::Prepared;
};

class VbasOutputSet
{
  public:
    VbasOutputSet() = default;
    ~VbasOutputSet();
    VbasOutputSet( const VbasOutputSet & ) = delete;
    VbasOutputSet &operator=( const VbasOutputSet & ) = delete;

    /**
     * Resolves the destination of every schema (prepareAlgorithm) and refuses, naming the output, a
     * destination that cannot be written, that is one of inputs or another output, or whose format
     * would rename or truncate a field. Removes the temporaries that killed runs left beside them.
     */
    void prepare( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QList<VbasOutputSchema> &schemas,
                  const QList<VbasLocation> &inputs, QgsProcessingFeedback *feedback );

    //! Creates output name under its temporary name.
    VbasOutput &create( const QString &name, QgsProcessingContext &context );

    /**
     * Moves every output into place in the order of the schemas (the release last) and records their ids in outputs.
     * An output the user asked to load into a project is registered for loading with its style (VbasStyles).
     */
    void commit( QgsProcessingContext &context, QVariantMap &outputs );

    //! Removes every temporary and whatever the run created; nothing once committed.
    void discard();

  private:
    VbasOutput &output( const QString &name );

    std::vector<std::unique_ptr<VbasOutput>> mOutputs;
};

/**
 * The scope of processAlgorithm: a run that does not reach VbasOutputSet::commit() leaves no output,
 * and during a headless run a signal cancels it (VbasInterrupt) and ends the process after the clean-up.
 */
class VbasRun
{
  public:
    explicit VbasRun( VbasOutputSet &outputs );
    ~VbasRun();
    VbasRun( const VbasRun & ) = delete;
    VbasRun &operator=( const VbasRun & ) = delete;

  private:
    VbasInterrupt::Guard mGuard; //!< destroyed after the destructor's clean-up: a caught signal is raised again then
    VbasOutputSet &mOutputs;
};
