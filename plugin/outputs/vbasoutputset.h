// Folder outputs/: the run's outputs and what writes them (one writer per output, the report, the styles).
// The output set: all or nothing (docs/outputs.md). Every destination
// is checked before the records are read: writable, a regular file or a table, not one of the inputs
// (by identity: VbasLocation) nor another output, no view, trigger or foreign key depending on it, and
// able to keep every field name exactly. Every output is written under a temporary name beside its
// destination (a staging table for database tables), every write is checked, the written features are
// counted again once the output is closed, and only when the whole run has succeeded are the outputs
// moved into place, the release last, each previous output moved aside; if any step fails, the
// previous outputs are put back, and they are deleted only once the whole set is in place. A failed,
// canceled or interrupted run removes every temporary; the temporaries that a killed run left are
// removed by the next run only when their lock proves that run gone (VbasTemporaries).
#pragma once

#include "plugin/outputs/vbasoutput.h"
#include "plugin/support/vbasinterrupt.h"
#include "plugin/support/vbaslocation.h"

#include <QSet>
#include <QVariantMap>

#include <memory>
#include <vector>

class QgsProcessingAlgorithm;
class QgsProcessingParameterDefinition;
class QgsProcessingContext;
class QgsProcessingFeedback;

class VbasOutputSet
{
  public:
    VbasOutputSet() = default;
    ~VbasOutputSet();
    VbasOutputSet( const VbasOutputSet & ) = delete;
    VbasOutputSet &operator=( const VbasOutputSet & ) = delete;

    /**
     * Resolves the destination of every schema the user asked for (prepareAlgorithm: an optional output left
     * empty is not asked for, and is then never created) and refuses, naming the output, a
     * destination that cannot be written, that is one of inputs or another output, or whose format
     * would rename or truncate a field. Removes the temporaries that killed runs left beside them.
     */
    void prepare( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QList<VbasOutputSchema> &schemas, const QList<VbasLocation> &inputs,
                  QgsProcessingFeedback *feedback );

    //! Creates output name under its temporary name.
    VbasOutput &create( const QString &name, QgsProcessingContext &context );
    //! The path prefix of output name's scratch files (VbasOutput::scratchPrefix), before it is created.
    QString scratchPrefix( const QString &name );
    //! Whether the user asked for any of the outputs names (prepare resolved it).
    bool wanted( const QStringList &names ) const;
    //! Creates output name when the user asked for it; nullptr otherwise.
    VbasOutput *createIfWanted( const QString &name, QgsProcessingContext &context );

    /**
     * Moves every output into place in the order of the schemas (the release last) and records their ids in outputs
     * (an output not asked for gets none).
     * An output the user asked to load into a project is registered for loading with its style (VbasStyles).
     */
    void commit( QgsProcessingContext &context, QVariantMap &outputs );

    //! Removes every temporary and whatever the run created; nothing once committed.
    void discard();

  private:
    VbasOutput &output( const QString &name );
    //! Removes the temporaries that dead runs left beside the destinations; keep: the run's own files.
    void removeLeftovers( const QSet<QString> &keep, QgsProcessingFeedback *feedback ) const;

    std::vector<std::unique_ptr<VbasOutput>> mOutputs;
};

/**
 * Refuses, as VbasOutputSet::prepare() would, a file destination (value: the parameter's value) whose folder
 * does not exist. QGIS checks the parameter values before a run starts, and a model takes its outputs'
 * definitions from its steps (VbasDestination): a model refuses such an output before its first step writes.
 */
void vbasCheckDestinationFolder( const QgsProcessingParameterDefinition *definition, const QVariant &value, QgsProcessingContext &context );

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
