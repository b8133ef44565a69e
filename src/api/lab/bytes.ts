// Bytes named for people: a control byte by its name, for the details of the
// lab's refusals ("CR (0x0D) at position 1").

const CONTROL_NAMES: Readonly<Record<number, string>> = { 0x00: "NUL", 0x09: "HTAB", 0x0a: "LF", 0x0d: "CR", 0x20: "a space", 0x7f: "DEL" };

/** A control byte by its name, e.g. "CR (0x0D)". */
export function byteName(c: number): string {
  const hex = `0x${c.toString(16).toUpperCase().padStart(2, "0")}`;
  const name = CONTROL_NAMES[c];
  return name === undefined ? `the control byte ${hex}` : name === "a space" ? "a space (0x20)" : `${name} (${hex})`;
}
