// Every hash of the log is a SHA-256 of a few hundred bytes, three an appended event.
// swift-crypto's `SHA256` wraps each digest in a class (a heap allocation), copies the
// context to finalize and zeroes both copies, which suits secrets and costs as much as
// the hashing itself here (tools/Benchmarks: about 0.6 µs a digest against 0.7 µs of
// SHA-NI rounds). So the log calls the same implementation without the wrapper: on
// Apple's systems CommonCrypto (swift-crypto uses CryptoKit there), elsewhere the
// BoringSSL that swift-crypto builds and links, through its exported C entry points.
// A test checks every digest against swift-crypto's on random inputs.
#include "CSHA256.h"

#if defined(__APPLE__)
#include <CommonCrypto/CommonDigest.h>

void gamelog_sha256(const void *first, size_t firstCount, const void *second, size_t secondCount,
                    const void *third, size_t thirdCount, uint8_t *out) {
    CC_SHA256_CTX context;
    CC_SHA256_Init(&context);
    if (firstCount > 0) CC_SHA256_Update(&context, first, (CC_LONG)firstCount);
    if (secondCount > 0) CC_SHA256_Update(&context, second, (CC_LONG)secondCount);
    if (thirdCount > 0) CC_SHA256_Update(&context, third, (CC_LONG)thirdCount);
    CC_SHA256_Final(out, &context);
}

#else
// BoringSSL's SHA256_CTX is 112 bytes (eight words of state, two of length, a 64-byte
// block, two counters); the context here is larger and aligned for any layout change.
typedef struct { _Alignas(16) uint8_t bytes[256]; } gamelog_boringssl_sha256_context;

// swift-crypto prefixes BoringSSL's symbols with CCryptoBoringSSL_ (pinned: 3.12.3).
extern int CCryptoBoringSSL_SHA256_Init(gamelog_boringssl_sha256_context *context);
extern int CCryptoBoringSSL_SHA256_Update(gamelog_boringssl_sha256_context *context, const void *data, size_t count);
extern int CCryptoBoringSSL_SHA256_Final(uint8_t *out, gamelog_boringssl_sha256_context *context);

void gamelog_sha256(const void *first, size_t firstCount, const void *second, size_t secondCount,
                    const void *third, size_t thirdCount, uint8_t *out) {
    gamelog_boringssl_sha256_context context;
    CCryptoBoringSSL_SHA256_Init(&context);
    if (firstCount > 0) CCryptoBoringSSL_SHA256_Update(&context, first, firstCount);
    if (secondCount > 0) CCryptoBoringSSL_SHA256_Update(&context, second, secondCount);
    if (thirdCount > 0) CCryptoBoringSSL_SHA256_Update(&context, third, thirdCount);
    CCryptoBoringSSL_SHA256_Final(out, &context);
}
#endif
