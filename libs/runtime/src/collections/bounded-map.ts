/**
 * Sets `key` in a map kept to at most `maxEntries` entries: when it is full, the oldest insertion goes
 * first (a Map iterates in insertion order). For caches and per-key bookkeeping whose keys come from
 * outside (accounts, endpoints, jobs), so memory stays bounded whatever the traffic.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, maxEntries: number): void {
  if (map.size >= maxEntries) map.delete(map.keys().next().value as K);
  map.set(key, value);
}
