// A setting that cannot be used: thrown while reading the configuration (and
// by whatever checks it later, such as the token store at start), caught once
// in main, where its message is printed alone, without a stack. Kept apart
// from config.ts so that the modules config.ts reads its bounds from can
// throw it without importing config.ts back.

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}
