// Bad input data: one wording for every device, and the host side of the device-side record
// (prim/util/input_error.cuh). A CUDA kernel that finds a bad index, offset or id skips it and records it in
// its device's record, in host-mapped pinned memory; every CUDA op's glue calls check_input_errors first,
// which reads that record (host memory: no sync) and raises what an earlier call left there.
#pragma once
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

#include "prim/util/input_error.cuh"

namespace gpuprim {

// The names of the codes, as the user sees them ("scatter_add", "offsets").
const char* input_op_name(InputOp op);
const char* input_arg_name(InputArg argument);

// "<argument>[<position>] = <value> <rule>", e.g. "index[1] = 5 is out of range for dimension 0 of size 5".
std::string describe_input_error(InputArg argument, InputRule rule, int64_t position, int64_t value, int64_t bound,
                                 int dimension = 0, bool flattened = false);

// Raises, at the call, the error for a bad value found on the host (CPU kernels, validate-style checks):
// "gpuprim.<op>: <describe_input_error>" as IndexError for the range rules, ValueError for the others.
[[noreturn]] void raise_input_error(InputOp op, InputArg argument, InputRule rule, int64_t position, int64_t value,
                                    int64_t bound, int dimension = 0, bool flattened = false);

// The device pointer to `device`'s record, for launchers (InputCheck::record). Allocated on first use with
// cudaHostAlloc (mapped; never freed, never a sync, allowed during graph capture). Thread-safe.
InputErrorRecord* input_error_record(c10::DeviceIndex device);

// Raises c10::IndexError "gpuprim.<op>: <describe_input_error> (detected on cuda:<device> after the call
// returned; the result of that call is incomplete)" if a kernel on `device` recorded a violation, and clears
// the record. Reads host memory only: no sync, so a kernel still running reports at a later call.
// Thread-safe: one of several threads that check at once reports a given violation.
void check_input_errors(c10::DeviceIndex device);
inline void check_input_errors(c10::Device device) { check_input_errors(device.index()); }

// gpuprim::check_errors: synchronizes every device that has a record (only those), then raises as
// check_input_errors for the first device that recorded something. Does nothing in a CPU-only build.
void check_all_input_errors();

}  // namespace gpuprim
