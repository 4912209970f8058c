#ifndef GAMELOG_CSHA256_H
#define GAMELOG_CSHA256_H

#include <stddef.h>
#include <stdint.h>

/// SHA-256 of three byte ranges one after the other (a count of 0 skips a range),
/// written to `out` (32 bytes). The context lives on the stack: no allocation.
void gamelog_sha256(const void *first, size_t firstCount,
                    const void *second, size_t secondCount,
                    const void *third, size_t thirdCount,
                    uint8_t *out);

/// The ways `gamelog_sha256_many_with` can compute digests.
enum {
    /// One message after another, as `gamelog_sha256` (SHA instructions where there are).
    GAMELOG_SHA256_ONE_AT_A_TIME = 0,
    /// Eight messages side by side in AVX2 registers (x86-64).
    GAMELOG_SHA256_AVX2 = 1,
};

/// SHA-256 of `count` messages laid end to end in `base`: message `i` is the bytes from
/// `offsets[i]` to `offsets[i + 1]` (so `offsets` holds `count + 1` values). Digest `i` is
/// written to `out + 32 * i`. Uses the fastest engine this processor has.
void gamelog_sha256_many(const uint8_t *base, const size_t *offsets, size_t count, uint8_t *out);

/// `gamelog_sha256_many` with a given engine, for tests and benchmarks: -1 (and nothing
/// written) when this processor cannot run it.
int gamelog_sha256_many_with(int engine, const uint8_t *base, const size_t *offsets, size_t count, uint8_t *out);

/// Whether this processor (and build) can run `engine`.
int gamelog_sha256_engine_available(int engine);

/// The engine `gamelog_sha256_many` uses for two messages or more.
int gamelog_sha256_preferred_engine(void);

#endif
