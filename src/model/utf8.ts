/** Where the first invalid UTF-8 sequence starts, as a byte offset; -1 when the bytes are valid UTF-8. */
export function findInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i);
    if (length === 0) return i;
    i += length;
  }
  return -1;
}

// Length of the well-formed UTF-8 sequence at i, or 0 (Unicode table 3-7: no overlongs, no surrogates).
function sequenceLength(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i] ?? 0;
  if (b0 < 0x80) return 1;
  const [length, lo, hi] = leadRange(b0);
  if (length === 0 || i + length > bytes.length) return 0;
  const b1 = bytes[i + 1] ?? 0;
  if (b1 < lo || b1 > hi) return 0;
  for (let k = 2; k < length; k++) {
    const b = bytes[i + k] ?? 0;
    if (b < 0x80 || b > 0xbf) return 0;
  }
  return length;
}

// For a lead byte: the sequence length and the allowed range of the second byte.
function leadRange(b0: number): [number, number, number] {
  if (b0 >= 0xc2 && b0 <= 0xdf) return [2, 0x80, 0xbf];
  if (b0 === 0xe0) return [3, 0xa0, 0xbf];
  if (b0 === 0xed) return [3, 0x80, 0x9f];
  if (b0 >= 0xe1 && b0 <= 0xef) return [3, 0x80, 0xbf];
  if (b0 === 0xf0) return [4, 0x90, 0xbf];
  if (b0 >= 0xf1 && b0 <= 0xf3) return [4, 0x80, 0xbf];
  if (b0 === 0xf4) return [4, 0x80, 0x8f];
  return [0, 0, 0];
}

/** The 1-based line and byte column of a byte offset. */
export function byteOffsetToLinePos(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < bytes.length; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}
