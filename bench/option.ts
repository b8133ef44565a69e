// A command-line option of a bench script: the word after `flag` (say
// `--rounds 5`), or `fallback` when the flag is absent.

export function option(flag: string, fallback: string): string {
  const i = process.argv.indexOf(flag);
  return i === -1 ? fallback : process.argv[i + 1]!;
}
