// The eight-lane SHA-256, for sha256_many.c to include once for each instruction set
// that runs it: it defines GAMELOG_X8_TARGET (the function attribute), GAMELOG_X8_ROR (a
// 32-bit rotate of every lane) and GAMELOG_X8_NAME (the entry point's name).

// Transposes 8 rows of 8 words: word j of row i becomes word i of row j.
GAMELOG_X8_TARGET static inline void GAMELOG_X8_CONCAT(transpose_, GAMELOG_X8_NAME)(__m256i r[8]) {
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
GAMELOG_X8_TARGET static void GAMELOG_X8_CONCAT(compress_, GAMELOG_X8_NAME)(__m256i state[8], const uint8_t *const block[8]) {
    const __m256i bigEndian = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
                                               3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
    __m256i w[16];
    for (int half = 0; half < 2; half++) {
        __m256i *rows = w + 8 * half;
        for (int lane = 0; lane < 8; lane++) rows[lane] = _mm256_loadu_si256((const __m256i *)(block[lane] + 32 * half));
        GAMELOG_X8_CONCAT(transpose_, GAMELOG_X8_NAME)(rows);
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
            __m256i s0 = _mm256_xor_si256(_mm256_xor_si256(GAMELOG_X8_ROR(w15, 7), GAMELOG_X8_ROR(w15, 18)), _mm256_srli_epi32(w15, 3));
            __m256i s1 = _mm256_xor_si256(_mm256_xor_si256(GAMELOG_X8_ROR(w2, 17), GAMELOG_X8_ROR(w2, 19)), _mm256_srli_epi32(w2, 10));
            wt = _mm256_add_epi32(_mm256_add_epi32(w[t & 15], s0), _mm256_add_epi32(w[(t - 7) & 15], s1));
            w[t & 15] = wt;
        }
        __m256i bigSigma1 = _mm256_xor_si256(_mm256_xor_si256(GAMELOG_X8_ROR(e, 6), GAMELOG_X8_ROR(e, 11)), GAMELOG_X8_ROR(e, 25));
        __m256i choice = _mm256_xor_si256(_mm256_and_si256(e, f), _mm256_andnot_si256(e, g));
        __m256i t1 = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(h, bigSigma1), _mm256_add_epi32(choice, wt)),
                                      _mm256_set1_epi32((int)gamelog_sha256_k[t]));
        __m256i bigSigma0 = _mm256_xor_si256(_mm256_xor_si256(GAMELOG_X8_ROR(a, 2), GAMELOG_X8_ROR(a, 13)), GAMELOG_X8_ROR(a, 22));
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
GAMELOG_X8_TARGET static void GAMELOG_X8_NAME(const uint8_t *base, const size_t *offsets, size_t count, uint8_t *out) {
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
        GAMELOG_X8_CONCAT(compress_, GAMELOG_X8_NAME)(state, blocks);
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
