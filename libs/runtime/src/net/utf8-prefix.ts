/**
 * The bytes as text, without a character the cut split: a stored body is capped in bytes, and a cap
 * that lands inside a multi-byte character would otherwise decode to U+FFFD, making the stored text
 * longer than the cap and no longer a prefix of what was sent.
 */
export function completeUtf8Prefix(bytes: Buffer): string {
  let lead = bytes.length - 1;
  // Continuation bytes are 10xxxxxx; a character has at most three of them.
  while (lead >= 0 && bytes.length - lead <= 4 && (bytes[lead] & 0xc0) === 0x80) lead -= 1;
  if (lead < 0) return bytes.toString('utf8');
  const first = bytes[lead];
  const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  return bytes.subarray(0, bytes.length - lead < length ? lead : bytes.length).toString('utf8');
}

/** The longest prefix of `text` that fits in `bytes` bytes of UTF-8, cut on a character boundary. */
export function cutUtf8(text: string, bytes: number): string {
  const buffer = Buffer.from(text, 'utf8');
  return buffer.length <= bytes ? text : completeUtf8Prefix(buffer.subarray(0, bytes));
}
