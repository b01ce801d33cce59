// The records as the release needs them, kept by the counting pass so that the records table is read
// once (docs/method.md, "One read"): of each counted row its region, class and count and the bytes of
// its released values, in a uniformly random order drawn from the operating system's random source,
// never from SEED (vbas::ExternalShuffle). Beyond the memory budget the rows wait in temporary files
// beside the release, created afresh and readable by their owner only, and removed on every path.
#pragma once

#include "algorithms/base/shuffle.h"

#include <qgsfeature.h>

#include <QString>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

class VbasReleaseSpool
{
  public:
    //! A kept row: values holds its released values (VbasRecordFields::released) as VbasValueCodec::encode wrote them.
    struct Row
    {
        std::uint32_t region = 0;
        std::uint32_t cls = 0; //!< the class of its QI values (VbasRecords::encoder)
        std::int64_t count = 0;
        std::string_view values;
    };

    //! scratchPrefix: the path prefix of the temporary files (VbasOutput::scratchPrefix of the release); memoryBudget: bytes of rows held in memory.
    VbasReleaseSpool( const QString &scratchPrefix, std::size_t memoryBudget, const QgsAttributeList &released );

    //! Keeps a counted row of region and class cls standing for count records.
    void add( std::uint32_t region, std::uint32_t cls, std::int64_t count, const QgsAttributes &attributes );

    //! Rows kept.
    std::size_t size() const { return mShuffle.size(); }

    //! Calls take once per kept row, in a uniformly random order. Call once.
    void drain( const std::function<void( const Row & )> &take );

  private:
    //! Throws a QgsProcessingException for a temporary file that could not be written or read.
    [[noreturn]] void failed( const std::exception &e ) const;

    QString mPrefix;
    QgsAttributeList mReleased;
    vbas::ExternalShuffle mShuffle;
    std::string mRow; //!< the bytes of the row being kept
};
