// Many SHA-256 digests at once. A read that checks the log's chain recomputes a digest
// for every event, each of a few hundred bytes, and none waits for another: each is of
// the predecessor's *stored* hash and the event's envelope. Where the processor has no
// SHA instructions (many x86 servers in use: before Ice Lake and Zen), one SHA-256 runs
// its 64 rounds on four-byte words one after another and leaves most of the vector unit
// idle. Here eight messages run side by side in the eight words of AVX2 registers (the
// rounds of Intel's "multi-buffer" hashing, as in isa-l_crypto): 3-5x the digests a
// second of one at a time through BoringSSL's AVX code on the same core (a copy with
// AVX-512VL's rotate was a fifth faster alone and no faster in a full replay: left out).
// With SHA instructions one at a time is faster, and is used. `gamelog-bench replay`
// prints a read with its digests in batches beside the same read one at a time;
// Tests/EventStoreTests/DigestTests checks every engine against swift-crypto.
#include "CSHA256.h"
#include <string.h>

// The full blocks of a message are read where they are; its last one or two blocks,
// with the padding and the length, are copied into `tail`.
typedef struct {
    const uint8_t *data;
    size_t fullBlocks;
    size_t blocks;
    size_t next;
    size_t message;
    uint8_t tail[128];
} gamelog_sha256_lane;

static void gamelog_sha256_lane_start(gamelog_sha256_lane *lane, const uint8_t *data, size_t count, size_t message) {
    lane->data = data;
    lane->fullBlocks = count / 64;
    size_t rest = count % 64;
    size_t tailBlocks = rest + 9 <= 64 ? 1 : 2;
    memset(lane->tail, 0, sizeof lane->tail);
    if (rest > 0) memcpy(lane->tail, data + 64 * lane->fullBlocks, rest);
    lane->tail[rest] = 0x80;
    uint64_t bits = (uint64_t)count * 8;
    for (int i = 0; i < 8; i++) lane->tail[64 * tailBlocks - 1 - i] = (uint8_t)(bits >> (8 * i));
    lane->blocks = lane->fullBlocks + tailBlocks;
    lane->next = 0;
    lane->message = message;
}

static inline const uint8_t *gamelog_sha256_lane_block(const gamelog_sha256_lane *lane) {
    return lane->next < lane->fullBlocks ? lane->data + 64 * lane->next
                                         : lane->tail + 64 * (lane->next - lane->fullBlocks);
}

static void gamelog_sha256_each(const uint8_t *base, const size_t *offsets, size_t count, uint8_t *out) {
    for (size_t i = 0; i < count; i++) {
        gamelog_sha256(base + offsets[i], offsets[i + 1] - offsets[i], NULL, 0, NULL, 0, out + 32 * i);
    }
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <cpuid.h>
#include <immintrin.h>

static const uint32_t gamelog_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
static const uint32_t gamelog_sha256_iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                              0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

#define GAMELOG_X8_CONCAT2(a, b) a##b
#define GAMELOG_X8_CONCAT(a, b) GAMELOG_X8_CONCAT2(a, b)

#define GAMELOG_X8_TARGET __attribute__((target("avx2")))
#define GAMELOG_X8_ROR(x, n) _mm256_or_si256(_mm256_srli_epi32((x), (n)), _mm256_slli_epi32((x), 32 - (n)))
#define GAMELOG_X8_NAME gamelog_sha256_avx2
#include "sha256_x8.h"

static int gamelog_sha256_has_sha_instructions(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b >> 29) & 1;
}

int gamelog_sha256_engine_available(int engine) {
    switch (engine) {
    case GAMELOG_SHA256_ONE_AT_A_TIME: return 1;
    case GAMELOG_SHA256_AVX2: return __builtin_cpu_supports("avx2");
    default: return 0;
    }
}

int gamelog_sha256_preferred_engine(void) {
    // Written once from every thread that races here, always the same value.
    static _Atomic int preferred = -1;
    int known = preferred;
    if (known >= 0) return known;
    int chosen = GAMELOG_SHA256_ONE_AT_A_TIME;
    if (!gamelog_sha256_has_sha_instructions()) {
        if (gamelog_sha256_engine_available(GAMELOG_SHA256_AVX2)) chosen = GAMELOG_SHA256_AVX2;
    }
    preferred = chosen;
    return chosen;
}

int gamelog_sha256_many_with(int engine, const uint8_t *base, const size_t *offsets, size_t count, uint8_t *out) {
    if (!gamelog_sha256_engine_available(engine)) return -1;
    switch (engine) {
    case GAMELOG_SHA256_AVX2: gamelog_sha256_avx2(base, offsets, count, out); break;
    default: gamelog_sha256_each(base, offsets, count, out); break;
    }
    return 0;
}

#else
int gamelog_sha256_engine_available(int engine) { return engine == GAMELOG_SHA256_ONE_AT_A_TIME; }
int gamelog_sha256_preferred_engine(void) { return GAMELOG_SHA256_ONE_AT_A_TIME; }
int gamelog_sha256_many_with(int engine, const uint8_t *base, const size_t *offsets, size_t count, uint8_t *out) {
    if (engine != GAMELOG_SHA256_ONE_AT_A_TIME) return -1;
    gamelog_sha256_each(base, offsets, count, out);
    return 0;
}
#endif

void gamelog_sha256_many(const uint8_t *base, const size_t *offsets, size_t count, uint8_t *out) {
    // One message is faster alone: seven idle lanes cost what seven busy ones do.
    int engine = count >= 2 ? gamelog_sha256_preferred_engine() : GAMELOG_SHA256_ONE_AT_A_TIME;
    (void)gamelog_sha256_many_with(engine, base, offsets, count, out);
}
