// How many bytes of reads a server keeps (KEPT_BYTES, YAML_KEPT_BYTES), apart
// from the keeping itself (kept-reads.ts): src/config.ts reads these settings
// in every process, the WORKERS primary and `npm run token` included, which
// never keep a read and should not load what keeps them (the YAML writer and
// its thread among it).

export interface KeptSettings {
  /** Bytes of responses kept at most (KEPT_BYTES); 0 keeps none. */
  readonly responseBytes: number;
  /** Bytes of posts' YAML kept at most (YAML_KEPT_BYTES); 0 keeps none. */
  readonly yamlBytes: number;
}

/**
 * 32 MiB of responses; 64 MiB of posts' YAML, about what 75,000 posts of
 * 700 bytes take (a post's entry is about its JSON's size, and a list that
 * walks more posts than are kept finds none of them kept: the least
 * recently used is always the next one it needs).
 */
export const DEFAULT_KEPT: KeptSettings = { responseBytes: 32 * 1024 * 1024, yamlBytes: 64 * 1024 * 1024 };
