// Ports for tests that need one they cannot get by listening on port 0
// themselves: for a program started later (nginx), or one that must refuse.
//
// A port found free is free only at that instant: test files run in
// parallel, and the kernel hands the same ephemeral range to every process
// that listens on port 0 or connects anywhere. So nothing here promises a
// port stays free; each use says how it copes.

import net from "node:net";
import { once } from "node:events";
import type { Test } from "tap";

/**
 * A port nothing listens on right now (the kernel's choice). Another process
 * may take it before the caller binds it, so the caller must retry with a new
 * port when its bind fails (startNginx, startCluster do).
 */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A port of 127.0.0.1 on which every connection is refused until `t` ends.
 * The port is held as the local end of an open connection, not as a
 * listener: nothing can listen on it while it is held, and a connection to it
 * finds no listener, so it is refused (ECONNREFUSED), however many other
 * processes pick ports meanwhile.
 */
export async function refusedPort(t: Test): Promise<number> {
  const server = net.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const holder = net.connect((server.address() as net.AddressInfo).port, "127.0.0.1");
  const [accepted] = (await Promise.all([once(server, "connection"), once(holder, "connect")]))[0] as [net.Socket];
  t.teardown(() => {
    holder.destroy();
    accepted.destroy();
    server.close();
  });
  return holder.localPort!;
}
