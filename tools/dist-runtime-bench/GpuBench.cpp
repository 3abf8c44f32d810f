//===- GpuBench.cpp - Copy kernel bandwidth vs a device-to-device memcpy --===//
//
//   dist-runtime-gpu-bench [--bytes N] [--iters K] [--json]     (one GPU)
//
// Times the runtime's local data movement on device buffers of N bytes
// (default 256 MiB) through the C ABI, nccl backend (the CUDA kernels of
// lib/Runtime/CudaCopy.cu), against cudaMemcpyAsync device-to-device of the
// same bytes on the same stream: all-to-all packing and unpacking at several
// chunk widths, a strided slice, and a zero fill. Each case: two warm-up
// runs, then K back-to-back launches between two stream synchronisations.
// Bandwidth counts the bytes of one buffer (read once and written once, as
// for the memcpy); "of copy" is the kernel's bandwidth over the memcpy's.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Case {
  std::string name;
  std::function<void()> run;
};

double timeIt(const std::function<void()> &fn, int iters) {
  fn();
  fn();
  distRtSynchronize(nullptr);
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    fn();
  distRtSynchronize(nullptr);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(t1 - t0).count() / iters;
}

} // namespace

int main(int argc, char **argv) {
  int64_t bytes = int64_t(256) << 20;
  int iters = 20;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--bytes" && i + 1 < argc)
      bytes = std::atoll(argv[++i]);
    else if (a == "--iters" && i + 1 < argc)
      iters = std::atoi(argv[++i]);
    else if (a == "--json")
      json = true;
    else {
      std::fprintf(stderr, "usage: %s [--bytes N] [--iters K] [--json]\n",
                   argv[0]);
      return 2;
    }
  }
  // Whole 4 KiB rows of 8 chunks, so every case divides evenly.
  bytes = bytes / 32768 * 32768;
  if (bytes <= 0 || iters < 1) {
    std::fprintf(stderr, "dist-runtime-gpu-bench: --bytes must be >= 32768 "
                         "and --iters >= 1\n");
    return 2;
  }
  if (distRtInitWithBackend("nccl") != DIST_RT_OK)
    return 1;
  int device = 0;
  cudaGetDevice(&device);
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, device);

  void *src = distRtAlloc(bytes);
  void *dst = distRtAlloc(bytes);
  // Non-zero contents: zero pages could be served from compressed memory.
  std::vector<char> host(bytes);
  for (int64_t i = 0; i < bytes; ++i)
    host[i] = static_cast<char>(1 + i % 251);
  distRtMemcpy(src, host.data(), bytes, DIST_RT_COPY_HOST_TO_DEVICE, nullptr);
  distRtSynchronize(nullptr);

  const int64_t nF32 = bytes / 4, nBf16 = bytes / 2;
  std::vector<Case> cases;
  cases.push_back({"cudaMemcpyAsync D2D (baseline)", [&] {
                     distRtMemcpy(dst, src, bytes,
                                  DIST_RT_COPY_DEVICE_TO_DEVICE, nullptr);
                   }});
  cases.push_back({"copy_strided, contiguous f32", [&] {
                     int64_t one = 1;
                     distRtCopyStrided(1, &nF32, src, &one, dst, &one,
                                       DIST_RT_F32, nullptr);
                   }});
  cases.push_back({"pack dim 0 of [8, n/8] f32", [&] {
                     int64_t shape[2] = {8, nF32 / 8};
                     distRtPackChunks(2, shape, 0, 8, src, dst, DIST_RT_F32,
                                      nullptr);
                   }});
  for (int64_t chunkBytes : {4096, 512, 64, 16}) {
    const int64_t c = chunkBytes / 4;
    const int64_t rows = nF32 / (8 * c);
    std::string w = std::to_string(chunkBytes) + " B chunks";
    cases.push_back(
        {"pack dim 1 of [rows, 8 x " + std::to_string(c) + "] f32, " + w, [=] {
           int64_t shape[2] = {rows, 8 * c};
           distRtPackChunks(2, shape, 1, 8, src, dst, DIST_RT_F32, nullptr);
         }});
    cases.push_back({"unpack dim 1, " + w, [=] {
                       int64_t shape[2] = {rows, 8 * c};
                       distRtUnpackChunks(2, shape, 1, 8, src, dst, DIST_RT_F32,
                                          nullptr);
                     }});
  }
  cases.push_back({"pack last dim of [rows, 8 x 2] bf16, 4 B chunks", [&] {
                     int64_t shape[2] = {nBf16 / 16, 16};
                     distRtPackChunks(2, shape, 1, 8, src, dst, DIST_RT_BF16,
                                      nullptr);
                   }});
  cases.push_back({"strided slice [rows, 1024] of [rows, 1040] f32", [&] {
                     // Reads rows of 1024 out of a padded 1040-wide buffer.
                     int64_t rows = nF32 / 1040;
                     int64_t sizes[2] = {rows, 1024};
                     int64_t ss[2] = {1040, 1}, ds[2] = {1024, 1};
                     distRtCopyStrided(2, sizes, src, ss, dst, ds, DIST_RT_F32,
                                       nullptr);
                   }});
  cases.push_back({"fill_zero, contiguous", [&] {
                     int64_t one = 1;
                     distRtFillZero(1, &nF32, dst, &one, DIST_RT_F32, nullptr);
                   }});

  std::vector<double> times;
  for (const Case &c : cases)
    times.push_back(timeIt(c.run, iters));
  const double base = times[0];
  if (json) {
    std::printf("{\"device\": \"%s\", \"bytes\": %lld, \"iters\": %d, "
                "\"memcpy_gbps\": %.2f, \"cases\": [",
                prop.name, (long long)bytes, iters, bytes / base / 1e9);
    for (size_t i = 1; i < cases.size(); ++i)
      std::printf("%s{\"case\": \"%s\", \"seconds\": %.6e, \"gbps\": %.2f, "
                  "\"of_copy\": %.4f}",
                  i > 1 ? ", " : "", cases[i].name.c_str(), times[i],
                  bytes / times[i] / 1e9, base / times[i]);
    std::printf("]}\n");
  } else {
    std::printf("dist-runtime-gpu-bench: %s, %lld MiB buffers, %d "
                "iterations\n\n| case | ms | GB/s | of copy |\n"
                "|---|---:|---:|---:|\n",
                prop.name, (long long)(bytes >> 20), iters);
    for (size_t i = 0; i < cases.size(); ++i)
      std::printf("| %s | %.3f | %.1f | %.2f |\n", cases[i].name.c_str(),
                  times[i] * 1e3, bytes / times[i] / 1e9, base / times[i]);
  }
  distRtFree(src);
  distRtFree(dst);
  distRtFinalize();
  return 0;
}
