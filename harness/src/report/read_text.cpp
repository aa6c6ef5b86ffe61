#include "report/read_text.hpp"

#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#if HARNESS_HAVE_ZLIB
#include <zlib.h>
#endif

#include "harness/error.hpp"

namespace harness {

namespace {

bool starts_with_gzip_magic(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

// Every concatenated member is inflated; a truncated or corrupt stream is an InputError that
// says so, never half a file.
std::string gunzip(const std::string& path, const std::string& compressed) {
#if HARNESS_HAVE_ZLIB
  constexpr std::size_t kMaxInflatedBytes = std::size_t{4} << 30;
  if (compressed.size() > UINT_MAX) throw InputError(fmt::format("{}: gzip-compressed and over 4 GiB", path));
  z_stream zs{};
  // windowBits 15 + 32: zlib or gzip header, detected.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw InputError(fmt::format("{}: cannot start zlib", path));
  std::string out;
  std::array<char, 1 << 16> chunk{};
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  zs.avail_in = static_cast<uInt>(compressed.size());
  int rc = Z_OK;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
    zs.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk.data(), chunk.size() - zs.avail_out);
    if (out.size() > kMaxInflatedBytes) {  // a hostile stream that inflates without end
      inflateEnd(&zs);
      throw InputError(fmt::format("{}: gzip-compressed and inflates past 4 GiB: refused", path));
    }
    if (rc == Z_STREAM_END && zs.avail_in > 0) {  // another gzip member follows (cat a.gz b.gz)
      rc = inflateReset(&zs);
      if (rc != Z_OK) break;
      continue;
    }
    if (rc != Z_OK) break;
    if (zs.avail_in == 0 && zs.avail_out != 0) break;  // all input consumed, stream not ended
  }
  const std::string why = zs.msg != nullptr ? zs.msg : "the stream ends early";
  inflateEnd(&zs);
  if (rc != Z_STREAM_END)
    throw InputError(fmt::format("{}: gzip-compressed but {} (truncated or corrupt?)", path,
                                 why));
  return out;
#else
  (void)compressed;
  throw InputError(fmt::format("{}: gzip-compressed, and this harness was built without zlib: decompress it "
                               "first (gunzip -k {}, or zcat {} > report.json)",
                               path, path, path));
#endif
}

}  // namespace

std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open {}: {}", path, what, std::strerror(errno)));
  std::ostringstream raw;
  raw << in.rdbuf();
  std::string text = raw.str();
  return starts_with_gzip_magic(text) ? gunzip(path, text) : text;
}

}  // namespace harness
