#include <gtest/gtest.h>

#include "hearth/core/errors.h"
#include "hearth/data/csv_reader.h"
#include "tests/support/temp_dir.h"

namespace hearth::data {
namespace {

using Rows = std::vector<std::vector<std::string>>;

std::string error_of(std::string_view text, const CsvOptions& o = {}) {
  try {
    parse_csv(text, o, "data.csv");
  } catch (const IoError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Csv, ReadsHeaderAndRows) {
  CsvTable t = parse_csv("a,b,c\n1,2,3\n4,,6\n");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(t.rows, (Rows{{"1", "2", "3"}, {"4", "", "6"}}));
  EXPECT_EQ(t.row_lines, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.column("c"), 2u);
  EXPECT_EQ(t.cell(1, "a"), "4");
}

TEST(Csv, QuotedFieldsHoldDelimitersQuotesAndLineBreaks) {
  CsvTable t = parse_csv("id,text\n1,\"hello, world\"\n2,\"she said \"\"hi\"\"\"\n3,\"two\nlines\"\n4,\"\"\n5,a\"b\n");
  EXPECT_EQ(t.rows,
            (Rows{{"1", "hello, world"}, {"2", "she said \"hi\""}, {"3", "two\nlines"}, {"4", ""}, {"5", "a\"b"}}));
  EXPECT_EQ(t.row_lines, (std::vector<int64_t>{2, 3, 4, 6, 7}));
}

TEST(Csv, HandlesCrLfBomBlankLinesAndAMissingFinalNewline) {
  CsvTable t = parse_csv("\xEF\xBB\xBFx,y\r\n1,2\r\n\r\n3,\"4\r\n5\"");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(t.rows, (Rows{{"1", "2"}, {"3", "4\r\n5"}}));
  EXPECT_EQ(t.row_lines, (std::vector<int64_t>{2, 4}));
}

TEST(Csv, TsvWithoutQuotingKeepsQuotesLiterally) {
  CsvOptions tsv{.delimiter = '\t', .quote = '\0'};
  CsvTable t = parse_csv("sentence\tlabel\n\"it 's a charming \" film\t1\nhe said, \"no\t0\n", tsv);
  EXPECT_EQ(t.rows, (Rows{{"\"it 's a charming \" film", "1"}, {"he said, \"no", "0"}}));
  CsvOptions quoted_tsv{.delimiter = '\t'};
  EXPECT_EQ(parse_csv("a\tb\n\"x\ty\"\tz\n", quoted_tsv).rows, (Rows{{"x\ty", "z"}}));
}

TEST(Csv, WithoutAHeaderEveryRecordIsARow) {
  CsvTable t = parse_csv("1;2\n3;4\n", {.delimiter = ';', .header = false});
  EXPECT_TRUE(t.columns.empty());
  EXPECT_EQ(t.rows, (Rows{{"1", "2"}, {"3", "4"}}));
  EXPECT_THROW(t.column("a"), IoError);
  EXPECT_TRUE(parse_csv("").rows.empty());
  EXPECT_EQ(parse_csv("only,header\n").columns.size(), 2u);
}

TEST(Csv, ErrorsNameTheFileAndLine) {
  EXPECT_EQ(error_of("a,b\n1,2\n3,4,5\n"), "[csv] data.csv:3: expected 2 fields (as in the header), found 3");
  EXPECT_EQ(error_of("1,2\n3\n", {.header = false}),
            "[csv] data.csv:2: expected 2 fields (as in the first row), found 1");
  EXPECT_EQ(error_of("a,b\n1,\"open\n\n2,3\n"), "[csv] data.csv:2: a quoted field opened here is never closed");
  EXPECT_NE(error_of("a,b\n\"x\"y,2\n").find("data.csv:2: unexpected character 'y' after a closing quote"),
            std::string::npos);
  // A multi-line field: the error names the line its record starts on.
  EXPECT_EQ(error_of("a,b\n\"1\n2\",3,4\n"), "[csv] data.csv:2: expected 2 fields (as in the header), found 3");
  try {
    parse_csv("a,b\n1,2\n", {}, "data.csv").column("c");
    FAIL();
  } catch (const IoError& e) {
    EXPECT_STREQ(e.what(), "[csv] data.csv: no column named 'c' (columns: 'a', 'b')");
  }
  EXPECT_THROW(parse_csv("a", {.delimiter = '\n'}), ValueError);
  EXPECT_THROW(parse_csv("a", {.delimiter = '"'}), ValueError);
}

TEST(Csv, OneLinePerRecordRefusesAQuoteThatRunsPastItsLine) {
  // Without the option, the unbalanced quote on line 2 swallows line 3: two rows from three lines.
  EXPECT_EQ(parse_csv("a,b\n\"x,1\ny\",2\nz,3\n").num_rows(), 2u);
  EXPECT_EQ(error_of("a,b\n\"x,1\ny\",2\nz,3\n", {.multiline_fields = false}),
            "[csv] data.csv:2: a quoted field opened on this line runs past its end (an unbalanced quote?); "
            "every row of this file is one line");
  EXPECT_EQ(parse_csv("a,b\n\"x\",1\ny,2\n", {.multiline_fields = false}).num_rows(), 2u);
}

TEST(Csv, ReadsFiles) {
  hearth::testing::TempDir dir;
  std::string path = dir.write("train.tsv", "label\ttext\n0\thi\n");
  CsvTable t = read_csv(path, {.delimiter = '\t'});
  EXPECT_EQ(t.source, path);
  EXPECT_EQ(t.cell(0, "text"), "hi");
  try {
    read_csv(dir.file("missing.csv"));
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("missing.csv: cannot open"), std::string::npos) << e.what();
  }
}

// A field of megabytes (as a hostile file holds) is cut as it is read, at a
// character boundary, so its tokens never cost gigabytes; the row and the
// other fields are kept whole.
TEST(Csv, AHugeFieldIsCutAtACharacterBoundaryAsItIsRead) {
  std::string big;
  while (big.size() < 3 * kMaxFieldBytes) big += "\xC3\xA9t\xC3\xA9 ";  // "été " in UTF-8
  CsvTable t = parse_csv("text,label\n\"" + big + "\",1\nshort,0\n");
  ASSERT_EQ(t.num_rows(), 2u);
  EXPECT_EQ(t.truncated_fields, 1);
  const std::string& cut = t.rows[0][0];
  EXPECT_LE(cut.size(), kMaxFieldBytes);
  EXPECT_GE(cut.size(), kMaxFieldBytes - 3);
  EXPECT_EQ(cut, big.substr(0, cut.size()));
  EXPECT_NE(static_cast<unsigned char>(big[cut.size()]) & 0xC0, 0x80);  // not inside a character
  EXPECT_EQ(t.rows[0][1], "1");
  EXPECT_EQ(t.rows[1][0], "short");
}

}  // namespace
}  // namespace hearth::data
