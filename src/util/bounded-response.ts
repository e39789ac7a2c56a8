/**
 * A fetch Response's body as text, read only up to `limit` bytes: a server that answers more is cut
 * off (its stream cancelled) and the read fails saying so, never holding more than the limit.
 */
export async function readBoundedResponse(response: Response, limit: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`the answer from ${response.url} is larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
