#ifndef QUIRE_FUZZ_HOOKS_H
#define QUIRE_FUZZ_HOOKS_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's built-in mutator, callable from a custom mutator
/// (https://llvm.org/docs/LibFuzzer.html#developing-libfuzzer).
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

#endif
