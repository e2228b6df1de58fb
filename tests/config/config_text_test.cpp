// Config text and files: JSON syntax errors carry line and column, repeated keys are refused,
// unreadable files are named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "config/json_text.hpp"
#include "config_test_support.hpp"

namespace embscale::config {
namespace {

using testing::text_error_of;

TEST(ConfigText, MissingCommaReportsLineAndColumn) {
  // Line 3 lacks the comma after 4; the parser stops at the end of the next token, "max_iter".
  const std::string text =
      "{\n"
      "  \"schema_version\": 1,\n"
      "  \"solver\": {\"batchsize\": 4 \"max_iter\": 1}\n"
      "}\n";
  const auto message = text_error_of(text);
  EXPECT_EQ(message.rfind("test.json:3:38: invalid JSON: syntax error while parsing object - unexpected string "
                          "literal; expected '}'",
                          0),
            0u)
      << message;
}

TEST(ConfigText, TruncatedAndEmptyInput) {
  EXPECT_EQ(text_error_of("{\n  \"solver\": {\n"),
            "test.json:3:1: invalid JSON: syntax error while parsing object key - unexpected end of input; expected "
            "string literal");
  EXPECT_EQ(text_error_of("").rfind("test.json:1:1: invalid JSON: ", 0), 0u) << text_error_of("");
}

TEST(ConfigText, NumberOverflowPointsAtTheLiteral) {
  EXPECT_EQ(text_error_of("{\n  \"schema_version\": 1e999\n}"),
            "test.json:2:25: invalid JSON: number overflow parsing '1e999'");
}

TEST(ConfigText, ColumnsCountCharactersNotBytes) {
  // "é" is two bytes; the stray "x" is the 9th character of line 1.
  EXPECT_EQ(text_error_of("{\"é\": 1 x}").rfind("test.json:1:9: invalid JSON: ", 0), 0u)
      << text_error_of("{\"é\": 1 x}");
  EXPECT_EQ(position_of_byte("ab\ncd", 5).line, 2u);
  EXPECT_EQ(position_of_byte("ab\ncd", 5).column, 2u);
  EXPECT_EQ(position_of_byte("ab", 99).column, 3u);  // past the end: just after the last character
}

TEST(ConfigText, RepeatedKeysAreRefusedWithTheirPath) {
  std::string text = default_config_text();
  // A second "combiner" in emb1's hparam block: without the check the last one would win silently.
  const auto at = text.find("\"combiner\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"combiner\": 1, ");
  EXPECT_EQ(text_error_of(text),
            "test.json: layers[emb1].sparse_embedding_hparam.combiner: duplicate key; a key may appear once per "
            "object (a JSON parser keeps only the last)");
  EXPECT_EQ(text_error_of("{\"a\": {\"b\": 1}, \"a\": 2}"),
            "test.json: a: duplicate key; a key may appear once per object (a JSON parser keeps only the last)");
  // The same key in different objects is fine: the error below is about the schema, not duplicates.
  const auto message = text_error_of("{\"schema_version\": 1, \"solver\": {\"x\": 1}, \"optimizer\": {\"x\": 1}}");
  EXPECT_EQ(message.rfind("test.json: solver.x: unknown key; known keys: \"batchsize\", ", 0), 0u) << message;
}

TEST(ConfigText, DuplicateKeyInsideAnUnnamedLayerUsesItsIndex) {
  EXPECT_EQ(text_error_of("{\"layers\": [{\"type\": \"Data\"}, {\"type\": \"x\", \"type\": \"y\"}]}"),
            "test.json: layers[1].type: duplicate key; a key may appear once per object (a JSON parser keeps only the "
            "last)");
}

TEST(ConfigText, DefaultTextParsesWithTheEmbeddedOrigin) {
  EXPECT_EQ(parse_config_text(default_config_text(), "x").solver.batchsize, default_config().solver.batchsize);
  auto j = nlohmann::json::parse(default_config_text());
  j["solver"]["batchsize"] = 0;
  try {
    parse_config(j, "<embedded default>");
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("<embedded default>: solver.batchsize: ", 0), 0u) << e.what();
  }
}

class ConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("embscale_config_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(ConfigFile, MissingFileIsNamed) {
  const auto path = dir_ / "absent.json";
  try {
    load_config_file(path);
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": cannot open config file: No such file or directory");
  }
}

TEST_F(ConfigFile, DirectoryIsNamed) {
  try {
    load_config_file(dir_);
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir_.string() + ": cannot open config file: Is a directory");
  }
}

TEST_F(ConfigFile, FileIsTheOriginOfItsMessages) {
  const auto path = dir_ / "run.json";
  std::ofstream(path) << default_config_text();
  EXPECT_EQ(load_config_file(path).solver.batchsize, 4096);
  EXPECT_EQ(load_config_file(path).directory, dir_) << "relative paths in the file resolve against its directory";

  std::ofstream(path) << "{\n  \"schema_version\": 1,\n  \"solver\": {\"batchsize\": 4,}\n}\n";
  try {
    load_config_file(path);
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ":3:", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace embscale::config
