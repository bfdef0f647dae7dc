// libFuzzer's driver, from the runtime `-sanitize=fuzzer` links (compiler-rt's FuzzerInterface.h; no header
// is installed with the Swift toolchain). The harnesses call it from their own `main`, because SwiftPM
// renames an executable's entry point on Linux, so libFuzzer's `main` is never the one that runs.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
