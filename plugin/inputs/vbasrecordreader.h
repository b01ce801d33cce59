// The records table row by row (docs/preparing-data.md): its fields in their roles, checked
// once before anything is read, and each row's region id, count and QI class, refused with the row
// and the reason when a value cannot be taken exactly.
#pragma once

#include "algorithms/base/qi_encoding.h"

#include <qgsfeature.h>
#include <qgsfields.h>

#include <QByteArray>
#include <QCryptographicHash>

#include <array>
#include <cstdint>
#include <memory>
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
    //! The fields the release pass reads, and both passes digest (VbasRowDigest): those and the released ones.
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

    //! The class of a row's QI values, if the counting pass saw every one of them (the release pass).
    std::optional<std::uint32_t> findClass( const QgsAttributes &attributes, const vbas::QiEncoder &encoder, std::int64_t row, QgsFeatureId id );

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

/**
 * What both passes read, row by row: of each row, the keyed SHA-256 of its feature
 * id, its located region (records without a region field) and the bytes of every value the release
 * takes from it (VbasRecordFields::read). The row hashes are added modulo 2^64 in four independent
 * lanes, so the order of the rows does not matter while two equal rows do not cancel. The key is drawn
 * from the operating system's random source for each run, so no edit can be crafted to keep the sum.
 */
class VbasRowDigest
{
  public:
    //! An empty digest under a fresh key.
    VbasRowDigest();
    //! An empty digest under the key of other: the same rows give the same digest.
    static VbasRowDigest sameKey( const VbasRowDigest &other );

    //! Adds a row: its id, located region (or nothing) and the values of fields (VbasRecordFields::read).
    void add( QgsFeatureId id, const std::optional<std::uint32_t> &located, const QgsAttributes &attributes, const QgsAttributeList &fields );

    bool operator==( const VbasRowDigest &other ) const { return mLanes == other.mLanes; }
    bool operator!=( const VbasRowDigest &other ) const { return !( *this == other ); }

  private:
    QByteArray mKey;
    std::array<std::uint64_t, 4> mLanes {};
    std::unique_ptr<QCryptographicHash> mHash = std::make_unique<QCryptographicHash>( QCryptographicHash::Sha256 );
    std::string mRow; //!< the bytes of the row being added
};
