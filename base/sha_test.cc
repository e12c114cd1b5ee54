// Sha1Hex / Sha256Hex against the FIPS 180 examples and sha1sum/sha256sum
// values, at the padding's edges (55, 56, 64 bytes) and across many blocks.
#include "base/sha.h"

#include <catch2/catch.hpp>
#include <string>

using namespace codex;

TEST_CASE("SHA-1 of the FIPS 180 examples") {
  CHECK(Sha1Hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(Sha1Hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  CHECK(Sha1Hex(std::string(1'000'000, 'a')) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

TEST_CASE("SHA-256 of the FIPS 180 examples") {
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Sha256Hex(std::string(1'000'000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA at the padding's edges: 55, 56 and 64 bytes (sha1sum, sha256sum)") {
  CHECK(Sha1Hex(std::string(55, 'x')) == "cef734ba81a024479e09eb5a75b6ddae62e6abf1");
  CHECK(Sha1Hex(std::string(56, 'x')) == "901305367c259952f4e7af8323f480d59f81335b");
  CHECK(Sha1Hex(std::string(64, 'x')) == "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163");
  CHECK(Sha256Hex(std::string(55, 'x')) ==
        "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072");
  CHECK(Sha256Hex(std::string(56, 'x')) ==
        "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e");
  CHECK(Sha256Hex(std::string(64, 'x')) ==
        "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c");
}
