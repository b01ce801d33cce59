// A layer of a GeoPackage, SQLite, CSV or dBASE (.dbf) file filled straight through GDAL, in one
// transaction where the format has them (docs/outputs.md, "How outputs are written"): QGIS's file
// writer builds an OGR feature anew from each QgsFeature, most of a release's writing time. QGIS's
// writer still makes the layer (its fields, options and metadata); this adds the rows.
#pragma once

#include "plugin/outputs/vbasrowsink.h"

#include "plugin/support/vbasqgiscompat.h"

#include <qgsfields.h>

#include <gdal.h>
#include <ogr_api.h>

#include <memory>
#include <type_traits>
#include <vector>

class VbasOgrSink : public VbasRowSink
{
  public:
    /**
     * Whether a layer that QGIS's writer made with driver, fields, wkbType and fileEncoding is filled by
     * it: a layer without geometry whose fields are text, whole numbers or reals, of a format whose rows
     * it stores as QGIS's writer does, with text in UTF-8.
     */
    static bool writes( const QString &driver, const QgsFields &fields, vbasqgis::WkbType wkbType, const QString &fileEncoding );

    //! The layer layerName (or the only layer) of the file of driver at path, which holds fields: opened, and a transaction begun where driver has them; throws naming what failed.
    VbasOgrSink( const QString &driver, const QString &path, const QString &layerName, const QgsFields &fields );
    ~VbasOgrSink() override;
    VbasOgrSink( const VbasOgrSink & ) = delete;
    VbasOgrSink &operator=( const VbasOgrSink & ) = delete;

    bool addFeature( QgsFeature &feature, QgsFeatureSink::Flags flags = QgsFeatureSink::Flags() ) override;
    //! Commits the rows (if in a transaction); the file is closed when the sink is destroyed.
    bool flushBuffer() override;
    QString lastError() const override { return mError; }

  private:
    //! Sets OGR field field of mFeature to value, already of type (a type writes() accepts), with the setter QGIS's writer calls for it.
    void set( int field, vbasqgis::FieldType type, const QVariant &value );
    bool fail( const QString &error );

    struct CloseDataset
    {
        void operator()( GDALDatasetH dataset ) const { GDALClose( dataset ); }
    };
    struct DestroyFeature
    {
        void operator()( OGRFeatureH feature ) const { OGR_F_Destroy( feature ); }
    };
    std::unique_ptr<std::remove_pointer_t<GDALDatasetH>, CloseDataset> mDataset; // declared first: closed after the feature is destroyed
    OGRLayerH mLayer = nullptr;
    std::unique_ptr<std::remove_pointer_t<OGRFeatureH>, DestroyFeature> mFeature; //!< one feature, refilled for every row
    std::vector<int> mOgrField;                                                   //!< per field of fields: its index in the OGR layer
    std::vector<QgsField> mFields;                                                //!< the fields, kept apart: QgsFields::at copies a field
    bool mInTransaction = false;
    QString mError;
};
