// Generalization hierarchies (docs/method.md, Generalization): ARX's rows, the built-in intervals and
// value -> "*", and every hierarchy refused with the line and value at fault.
#include "algorithms/generalization/hierarchy.h"
#include "tests/algorithms/test_util.h"

using namespace vbas;

class TestHierarchy : public QObject
{
    Q_OBJECT

  private slots:
    void arxRows();
    void emptyFieldsAtTheEnd();
    void raggedRowRefused();
    void emptyLabelRefused();
    void valueTwiceRefused();
    void levelNotCoarseningRefused();
    void noRowsRefused();
    void intervalsOfBands();
    void intervalsOfNumbers();
    void intervalSplittingBandRefused();
    void intervalAtABoundary();
    void tinyWidthRefused();
    void intervalOfTextRefused();
    void suppressionOnly();
};

namespace
{
std::vector<HierarchyRow> rows( const std::vector<std::vector<std::string>> &fields )
{
  std::vector<HierarchyRow> out;
  for ( std::size_t i = 0; i < fields.size(); ++i )
    out.push_back( { i + 1, fields[i] } );
  return out;
}

//! The labels of every value at a level, in value order.
std::vector<std::string> labels( const Hierarchy &h, std::size_t level )
{
  std::vector<std::string> out;
  for ( std::size_t v = 0; v < h.valueCount(); ++v )
    out.push_back( h.label( level, h.labelId( level, v ) ) );
  return out;
}

//! The error fromRows raises, or none.
std::optional<HierarchyError> refusal( const std::vector<std::vector<std::string>> &fields )
{
  try
  {
    Hierarchy::fromRows( rows( fields ) );
  }
  catch ( const HierarchyError &e )
  {
    return e;
  }
  return std::nullopt;
}

std::optional<HierarchyError> intervalRefusal( const std::vector<std::string> &values, double width )
{
  try
  {
    Hierarchy::intervals( values, width );
  }
  catch ( const HierarchyError &e )
  {
    return e;
  }
  return std::nullopt;
}

#define VBAS_COMPARE_REFUSAL( error, expectedLine, expectedValue, expectedText ) \
  do \
  { \
    QVERIFY( error ); \
    QCOMPARE( error->line, std::size_t( expectedLine ) ); \
    QCOMPARE( error->value, std::string( expectedValue ) ); \
    QVERIFY2( std::string( error->what() ).find( expectedText ) != std::string::npos, error->what() ); \
  } while ( false )
} // namespace

void TestHierarchy::arxRows()
{
  const Hierarchy h = Hierarchy::fromRows( rows( { { "20-24", "20-29", "20-39", "*" }, { "25-29", "20-29", "20-39", "*" }, { "30-34", "30-39", "20-39", "*" }, { "35-39", "30-39", "20-39", "*" } } ) );
  QCOMPARE( h.levels(), std::size_t( 4 ) );
  QCOMPARE( h.valueCount(), std::size_t( 4 ) );
  QCOMPARE( h.find( "30-34" ), std::optional<std::size_t>( 2 ) );
  QVERIFY( !h.find( "40-44" ) );
  QCOMPARE( labels( h, 0 ), std::vector<std::string>( { "20-24", "25-29", "30-34", "35-39" } ) );
  QCOMPARE( labels( h, 1 ), std::vector<std::string>( { "20-29", "20-29", "30-39", "30-39" } ) );
  QCOMPARE( h.labelCount( 1 ), std::size_t( 2 ) );
  QCOMPARE( h.labelCount( 3 ), std::size_t( 1 ) );
  // "20-39" at level 2 holds all four values, "30-39" at level 1 two of them.
  QCOMPARE( h.leaves( 2, h.labelId( 2, 0 ) ), std::size_t( 4 ) );
  QCOMPARE( h.leaves( 1, h.labelId( 1, 3 ) ), std::size_t( 2 ) );
  QCOMPARE( h.firstValue( 1, h.labelId( 1, 3 ) ), std::size_t( 2 ) );
}

void TestHierarchy::emptyFieldsAtTheEnd()
{
  // ARX may end rows with separators: the empty fields at the end are not levels.
  const Hierarchy h = Hierarchy::fromRows( rows( { { "a", "x", "*", "", "" }, { "b", "x", "*", "" } } ) );
  QCOMPARE( h.levels(), std::size_t( 3 ) );
  QCOMPARE( labels( h, 2 ), std::vector<std::string>( { "*", "*" } ) );
}

void TestHierarchy::raggedRowRefused()
{
  VBAS_COMPARE_REFUSAL( refusal( { { "a", "x", "*" }, { "b", "*" } } ), 2, "b", "line 2 has 2 columns, line 1 has 3" );
}

void TestHierarchy::emptyLabelRefused()
{
  VBAS_COMPARE_REFUSAL( refusal( { { "a", "x", "*" }, { "b", "", "*" } } ), 2, "b", "the label of 'b' at level 1 is empty" );
}

void TestHierarchy::valueTwiceRefused()
{
  VBAS_COMPARE_REFUSAL( refusal( { { "a", "x", "*" }, { "b", "x", "*" }, { "a", "y", "*" } } ), 3, "a", "the value 'a' is already on line 1" );
}

void TestHierarchy::levelNotCoarseningRefused()
{
  // a and b share "x" at level 1 but part at level 2: level 2 does not coarsen level 1.
  VBAS_COMPARE_REFUSAL( refusal( { { "a", "x", "p", "*" }, { "b", "x", "q", "*" } } ), 2, "b", "'x' at level 1 is under 'p' at level 2 on line 1 but under 'q' here" );
}

void TestHierarchy::noRowsRefused()
{
  VBAS_COMPARE_REFUSAL( refusal( {} ), 0, "", "no values" );
  VBAS_COMPARE_REFUSAL( refusal( { { "", "" } } ), 1, "", "no values" );
}

void TestHierarchy::intervalsOfBands()
{
  // Width 5 from 20: [20, 25), [25, 30), [30, 35) and the open band's [85, inf); width 10 merges
  // the first two; 20: [20, 40) and [80, inf); 40: [20, 60) and [60, inf); 80 would hold all: "*".
  const Hierarchy h = Hierarchy::intervals( { "20-24", "25-29", "30-34", "85+" }, 5 );
  QCOMPARE( h.levels(), std::size_t( 6 ) );
  QCOMPARE( labels( h, 1 ), std::vector<std::string>( { "[20, 25)", "[25, 30)", "[30, 35)", "[85, inf)" } ) );
  QCOMPARE( labels( h, 2 ), std::vector<std::string>( { "[20, 30)", "[20, 30)", "[30, 40)", "[80, inf)" } ) );
  QCOMPARE( labels( h, 3 ), std::vector<std::string>( { "[20, 40)", "[20, 40)", "[20, 40)", "[80, inf)" } ) );
  QCOMPARE( labels( h, 4 ), std::vector<std::string>( { "[20, 60)", "[20, 60)", "[20, 60)", "[60, inf)" } ) );
  QCOMPARE( labels( h, 5 ), std::vector<std::string>( { "*", "*", "*", "*" } ) );
}

void TestHierarchy::intervalsOfNumbers()
{
  // Width 2 from 0: [0, 2), [2, 4), [6, 8); width 4: [0, 4) twice and [4, 8); width 8 would hold all.
  const Hierarchy h = Hierarchy::intervals( { "1", "2.5", "7" }, 2 );
  QCOMPARE( h.levels(), std::size_t( 4 ) );
  QCOMPARE( labels( h, 1 ), std::vector<std::string>( { "[0, 2)", "[2, 4)", "[6, 8)" } ) );
  QCOMPARE( labels( h, 2 ), std::vector<std::string>( { "[0, 4)", "[0, 4)", "[4, 8)" } ) );
  QCOMPARE( labels( h, 3 ), std::vector<std::string>( { "*", "*", "*" } ) );
}

void TestHierarchy::intervalSplittingBandRefused()
{
  VBAS_COMPARE_REFUSAL( intervalRefusal( { "20-29", "30-39" }, 5 ), 0, "20-29", "an interval of width 5 would split the band '20-29'" );
  VBAS_COMPARE_REFUSAL( intervalRefusal( { "1", "2" }, 0 ), 0, "0", "positive" );
}

void TestHierarchy::intervalAtABoundary()
{
  // (0.6 - 0.5) / 0.1 is 0.9999999999999998 in doubles: 0.6 still falls in [0.6, 0.7), not [0.5, 0.6).
  const Hierarchy h = Hierarchy::intervals( { "0.5", "0.6" }, 0.1 );
  QCOMPARE( labels( h, 1 ), std::vector<std::string>( { "[0.5, 0.6)", "[0.6, 0.7)" } ) );
}

void TestHierarchy::tinyWidthRefused()
{
  // 25 + 1e-300 is 25 in a double: the message speaks of the width and the numbers, not of a band.
  VBAS_COMPARE_REFUSAL( intervalRefusal( { "25", "30" }, 1e-300 ), 0, "25", "the width 1e-300 is too small for values such as '25'" );
}

void TestHierarchy::intervalOfTextRefused()
{
  VBAS_COMPARE_REFUSAL( intervalRefusal( { "12", "twelve" }, 5 ), 0, "twelve", "'twelve' is not a number" );
}

void TestHierarchy::suppressionOnly()
{
  const Hierarchy h = Hierarchy::suppressionOnly( { "F", "M" } );
  QCOMPARE( h.levels(), std::size_t( 2 ) );
  QCOMPARE( labels( h, 1 ), std::vector<std::string>( { "*", "*" } ) );
  QCOMPARE( h.leaves( 1, 0 ), std::size_t( 2 ) );
}

QTEST_APPLESS_MAIN( TestHierarchy )
#include "test_hierarchy.moc"
