// VbasValueCodec: the exact key of every attribute value QGIS returns. Two
// different values never share a key (that would merge QI values into one equivalence class and
// release classes below k); equal values always do; the release's rows decode to what was read.
#include "plugin/support/vbasvaluecodec.h"

#include <QDateTime>
#include <QPointF>
#include <QStringList>
#include <QTimeZone>
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>

namespace
{

std::string key( const QVariant &value )
{
  std::string bytes;
  const QString reason = VbasValueCodec::encodeKey( value, bytes );
  return reason.isEmpty() ? bytes : std::string( "refused: " ) + reason.toStdString();
}

QString regionKey( const QVariant &value )
{
  QString text;
  const QString reason = VbasValueCodec::regionKey( value, text );
  return reason.isEmpty() ? text : QStringLiteral( "refused" );
}

//! Pairs of values that look alike but differ: each must get its own key.
QList<QVariant> lookalikes()
{
  const QDateTime t( QDate( 2020, 1, 1 ), QTime( 10, 0, 0, 0 ), Qt::UTC );
  return {
    QStringLiteral( "a" ),
    QStringLiteral( "A" ),
    QStringLiteral( "" ),
    QStringLiteral( " " ),
    QStringLiteral( "a " ),
    QString::fromUtf8( "\xc3\xa9" ),
    QString::fromUtf8( "e\xcc\x81" ), // é precomposed and decomposed: different code units
    QString( 30, 'x' ),
    QString( 30, 'x' ).replace( 15, 1, 'y' ), // long strings differing in one middle character
    QString( QChar( 0xfeff ) ),
    QStringLiteral( "1" ), // U+FEFF (a byte order mark) is a character of its own
    1,
    2,
    -1,
    qlonglong( 1 ) << 62,
    std::numeric_limits<qulonglong>::max(),
    0.0,
    -0.0,
    1.0,
    0.1,
    0.1 + 0.2,
    0.3,
    std::numeric_limits<double>::quiet_NaN(),
    std::numeric_limits<double>::infinity(),
    true,
    false,
    QDate( 2020, 1, 1 ),
    QDate( 2020, 1, 2 ),
    QTime( 10, 0 ),
    QTime( 10, 0, 0, 1 ),
    t,
    t.addMSecs( 1 ),
    t.toOffsetFromUtc( 3600 ),
    QDateTime( QDate( 2020, 1, 1 ), QTime( 10, 0 ) ), // the same instant in another zone is written differently
    QByteArray( "\x00\xff", 2 ),
    QByteArray( "\x00\xfe", 2 ),
    QByteArray( "\xff", 1 ),
    QByteArray( "", 0 ),
    QStringList { "a", "b" },
    QStringList { "ab" },
    QStringList { "a", "b", "" },
    QStringList { "b", "a" },
    QStringList {},
    QVariantList { 1, 2 },
    QVariantList { 1, "2" },
    QVariantList { QVariantList { 1 }, 2 },
    QVariantList { 1, QVariant() },
    QVariantMap { { "k", 1 } },
    QVariantMap { { "k", 2 } },
    QVariantMap { { "k2", 1 } },
    QVariantMap {},
    QVariant(),
  };
}

} // namespace

class TestValueCodec : public QObject
{
    Q_OBJECT

  private slots:
    void differentValuesDifferentKeys();
    void equalValuesEqualKeys();
    void nullIsOneValue();
    void decodeGivesBackTheValue();
    void keysRefuseWhatIsNotExact();
    void releaseKeepsAnyValue();
    void regionKeysMatchAsText();
};

void TestValueCodec::differentValuesDifferentKeys()
{
  const QList<QVariant> values = lookalikes();
  QHash<QByteArray, int> seen;
  for ( int i = 0; i < values.size(); ++i )
  {
    const std::string k = key( values[i] );
    QVERIFY2( k.rfind( "refused", 0 ) != 0, qPrintable( QStringLiteral( "value %1 (%2) refused" ).arg( i ).arg( values[i].typeName() ) ) );
    const QByteArray bytes( k.data(), static_cast<int>( k.size() ) );
    QVERIFY2( !seen.contains( bytes ), qPrintable( QStringLiteral( "values %1 and %2 share a key" ).arg( seen.value( bytes ) ).arg( i ) ) );
    seen.insert( bytes, i );
  }
  // Same digits, different types: a different value each (5 the text, the number, the real, true the boolean).
  QVERIFY( key( 1 ) != key( QStringLiteral( "1" ) ) );
  QVERIFY( key( 1 ) != key( 1.0 ) );
  QVERIFY( key( 1 ) != key( true ) );
}

void TestValueCodec::equalValuesEqualKeys()
{
  // Whole numbers of any width are one value.
  QCOMPARE( key( 5 ), key( qlonglong( 5 ) ) );
  QCOMPARE( key( 5 ), key( 5u ) );
  QCOMPARE( key( 5 ), key( qulonglong( 5 ) ) );
  QCOMPARE( key( QVariant::fromValue<short>( 5 ) ), key( 5 ) );
  // Every NaN is the same NaN.
  double otherNan;
  const std::uint64_t bits = 0x7ff8000000000123ULL;
  std::memcpy( &otherNan, &bits, sizeof bits );
  QCOMPARE( key( otherNan ), key( std::numeric_limits<double>::quiet_NaN() ) );
  // Copies and rebuilt values.
  QCOMPARE( key( QString( "abc" ) ), key( QString( "ab" ) + "c" ) );
  QCOMPARE( key( QVariantMap { { "a", 1 }, { "b", 2 } } ), key( QVariantMap { { "b", 2 }, { "a", 1 } } ) );
  QCOMPARE( key( QStringList { "x" } ), key( QStringList { QString( "x" ) } ) );
}

void TestValueCodec::nullIsOneValue()
{
  QCOMPARE( key( QVariant( QVariant::String ) ), key( QVariant() ) );
  QCOMPARE( key( QVariant( QVariant::Int ) ), key( QVariant() ) );
  QCOMPARE( key( QVariant( QVariant::Date ) ), key( QVariant() ) );
  QVERIFY( key( QString( "" ) ) != key( QVariant() ) ); // an empty text is not NULL
}

void TestValueCodec::decodeGivesBackTheValue()
{
  for ( const QVariant &value : lookalikes() )
  {
    std::string bytes;
    VbasValueCodec::encode( value, bytes );
    VbasValueCodec::encode( 42, bytes ); // a second value follows: decode must stop at the first one's end
    std::size_t position = 0;
    const QVariant back = VbasValueCodec::decode( bytes, position );
    QCOMPARE( VbasValueCodec::decode( bytes, position ), QVariant( qlonglong( 42 ) ) );
    QCOMPARE( position, bytes.size() );
    QVERIFY2( key( back ) == key( value ), qPrintable( QStringLiteral( "%1 does not come back as itself" ).arg( value.typeName() ) ) );
    if ( value.userType() == QMetaType::QString || value.userType() == QMetaType::QByteArray || value.userType() == QMetaType::QDateTime )
      QCOMPARE( back, value );
  }
  std::string truncated;
  VbasValueCodec::encode( QStringLiteral( "truncated" ), truncated );
  truncated.resize( truncated.size() - 1 );
  std::size_t position = 0;
  QVERIFY_EXCEPTION_THROWN( VbasValueCodec::decode( truncated, position ), std::out_of_range );
}

void TestValueCodec::keysRefuseWhatIsNotExact()
{
  std::string bytes;
  const QString replaced = QStringLiteral( "A" ) + QChar( 0xfffd );
  QVERIFY( VbasValueCodec::encodeKey( replaced, bytes ).contains( QStringLiteral( "U+FFFD" ) ) );
  QVERIFY( VbasValueCodec::encodeKey( QStringList { "ok", replaced }, bytes ).contains( QStringLiteral( "U+FFFD" ) ) );
  QVERIFY( VbasValueCodec::encodeKey( QVariantMap { { replaced, 1 } }, bytes ).contains( QStringLiteral( "U+FFFD" ) ) );
  QVERIFY( VbasValueCodec::encodeKey( QPointF( 1, 2 ), bytes ).contains( QStringLiteral( "QPointF" ) ) );
  QVERIFY( VbasValueCodec::encodeKey( QVariantList { QPointF( 1, 2 ) }, bytes ).contains( QStringLiteral( "QPointF" ) ) );
  // Text with a NUL would lose what follows it in every output format: 'F\0x' released as 'F'.
  const QString nul = QStringLiteral( "F" ) + QChar( 0 ) + QStringLiteral( "x" );
  QVERIFY( VbasValueCodec::encodeKey( nul, bytes ).contains( QStringLiteral( "NUL character (U+0000)" ) ) );
  QVERIFY( VbasValueCodec::encodeKey( QStringList { "ok", nul }, bytes ).contains( QStringLiteral( "U+0000" ) ) );
  // A U+FEFF is a character like any other: kept.
  QVERIFY( VbasValueCodec::encodeKey( QString( QChar( 0xfeff ) ) + QStringLiteral( "F" ), bytes ).isEmpty() );
}

void TestValueCodec::releaseKeepsAnyValue()
{
  // A released field that is not a QI may hold anything: it is kept as its text.
  std::string bytes;
  VbasValueCodec::encode( QPointF( 1, 2 ), bytes );
  std::size_t position = 0;
  QCOMPARE( VbasValueCodec::decode( bytes, position ), QVariant( QPointF( 1, 2 ) ).toString() );
}

void TestValueCodec::regionKeysMatchAsText()
{
  QCOMPARE( regionKey( 7 ), QStringLiteral( "7" ) );
  QCOMPARE( regionKey( qlonglong( 7 ) ), QStringLiteral( "7" ) );
  QCOMPARE( regionKey( QStringLiteral( "7" ) ), QStringLiteral( "7" ) );
  QCOMPARE( regionKey( 7.0 ), QStringLiteral( "7" ) );
  QCOMPARE( regionKey( 0.1 ), QStringLiteral( "0.1" ) );
  QVERIFY( regionKey( QStringLiteral( "007" ) ) != regionKey( 7 ) );
  QVERIFY( regionKey( 0.1 + 0.2 ) != regionKey( 0.3 ) );
  QCOMPARE( regionKey( std::numeric_limits<double>::quiet_NaN() ), QStringLiteral( "refused" ) );
  QCOMPARE( regionKey( true ), QStringLiteral( "refused" ) );
  QCOMPARE( regionKey( QStringList { "7" } ), QStringLiteral( "refused" ) );
  QCOMPARE( regionKey( QStringLiteral( "7" ) + QChar( 0xfffd ) ), QStringLiteral( "refused" ) );
}

QTEST_APPLESS_MAIN( TestValueCodec )
#include "test_value_codec.moc"
