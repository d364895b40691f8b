// NVTX ranges in the "collscope" domain around every step a GPU backend enqueues,
// naming the step, the rank and the bytes it moves, so that Nsight Systems shows
// them beside NCCL's own ranges. Header-only (nvtx3 ships with the CUDA toolkit).
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <string>

namespace collscope::gpu {

class NvtxRange {
 public:
  NvtxRange(const std::string& what, std::int32_t rank, std::uint64_t bytes) {
    static nvtxDomainHandle_t domain = nvtxDomainCreateA("collscope");
    domain_ = domain;
    const std::string text = what + " · rank " + std::to_string(rank) + " · " + std::to_string(bytes) + " B";
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = text.c_str();
    a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
    a.payload.ullValue = bytes;
    nvtxDomainRangePushEx(domain_, &a);
  }
  ~NvtxRange() { nvtxDomainRangePop(domain_); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  nvtxDomainHandle_t domain_;
};

}  // namespace collscope::gpu
