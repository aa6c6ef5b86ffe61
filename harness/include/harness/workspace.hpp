#pragma once
// Device scratch memory that launch functions ask for through their LaunchContext.
// Buffers are kept between runs (the timed runs never allocate) and their peak size is
// the variant's extra memory beyond inputs and outputs.
#include <cstddef>
#include <vector>

namespace harness {

class Workspace {
 public:
  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace();

  // A device buffer of at least `bytes` in slot `slot` (0, 1, ...). Grows on demand;
  // throws OutOfMemory with the need and the free memory when it cannot.
  void* get(std::size_t slot, std::size_t bytes);
  std::size_t current_bytes() const;
  std::size_t peak_bytes() const { return peak_; }
  void release();

 private:
  struct Slot {
    void* ptr = nullptr;
    std::size_t bytes = 0;
  };
  std::vector<Slot> slots_;
  std::size_t peak_ = 0;
};

}  // namespace harness
