// The order in which a scenario's servers take their turns under load.
//
// Fresh-start rounds rotate the order, so that no server is always the first
// one after a quiet machine. Paired cycles (--paired: the servers kept up,
// each loaded for a slice in turn) need more than that, because their point
// is a ratio per cycle between startline and the reference server (the last
// of a scenario's list: the raw-socket ceiling, or the data ceiling), and
// this machine drifts within a cycle: other virtual machines on the host
// take and give back the cores from one second to the next. So the
// reference sits in the middle of every cycle, next to each other server,
// and every other cycle runs backwards: S C N, N C S, S C N... (an ABBA
// design). Whichever of startline and the reference goes first alternates,
// and a drift within a cycle weighs on both sides of the ratio alike.
//
// The rotation the paired cycles used until 2026-11-27 put startline's
// slice two slices away from the ceiling's in every third cycle, and after
// it in the other two; docs/benchmarks.md compares the two orders.

/** Fresh-start round `round` (from 0): the list rotated by `round`. */
export function rotated<T>(servers: readonly T[], round: number): T[] {
  const by = round % servers.length;
  return [...servers.slice(by), ...servers.slice(0, by)];
}

/** Paired cycle `cycle` (from 0): the reference (the list's last) second, the rest around it; odd cycles reversed. */
export function pairedOrder<T>(servers: readonly T[], cycle: number): T[] {
  if (servers.length < 2) return [...servers];
  const reference = servers[servers.length - 1]!;
  const others = servers.slice(0, -1);
  const order = [others[0]!, reference, ...others.slice(1)];
  return cycle % 2 === 0 ? order : order.reverse();
}
