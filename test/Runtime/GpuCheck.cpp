//===- GpuCheck.cpp - The CUDA copy kernels against a CPU reference -------===//
//
//   dist-rt-gpu-check [--seed N]        (one rank; needs a GPU)
//
// Runs every local data movement of the runtime on device memory through the
// C ABI with the nccl backend (the CUDA kernels), on random data that is
// never zero, and compares each result byte for byte with reference loops
// written out here: all-to-all packing and unpacking on every dim, strided
// slices and transposes from padded buffers at unaligned offsets, zero
// fills of padding. Shapes are chosen so that every kernel path runs (the
// row kernel for long runs, the 32-bit unit kernel for short ones) with
// every unit width (1, 2, 4, 8, 16 bytes). Destinations are pre-filled with
// a canary so that writes outside the box are caught too.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

long gChecks = 0, gFailures = 0;

size_t elemSize(int dt) {
  static const size_t sizes[] = {2, 2, 4, 8, 4, 8, 1, 2, 1};
  return sizes[dt];
}

void fillRandom(std::vector<char> &v, std::mt19937 &rng) {
  for (char &c : v)
    c = static_cast<char>(1 + rng() % 255); // never zero
}

struct Device {
  void *ptr = nullptr;
  size_t bytes = 0;
  explicit Device(size_t n) : bytes(n) {
    ptr = distRtAlloc(static_cast<int64_t>(n));
  }
  ~Device() { distRtFree(ptr); }
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  void put(const std::vector<char> &h) {
    distRtMemcpy(ptr, h.data(), static_cast<int64_t>(bytes),
                 DIST_RT_COPY_HOST_TO_DEVICE, nullptr);
  }
  std::vector<char> get() {
    std::vector<char> h(bytes);
    distRtSynchronize(nullptr);
    distRtMemcpy(h.data(), ptr, static_cast<int64_t>(bytes),
                 DIST_RT_COPY_DEVICE_TO_HOST, nullptr);
    distRtSynchronize(nullptr);
    return h;
  }
  char *at(size_t off) { return static_cast<char *>(ptr) + off; }
};

void compare(const std::vector<char> &got, const std::vector<char> &want,
             const std::string &what) {
  ++gChecks;
  if (got == want)
    return;
  size_t first = 0;
  while (got[first] == want[first])
    ++first;
  if (++gFailures <= 20)
    std::fprintf(stderr, "FAIL %s: first difference at byte %zu\n",
                 what.c_str(), first);
}

std::string shapeStr(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "x" : "") + std::to_string(s[i]);
  return out + "]";
}

// dst chunk j, position (o, i, k) <- src (o, j*c + i, k).
void checkPack(const std::vector<int64_t> &shape, int dim, int64_t parts,
               int dt, std::mt19937 &rng) {
  const size_t es = elemSize(dt);
  int64_t outer = 1, inner = 1, n = 1;
  for (int d = 0; d < (int)shape.size(); ++d) {
    n *= shape[d];
    if (d < dim)
      outer *= shape[d];
    if (d > dim)
      inner *= shape[d];
  }
  const int64_t c = shape[dim] / parts;
  std::vector<char> src(n * es);
  fillRandom(src, rng);
  std::vector<char> packed(n * es), unpacked(n * es);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < parts; ++j)
      for (int64_t i = 0; i < c; ++i)
        for (int64_t k = 0; k < inner; ++k) {
          int64_t u = ((o * parts + j) * c + i) * inner + k;
          int64_t p = ((j * outer + o) * c + i) * inner + k;
          std::memcpy(&packed[p * es], &src[u * es], es);
        }
  Device a(n * es), b(n * es);
  a.put(src);
  distRtPackChunks(static_cast<int64_t>(shape.size()), shape.data(), dim, parts,
                   a.ptr, b.ptr, dt, nullptr);
  std::string what = "pack " + shapeStr(shape) + " dim " + std::to_string(dim) +
                     " parts " + std::to_string(parts) + " elem " +
                     std::to_string(es);
  compare(b.get(), packed, what);
  // Unpack the reference packing back: the original must reappear.
  b.put(packed);
  distRtUnpackChunks(static_cast<int64_t>(shape.size()), shape.data(), dim,
                     parts, b.ptr, a.ptr, dt, nullptr);
  compare(a.get(), src, "un" + what);
}

// A box of `sizes` read from a padded row-major buffer at an element offset,
// written transposed by `perm` into a buffer pre-filled with a canary.
void checkStrided(const std::vector<int64_t> &sizes,
                  const std::vector<int64_t> &pad, const std::vector<int> &perm,
                  int64_t srcOffset, int64_t dstOffset, int dt,
                  std::mt19937 &rng) {
  const size_t es = elemSize(dt);
  const int nd = static_cast<int>(sizes.size());
  std::vector<int64_t> srcStrides(nd), dstStrides(nd);
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; --d) {
    srcStrides[d] = s;
    s *= sizes[d] + pad[d];
  }
  int64_t t = 1;
  for (int k = nd - 1; k >= 0; --k) {
    dstStrides[perm[k]] = t;
    t *= sizes[perm[k]];
  }
  std::vector<char> src((s + srcOffset) * es), canary((t + dstOffset) * es);
  fillRandom(src, rng);
  fillRandom(canary, rng);
  std::vector<char> want = canary;
  int64_t total = 1;
  for (int64_t z : sizes)
    total *= z;
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t rest = linear, so = srcOffset, dO = dstOffset;
    for (int d = nd - 1; d >= 0; --d) {
      int64_t i = rest % sizes[d];
      rest /= sizes[d];
      so += i * srcStrides[d];
      dO += i * dstStrides[d];
    }
    std::memcpy(&want[dO * es], &src[so * es], es);
  }
  Device a(src.size()), b(canary.size());
  a.put(src);
  b.put(canary);
  distRtCopyStrided(nd, sizes.data(), a.at(srcOffset * es), srcStrides.data(),
                    b.at(dstOffset * es), dstStrides.data(), dt, nullptr);
  compare(b.get(), want,
          "strided " + shapeStr(sizes) + " pad " + shapeStr(pad) + " elem " +
              std::to_string(es) + " offsets " + std::to_string(srcOffset) +
              "/" + std::to_string(dstOffset));

  // Zero the same box inside the source buffer (its padding stays).
  std::vector<char> zeroed = src;
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t rest = linear, so = srcOffset;
    for (int d = nd - 1; d >= 0; --d) {
      so += (rest % sizes[d]) * srcStrides[d];
      rest /= sizes[d];
    }
    std::memset(&zeroed[so * es], 0, es);
  }
  distRtFillZero(nd, sizes.data(), a.at(srcOffset * es), srcStrides.data(), dt,
                 nullptr);
  compare(a.get(), zeroed, "fill " + shapeStr(sizes));
}

} // namespace

int main(int argc, char **argv) {
  unsigned seed = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--seed" && i + 1 < argc)
      seed = static_cast<unsigned>(std::atoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: %s [--seed N]\n", argv[0]);
      return 2;
    }
  }
  if (distRtInitWithBackend("nccl") != DIST_RT_OK)
    return 1;
  std::mt19937 rng(seed);
  const int dtypes[] = {DIST_RT_I8, DIST_RT_BF16, DIST_RT_F32, DIST_RT_F64};

  // Long runs (row kernel, 16-byte units): packing whole rows.
  checkPack({64, 4096}, 0, 8, DIST_RT_F32, rng);
  checkPack({8, 64, 1024}, 1, 4, DIST_RT_BF16, rng);
  checkPack({8, 8192}, 1, 2, DIST_RT_F32, rng);
  // Short runs (unit kernel): packing the last dim into narrow chunks.
  checkPack({512, 64}, 1, 8, DIST_RT_F32, rng);  // 32-byte chunks
  checkPack({1000, 6}, 1, 3, DIST_RT_BF16, rng); // 4-byte chunks
  checkPack({333, 7, 8}, 2, 8, DIST_RT_I8, rng); // 1-byte chunks
  checkPack({3, 5, 4, 2}, 2, 4, DIST_RT_F64, rng);
  // Random shapes, dims, part counts and dtypes.
  for (int trial = 0; trial < 200; ++trial) {
    int nd = 1 + rng() % 4;
    int dim = rng() % nd;
    int64_t parts = 1 + rng() % 8;
    std::vector<int64_t> shape(nd);
    for (int d = 0; d < nd; ++d)
      shape[d] = d == dim ? parts * (1 + rng() % 9) : 1 + rng() % 33;
    checkPack(shape, dim, parts, dtypes[rng() % 4], rng);
  }
  // Strided slices and transposes, aligned and not.
  checkStrided({256, 1024}, {0, 64}, {0, 1}, 0, 0, DIST_RT_F32, rng);
  checkStrided({256, 1024}, {0, 64}, {0, 1}, 1, 3, DIST_RT_F32, rng);
  checkStrided({64, 96}, {3, 5}, {1, 0}, 2, 0, DIST_RT_BF16, rng);
  for (int trial = 0; trial < 200; ++trial) {
    int nd = 1 + rng() % 5;
    std::vector<int64_t> sizes(nd), pad(nd);
    std::vector<int> perm(nd);
    for (int d = 0; d < nd; ++d) {
      sizes[d] = 1 + rng() % 17;
      pad[d] = rng() % 3;
    }
    std::iota(perm.begin(), perm.end(), 0);
    if (rng() % 2)
      std::shuffle(perm.begin(), perm.end(), rng);
    checkStrided(sizes, pad, perm, rng() % 4, rng() % 4, dtypes[rng() % 4],
                 rng);
  }
  std::printf("gpu-check: %ld kernel results compared with the CPU "
              "reference, %ld failures\n",
              gChecks, gFailures);
  distRtFinalize();
  return gFailures == 0 ? 0 : 1;
}
