// The HTML report of an evaluation (docs/outputs.md): one self-contained page (inline SVG and CSS, no
// script, no network) with the metrics and their meaning, a map of the aggregated regions shaded by
// released records with the suppressed records marked, a map of the risk before release, a histogram
// of the EC sizes with k marked, the run's parameters and the qgis_process command that repeats it.
// Counts only: no record value ever reaches the page.
#pragma once

#include "algorithms/metrics/metrics.h"
#include "algorithms/aggregation/release.h"
#include "plugin/inputs/vbasinputs.h"
#include "plugin/outputs/vbasoutputset.h"
#include "plugin/pipeline/vbassteps.h"

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QPair>
#include <QString>
#include <QVariantMap>

class QgsProcessingAlgorithm;
class QgsProcessingContext;

//! A run's parameters as the report writes them, never with a password (docs/outputs.md, "Passwords").
struct VbasRunParameters
{
    QList<QPair<QString, QString>> values; //!< name, value as the run used it, passwords removed
    QMap<QString, QString> labels;         //!< name: the parameter's label in the dialog, for the report
    QMap<QString, QString> choices;        //!< name of a choice: the label of the option chosen, for the report
    bool passwordsLeftOut = false;         //!< whether a value had a password, now removed
};

struct VbasReportInputs
{
    QString title;
    const VbasRegions &regions;
    const vbas::SparseHistograms &regionHistograms;
    const vbas::Release &release;
    const QVector<QgsGeometry> &dissolved; //!< aggregates, regions layer CRS
    const vbas::MetricValues &values;
    VbasRunParameters parameters;
    QString command;                                    //!< the qgis_process command that repeats the run
    QList<QPair<QString, QString>> generalization;      //!< with generalization: what it chose and did (vbasGeneralizationFacts); empty: no section
    QList<QPair<QString, QString>> population;          //!< where the residents come from and the population uniques (vbasLogPopulation)
    VbasReleaseSettings model;                          //!< K, RISK_MODEL and the average risk model's threshold: what the verdict checks
    const vbas::PopulationMeasures *measured = nullptr; //!< the released classes' residents, for the map of journalist risk; nullptr: not measured
};

QByteArray vbasReport( const VbasReportInputs &inputs );

//! A self-contained report page (the style of every VBAS report): its audience first, the title, when it was made, then body (HTML).
QByteArray vbasReportPage( const QString &title, const QString &audience, const QString &body );
//! The Parameters table and the command that repeats the run, as every report ends.
QString vbasReportParameters( const VbasRunParameters &parameters, const QString &command );

//! The REPORT output: a document, not a layer.
VbasOutputSchema vbasReportSchema();

/**
 * The run's parameters as qgis_process takes them (sources, fields, enum indices, numbers,
 * destinations; defaults included), with the values in resolved taking precedence (the SEED a run
 * drew, say): name and value, one entry per value of a multiple parameter. A source of a provider
 * other than ogr is written as qgis_process reads it, <provider>://<source>. Every value without its
 * passwords (VbasSecrets).
 */
VbasRunParameters vbasRunParameters( const QgsProcessingAlgorithm &algorithm, const QVariantMap &parameters, QgsProcessingContext &context, const QVariantMap &resolved );

/**
 * The command that repeats the run from a fresh shell: "cd '<folder of the run>' && QT_QPA_PLATFORM=offscreen
 * QGIS_CUSTOM_CONFIG_PATH='<profiles root>' '<prefix>/bin/qgis_process.bin' run <algorithm id> -- 'NAME=value' ...",
 * each argument quoted for a POSIX shell; a comment line first when the run used a profile other than the default one,
 * and one when passwords were left out.
 */
QString vbasProcessCommand( const QgsProcessingAlgorithm &algorithm, const VbasRunParameters &parameters );
