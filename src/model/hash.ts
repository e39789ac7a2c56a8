/** 32-bit FNV-1a hash of a string's UTF-8 bytes (Go's hash/fnv New32a, which Karmada uses). */
export function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * FNV-1a followed by MurmurHash3's 32-bit finalizer: FNV alone clusters strings that differ only in
 * their last characters ("shard-1#7", "shard-1#8"), which a hash ring needs spread over the circle.
 */
export function spreadHash32(text: string): number {
  let hash = fnv32a(text);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b) >>> 0;
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35) >>> 0;
  hash ^= hash >>> 16;
  return hash >>> 0;
}
