// Philox4x32-10, as hearth/core/generator.cpp computes it: 4 x 32 random bits
// for a 128-bit counter (here its low 64 bits; the high half is 0) and a 64-bit key.
uvec4 philox4x32(uvec2 counter, uvec2 key) {
  uint c0 = counter.x, c1 = counter.y, c2 = 0u, c3 = 0u;
  uint k0 = key.x, k1 = key.y;
  for (int round = 0; round < 10; ++round) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c0, hi0, lo0);
    umulExtended(0xCD9E8D57u, c2, hi1, lo1);
    const uint n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return uvec4(c0, c1, c2, c3);
}

// counter = offset + c, as 64-bit unsigned arithmetic on two words.
uvec2 counter_add(uvec2 offset, uint c) {
  const uint lo = offset.x + c;
  return uvec2(lo, offset.y + (lo < c ? 1u : 0u));
}
