// The records table row by row (docs/preparing-data.md): its fields in their roles, checked
// once before anything is read, and each row's region id, count and QI class, refused with the row
// and the reason when a value cannot be taken exactly.
#pragma once

#include "algorithms/base/qi_encoding.h"

#include <qgsfeature.h>
#include <qgsfields.h>

#include <cstdint>
#include <optional>
#include <string>

//! The largest count a row may hold: every whole number up to 2^53 is exact as a double, in every format.
constexpr std::int64_t kVbasMaxCount = std::int64_t( 1 ) << 53;

//! The records table's fields in their roles.
struct VbasRecordFields
{
    int region = -1; //!< -1: the records are points, located in the regions (VbasPointLocator)
    QgsAttributeList qis;
    int count = -1;            //!< -1: every row is one record
    int sensitive = -1;        //!< the sensitive attribute (l-diversity, t-closeness, CM); -1: none
    QgsAttributeList released; //!< the release's fields in table order: the QIs, the count, the sensitive field and the named fields
    QgsAttributeList others;   //!< the named fields (RELEASE_FIELDS) that are neither QIs, the count nor the sensitive field

    //! The fields the counting pass reads: the region, the QIs, the count and the sensitive field.
    QgsAttributeList counted() const;
    //! The fields a pass that keeps the rows for the release reads: those and the released ones.
    QgsAttributeList read() const;
};

class VbasRecordReader
{
  public:
    /**
     * The fields in their roles, or a QgsProcessingException that says why not: a missing field, a
     * field in two roles, a QI listed twice, a type whose values cannot be keyed exactly. The
     * release holds the QIs, the count and the sensitive field, and the releaseFields besides
     * (docs/outputs.md); neither the region id nor the identity fields (the table's feature id column) can be named.
     */
    static VbasRecordFields resolve( const QgsFields &fields, const QString &regionField /* empty: located by their points */, const QStringList &qiFields, const QString &countField,
                                     const QStringList &releaseFields, const QgsAttributeList &identityFields, const QString &sensitiveField = QString() );

    VbasRecordReader( const QgsFields &fields, const VbasRecordFields &roles );

    const QVariant &region( const QgsAttributes &attributes ) const { return attributes.at( mRoles.region ); }

    //! The records a row stands for: a whole number from 0 to kVbasMaxCount, or an exception naming the row and the value.
    std::int64_t count( const QgsAttributes &attributes, std::int64_t row, QgsFeatureId id ) const;

    //! The records that value of the count field countField stands for in a row of any table, by the same rule.
    static std::int64_t countValue( const QVariant &value, const QString &countField, std::int64_t row, QgsFeatureId id );
    //! The same, the row named by rowName in the refusal.
    static std::int64_t countValue( const QVariant &value, const QString &countField, const QString &rowName );

    //! The class of a row's QI values, added to encoder when new (the counting pass).
    std::uint32_t addClass( const QgsAttributes &attributes, vbas::QiEncoder &encoder, std::int64_t row, QgsFeatureId id );

    //! The dense code of a row's sensitive value (NULL a value of its own), added to values (one "QI") when new.
    std::uint32_t addSensitive( const QgsAttributes &attributes, vbas::QiEncoder &values, std::int64_t row, QgsFeatureId id );

    //! NULLs seen per QI by addClass.
    const QVector<std::int64_t> &nulls() const { return mNulls; }

    //! "record row 12 (feature id 11)".
    static QString rowName( std::int64_t row, QgsFeatureId id );

  private:
    //! The exact key of a field's value in a row: its bytes in mKey, or std::nullopt for NULL.
    std::optional<std::string_view> key( const QgsAttributes &attributes, int field, std::int64_t row, QgsFeatureId id );

    QgsFields mFields;
    VbasRecordFields mRoles;
    std::string mKey; //!< the bytes of the QI value being keyed
    std::vector<std::uint32_t> mCodes;
    QVector<std::int64_t> mNulls;
};
