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

#define GAMELOG_AVX2 __attribute__((target("avx2")))
#define gamelog_sha256_ror(x, n) _mm256_or_si256(_mm256_srli_epi32((x), (n)), _mm256_slli_epi32((x), 32 - (n)))

// Transposes 8 rows of 8 words: word j of row i becomes word i of row j.
GAMELOG_AVX2 static inline void gamelog_sha256_transpose8(__m256i r[8]) {
    __m256i t0 = _mm256_unpacklo_epi32(r[0], r[1]), t1 = _mm256_unpackhi_epi32(r[0], r[1]);
    __m256i t2 = _mm256_unpacklo_epi32(r[2], r[3]), t3 = _mm256_unpackhi_epi32(r[2], r[3]);
    __m256i t4 = _mm256_unpacklo_epi32(r[4], r[5]), t5 = _mm256_unpackhi_epi32(r[4], r[5]);
    __m256i t6 = _mm256_unpacklo_epi32(r[6], r[7]), t7 = _mm256_unpackhi_epi32(r[6], r[7]);
    __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
    __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
    __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
    __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
    r[0] = _mm256_permute2x128_si256(u0, u4, 0x20);
    r[1] = _mm256_permute2x128_si256(u1, u5, 0x20);
    r[2] = _mm256_permute2x128_si256(u2, u6, 0x20);
    r[3] = _mm256_permute2x128_si256(u3, u7, 0x20);
    r[4] = _mm256_permute2x128_si256(u0, u4, 0x31);
    r[5] = _mm256_permute2x128_si256(u1, u5, 0x31);
    r[6] = _mm256_permute2x128_si256(u2, u6, 0x31);
    r[7] = _mm256_permute2x128_si256(u3, u7, 0x31);
}

// One 64-byte block of each lane's message into `state` (word i of every lane in state[i]).
GAMELOG_AVX2 static void gamelog_sha256_compress8(__m256i state[8], const uint8_t *const block[8]) {
    const __m256i bigEndian = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
                                               3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    __m256i w[16];
    for (int half = 0; half < 2; half++) {
        __m256i *rows = w + 8 * half;
        for (int lane = 0; lane < 8; lane++) rows[lane] = _mm256_loadu_si256((const __m256i *)(block[lane] + 32 * half));
        gamelog_sha256_transpose8(rows);
        for (int i = 0; i < 8; i++) rows[i] = _mm256_shuffle_epi8(rows[i], bigEndian);
    }
    __m256i a = state[0], b = state[1], c = state[2], d = state[3];
    __m256i e = state[4], f = state[5], g = state[6], h = state[7];
    for (int t = 0; t < 64; t++) {
        __m256i wt;
        if (t < 16) {
            wt = w[t];
        } else {
            __m256i w15 = w[(t - 15) & 15], w2 = w[(t - 2) & 15];
            __m256i s0 = _mm256_xor_si256(_mm256_xor_si256(gamelog_sha256_ror(w15, 7), gamelog_sha256_ror(w15, 18)), _mm256_srli_epi32(w15, 3));
            __m256i s1 = _mm256_xor_si256(_mm256_xor_si256(gamelog_sha256_ror(w2, 17), gamelog_sha256_ror(w2, 19)), _mm256_srli_epi32(w2, 10));
            wt = _mm256_add_epi32(_mm256_add_epi32(w[t & 15], s0), _mm256_add_epi32(w[(t - 7) & 15], s1));
            w[t & 15] = wt;
        }
        __m256i bigSigma1 = _mm256_xor_si256(_mm256_xor_si256(gamelog_sha256_ror(e, 6), gamelog_sha256_ror(e, 11)), gamelog_sha256_ror(e, 25));
        __m256i choice = _mm256_xor_si256(_mm256_and_si256(e, f), _mm256_andnot_si256(e, g));
        __m256i t1 = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(h, bigSigma1), _mm256_add_epi32(choice, wt)),
                                      _mm256_set1_epi32((int)gamelog_sha256_k[t]));
        __m256i bigSigma0 = _mm256_xor_si256(_mm256_xor_si256(gamelog_sha256_ror(a, 2), gamelog_sha256_ror(a, 13)), gamelog_sha256_ror(a, 22));
        __m256i majority = _mm256_or_si256(_mm256_and_si256(a, b), _mm256_and_si256(c, _mm256_or_si256(a, b)));
        __m256i t2 = _mm256_add_epi32(bigSigma0, majority);
        h = g; g = f; f = e; e = _mm256_add_epi32(d, t1);
        d = c; c = b; b = a; a = _mm256_add_epi32(t1, t2);
    }
    state[0] = _mm256_add_epi32(state[0], a); state[1] = _mm256_add_epi32(state[1], b);
    state[2] = _mm256_add_epi32(state[2], c); state[3] = _mm256_add_epi32(state[3], d);
    state[4] = _mm256_add_epi32(state[4], e); state[5] = _mm256_add_epi32(state[5], f);
    state[6] = _mm256_add_epi32(state[6], g); state[7] = _mm256_add_epi32(state[7], h);
}

// Eight messages at a time, a lane taking the next message as soon as its own is done,
// so messages of different lengths keep every lane busy but at the very end.
GAMELOG_AVX2 static void gamelog_sha256_avx2(const uint8_t *base, const size_t *offsets, size_t count, uint8_t *out) {
    static const uint8_t idle[64];
    gamelog_sha256_lane lanes[8];
    int live = 0;
    size_t taken = 0;
    __m256i state[8];
    uint32_t words[8][8];
    for (int i = 0; i < 8; i++) state[i] = _mm256_set1_epi32((int)gamelog_sha256_iv[i]);
    for (int l = 0; l < 8; l++) {
        if (taken < count) {
            gamelog_sha256_lane_start(&lanes[l], base + offsets[taken], offsets[taken + 1] - offsets[taken], taken);
            taken++;
            live |= 1 << l;
        }
    }
    while (live) {
        const uint8_t *blocks[8];
        for (int l = 0; l < 8; l++) blocks[l] = (live & (1 << l)) ? gamelog_sha256_lane_block(&lanes[l]) : idle;
        gamelog_sha256_compress8(state, blocks);
        int finished = 0;
        for (int l = 0; l < 8; l++) {
            if ((live & (1 << l)) && ++lanes[l].next == lanes[l].blocks) finished |= 1 << l;
        }
        if (!finished) continue;
        for (int i = 0; i < 8; i++) _mm256_storeu_si256((__m256i *)words[i], state[i]);
        for (int l = 0; l < 8; l++) {
            if (!(finished & (1 << l))) continue;
            uint8_t *digest = out + 32 * lanes[l].message;
            for (int i = 0; i < 8; i++) {
                uint32_t v = words[i][l];
                digest[4 * i] = (uint8_t)(v >> 24);
                digest[4 * i + 1] = (uint8_t)(v >> 16);
                digest[4 * i + 2] = (uint8_t)(v >> 8);
                digest[4 * i + 3] = (uint8_t)v;
                words[i][l] = gamelog_sha256_iv[i];
            }
            if (taken < count) {
                gamelog_sha256_lane_start(&lanes[l], base + offsets[taken], offsets[taken + 1] - offsets[taken], taken);
                taken++;
            } else {
                live &= ~(1 << l);
            }
        }
        for (int i = 0; i < 8; i++) state[i] = _mm256_loadu_si256((const __m256i *)words[i]);
    }
}

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
