// Reading the inputs of LP geomasking (docs/preparing-data.md): the codes layer (points, or polygons at
// their centroid or point on surface) with its code and population fields, and the patients (a table
// with a code field, read whole: a patient list is short) or a patient-count field on the codes. Every
// bad value is refused with the row or the code and the value, before anything is written.
#pragma once

#include "algorithms/lp/geomask.h"

#include <qgscoordinatereferencesystem.h>
#include <qgsfeature.h>
#include <qgsfields.h>

#include <QHash>
#include <QVector>

class QgsFeatureSource;
class QgsProcessingContext;
class QgsProcessingFeedback;

struct VbasCodes
{
    QVector<QVariant> ids;                     //!< code of each row of the codes layer, layer order
    QHash<QString, std::uint32_t> index;       //!< code key (VbasValueCodec::regionKey) -> code
    std::vector<vbas::lp::Location> locations; //!< longitude/latitude for Haversine, layer coordinates otherwise
    vbas::lp::Distance distance = vbas::lp::Distance::Euclidean;
    std::vector<double> population;
    std::vector<std::int64_t> patientCounts; //!< from the patient-count field; empty without one
    QString distanceUnit;                    //!< "m", or the layer's unit for a projected CRS

    //! The code of a value, or nothing for NULL or an unknown code.
    std::optional<std::uint32_t> find( const QVariant &value ) const;
};

struct VbasPatients
{
    QgsFields fields;
    QVector<QgsAttributes> rows;        //!< every patient row, in table order (empty with a patient-count field)
    std::vector<std::uint32_t> origins; //!< the code of every patient
};

struct VbasCodeFields
{
    QString code;
    QString population;
    QString patientCount; //!< empty: patients come from a table
    int codePoint = 0;    //!< 0 centroid, 1 point on surface
};

VbasCodes vbasReadCodes( QgsFeatureSource &source, const VbasCodeFields &fields, QgsProcessingContext &context, QgsProcessingFeedback *feedback );

//! The patients of a table whose field codeField holds each patient's code.
VbasPatients vbasReadPatients( QgsFeatureSource &source, const QString &codeField, const VbasCodes &codes, QgsProcessingFeedback *feedback );

//! The patients a patient-count field gives: counts[i] patients of code i, no other field.
VbasPatients vbasPatientsFromCounts( const VbasCodes &codes );
